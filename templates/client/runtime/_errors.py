"""Every error the client raises, and the mapping from a response to the right one.

Public API:

- `ProblemDetails(type, title, status, detail, instance, extensions)`: a parsed RFC 9457 body;
  `.kind` is the last segment of `type` (e.g. "idempotency-conflict"); `.get(name)` reads any
  member; `ProblemDetails.from_json(data)` / `.from_response(response)` build one (or None).
- `APIError` (base of all) ← `APIConnectionError(message, request=None)` ←
  `APITimeoutError`.
- `APIStatusError(status_code, problem, response, message=None)` with `.body` (JSON or text)
  and `.headers`, and its subclasses: `BadRequest` 400, `Unauthorized` 401, `Forbidden` 403,
  `NotFound` 404, `Conflict` 409 ← `IdempotencyInProgress` (409, type ends with
  `idempotency-in-progress`), `PreconditionFailed` 412, `UnprocessableEntity` 422 ←
  `IdempotencyConflict` (422, type ends with `idempotency-conflict`), `PreconditionRequired`
  428, `RateLimited` 429 (`.retry_after: float | None`, `.rate_limit`), `ServerError` 5xx,
  `UnexpectedStatus` (any other non-success status).
- `error_from_response(response, now=None) -> APIStatusError`: the one mapping. Its message
  is `HTTP <status>` with the problem's title and detail, or what another JSON body says
  (`message`, `error.message`, `errors[0].message`, `detail`...), and the request id;
  `.request_id` (`x-request-id`, `request-id`); `.parsed`: the body as the error response the
  operation declares for the status (set by the client; None when it declares none).
- `APIResponseValidationError(response, message, errors=())`: a success response whose body
  is not JSON, or (with `strict_response_validation=True`; else the body is returned for what
  it holds, with a warning: `_salvage`) not what the operation declares; `.status_code`, `.headers`, `.content` (the raw body),
  `.body` (JSON or text) and `.errors` (pydantic's, without the input values).
- Job outcomes: `JobFailed(problem, job)`, `JobCancelled(job)`, `JobTimeout(timeout, job)`.
- `WebhookVerificationError(message)`.
- Credentials, raised on the client's side: `CredentialsError` (base) ←
  - `MissingCredentials(what, alternatives, undefined=())`: the call needs a credential the
    client was not given; raised before anything is sent. `.alternatives`: the (constructor
    argument, scheme) pairs of each way to satisfy it; `.arguments`: their arguments;
  - `TokenRequestFailed(message, status_code=None, error=None)`: an OAuth2 token endpoint
    refused the client's credentials or could not be reached.
  Their messages never carry a secret.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx

from ._ratelimit import RateLimit, parse_rate_limit
from ._retry import parse_retry_after

_STANDARD_MEMBERS = ("type", "title", "status", "detail", "instance")


@dataclass(frozen=True, slots=True)
class ProblemDetails:
    """An RFC 9457 problem: the standard members plus any extension members."""

    type: str = "about:blank"
    title: str | None = None
    status: int | None = None
    detail: str | None = None
    instance: str | None = None
    extensions: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @property
    def kind(self) -> str:
        """The last path segment of `type`: ".../problems/rate-limited" -> "rate-limited"."""
        return self.type.rstrip("/").rsplit("/", 1)[-1]

    def get(self, name: str, default: Any = None) -> Any:
        """A member by name: a standard one, else an extension (e.g. `errors`)."""
        if name in _STANDARD_MEMBERS:
            return getattr(self, name)
        return self.extensions.get(name, default)

    def to_dict(self) -> dict[str, Any]:
        """The problem as JSON data, extensions included."""
        data: dict[str, Any] = {"type": self.type}
        for name in _STANDARD_MEMBERS[1:]:
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        data.update(self.extensions)
        return data

    @classmethod
    def from_json(cls, data: Any) -> ProblemDetails | None:
        """A problem from parsed JSON; None unless it is an object. Mistyped standard members
        are dropped rather than trusted (the RFC says to ignore them)."""
        if not isinstance(data, Mapping):
            return None
        data = cast("Mapping[str, Any]", data)
        type_ = data.get("type")
        status = data.get("status")
        return cls(
            type=type_ if isinstance(type_, str) and type_ else "about:blank",
            title=_str_or_none(data.get("title")),
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
            detail=_str_or_none(data.get("detail")),
            instance=_str_or_none(data.get("instance")),
            extensions={k: v for k, v in data.items() if k not in _STANDARD_MEMBERS},
        )

    @classmethod
    def from_response(cls, response: httpx.Response) -> ProblemDetails | None:
        """The response's problem body: `application/problem+json`, or any JSON object that
        carries at least one standard member. None for HTML error pages and the like."""
        body = _json_or_none(response)
        if not isinstance(body, Mapping):
            return None
        content_type = response.headers.get("content-type", "").lower()
        if "problem+json" in content_type or any(m in body for m in _STANDARD_MEMBERS):
            return cls.from_json(body)
        return None


REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-correlation-id")
_MESSAGE_MEMBERS = ("message", "error_description", "detail", "msg", "error", "title")


def find_request_id(headers: httpx.Headers) -> str | None:
    for name in REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return str(value)[:200]
    return None


def body_message(body: Any, depth: int = 0) -> str | None:
    """What an error body says, for an error's message: its `message` (or `error_description`,
    `detail`, `msg`, `error`, `title`), also inside `error: {...}` or the first of `errors:
    [...]`; None when it says nothing readable. At most 500 characters."""
    if depth > 2:
        return None
    if isinstance(body, Mapping):
        body = cast("Mapping[str, Any]", body)
        for name in _MESSAGE_MEMBERS:
            value = body.get(name)
            if isinstance(value, str) and value.strip():
                return value.strip()[:500]
        for name in ("error", "errors"):
            value = body.get(name)
            if isinstance(value, list) and value:
                value = cast("list[object]", value)[0]
            if isinstance(value, Mapping | list):
                found = body_message(value, depth + 1)
                if found is not None:
                    return found
    if isinstance(body, list) and body:
        return body_message(cast("list[object]", body)[0], depth + 1)
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _json_or_none(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


class APIError(Exception):
    """Base class of every error this client raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class APIConnectionError(APIError):
    """No usable response: the connection failed, was reset, or the server hung up."""

    def __init__(
        self, message: str = "Connection error.", *, request: httpx.Request | None = None
    ) -> None:
        super().__init__(message)
        self.request = request


