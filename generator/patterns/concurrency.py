"""Optimistic concurrency: ETag on reads, If-Match/If-None-Match, and 304/412/428."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, ConcurrencySpec, Operation, Where
from generator.lint.model import Hit, Rule, join_words, normalized, op_hit, rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding


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
                    fix=("412",),
                )
            if if_match.required and "428" not in spec.responses:
                yield op_hit(
                    op,
                    "requires `If-Match`; add a `428` response (Precondition Required) "
                    "for a request that omits it",
                    if_match.where,
                    fix=("428",),
                )
        if_none_match = op.parameter("If-None-Match", "header")
        if if_none_match is not None:
            if op.method in ("get", "head"):
                if "304" not in spec.responses:
                    yield op_hit(
                        op,
                        "accepts `If-None-Match`; add a `304` response (Not Modified)",
                        if_none_match.where,
                        fix=("304",),
                    )
            elif "412" not in spec.responses:
                yield op_hit(
                    op,
                    "accepts `If-None-Match`; add a `412` response for when the resource exists",
                    if_none_match.where,
                    fix=("412",),
                )


RULES: tuple[Rule, ...] = (etag_missing, if_match_missing, precondition_responses_missing)


# --- the fixes -------------------------------------------------------------------------------

ETAG: dict[str, Any] = {
    "description": (
        "The resource's current version. Send it back in `If-Match` to change the resource "
        "only while it is still this version."
    ),
    "schema": {"type": "string"},
}
IF_MATCH: dict[str, Any] = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": (
        "The `ETag` of the version this change is based on; when the resource has changed "
        "since, the answer is 412 and nothing is changed."
    ),
    "schema": {"type": "string"},
}
# status → (shared response name, description)
PRECONDITION_RESPONSES: dict[str, tuple[str, str]] = {
    "412": (
        "PreconditionFailed",
        "Precondition failed: the resource has changed since the `ETag` sent was read.",
    ),
    "428": ("PreconditionRequired", "Precondition required: send `If-Match` with the `ETag`."),
    "304": ("NotModified", "Not modified: the resource still has the `ETag` sent."),
}


def etag_header(plan: FixPlan) -> Where:
    return plan.component("headers", "ETag", ETAG, lambda key, _: normalized(key) == "etag")


def _is_if_match(_: str, value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("in") == "header"
        and str(value.get("name", "")).lower() == "if-match"
    )


def _precondition(plan: FixPlan, status: str) -> Where:
    from generator.patterns.problems import problem_response

    name, description = PRECONDITION_RESPONSES[status]
    headers = {"ETag": etag_header(plan)} if status == "304" else None
    return problem_response(plan, status, name, description, headers)


def _add_statuses(op: Operation, plan: FixPlan, statuses: tuple[str, ...]) -> list[str]:
    added = []
    for status in statuses:
        if status in PRECONDITION_RESPONSES and not plan.has_response(op, status):
            plan.add_response(op, status, _precondition(plan, status))
            added.append(status)
    return added


def _add_if_match(op: Operation, plan: FixPlan) -> Where:
    param = plan.component("parameters", "IfMatch", IF_MATCH, _is_if_match)
    at = plan.add_parameter(op, "If-Match", param)
    if plan.allows("precondition-responses-missing", op):
        _add_statuses(op, plan, ("412",))
    return at


def fix_etag(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    get = finding.operation
    if get is None or not get.success_responses:
        return None  # no 2xx response to send it on
    target = get.success_responses[0]
    at = plan.add_header(target.where, "ETag", etag_header(plan))
    writers = []
    key = f"by-path/{id(plan.api)}"
    if key not in plan.memo:
        plan.memo[key] = by_path(plan.api)
    for method, op in plan.memo[key][get.path].items():
        if (
            method in ("put", "patch", "delete")
            and not plan.has_parameter(op, "If-Match")
            and plan.allows("if-match-missing", op)
        ):
            _add_if_match(op, plan)
            writers.append(method.upper())
    more = f" (and `If-Match` on {join_words(writers)})" if writers else ""
    return at, f"{plan.label(finding)}: added `ETag` to the {target.status} response{more}"


def fix_if_match(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None or plan.has_parameter(op, "If-Match"):
        return None
    at = _add_if_match(op, plan)
    return at, f"{plan.label(finding)}: added the `If-Match` header parameter"


def fix_precondition(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None:
        return None
    added = _add_statuses(op, plan, finding.fix)
    if not added:
        return None
    at = op.where.child("responses", added[0])
    return at, f"{plan.label(finding)}: added the `{added[0]}` response"


FIXES: dict[str, Fixer] = {
    "etag-missing": fix_etag,
    "if-match-missing": fix_if_match,
    "precondition-responses-missing": fix_precondition,
}
