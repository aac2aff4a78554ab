"""The production patterns compared: what each operation declared of idempotency keys, rate
limits, optimistic concurrency, 202 jobs and pagination, and what each webhook declares of its
signature — as `generator.patterns` detected them on each side. A general-purpose diff sees a
header parameter or a status code; these checks see what it meant to the client.

What a pattern check explains it claims (`Claims`), so the general comparison does not report
the same header or status again."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from generator.diff.model import Change
from generator.ir import Api, Operation, PaginationSpec, Where
from generator.patterns.idempotency import HEADER_NAMES
from generator.patterns.ratelimit import FAMILY_NAMES

_CONCURRENCY_HEADERS = ("if-match", "if-none-match")


class Claims:
    """The headers and statuses of one operation that a pattern check has explained."""

    def __init__(self) -> None:
        self.headers: set[tuple[str, str]] = {("header", n) for n in HEADER_NAMES}
        self.headers.update(("header", n) for n in _CONCURRENCY_HEADERS)
        self.statuses: set[str] = set()

    def header(self, location: str, name: str) -> bool:
        return (location, name.lower()) in self.headers

    def status(self, status: str) -> bool:
        return status in self.statuses


def compare_patterns(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    """Every pattern change of one operation present on both sides."""
    yield from _idempotency(old, new, claims)
    yield from _rate_limit(old, new, claims)
    yield from _concurrency(old, new, claims)
    yield from _async_job(old, new, claims)
    yield from _pagination(old, new, claims)


def _idempotency(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    reach = ((old, new),)
    was, now = old.patterns.idempotency, new.patterns.idempotency
    if was is not None:
        claims.statuses.update(was.responses)
    if was is not None and now is None:
        yield Change(
            "idempotency-key-removed",
            f"{new.label}: `{was.header}` is no longer declared: the client stops sending a "
            "key, and retrying the call is no longer safe",
            was.where,
            new.where,
            reach,
        )
        return
    if was is None and now is not None and not now.required:
        yield Change(
            "idempotency-key-added",
            f"{new.label}: `{now.header}` declared: the client retries the call safely",
            old.where,
            now.where,
            reach,
        )
    if now is not None and now.required and (was is None or not was.required):
        yield Change(
            "idempotency-key-required",
            f"{new.label}: `{now.header}` became required",
            was.where if was is not None else old.where,
            now.where,
            reach,
        )
    if was is not None and now is not None:
        for status in sorted(was.responses - now.responses):
            response = old.response(status)
            yield Change(
                "idempotency-response-removed",
                f"{new.label}: idempotency answer {status} "
                f"({'request in progress' if status == '409' else 'key reused'}) removed",
                response.where if response else was.where,
                new.where.child("responses"),
                reach,
            )


def _rate_limit(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    reach = ((old, new),)
    was, now = old.patterns.rate_limit, new.patterns.rate_limit
    if was is None:
        return
    claims.statuses.add("429")
    if now is None:
        yield Change(
            "rate-limit-headers-removed",
            f"{new.label}: rate-limit headers ({', '.join(was.headers)}) are no longer declared",
            was.where,
            new.where.child("responses"),
            reach,
        )
    elif now.family != was.family:
        yield Change(
            "rate-limit-family-changed",
            f"{new.label}: rate-limit headers changed from {FAMILY_NAMES[was.family]} to "
            f"{FAMILY_NAMES[now.family]}",
            was.where,
            now.where,
            reach,
        )
    too_many = new.response("429")
    if was.has_429 and too_many is None:
        old_429 = old.response("429")
        yield Change(
            "rate-limit-429-removed",
            f"{new.label}: 429 Too Many Requests removed",
            old_429.where if old_429 else was.where,
            new.where.child("responses"),
            reach,
        )
    elif was.retry_after and too_many is not None and too_many.header("Retry-After") is None:
        old_429 = old.response("429")
        header = old_429.header("Retry-After") if old_429 else None
        yield Change(
            "retry-after-removed",
            f"{new.label}: the 429 no longer declares `Retry-After`",
            header.where if header else was.where,
            too_many.where,
            reach,
        )


def _concurrency(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    reach = ((old, new),)
    was, now = old.patterns.concurrency, new.patterns.concurrency
    if was is not None:
        claims.statuses.update(was.responses)
    if was is not None and was.etag and (now is None or not now.etag):
        header = next((h for r in old.success_responses if (h := r.header("ETag"))), None)
        yield Change(
            "etag-removed",
            f"{new.label}: success responses no longer declare `ETag`",
            header.where if header else was.where,
            new.where.child("responses"),
            reach,
        )
    if now is not None and now.if_match_required and (was is None or not was.if_match_required):
        param = new.parameter("If-Match", "header")
        old_param = old.parameter("If-Match", "header")
        yield Change(
            "if-match-required",
            f"{new.label}: `If-Match` became required: clients that do not send it get 428",
            old_param.where if old_param else old.where,
            param.where if param else now.where,
            reach,
        )


def _async_job(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    reach = ((old, new),)
    was = old.patterns.async_job if old.response("202") is not None else None
    now = new.patterns.async_job if new.response("202") is not None else None
    if was is not None and now is None:
        claims.statuses.add("202")
        answer = ", ".join(r.status for r in new.success_responses) or "no success response"
        yield Change(
            "async-became-sync",
            f"{new.label}: 202 Accepted (a job to poll) became a synchronous answer ({answer})",
            old.response("202").where,  # type: ignore[union-attr]
            new.where.child("responses"),
            reach,
        )
        return
    if was is None and now is not None:
        claims.statuses.update(r.status for r in old.success_responses)
        yield Change(
            "sync-became-async",
            f"{new.label}: the answer became 202 Accepted (a job to poll)",
            old.where.child("responses"),
            new.response("202").where,  # type: ignore[union-attr]
            reach,
        )
        return
    if was is None or now is None:
        return
    old_202, new_202 = old.response("202"), new.response("202")
    assert old_202 is not None and new_202 is not None
    for dropped, name, kind in (
        (was.location and not now.location, "Location", "async-location-removed"),
        (was.retry_after and not now.retry_after, "Retry-After", "async-retry-after-removed"),
    ):
        if dropped:
            header = old_202.header(name)
            yield Change(
                kind,
                f"{new.label}: the 202 no longer declares `{name}`",
                header.where if header else old_202.where,
                new_202.where,
                reach,
            )


def _pagination_shape(spec: PaginationSpec) -> tuple[object, ...]:
    return (spec.style, spec.items, spec.param, spec.next, spec.has_more)


def _pagination(old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
    was, now = old.patterns.pagination, new.patterns.pagination
    if was is None or (now is not None and _pagination_shape(was) == _pagination_shape(now)):
        return
    for spec in (was, now):  # the page parameters are the client's iterator's, not arguments
        if spec is not None and spec.param:
            claims.headers.add(("query", spec.param))
    reach = ((old, new),)
    if now is None:
        message = f"{new.label}: no longer paginated ({_pagination_text(was)} before)"
    else:
        message = f"{new.label}: pagination {_pagination_text(was)} → {_pagination_text(now)}"
    yield Change(
        "pagination-changed",
        message,
        was.where or old.where,
        (now.where if now is not None else None) or new.where,
        reach,
    )


def _pagination_text(spec: PaginationSpec) -> str:
    parts: list[str] = [spec.style]
    if spec.param:
        parts.append(f"param `{spec.param}`")
    if spec.next:
        parts.append(f"next `{'.'.join(spec.next)}`")
    parts.append(f"items `{'.'.join(spec.items) or '(body)'}`")
    return " ".join(parts)


Payload = Callable[[Operation, Operation, str], Iterator[Change]]


def compare_webhooks(old: Api, new: Api, payload: Payload) -> Iterator[Change]:
    """Webhooks matched by name: removed ones, signature and id headers, payloads."""
    news = {(h.source, h.name): h for h in new.webhooks}
    for hook in old.webhooks:
        now = news.get((hook.source, hook.name))
        if now is None:
            yield Change(
                "webhook-removed",
                f"webhook `{hook.name}` removed",
                hook.operation.where,
                Where(new.root, "/webhooks" if hook.source == "webhooks" and new.webhooks else ""),
                webhook=hook.name,
            )
            continue
        reach = ((hook.operation, now.operation),)
        was_sig, now_sig = hook.signature, now.signature
        if was_sig is not None and was_sig.signature_header is not None:
            new_header = now_sig.signature_header if now_sig is not None else None
            new_scheme = now_sig.scheme if now_sig is not None else None
            if (new_header or "").lower() != was_sig.signature_header.lower() or (
                new_scheme != was_sig.scheme
            ):
                shown = f"`{new_header}` ({new_scheme})" if new_header else "no signature header"
                yield Change(
                    "webhook-signature-changed",
                    f"webhook `{hook.name}`: signature `{was_sig.signature_header}` "
                    f"({was_sig.scheme}) → {shown}",
                    was_sig.where,
                    now_sig.where if now_sig is not None else now.operation.where,
                    reach,
                    webhook=hook.name,
                )
        lost_id = now_sig is None or now_sig.id_header is None
        if was_sig is not None and was_sig.id_header is not None and lost_id:
            yield Change(
                "webhook-id-removed",
                f"webhook `{hook.name}`: delivery id header `{was_sig.id_header}` removed",
                was_sig.where,
                now_sig.where if now_sig is not None else now.operation.where,
                reach,
                webhook=hook.name,
            )
        yield from payload(hook.operation, now.operation, hook.name)
