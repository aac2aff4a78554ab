"""Rate limiting: response headers of one of three families, and 429 with Retry-After."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from generator.ir import Api, Operation, RateLimitFamily, RateLimitSpec, Response
from generator.lint.model import Hit, Rule, op_hit, responses_where, rule

LEGACY_PREFIXES = ("x-ratelimit-", "x-rate-limit-")
DRAFT_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")
IETF_HEADERS = ("ratelimit", "ratelimit-policy")


def header_family(name: str) -> RateLimitFamily | None:
    lowered = name.lower()
    if lowered.startswith(LEGACY_PREFIXES) or lowered in ("x-ratelimit", "x-rate-limit"):
        return "x-ratelimit"
    if lowered in DRAFT_HEADERS:
        return "ratelimit"
    if lowered in IETF_HEADERS:
        return "ietf"
    return None


def declared_families(response: Response) -> set[RateLimitFamily]:
    return {f for h in response.headers if (f := header_family(h.name)) is not None}


def detect(op: Operation) -> RateLimitSpec | None:
    names: list[str] = []
    family: RateLimitFamily | None = None
    where = None
    for response in op.responses:
        for header in response.headers:
            found = header_family(header.name)
            if found is None:
                continue
            if header.name not in names:
                names.append(header.name)
            if family is None:
                family, where = found, header.where
    if family is None or where is None:
        return None
    too_many = op.response("429")
    return RateLimitSpec(
        family=family,
        headers=tuple(names),
        has_429=too_many is not None,
        retry_after=too_many is not None and too_many.header("Retry-After") is not None,
        where=where,
    )


# --- lint rules ------------------------------------------------------------------------

FAMILY_NAMES: dict[RateLimitFamily, str] = {
    "x-ratelimit": "`X-RateLimit-*`",
    "ratelimit": "`RateLimit-Limit`/`-Remaining`/`-Reset`",
    "ietf": "IETF `RateLimit` + `RateLimit-Policy`",
}
_FAMILY_ORDER: tuple[RateLimitFamily, ...] = ("x-ratelimit", "ratelimit", "ietf")


def operation_families(op: Operation) -> frozenset[RateLimitFamily]:
    return frozenset(f for r in op.responses for f in declared_families(r))


@rule(
    "rate-limit-headers-missing",
    "warning",
    "a 2xx response without rate-limit headers of any family",
    "ratelimit",
)
def headers_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        for response in op.success_responses:
            if not declared_families(response):
                yield op_hit(
                    op,
                    f"add rate-limit headers to the {response.status} response "
                    "(`X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, "
                    "or `RateLimit` + `RateLimit-Policy`) so clients can throttle themselves",
                    response.where,
                )


@rule(
    "rate-limit-429-missing",
    "warning",
    "an operation that publishes rate-limit headers but declares no 429 response",
    "ratelimit",
)
def too_many_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        spec = op.patterns.rate_limit
        if spec is not None and not spec.has_429:
            yield op_hit(
                op,
                f"publishes `{spec.headers[0]}` but declares no `429` response; "
                "add `429` with a `Retry-After` header",
                responses_where(op),
            )


@rule(
    "retry-after-missing",
    "error",
    "a 429 or 503 response without a `Retry-After` header",
    "ratelimit",
)
def retry_after_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        for status in ("429", "503"):
            response = op.response(status)
            if response is not None and response.header("Retry-After") is None:
                yield op_hit(
                    op,
                    f"add a `Retry-After` header (seconds) to the {status} response; "
                    "clients cannot schedule a retry without it",
                    response.where,
                )


@rule(
    "rate-limit-header-family-mixed",
    "info",
    "operations of one API publishing different rate-limit header families",
    "ratelimit",
)
def family_mixed(api: Api) -> Iterator[Hit]:
    by_op = [(op, operation_families(op)) for op in api.operations]
    by_op = [(op, fams) for op, fams in by_op if fams]
    counts = Counter(fams for _, fams in by_op)
    if len(counts) < 2:
        return

    def order(fams: frozenset[RateLimitFamily]) -> tuple[int, list[int]]:
        return (-counts[fams], sorted(_FAMILY_ORDER.index(f) for f in fams))

    norm = min(counts, key=order)
    norm_text = " + ".join(FAMILY_NAMES[f] for f in _FAMILY_ORDER if f in norm)
    for op, fams in by_op:
        if fams == norm:
            continue
        header = next(
            h
            for r in op.responses
            for h in r.headers
            if (f := header_family(h.name)) is not None and (f not in norm or fams < norm)
        )
        used = " + ".join(FAMILY_NAMES[f] for f in _FAMILY_ORDER if f in fams)
        yield op_hit(
            op,
            f"publishes {used} while {counts[norm]} other operation(s) publish {norm_text}; "
            "use one header family across the API",
            header.where,
        )


RULES: tuple[Rule, ...] = (headers_missing, too_many_missing, retry_after_missing, family_mixed)