class APITimeoutError(APIConnectionError):
    """The request timed out (connect, write, read or pool)."""

    def __init__(
        self, message: str = "Request timed out.", *, request: httpx.Request | None = None
    ) -> None:
        super().__init__(message, request=request)


class APIStatusError(APIError):
    """The server answered with a status that is not a success."""

    def __init__(
        self,
        status_code: int,
        problem: ProblemDetails | None,
        response: httpx.Response,
        message: str | None = None,
    ) -> None:
        if message is None:
            message = f"HTTP {status_code}"
            if problem is not None and (problem.title or problem.detail):
                summary = ": ".join(p for p in (problem.title, problem.detail) if p)
                message = f"{message} {summary}"
            elif (said := body_message(_json_or_none(response))) is not None:
                message = f"{message}: {said}"
            request_id = find_request_id(response.headers)
            if request_id:
                message = f"{message} (request id {request_id})"
        super().__init__(message)
        self.status_code = status_code
        self.problem = problem
        self.response = response
        # the body parsed as the error response the operation declares for this status
        # (None: it declares none, or the body is not that)
        self.parsed: Any = None

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def request_id(self) -> str | None:
        """The server's id for this request (`x-request-id`, `request-id`), to quote to it."""
        return find_request_id(self.response.headers)

    @property
    def body(self) -> Any:
        """The response body as JSON data when it is JSON, else as text."""
        parsed = _json_or_none(self.response)
        return parsed if parsed is not None else self.response.text


