"""RFC 9457 problem details: which error responses use `application/problem+json`."""

from __future__ import annotations

from collections.abc import Iterator

from generator.ir import Api, Operation, ProblemsSpec, Response
from generator.lint.model import Hit, Rule, op_hit, rule

PROBLEM_JSON = "application/problem+json"


def is_problem(response: Response) -> bool:
    return any(
        m.content_type.lower().split(";")[0].strip() == PROBLEM_JSON for m in response.content
    )


def detect(op: Operation) -> ProblemsSpec | None:
    errors = op.error_responses
    if not errors:
        return None
    return ProblemsSpec(
        problem_statuses=tuple(r.status for r in errors if is_problem(r)),
        other_statuses=tuple(r.status for r in errors if not is_problem(r)),
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


RULES: tuple[Rule, ...] = (problem_details_missing,)
