"""RFC 9457 problem details: which error responses use `application/problem+json`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, Operation, ProblemsSpec, Response, Where
from generator.lint.model import Hit, Rule, normalized, op_hit, responses_where, rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding

PROBLEM_JSON = "application/problem+json"


def is_problem(response: Response) -> bool:
    return any(
        m.content_type.lower().split(";")[0].strip() == PROBLEM_JSON for m in response.content
    )


def detect(op: Operation) -> ProblemsSpec | None:
    errors = op.error_responses
    if not errors:
        return None
    problem = [is_problem(r) for r in errors]
    return ProblemsSpec(
        problem_statuses=tuple(r.status for r, p in zip(errors, problem, strict=True) if p),
        other_statuses=tuple(r.status for r, p in zip(errors, problem, strict=True) if not p),
    )


# --- lint rules ------------------------------------------------------------------------


@rule(
    "problem-details-missing",
    "warning",
    "a 4xx or 5xx response whose body is not `application/problem+json` (RFC 9457)",
    "problems",
)
def problem_details_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        for response in op.responses:
            if response.status_class not in ("4", "5") or is_problem(response):
                continue
            declared = [m.content_type for m in response.content]
            now = f"declares `{declared[0]}`" if declared else "declares no body"
            if len(declared) > 1:
                now = "declares " + ", ".join(f"`{c}`" for c in declared)
            yield op_hit(
                op,
                f"the {response.status} response {now}; add `application/problem+json` "
                "with an RFC 9457 problem document (type, title, status, detail)",
                response.where,
            )


#: Responses that answer a request the server cannot accept as sent: the generated server's
#: request validation answers 422 (400 where the operation declares 400 and not 422).
INVALID_INPUT_STATUSES = ("400", "422", "4XX", "default")


@rule(
    "invalid-input-response-missing",
    "warning",
    "an operation that takes input (parameters or a body) but declares no 400 or 422 response",
    "problems",
)
def invalid_input_response_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        if not (op.parameters or op.request_body is not None):
            continue
        if any(r.status in INVALID_INPUT_STATUSES for r in op.responses):
            continue
        taken = "a body" if op.request_body is not None else "parameters"
        yield op_hit(
            op,
            f"takes {taken} but declares no response for invalid input; add `422` (or `400`) "
            "with an `application/problem+json` body listing what is wrong",
            responses_where(op),
        )


RULES: tuple[Rule, ...] = (problem_details_missing, invalid_input_response_missing)


# --- the fix -------------------------------------------------------------------------------

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An RFC 9457 problem document: what went wrong, in a shape clients can act on.",
    "properties": {
        "type": {
            "type": "string",
            "format": "uri-reference",
            "description": "A URI that identifies the problem type.",
            "default": "about:blank",
        },
        "title": {"type": "string", "description": "A short summary of the problem type."},
        "status": {
            "type": "integer",
            "minimum": 100,
            "maximum": 599,
            "description": "The HTTP status code of this occurrence.",
        },
        "detail": {"type": "string", "description": "What went wrong in this occurrence."},
        "instance": {
            "type": "string",
            "format": "uri-reference",
            "description": "A URI that identifies this occurrence.",
        },
    },
}
_PROBLEM_NAMES = {"problem", "problems", "problemdetails", "problemdetail", "problemdocument"}
_PROBLEM_FIELDS = {"type", "title", "status", "detail"}


def _is_problem_schema(name: str, value: Any) -> bool:
    if normalized(name) in _PROBLEM_NAMES:
        return True
    properties = value.get("properties") if isinstance(value, dict) else None
    return isinstance(properties, dict) and set(properties) >= _PROBLEM_FIELDS


def problem_schema(plan: FixPlan) -> Where:
    """The API's own problem schema — the one its `application/problem+json` responses use
    most, or a component schema that is one by name or by its fields — else a shared
    RFC 9457 `Problem` schema, made once."""
    if "problem-schema" not in plan.memo:
        counts: Counter[Where] = Counter()
        for op in (*plan.api.operations, *(h.operation for h in plan.api.webhooks)):
            for response in op.responses:
                for media in response.content:
                    schema = media.schema
                    if (
                        schema is not None
                        and media.content_type.lower().split(";")[0].strip() == PROBLEM_JSON
                        and schema.where != media.where.child("schema")
                    ):
                        counts[schema.where] += 1
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        plan.memo["problem-schema"] = best[0][0] if best else None
    own: Where | None = plan.memo["problem-schema"]
    return own or plan.component("schemas", "Problem", PROBLEM_SCHEMA, _is_problem_schema)


def problem_content(plan: FixPlan, at: Where) -> dict[str, Any]:
    """A `content` with `application/problem+json` and the problem schema, written at `at`."""
    return {PROBLEM_JSON: {"schema": plan.ref(at, problem_schema(plan))}}


def problem_response(
    plan: FixPlan,
    status: str,
    name: str,
    description: str,
    headers: dict[str, Where] | None = None,
    *,
    own: bool = True,
) -> Where:
    """The response to refer to for `status`: the API's own shared one (with `own`: for a
    status that means one thing, like 429), else a shared problem response `name` (found by
    name or content, or made once)."""
    found = plan.own_response(status) if own else None
    if found is not None:
        return found
    at = Where(plan.root.name, f"/components/responses/{name}")
    response: dict[str, Any] = {"description": description}
    if headers:
        response["headers"] = {n: plan.ref(at, h) for n, h in headers.items()}
    if not status.startswith("3"):
        response["content"] = problem_content(plan, at)
    return plan.component(
        "responses", name, response, lambda key, _: normalized(key) == normalized(name)
    )


def fix_problem_details(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    response = Where(finding.file, finding.pointer)
    schema = problem_schema(plan)
    at = plan.add_media(
        response, PROBLEM_JSON, {"schema": plan.ref(response.child("content"), schema)}
    )
    return at, (
        f"{plan.label(finding)}: added `{PROBLEM_JSON}` with the "
        f"`{schema.pointer.rsplit('/', 1)[-1]}` schema to the {plan.status(finding)} response"
    )


def invalid_input_status(plan: FixPlan) -> str:
    """The status the API's operations already use for invalid input, `400` or `422` (the
    one more operations declare; `422`, what the generated server answers, on a tie)."""
    if "invalid-input-status" not in plan.memo:
        declared = Counter(r.status for op in plan.api.operations for r in op.responses)
        plan.memo["invalid-input-status"] = "400" if declared["400"] > declared["422"] else "422"
    status: str = plan.memo["invalid-input-status"]
    return status


def fix_invalid_input(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None or any(plan.has_response(op, s) for s in INVALID_INPUT_STATUSES):
        return None
    status = invalid_input_status(plan)
    name = "BadRequest" if status == "400" else "UnprocessableContent"
    response = problem_response(
        plan,
        status,
        name,
        "The request is not valid: a parameter or the body does not match what the "
        "operation accepts.",
    )
    at = plan.add_response(op, status, response)
    return at, f"{plan.label(finding)}: added a `{status}` response for invalid input"


FIXES: dict[str, Fixer] = {
    "problem-details-missing": fix_problem_details,
    "invalid-input-response-missing": fix_invalid_input,
}
