"""Rate limiting: response headers of one of three families, and 429 with Retry-After."""

from __future__ import annotations

from generator.ir import Operation, RateLimitFamily, RateLimitSpec, Response

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
