"""Rate limiting: response headers of one of three families, and 429 with Retry-After."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, Operation, RateLimitFamily, RateLimitSpec, Response, Where
from generator.lint.model import Hit, Rule, normalized, op_hit, responses_where, rule
from generator.patterns.problems import problem_response

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding

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
                    fix=(status,),
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


# --- the fixes -------------------------------------------------------------------------------

RETRY_AFTER: dict[str, Any] = {
    "description": "How many seconds to wait before the next request.",
    "schema": {"type": "integer", "minimum": 0},
}
# the definitions a header gets when the API has none of its own to copy
_HEADERS: dict[str, tuple[str, str]] = {
    "ratelimit": ("string", 'The current quota, e.g. `"default";r=50;t=30` (remaining, reset).'),
    "ratelimit-policy": ("string", 'The quota policies, e.g. `"default";q=100;w=60`.'),
    "ratelimit-limit": ("integer", "The number of requests allowed in the current window."),
    "ratelimit-remaining": ("integer", "The number of requests left in the current window."),
    "ratelimit-reset": ("integer", "The number of seconds until the window resets."),
    "x-ratelimit-limit": ("integer", "The number of requests allowed in the current window."),
    "x-ratelimit-remaining": ("integer", "The number of requests left in the current window."),
    "x-ratelimit-reset": ("integer", "When the current window resets."),
}
IETF_NAMES = ("RateLimit", "RateLimit-Policy")


def _definition(name: str) -> dict[str, Any]:
    kind, description = _HEADERS.get(name.lower(), ("string", f"Rate limiting: `{name}`."))
    return {"description": description, "schema": {"type": kind}}


def retry_after_header(plan: FixPlan) -> Where:
    return plan.component(
        "headers", "Retry-After", RETRY_AFTER, lambda key, _: normalized(key) == "retryafter"
    )


def family_headers(plan: FixPlan) -> list[tuple[str, Where]]:
    """The API's own rate-limit headers: the set of names most of its operations publish
    (IETF `RateLimit` + `RateLimit-Policy` when none does), each as the shared header its
    operations refer to most, else as a component made from its most common definition."""
    found: list[tuple[str, Where]] | None = plan.memo.get("rate-limit-headers")
    if found is not None:
        return found
    sets: Counter[tuple[frozenset[RateLimitFamily], tuple[str, ...]]] = Counter()
    shared: dict[str, Counter[Where]] = {}
    inline: dict[str, Counter[str]] = {}
    bodies: dict[str, Any] = {}
    for op in plan.api.operations:
        names: dict[str, str] = {}
        for response in op.success_responses:
            for header in response.headers:
                if header_family(header.name) is None:
                    continue
                lowered = header.name.lower()
                names.setdefault(lowered, header.name)
                if header.where != response.where.child("headers", header.name):
                    shared.setdefault(lowered, Counter())[header.where] += 1
                else:
                    body = plan.get(header.where)
                    text = json.dumps(body, sort_keys=True, default=str)
                    if "$ref" not in text or header.where.file == plan.root.name:
                        inline.setdefault(lowered, Counter())[text] += 1
                        bodies[text] = body
        if names:
            sets[operation_families(op), tuple(names[k] for k in sorted(names))] += 1
    chosen: tuple[str, ...] = IETF_NAMES
    if sets:  # the family most operations publish (as `rate-limit-header-family-mixed`
        # sees it), then its names most of those operations publish
        by_family: Counter[frozenset[RateLimitFamily]] = Counter()
        for (families, _), count in sets.items():
            by_family[families] += count
        norm = min(
            by_family,
            key=lambda f: (-by_family[f], sorted(_FAMILY_ORDER.index(x) for x in f)),
        )
        ranked = sorted(
            ((names, count) for (f, names), count in sets.items() if f == norm),
            key=lambda kv: (-kv[1], -len(kv[0]), kv[0]),
        )
        chosen = ranked[0][0]
    found = []
    for name in chosen:
        lowered = name.lower()
        if lowered in shared:
            where = sorted(shared[lowered].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        else:
            texts = inline.get(lowered)
            body = (
                bodies[sorted(texts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]]
                if texts
                else _definition(name)
            )
            where = plan.component("headers", name, body, _named(name))
        found.append((name, where))
    plan.memo["rate-limit-headers"] = found
    return found


def _named(name: str) -> Callable[[str, Any], bool]:
    def same(key: str, _: Any) -> bool:
        return normalized(key) == normalized(name)

    return same


def too_many_requests(plan: FixPlan) -> Where:
    return problem_response(
        plan,
        "429",
        "TooManyRequests",
        "Too many requests: wait the number of seconds in `Retry-After`, then retry.",
        {"Retry-After": retry_after_header(plan)},
    )


def _add_429(op: Operation, plan: FixPlan) -> bool:
    if plan.has_response(op, "429") or not plan.allows("rate-limit-429-missing", op):
        return False
    plan.add_response(op, "429", too_many_requests(plan))
    return True


def fix_headers(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None:
        return None
    response = Where(finding.file, finding.pointer)
    headers = family_headers(plan)
    first = None
    for name, header in headers:
        at = plan.add_header(response, name, header)
        first = first or at
    assert first is not None
    names = ", ".join(f"`{name}`" for name, _ in headers)
    more = " (and a `429` response)" if _add_429(op, plan) else ""
    status = plan.status(finding)
    return first, f"{plan.label(finding)}: added {names} to the {status} response{more}"


def fix_429(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None or plan.has_response(op, "429"):
        return None
    at = plan.add_response(op, "429", too_many_requests(plan))
    return at, f"{plan.label(finding)}: added a `429` response with `Retry-After`"


def fix_retry_after(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    response = Where(finding.file, finding.pointer)
    at = plan.add_header(response, "Retry-After", retry_after_header(plan))
    status = finding.fix[0] if finding.fix else ""
    return at, f"{plan.label(finding)}: added `Retry-After` to the {status} response"


FIXES: dict[str, Fixer] = {
    "rate-limit-headers-missing": fix_headers,
    "rate-limit-429-missing": fix_429,
    "retry-after-missing": fix_retry_after,
}
