"""Idempotency keys: an `Idempotency-Key` request header, and the 409/422 it implies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, IdempotencySpec, Operation, Where
from generator.lint.model import Hit, Rule, code, join_words, op_hit, rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding

HEADER_NAMES = ("idempotency-key", "x-idempotency-key")
DEFAULT_HEADER = "Idempotency-Key"
EXTENSION = "x-apiforge-idempotency-header"  # on an operation, its path item or the root


def key_header(api: Api, op: Operation) -> str:
    """The header a caller's idempotency key is sent in: the one the operation declares, else
    `x-apiforge-idempotency-header` (the operation's, then the document's), else
    `Idempotency-Key`."""
    if op.patterns.idempotency is not None:
        return op.patterns.idempotency.header
    for source in (op.extensions, api.extensions):
        named = source.get(EXTENSION)
        if isinstance(named, str) and named.strip():
            return named.strip()
    return DEFAULT_HEADER


def detect(op: Operation) -> IdempotencySpec | None:
    for name in HEADER_NAMES:
        param = op.parameter(name, "header")
        if param is not None:
            declared = frozenset(s for s in ("409", "422") if op.response(s) is not None)
            return IdempotencySpec(param.name, param.required, declared, param.where)
    return None


# --- lint rules ------------------------------------------------------------------------


_READ_LIKE_POST = ("search", "query", "graphql", "lookup", "validate", "preview", "estimate")


def needs_key(op: Operation) -> bool:
    """POST always (unless its last path segment names a read: `/search`, `/query`, …);
    PATCH when it has side effects a retry would repeat, i.e. it is not guarded by If-Match
    (a conditional PATCH retried after success gets 412, not a second change)."""
    if op.method == "post":
        last = op.path.rstrip("/").rsplit("/", 1)[-1].lower()
        return not any(
            last == w or last.endswith((":" + w, "-" + w, "_" + w)) for w in _READ_LIKE_POST
        )
    if op.method == "patch":
        return op.parameter("If-Match", "header") is None
    return False


@rule(
    "idempotency-key-missing",
    "warning",
    "POST, and PATCH with side effects, without an `Idempotency-Key` header parameter",
    "idempotency",
)
def key_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        if op.patterns.idempotency is None and needs_key(op):
            why = (
                " so clients can retry without creating a duplicate"
                if op.method == "post"
                else " (or an `If-Match` precondition) so a retried change is not applied twice"
            )
            yield op_hit(op, f"add an `Idempotency-Key` header parameter{why}")


_RESPONSES = {
    "409": "`409` (a request with this key is still in progress)",
    "422": "`422` (the key was reused with a different body)",
}


@rule(
    "idempotency-responses-missing",
    "warning",
    "`Idempotency-Key` declared without 409 (request in progress) or 422 (key reused with another body)",
    "idempotency",
)
def responses_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        spec = op.patterns.idempotency
        if spec is None:
            continue
        missing = {
            status: why for status, why in _RESPONSES.items() if status not in spec.responses
        }
        if missing:
            yield op_hit(
                op,
                f"{code(spec.header)} is declared; add response {join_words(missing.values())}",
                spec.where,
                fix=tuple(missing),
            )


RULES: tuple[Rule, ...] = (key_missing, responses_missing)


# --- the fixes -------------------------------------------------------------------------------

IDEMPOTENCY_KEY: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": (
        "A unique key (e.g. a UUID) for this request. A retry with the same key gets the "
        "first request's response instead of repeating the operation."
    ),
    "schema": {"type": "string", "maxLength": 255},
}
# status → (shared response name, description)
RESPONSES: dict[str, tuple[str, str]] = {
    "409": (
        "IdempotencyInProgress",
        "A request with this `Idempotency-Key` is still being processed; retry later.",
    ),
    "422": (
        "IdempotencyKeyReused",
        "This `Idempotency-Key` was already used with a different request body.",
    ),
}


def _is_key(_: str, value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("in") == "header"
        and str(value.get("name", "")).lower() in HEADER_NAMES
    )


def _add_responses(op: Operation, plan: FixPlan, statuses: tuple[str, ...]) -> list[str]:
    added = []
    for status in statuses:
        if status in RESPONSES and not plan.has_response(op, status):
            name, description = RESPONSES[status]
            plan.add_response(op, status, _response(plan, status, name, description))
            added.append(status)
    return added


def _response(plan: FixPlan, status: str, name: str, description: str) -> Where:
    from generator.patterns.problems import problem_response

    return problem_response(plan, status, name, description, own=False)


def fix_key(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None or (op.method == "patch" and plan.has_parameter(op, "If-Match")):
        return None  # a PATCH that gets `If-Match` needs no key
    key = plan.component("parameters", "IdempotencyKey", IDEMPOTENCY_KEY, _is_key)
    at = plan.add_parameter(op, "Idempotency-Key", key)
    added = []
    if plan.allows("idempotency-responses-missing", op):
        added = _add_responses(op, plan, tuple(RESPONSES))
    more = f" and {join_words(f'`{s}`' for s in added)} responses" if added else ""
    return at, f"{plan.label(finding)}: added the `Idempotency-Key` header parameter{more}"


def fix_responses(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None:
        return None
    added = _add_responses(op, plan, finding.fix)
    if not added:
        return None
    at = op.where.child("responses", added[0])
    return at, f"{plan.label(finding)}: added {join_words(f'`{s}`' for s in added)} responses"


FIXES: dict[str, Fixer] = {
    "idempotency-key-missing": fix_key,
    "idempotency-responses-missing": fix_responses,
}
