"""RFC 9457 problem details: the one shape every error of the generated server takes.

Integration surface (what a generated `main.py` / router uses):

- `ProblemDetail(status, kind, title, detail, headers=, extensions=)` — raise anywhere (handler,
  dependency, middleware) to answer `application/problem+json`; `headers` go on the response.
- `install_problem_handlers(app, *, max_body_bytes, problem_base)` — call once in
  `create_app`, BEFORE adding other middleware. Afterwards every error is a problem with
  `type` (`problem_base` followed by the kind below, see `problem_type`), `title`, `status`,
  `detail`, `instance` (the request path, never the query string):

  ============================  ======  ================================================
  cause                         status  problem `type` suffix / extras
  ============================  ======  ================================================
  request validation failed     422     `validation-error`, `errors: [{location, message,
                                        type}]` (`location` is a list like
                                        `["body", "items", 0, "name"]`; inputs are never
                                        echoed)
  no route for the path         404     `not-found`
  route exists, wrong method    405     `method-not-allowed`, `Allow` header
  wrong Content-Type on a body  415     `unsupported-media-type` (see `require_content_type`)
  body over `max_body_bytes`    413     `content-too-large` (Content-Length and streamed
                                        bytes are both counted)
  handler raised                501     `not-implemented`, detail names the operation
  `NotImplementedError`
  any other exception           500     `internal-error`; nothing leaks, traceback logged
                                        on the `<package>.runtime.problems` logger
  `HTTPException(status)`       status  kind from `KIND_BY_STATUS`
  `ProblemDetail`               its     its kind, detail, headers, extensions
  ============================  ======  ================================================

  An operation whose spec declares 400 and not 422 (or the other way round) gets the request
  errors above in the status it declares (`declared_status`): the spec's vocabulary wins.

- `ProblemMiddleware` (added by `install_problem_handlers`) is a pure ASGI middleware that
  enforces the body limit, turns unhandled exceptions into the 500 problem, and appends
  *deferred headers* to whatever response goes out, errors included:
  `defer_response_headers(scope, [(name, value), ...])` — this is how the rate limiter puts
  its headers on 404/413/422/429/500 responses alike.
- `RequestGuard` — base class of dependency objects that must run before FastAPI reads the
  request body (rate limiting, Content-Type). Declare them per operation
  (`@router.get(..., dependencies=[Depends(guard)])`) on an `APIRouter(route_class=GuardedRoute)`
  and they run first, so even a malformed-JSON 422 or a 413 carries their headers, and they
  skip FastAPI's dependency solver. Without `GuardedRoute` they still run, as ordinary
  dependencies (after the body is read). Each guard runs at most once per request.
- `require_content_type(*media_types)` — a guard answering 415 when a request carries a body
  whose media type is not one of `media_types` (`type/*` and `*/*` wildcards allowed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, params
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .error_view import ErrorView
from .observability import CLIENT_LEFT_KEY, current_request_id

PROBLEM_JSON = "application/problem+json"
#: Where problem `type` URIs start unless the settings say otherwise (`problem_base`): a
#: relative URI reference, resolved against the request's URL (RFC 9457, section 3.1.1).
DEFAULT_PROBLEM_BASE = "/problems/"
_problem_base = [DEFAULT_PROBLEM_BASE]


def set_problem_base(base: str) -> None:
    """Every problem's `type` is `base` followed by its kind, in this process, from now on
    (`install_problem_handlers` sets it from the settings)."""
    _problem_base[0] = base or DEFAULT_PROBLEM_BASE


def problem_type(kind: str) -> str:
    """The `type` URI of problems of `kind` (e.g. "idempotency-conflict")."""
    return _problem_base[0] + kind


logger = logging.getLogger(__name__)

#: The scope key under which `ProblemMiddleware` collects deferred response headers.
DEFERRED_HEADERS_KEY = "apiforge.deferred_headers"
_GUARDS_DONE_KEY = "apiforge.guards_done"

#: Problem `type` suffix and title per status, for errors that are not a `ProblemDetail`.
KIND_BY_STATUS: dict[int, tuple[str, str]] = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    409: ("conflict", "Conflict"),
    410: ("gone", "Gone"),
    412: ("precondition-failed", "Precondition failed"),
    413: ("content-too-large", "Content too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("validation-error", "Validation failed"),
    428: ("precondition-required", "Precondition required"),
    429: ("rate-limited", "Too many requests"),
    500: ("internal-error", "Internal server error"),
    501: ("not-implemented", "Not implemented"),
    503: ("service-unavailable", "Service unavailable"),
}


class ProblemDetail(Exception):
    """Raise anywhere in a request to answer with `application/problem+json`.

    `kind` is the last segment of the problem `type` URI (e.g. "idempotency-conflict").
    Extra members (e.g. `errors`) go in `extensions`; extra response headers in `headers`.
    """

    def __init__(
        self,
        status: int,
        kind: str,
        title: str,
        detail: str = "",
        *,
        headers: dict[str, str] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {kind}: {detail or title}")
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.headers = dict(headers or {})
        self.extensions = dict(extensions or {})
        #: problem+json, unless the operation declares its errors as plain JSON (as_declared)
        self.media_type = PROBLEM_JSON
        #: the operation's own error object, if its spec declares one (as_declared)
        self.view: ErrorView | None = None

    def body(self, instance: str) -> dict[str, Any]:
        problem: dict[str, Any] = {
            "type": problem_type(self.kind),
            "title": self.title,
            "status": self.status,
            "detail": self.detail or self.title,
            # a URI reference (RFC 9457): the decoded request path, percent-encoded again
            "instance": quote(instance, safe="/:@!$&'()*+,;=-._~"),
        }
        request_id = current_request_id()
        if request_id is not None:  # ties the client's error to the server's log lines
            problem["requestId"] = request_id
        problem.update(self.extensions)
        return problem if self.view is None else self.view.present(problem)

    def encode(self, instance: str) -> bytes:
        return json.dumps(self.body(instance), separators=(",", ":")).encode()


#: Statuses that each say "this request is wrong": where an operation's spec declares one of
#: them and not another, the declared one answers in its place (a spec that lists 400 and not
#: 422 gets its validation failures as 400, the problem's `type` unchanged).
INTERCHANGEABLE: dict[int, tuple[int, ...]] = {400: (422,), 422: (400,)}

#: `app.state` attribute: operation id → the error statuses its responses declare.
_DECLARED_STATE = "apiforge_declared_errors"
#: `app.state` attribute: operation id → {declared response key → its error object's view}.
_VIEWS_STATE = "apiforge_error_views"


def declared_status(status: int, declared: frozenset[str]) -> int:
    """`status`, or the one of `INTERCHANGEABLE[status]` that `declared` (an operation's
    response keys: "400", "4XX", …) lists when it does not list `status` itself."""
    if str(status) in declared or f"{status // 100}XX" in declared:
        return status
    return next((s for s in INTERCHANGEABLE.get(status, ()) if str(s) in declared), status)


def as_declared(scope: Scope, problem: ProblemDetail) -> ProblemDetail:
    """`problem` with the status the matched operation declares for it (`declared_status`),
    in the plain JSON media type and the error object the operation declares for that
    status, if it does."""
    state = getattr(scope.get("app"), "state", None)
    operation = operation_name(scope)
    table: Mapping[str, Mapping[str, str]] | None = getattr(state, _DECLARED_STATE, None)
    declared = table.get(operation) if table else None
    views_table: Mapping[str, Mapping[str, ErrorView]] | None = getattr(state, _VIEWS_STATE, None)
    views = views_table.get(operation) if views_table else None
    if not declared and not views:
        return problem
    status = declared_status(problem.status, frozenset(declared)) if declared else problem.status
    keys = (str(status), f"{status // 100}XX", "default")
    media = next((declared[k] for k in keys if k in declared), "") if declared else ""
    view = next((views[k] for k in keys if k in views), None) if views else None
    if status == problem.status and not media and view is None:
        return problem
    changed = ProblemDetail(
        status,
        problem.kind,
        problem.title,
        problem.detail,
        headers=problem.headers,
        extensions=problem.extensions,
    )
    changed.media_type = media or problem.media_type
    changed.view = view
    return changed


def problem_for_status(
    status: int, detail: str = "", *, headers: dict[str, str] | None = None
) -> ProblemDetail:
    """A `ProblemDetail` with the standard kind and title for `status`."""
    kind, title = KIND_BY_STATUS.get(status, (f"http-{status}", f"HTTP {status}"))
    return ProblemDetail(status, kind, title, detail, headers=headers)


def problem_response(problem: ProblemDetail, instance: str) -> Response:
    """The `application/problem+json` response for `problem` (`instance`: the request path)."""
    return Response(
        problem.encode(instance),
        status_code=problem.status,
        media_type=problem.media_type,
        headers=problem.headers,
    )


# --- deferred headers ---------------------------------------------------------------------


def defer_response_headers(scope: Scope, headers: Iterable[tuple[str, str]]) -> None:
    """Add `headers` to whatever response this request ends with (success or problem).

    Needs `ProblemMiddleware` (installed by `install_problem_handlers`)."""
    try:
        deferred: list[tuple[bytes, bytes]] = scope[DEFERRED_HEADERS_KEY]
    except KeyError:
        raise RuntimeError(
            "deferred response headers need ProblemMiddleware: "
            "call install_problem_handlers(app, ...) in create_app"
        ) from None
    deferred.extend(
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
    )


# --- exception handlers -------------------------------------------------------------------


def _instance(request: Request) -> str:
    return str(request.scope.get("root_path", "")) + str(request.scope.get("path", ""))


async def _problem_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProblemDetail)
    return problem_response(as_declared(request.scope, exc), _instance(request))


async def _http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    path = _instance(request)
    if exc.__cause__ is not None and _client_left(exc.__cause__):
        # FastAPI reports a body the client stopped sending as a 400: no one hears it
        request.scope[CLIENT_LEFT_KEY] = True
    headers = dict(exc.headers or {})
    generic = KIND_BY_STATUS.get(status, ("", ""))[1]
    detail = exc.detail if isinstance(exc.detail, str) else ""
    if status == 404 and detail in ("", "Not Found", generic):
        detail = f"No resource at {path}."
    elif status == 405:
        allowed = headers.get("Allow") or headers.get("allow") or ""
        detail = f"{request.method} is not allowed on {path}." + (
            f" Allowed: {allowed}." if allowed else ""
        )
    problem = problem_for_status(status, detail, headers=headers)
    return problem_response(as_declared(request.scope, problem), path)


def validation_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Pydantic/FastAPI errors as `{location, message, type}` items; inputs are not echoed."""
    items: list[dict[str, Any]] = []
    for error in errors:
        if not isinstance(error, dict):
            continue
        loc = error.get("loc", ())
        items.append(
            {
                "location": [part if isinstance(part, int) else str(part) for part in loc],
                "message": str(error.get("msg", "")),
                "type": str(error.get("type", "")),
            }
        )
    return items


