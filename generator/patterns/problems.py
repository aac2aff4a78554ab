"""RFC 9457 problem details: which error responses use `application/problem+json`."""

from __future__ import annotations

from generator.ir import Operation, ProblemsSpec, Response

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