class APIResponseValidationError(APIError):
    """A success response whose body cannot be read as the operation declares it (see the
    module docstring). Unknown enum values, unknown members, unknown `oneOf` variants and
    date-times without a time zone do not raise this unless the client was made with
    `strict_response_validation=True`."""

    def __init__(
        self,
        response: httpx.Response,
        message: str,
        *,
        errors: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(f"HTTP {response.status_code}: the response body {message}")
        self.response = response
        self.status_code = response.status_code
        self.errors = tuple(errors)

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def request_id(self) -> str | None:
        return find_request_id(self.response.headers)

    @property
    def content(self) -> bytes:
        """The body as it arrived."""
        return self.response.content

    @property
    def body(self) -> Any:
        """The body as JSON data when it is JSON, else as text."""
        parsed = _json_or_none(self.response)
        return parsed if parsed is not None else self.response.text


class BadRequest(APIStatusError):
    """400."""


class Unauthorized(APIStatusError):
    """401."""


class Forbidden(APIStatusError):
    """403."""


class NotFound(APIStatusError):
    """404."""


class Conflict(APIStatusError):
    """409."""


class IdempotencyInProgress(Conflict):
    """409: the first request with this idempotency key is still being processed."""


class PreconditionFailed(APIStatusError):
    """412: the `If-Match` ETag no longer matches; re-read and try again."""


class UnprocessableEntity(APIStatusError):
    """422."""


class IdempotencyConflict(UnprocessableEntity):
    """422: the idempotency key was already used with a different request body."""


class PreconditionRequired(APIStatusError):
    """428: the operation requires `If-Match`."""


class RateLimited(APIStatusError):
    """429. `retry_after`: the seconds the server asked us to wait (None if it did not say)."""

    def __init__(
        self,
        status_code: int,
        problem: ProblemDetails | None,
        response: httpx.Response,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        super().__init__(status_code, problem, response, message)
        self.retry_after = retry_after
        self.rate_limit = rate_limit


class ServerError(APIStatusError):
    """Any 5xx."""


class UnexpectedStatus(APIStatusError):
    """Any other status that is not a success (e.g. 405, 410, a redirect)."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    422: UnprocessableEntity,
    428: PreconditionRequired,
}


def error_from_response(response: httpx.Response, *, now: float | None = None) -> APIStatusError:
    """The typed exception for a response that is not a success. `now` (unix seconds) is the
    clock an HTTP-date `Retry-After` is measured against."""
    status = response.status_code
    problem = ProblemDetails.from_response(response)
    kind = problem.kind if problem is not None else ""
    if status == 429:
        current = time.time() if now is None else now
        return RateLimited(
            status,
            problem,
            response,
            retry_after=parse_retry_after(response.headers, now=current),
            rate_limit=parse_rate_limit(response.headers, now=current),
        )
    if status == 409 and kind.endswith("idempotency-in-progress"):
        return IdempotencyInProgress(status, problem, response)
    if status == 422 and kind.endswith("idempotency-conflict"):
        return IdempotencyConflict(status, problem, response)
    if 500 <= status <= 599:
        return ServerError(status, problem, response)
    return _BY_STATUS.get(status, UnexpectedStatus)(status, problem, response)


class JobFailed(APIError):
    """The async job ended in `failed`; `problem` is the job's `error` member."""

    def __init__(self, problem: ProblemDetails | None, job: Mapping[str, Any]) -> None:
        detail = problem.detail or problem.title if problem is not None else None
        super().__init__(f"job failed: {detail}" if detail else "job failed")
        self.problem = problem
        self.job = job


class JobCancelled(APIError):
    """The async job ended in `cancelled`."""

    def __init__(self, job: Mapping[str, Any]) -> None:
        super().__init__("job was cancelled")
        self.job = job


class JobTimeout(APIError):
    """The async job did not finish within the time `wait()` was given."""

    def __init__(self, timeout: float, job: Mapping[str, Any]) -> None:
        status = job.get("status", "unknown")
        super().__init__(f"job still {status!s} after waiting {timeout:g} s")
        self.timeout = timeout
        self.job = job


class WebhookVerificationError(APIError):
    """A webhook's signature, timestamp or headers failed verification: do not trust it."""


class CredentialsError(APIError):
    """The client could not authenticate a call on its side (see the subclasses)."""


class MissingCredentials(CredentialsError):
    """The operation needs credentials this client was not given; nothing was sent.

    `alternatives`: each way the operation can be authenticated, as the (constructor
    argument, security scheme) pairs it needs together; `undefined`: scheme names the spec
    requires but never defines (no client can satisfy them)."""

    def __init__(
        self,
        what: str,
        alternatives: Sequence[Sequence[tuple[str, str]]],
        *,
        undefined: Sequence[str] = (),
    ) -> None:
        self.alternatives = tuple(tuple(a) for a in alternatives if a)
        self.undefined = tuple(undefined)
        ways = [
            " and ".join(f"`{argument}=` ({scheme})" for argument, scheme in pairs)
            for pairs in self.alternatives
        ]
        if ways:
            message = f"{what} needs credentials this client was not given: pass "
            message += ", or ".join(ways) + " to the client"
        else:
            message = f"{what} needs credentials this client cannot send"
        if self.undefined:
            message += "; the spec requires security schemes it does not define: "
            message += ", ".join(self.undefined)
        super().__init__(message)

    @property
    def arguments(self) -> tuple[tuple[str, ...], ...]:
        """The constructor arguments of each alternative."""
        return tuple(tuple(argument for argument, _ in pairs) for pairs in self.alternatives)


class TokenRequestFailed(CredentialsError):
    """An OAuth2 token endpoint refused the client's credentials or could not be reached.
    `status_code`: its HTTP status (None: no answer); `error`: the OAuth2 `error` code."""

    def __init__(
        self, message: str, *, status_code: int | None = None, error: str | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error = error
