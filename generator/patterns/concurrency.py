"""Optimistic concurrency: ETag on reads, If-Match/If-None-Match, and 304/412/428."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from generator.ir import Api, ConcurrencySpec, Operation
from generator.lint.model import Hit, Rule, join_words, op_hit, rule


def detect(op: Operation) -> ConcurrencySpec | None:
    etag = next((h for r in op.success_responses if (h := r.header("ETag")) is not None), None)
    if_match = op.parameter("If-Match", "header")
    if_none_match = op.parameter("If-None-Match", "header")
    evidence = etag or if_match or if_none_match
    if evidence is None:
        return None
    return ConcurrencySpec(
        etag=etag is not None,
        if_match=if_match is not None,
        if_match_required=bool(if_match and if_match.required),
        if_none_match=if_none_match is not None,
        responses=frozenset(s for s in ("304", "412", "428") if op.response(s) is not None),
        where=evidence.where,
    )


# --- lint rules ------------------------------------------------------------------------


def by_path(api: Api) -> dict[str, dict[str, Operation]]:
    resources: dict[str, dict[str, Operation]] = defaultdict(dict)
    for op in api.operations:
        resources[op.path][op.method] = op
    return resources


def sends_etag(op: Operation) -> bool:
    return op.patterns.concurrency is not None and op.patterns.concurrency.etag


@rule(
    "etag-missing",
    "warning",
    "a GET on a resource that has PATCH or PUT, without an `ETag` response header",
    "concurrency",
)
def etag_missing(api: Api) -> Iterator[Hit]:
    for methods in by_path(api).values():
        get = methods.get("get")
        writers = [m.upper() for m in ("patch", "put") if m in methods]
        if get is None or not writers or sends_etag(get):
            continue
        success = get.success_responses
        target = success[0] if success else None
        verb = "need" if len(writers) > 1 else "needs"
        yield op_hit(
            get,
            f"add an `ETag` header to the {target.status if target else '200'} response; "
            f"{join_words(writers)} on this resource {verb} it for `If-Match` (lost-update protection)",
            target.where if target else None,
        )


@rule(
    "if-match-missing",
    "warning",
    "PATCH, PUT or DELETE on a resource whose GET sends `ETag`, without an `If-Match` parameter",
    "concurrency",
)
def if_match_missing(api: Api) -> Iterator[Hit]:
    for methods in by_path(api).values():
        get = methods.get("get")
        if get is None or not sends_etag(get):
            continue
        for method in ("put", "patch", "delete"):
            op = methods.get(method)
            if op is not None and op.parameter("If-Match", "header") is None:
                yield op_hit(
                    op,
                    "add an `If-Match` header parameter (the GET sends `ETag`) and answer "
                    "`412` when it is stale, so concurrent writers cannot overwrite each other",
                )


@rule(
    "precondition-responses-missing",
    "warning",
    "`If-Match` without 412, required `If-Match` without 428, `If-None-Match` without 304",
    "concurrency",
)
def precondition_responses_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        spec = op.patterns.concurrency
        if spec is None:
            continue
        if_match = op.parameter("If-Match", "header")
        if if_match is not None:
            if "412" not in spec.responses:
                yield op_hit(
                    op,
                    "accepts `If-Match`; add a `412` response (Precondition Failed) for a stale ETag",
                    if_match.where,
                )
            if if_match.required and "428" not in spec.responses:
                yield op_hit(
                    op,
                    "requires `If-Match`; add a `428` response (Precondition Required) "
                    "for a request that omits it",
                    if_match.where,
                )
        if_none_match = op.parameter("If-None-Match", "header")
        if if_none_match is not None:
            if op.method in ("get", "head"):
                if "304" not in spec.responses:
                    yield op_hit(
                        op,
                        "accepts `If-None-Match`; add a `304` response (Not Modified)",
                        if_none_match.where,
                    )
            elif "412" not in spec.responses:
                yield op_hit(
                    op,
                    "accepts `If-None-Match`; add a `412` response for when the resource exists",
                    if_none_match.where,
                )


RULES: tuple[Rule, ...] = (etag_missing, if_match_missing, precondition_responses_missing)
