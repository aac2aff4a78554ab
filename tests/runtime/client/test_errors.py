"""Problem details and the mapping from a response to the typed exception."""

from __future__ import annotations

from email.utils import formatdate

import httpx
import pytest

from templates.client.runtime import (
    APIStatusError,
    BadRequest,
    Conflict,
    Forbidden,
    IdempotencyConflict,
    IdempotencyInProgress,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    ProblemDetails,
    RateLimited,
    ServerError,
    Unauthorized,
    UnexpectedStatus,
    UnprocessableEntity,
    error_from_response,
)

from .fakes import PROBLEM_HEADERS, problem

NOW = 1_700_000_000.0


def response(
    status: int, json: object = None, headers: dict[str, str] | None = None, text: str | None = None
) -> httpx.Response:
    request = httpx.Request("POST", "https://api.example.com/v1/payments")
    if text is not None:
        return httpx.Response(status, text=text, headers=headers, request=request)
    return httpx.Response(status, json=json, headers=headers or PROBLEM_HEADERS, request=request)


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (400, "validation-error", BadRequest),
        (401, "unauthorized", Unauthorized),
        (403, "forbidden", Forbidden),
        (404, "not-found", NotFound),
        (409, "conflict", Conflict),
        (409, "idempotency-in-progress", IdempotencyInProgress),
        (412, "precondition-failed", PreconditionFailed),
        (422, "validation-error", UnprocessableEntity),
        (422, "idempotency-conflict", IdempotencyConflict),
        (428, "precondition-required", PreconditionRequired),
        (429, "rate-limited", RateLimited),
        (500, "internal", ServerError),
        (503, "unavailable", ServerError),
        (599, "odd", ServerError),
        (405, "method-not-allowed", UnexpectedStatus),
        (302, "found", UnexpectedStatus),
    ],
)
def test_status_and_problem_type_pick_the_exception(
    status: int, kind: str, expected: type[APIStatusError]
) -> None:
    error = error_from_response(response(status, problem(status, kind, "it broke")))
    assert type(error) is expected
    assert error.status_code == status
    assert error.problem is not None and error.problem.kind == kind
    assert error.response.status_code == status
    assert "it broke" in str(error)


def test_idempotency_errors_are_their_parents_too() -> None:
    in_progress = error_from_response(response(409, problem(409, "idempotency-in-progress")))
    conflict = error_from_response(response(422, problem(422, "idempotency-conflict")))
    assert isinstance(in_progress, Conflict)
    assert isinstance(conflict, UnprocessableEntity)
    # the same kinds under another status are not mistaken for them
    assert (
        type(error_from_response(response(400, problem(400, "idempotency-conflict")))) is BadRequest
    )


def test_problem_members_and_extensions() -> None:
    body = problem(422, "validation-error", "bad amount", errors=[{"loc": ["amount"]}])
    body["instance"] = "/v1/payments/1"
    parsed = ProblemDetails.from_json(body)
    assert parsed is not None
    assert parsed.type == "/problems/validation-error"
    assert (parsed.title, parsed.status, parsed.detail, parsed.instance) == (
        "Validation error",
        422,
        "bad amount",
        "/v1/payments/1",
    )
    assert parsed.extensions == {"errors": [{"loc": ["amount"]}]}
    assert parsed.get("errors") == [{"loc": ["amount"]}] and parsed.get("status") == 422
    assert parsed.to_dict() == body


def test_mistyped_members_are_dropped_and_type_defaults_to_about_blank() -> None:
    parsed = ProblemDetails.from_json({"status": "500", "title": 3, "detail": "x"})
    assert parsed == ProblemDetails(type="about:blank", detail="x", extensions={})
    assert ProblemDetails.from_json([1, 2]) is None


def test_non_problem_bodies_give_no_problem_but_keep_the_body() -> None:
    html = error_from_response(
        response(502, text="<html>Bad gateway</html>", headers={"Content-Type": "text/html"})
    )
    assert isinstance(html, ServerError) and html.problem is None
    assert html.body == "<html>Bad gateway</html>"
    other_json = error_from_response(
        response(400, {"error": "nope"}, headers={"Content-Type": "application/json"})
    )
    assert other_json.problem is None and other_json.body == {"error": "nope"}
    # problem+json is trusted even without standard members
    bare = error_from_response(response(400, {"code": 7}))
    assert bare.problem is not None and bare.problem.extensions == {"code": 7}


def test_rate_limited_carries_retry_after_and_rate_limit() -> None:
    headers = {
        **PROBLEM_HEADERS,
        "Retry-After": "60",
        "X-RateLimit-Limit": "1000",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": "60",
    }
    error = error_from_response(response(429, problem(429, "rate-limited"), headers), now=NOW)
    assert isinstance(error, RateLimited)
    assert error.retry_after == 60.0
    assert error.rate_limit is not None and error.rate_limit.reset_at == NOW + 60
    dated = {**PROBLEM_HEADERS, "Retry-After": formatdate(NOW + 90, usegmt=True)}
    error = error_from_response(response(429, problem(429, "rate-limited"), dated), now=NOW)
    assert isinstance(error, RateLimited) and error.retry_after == 90.0
    silent = error_from_response(response(429, problem(429, "rate-limited")), now=NOW)
    assert isinstance(silent, RateLimited) and silent.retry_after is None