async def _validation_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = validation_errors(exc.errors())
    count = len(errors)
    detail = f"The request has {count} invalid field{'s' if count != 1 else ''}."
    problem = ProblemDetail(
        422, "validation-error", "Validation failed", detail, extensions={"errors": errors}
    )
    return problem_response(as_declared(request.scope, problem), _instance(request))


def operation_name(scope: Scope) -> str:
    """The operation id of the matched route (its name if it has no operation id)."""
    route = scope.get("route")
    name = getattr(route, "operation_id", None) or getattr(route, "name", None)
    return str(name) if name else "unknown"


async def _not_implemented_handler(request: Request, exc: Exception) -> Response:
    operation = operation_name(request.scope)
    route = request.scope.get("route")
    where = f"{request.method} {getattr(route, 'path_format', _instance(request))}"
    logger.warning("operation %s (%s) has no handler implementation", operation, where)
    problem = problem_for_status(
        501, f"Operation '{operation}' ({where}) has no handler implementation yet."
    )
    return problem_response(problem, _instance(request))


# --- the pure ASGI middleware -------------------------------------------------------------


class _BodyTooLarge(StarletteHTTPException):
    """Raised from `receive` once the body passes the limit; FastAPI lets HTTPExceptions
    through its body reading, so the exception handlers turn it into the 413 problem."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body exceeds the limit of {limit} bytes.")


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class ProblemMiddleware:
    """Body limit, unhandled exceptions → 500 problem, and deferred headers. Pure ASGI."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deferred: list[tuple[bytes, bytes]] = []
        scope[DEFERRED_HEADERS_KEY] = deferred
        limit = self.max_body_bytes
        declared = _content_length(scope)
        too_long = declared is not None and declared > limit
        received = 0
        started = False
        replaced = False

        async def limited_receive() -> Message:
            nonlocal received
            if too_long:
                raise _BodyTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _BodyTooLarge(limit)
            return message

        async def send_with_headers(message: Message) -> None:
            nonlocal started, replaced
            if replaced:
                return  # the app answered without reading an oversized body: 413 already sent
            if message["type"] == "http.response.start":
                if too_long:
                    replaced = True
                    problem = problem_for_status(413, _BodyTooLarge(limit).detail)
                    await self._send_problem(scope, send, problem, deferred)
                    return
                started = True
                if deferred:
                    message["headers"] = [*message.get("headers", ()), *deferred]
            await send(message)

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except Exception as exc:
            if _client_left(exc):
                # the client closed the connection before its body was read: no one to
                # answer, and no fault of the server (no 500, no traceback; counted as 499)
                scope[CLIENT_LEFT_KEY] = True
                logger.info(
                    "client disconnected during %s %s", scope.get("method"), scope.get("path")
                )
                return
            if started or replaced:
                logger.error("exception after the response started", exc_info=exc)
                raise
            problem = self._as_problem(scope, exc)
            await self._send_problem(scope, send, problem, deferred)

    @staticmethod
    def _as_problem(scope: Scope, exc: Exception) -> ProblemDetail:
        if isinstance(exc, ProblemDetail):
            return exc
        if isinstance(exc, _BodyTooLarge):
            return problem_for_status(413, str(exc.detail))
        if isinstance(exc, BaseExceptionGroup):
            # anyio task groups in other middleware wrap errors; answer for the first
            match, _ = exc.split((ProblemDetail, _BodyTooLarge))
            if match is not None and len(match.exceptions) == len(exc.exceptions):
                first = match.exceptions[0]
                if isinstance(first, Exception):
                    return ProblemMiddleware._as_problem(scope, first)
        logger.error(
            "unhandled exception in %s %s (operation %s)",
            scope.get("method"),
            scope.get("path"),
            operation_name(scope),
            exc_info=exc,
        )
        return problem_for_status(500, "The server failed to handle the request.")

    @staticmethod
    async def _send_problem(
        scope: Scope, send: Send, problem: ProblemDetail, deferred: list[tuple[bytes, bytes]]
    ) -> None:
        instance = str(scope.get("root_path", "")) + str(scope.get("path", ""))
        problem = as_declared(scope, problem)
        body = problem.encode(instance)
        headers = [
            (b"content-type", problem.media_type.encode()),
            (b"content-length", str(len(body)).encode()),
            *(
                (k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in problem.headers.items()
            ),
            *deferred,
        ]
        await send({"type": "http.response.start", "status": problem.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _client_left(exc: BaseException) -> bool:
    """Whether `exc` only says the client went away (also inside an anyio exception group)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_left(e) for e in exc.exceptions)
    return isinstance(exc, ClientDisconnect)


def install_problem_handlers(
    app: FastAPI,
    *,
    max_body_bytes: int,
    declared_errors: Mapping[str, Mapping[str, str]] | None = None,
    error_views: Mapping[str, Mapping[str, ErrorView]] | None = None,
    problem_base: str = DEFAULT_PROBLEM_BASE,
) -> None:
    """Make every error of `app` an `application/problem+json` response (see module doc).

    `problem_base`: where problem `type` URIs start (`set_problem_base`).

    `declared_errors`: operation id → {response key its spec declares ("400", "4XX",
    "default", …) → the plain JSON media type it declares, or ""}: a request error answers
    with the declared one of `INTERCHANGEABLE`, a problem in the declared media type.
    `error_views`: operation id → {response key → the `ErrorView` of the error object its
    spec declares}: a problem answers in that object.
    Call it before adding other middleware: `ProblemMiddleware` must sit outside everything
    that can fail, and middleware added later wraps it."""
    set_problem_base(problem_base)
    table = {op: dict(keys) for op, keys in (declared_errors or {}).items()}
    setattr(app.state, _DECLARED_STATE, table)
    setattr(app.state, _VIEWS_STATE, {op: dict(keys) for op, keys in (error_views or {}).items()})
    app.add_exception_handler(ProblemDetail, _problem_handler)
    app.add_exception_handler(StarletteHTTPException, _http_exception_handler)
    app.add_exception_handler(RequestValidationError, _validation_handler)
    app.add_exception_handler(NotImplementedError, _not_implemented_handler)
    app.add_middleware(ProblemMiddleware, max_body_bytes=max_body_bytes)


# --- guards that run before the body is read ----------------------------------------------


class RequestGuard:
    """A dependency that checks the request before the body is read (see `GuardedRoute`).

    Subclasses implement `check`; `__call__` runs it at most once per request."""

    async def check(self, request: Request) -> None:
        raise NotImplementedError

    async def __call__(self, request: Request) -> None:
        done: set[int] = request.scope.setdefault(_GUARDS_DONE_KEY, set())
        if id(self) in done:
            return
        done.add(id(self))
        await self.check(request)


class GuardedRoute(APIRoute):
    """An `APIRoute` that runs its `RequestGuard` dependencies (the operation's own and those of
    the `APIRouter` it is declared on) before FastAPI reads the body, in declaration order:
    `APIRouter(route_class=GuardedRoute)`. FastAPI's dependency solver does not see them
    (they take no parameters), so they cost one call each. Guards from dependencies added at
    `include_router` time run as ordinary dependencies."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        dependencies = list(kwargs.pop("dependencies", None) or [])
        self.guards: list[RequestGuard] = [
            d.dependency for d in dependencies if isinstance(d.dependency, RequestGuard)
        ]
        others = [d for d in dependencies if not isinstance(d.dependency, RequestGuard)]
        super().__init__(path, endpoint, dependencies=others, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        guards = self.guards
        reads_json = self.body_field is not None and not isinstance(
            self.body_field.field_info, params.Form
        )
        if not guards and not reads_json:
            return handler

        async def guarded(request: Request) -> Response:
            for guard in guards:
                await guard(request)
            if reads_json:
                _read_as_json(request)
            return await handler(request)

        return guarded


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _read_as_json(request: Request) -> None:
    """A JSON media type outside `application/` (`text/json`, common in .NET specs) labelled
    `application/json` for FastAPI, which reads a body as JSON only under `application/` and
    would hand the body model the raw bytes. (The declared media types were checked first.)"""
    major, _, minor = _media_type(request.headers.get("content-type", "")).partition("/")
    if major == "application" or not (minor == "json" or minor.endswith("+json")):
        return
    headers = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"content-type"]
    request.scope["headers"] = [*headers, (b"content-type", b"application/json")]
    request.__dict__.pop("_headers", None)  # Starlette's cached view of the old headers


class ContentTypeGuard(RequestGuard):
    """415 when the request has a body whose media type is not accepted."""

    def __init__(self, media_types: Sequence[str]) -> None:
        self.media_types = tuple(_media_type(m) for m in media_types)

    def accepts(self, content_type: str | None) -> bool:
        if content_type is None:
            return False
        media = _media_type(content_type)
        major = media.split("/", 1)[0]
        for accepted in self.media_types:
            if accepted in (media, "*/*") or accepted == f"{major}/*":
                return True
        return False

    async def check(self, request: Request) -> None:
        headers = request.headers
        length = headers.get("content-length")
        has_body = (length is not None and length.strip() not in ("", "0")) or (
            "transfer-encoding" in headers
        )
        if not has_body:
            return
        content_type = headers.get("content-type")
        if not self.accepts(content_type):
            expected = ", ".join(self.media_types)
            got = _media_type(content_type) if content_type else "no Content-Type"
            raise problem_for_status(
                415, f"This operation accepts {expected}; the request sent {got}."
            )


def require_content_type(*media_types: str) -> ContentTypeGuard:
    """A guard for an operation's request body media types (415 otherwise)."""
    if not media_types:
        raise ValueError("require_content_type needs at least one media type")
    return ContentTypeGuard(media_types)
