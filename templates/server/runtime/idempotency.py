"""Idempotency-Key enforcement (draft-ietf-httpapi-idempotency-key-header + the reference's §1).

Integration surface
-------------------
Once per app, at startup::

    install_idempotency(app, settings.idempotency_store_url,
                        lock_timeout=settings.idempotency_lock_timeout,
                        result_ttl=settings.idempotency_ttl)

and one line per operation that declares `Idempotency-Key`, in the generated router::

    router.add_api_route("/payments", create_payment, methods=["POST"], status_code=201,
                         route_class_override=idempotent_route("Idempotency-Key", required=True))

(`APIRouter(route_class=idempotent_route(...))` makes every route of a router idempotent;
`idempotent_route(..., base=GuardedRoute)` keeps problems.py's request guards, which then run
before the key is claimed.)
`idempotent_route` returns an `APIRoute` subclass whose `get_route_handler` wraps FastAPI's
own handler. That hook — not `route.app` — is the one FastAPI 0.165 also calls when it builds
an included router's routes, so the route works the same after `app.include_router(router)`.

What a request gets
-------------------
- key header absent: optional → the operation runs unprotected; required → 400 problem
  `idempotency-key-missing`. Malformed, repeated, empty or longer than 255 characters → 400
  problem `idempotency-key-invalid`. The key may be sent as an sf-string (`"abc"`) or bare.
- scope = (principal, key): the principal authentication verified (`security.Principal`,
  by the SHA-256 of its id), so one tenant's keys never reach another's responses. Secured
  operations never get here without a principal (authentication runs first).
- a caller without a principal (an operation the spec makes public) has nothing that names
  it but its key and its address, so both keep callers apart: the key must be a unique
  random value (at least 16 characters, 8 of them distinct — a UUID passes, "7" is a 400
  `idempotency-key-invalid`), and the scope is the client address (`client_address`: an
  IPv4 address, an IPv6 /64), so a key that leaks or is guessed replays nothing to a caller
  elsewhere. The price: an anonymous client whose address changes between its first try
  and its retry runs the operation again (the generated client sends 128-bit random keys).
- `Set-Cookie` is never stored nor replayed: the first response carries it, a replay does
  not (a session is handed to one caller only).
- fingerprint = sha256 of method, path + query, and the body bytes.
- claim (atomic in the store) → the handler runs → its response is rendered to bytes once,
  stored, and those same bytes are sent. While the handler runs, a heartbeat extends the claim
  every lock_timeout/3, so the lock timeout only bounds how long a claim abandoned by a dead
  worker blocks the key, never a slow but live handler.
- same key, same fingerprint, completed → the stored status, header pairs and body byte for
  byte, plus `Idempotent-Replayed: true`. Background tasks do not run again.
- same key, other fingerprint → 422 problem `idempotency-conflict` (whatever the state).
- same key while the first is in flight → 409 problem `idempotency-in-progress`, `Retry-After: 1`.
- the handler raises an unhandled exception or answers 5xx → the claim is released (nothing
  stored), so a retry runs cleanly — cleanly for what the handler wrote in
  `ctx.transaction()`, which rolls back with it; writes made elsewhere stay.
- a handler's `ctx.transaction()` on the database the records live in commits with the
  stored response, in one transaction (`transaction.py`): a worker that dies before that
  commit leaves nothing behind, one that dies after it leaves the answer to replay.
- the request fails validation before the handler runs (FastAPI's `RequestValidationError`,
  422) → the claim is released: nothing stored.

Which handler results are stored
--------------------------------
Every result below 500 that the operation itself produced — including 4xx raised as
`HTTPException`/`ProblemDetail` (rendered through the app's exception handlers, exactly as the
client sees them) — is stored and replayed, as Stripe does and the draft allows: the handler
ran and decided (a declined card, a 404 on a referenced resource, a failed precondition), it
may have had side effects, and re-running it on a retry could act twice or answer differently.
The exceptions are the statuses that *mean* "try again": 408, 409, 425, 428 (send it again
with `If-Match`) and 429 — they are
released like 5xx, so the client's retry (same key) gets a fresh attempt instead of a replay
of "try again" for 24 h.

Responses are buffered for storage, so a streaming response of an idempotent operation is
sent only once it is complete.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Scope

from .client_address import client_ip
from .idempotency_store import (
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_RESULT_TTL,
    Existing,
    IdempotencyRecord,
    IdempotencyStore,
    StoredResponse,
)
from .observability import record
from .problems import PROBLEM_JSON, ProblemDetail
from .security import principal_of
from .stores import open_idempotency_store
from .transaction import KeyClaim, bind_claim, claim_lost, settle

__all__ = [
    "DEFAULT_HEADER",
    "MAX_KEY_LENGTH",
    "NOT_STORED_STATUSES",
    "IdempotencyConfig",
    "idempotent_route",
    "install_idempotency",
    "parse_idempotency_key",
    "principal_scope",
    "request_fingerprint",
]

log = logging.getLogger("apiforge.idempotency")

DEFAULT_HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
PUBLIC_SCOPE = "public"
#: Keys of callers without a principal: how short and how uniform a key may be.
MIN_ANONYMOUS_KEY_LENGTH = 16
MIN_ANONYMOUS_KEY_DISTINCT = 8
# results < 500 that are not stored: they tell the client to retry later
NOT_STORED_STATUSES = frozenset({408, 409, 425, 428, 429})
REPLAYED_HEADER = (b"idempotent-replayed", b"true")

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


@dataclass(frozen=True, slots=True)
class IdempotencyConfig:
    store: IdempotencyStore
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    result_ttl: float = DEFAULT_RESULT_TTL
    enabled: bool = True  # False: idempotent routes run as plain routes (benchmarks)


def install_idempotency(
    app: FastAPI,
    store: IdempotencyStore | str,
    *,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    result_ttl: float = DEFAULT_RESULT_TTL,
    enabled: bool = True,
) -> IdempotencyConfig:
    """Give `app`'s idempotent routes their store (an instance or a store URL) and timings.
    Call `await config.store.aclose()` on shutdown. `enabled=False` turns the keys off (the
    routes run unprotected), to measure what the layer costs."""
    if lock_timeout <= 0 or result_ttl <= 0:
        raise ValueError("idempotency lock_timeout and result_ttl must be positive")
    if isinstance(store, str):
        store = open_idempotency_store(store)
    config = IdempotencyConfig(store, lock_timeout, result_ttl, enabled)
    app.state.idempotency = config
    return config


# ---------------------------------------------------------------------------------------------
# pure helpers


def parse_idempotency_key(value: str) -> str:
    """The key from one header value: an sf-string (`"abc"`, escapes `\\"` and `\\\\`) or bare.
    Raises ValueError (with a message fit for a client) when it is not a usable key."""
    text = value.strip(" \t")
    if text.startswith('"'):
        chars: list[str] = []
        i = 1
        while True:
            if i >= len(text):
                raise ValueError("the quoted key has no closing quote")
            c = text[i]
            if c == "\\":
                if i + 1 >= len(text) or text[i + 1] not in '"\\':
                    raise ValueError('only \\" and \\\\ may be escaped in a quoted key')
                chars.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                break
            if not " " <= c <= "~":
                raise ValueError("the key must be printable ASCII")
            chars.append(c)
            i += 1
        if i != len(text) - 1:
            raise ValueError("unexpected characters after the quoted key")
        key = "".join(chars)
    else:
        key = text
        if any(not "!" <= c <= "~" or c in '"\\' for c in key):
            raise ValueError(
                "a bare key must be visible ASCII without spaces, quotes or backslashes"
            )
    if not key:
        raise ValueError("the key is empty")
    if len(key) > MAX_KEY_LENGTH:
        raise ValueError(f"the key is {len(key)} characters long; at most {MAX_KEY_LENGTH} allowed")
    return key


def check_anonymous_key(key: str) -> None:
    """Raises ValueError unless `key` is fit to keep anonymous callers apart: at least
    `MIN_ANONYMOUS_KEY_LENGTH` characters, `MIN_ANONYMOUS_KEY_DISTINCT` of them distinct
    (a UUID or 128 random bits pass; "7", a counter or a timestamp do not)."""
    if len(key) < MIN_ANONYMOUS_KEY_LENGTH or len(set(key)) < MIN_ANONYMOUS_KEY_DISTINCT:
        raise ValueError(
            "without credentials the key must be a unique random value of at least "
            f"{MIN_ANONYMOUS_KEY_LENGTH} characters, e.g. a UUID"
        )


def principal_scope(request: Request) -> str:
    """The scope of the request's keys: sha256 of the verified principal's id (hex), or,
    without one, "public:" and the sha256 of the client address (module doc)."""
    principal = principal_of(request)
    if principal is None:
        address = client_ip(request).encode("utf-8", "surrogateescape")
        return f"{PUBLIC_SCOPE}:{hashlib.sha256(address).hexdigest()}"
    return hashlib.sha256(principal.id.encode("utf-8", "surrogateescape")).hexdigest()


def _without_cookies(stored: StoredResponse) -> StoredResponse:
    """The response as it is stored and replayed: no `Set-Cookie` (a session handed to the
    first caller is never handed to whoever sends the same key later)."""
    kept = tuple((k, v) for k, v in stored.headers if k.lower() != b"set-cookie")
    return stored if len(kept) == len(stored.headers) else replace(stored, headers=kept)


def request_fingerprint(method: str, path: str, query: bytes, body: bytes) -> str:
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode("utf-8", "surrogateescape"), query, body):
        digest.update(b"%d:" % len(part))
        digest.update(part)
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# responses


class StoredBytesResponse(Response):
    """Sends a `StoredResponse` as it is: its status, its header pairs, its body."""

    def __init__(
        self,
        stored: StoredResponse,
        *,
        extra_headers: Sequence[tuple[bytes, bytes]] = (),
        background: BackgroundTask | None = None,
    ) -> None:
        super().__init__(content=stored.body, status_code=stored.status, background=background)
        self.raw_headers = [*stored.headers, *extra_headers]


async def _render(response: Response, scope: Scope) -> tuple[StoredResponse, BackgroundTask | None]:
    """Run `response` against a recording `send`: the exact bytes it would put on the wire.
    Its background task is detached, to run once after the real send."""
    background = response.background
    response.background = None
    status = 500
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    async def receive() -> Message:
        await asyncio.Event().wait()  # never a disconnect: the real one is not ours to see
        return {"type": "http.disconnect"}

    # spec 2.4: streaming responses do not listen on receive; no extensions: no pathsend
    fake_scope = {**scope, "asgi": {**scope.get("asgi", {}), "spec_version": "2.4"}}
    fake_scope["extensions"] = {}
    await response(fake_scope, receive, send)
    return StoredResponse(status, tuple(headers), b"".join(chunks)), background


def _lookup_handler(request: Request, exc: Exception) -> Callable[..., Any] | None:
    exception_handlers, status_handlers = request.scope.get(
        "starlette.exception_handlers", ({}, {})
    )
    if isinstance(exc, HTTPException) and exc.status_code in status_handlers:
        handler: Callable[..., Any] = status_handlers[exc.status_code]
        return handler
    for cls in type(exc).__mro__:
        if cls in exception_handlers:
            found: Callable[..., Any] = exception_handlers[cls]
            return found
    return None


async def _handled(request: Request, exc: Exception) -> Response | None:
    """The response the app's exception handlers give `exc` (as Starlette would), or None."""
    handler = _lookup_handler(request, exc)
    if handler is None:
        if isinstance(exc, ProblemDetail):
            return _problem_fallback(request, exc)
        return None
    if asyncio.iscoroutinefunction(handler):
        response = await handler(request, exc)
    else:
        response = await run_in_threadpool(handler, request, exc)
    return response if isinstance(response, Response) else None


def _problem_fallback(request: Request, problem: ProblemDetail) -> Response:
    return Response(
        problem.encode(request.url.path),
        status_code=problem.status,
        headers=problem.headers,
        media_type=PROBLEM_JSON,
    )


async def _problem(request: Request, problem: ProblemDetail) -> Response:
    """Our own problems go through the app's ProblemDetail handler when it has one."""
    response = await _handled(request, problem)
    return response if response is not None else _problem_fallback(request, problem)


def _key_missing(header_name: str) -> ProblemDetail:
    return ProblemDetail(
        400,
        "idempotency-key-missing",
        "Idempotency key missing",
        f"This operation requires an {header_name} header; send a new unique value (e.g. a "
        "UUID) per logical operation and reuse it on every retry.",
    )


def _key_invalid(header_name: str, why: str) -> ProblemDetail:
    return ProblemDetail(
        400, "idempotency-key-invalid", "Idempotency key invalid", f"{header_name}: {why}."
    )


def _conflict(header_name: str) -> ProblemDetail:
    return ProblemDetail(
        422,
        "idempotency-conflict",
        "Idempotency key reused",
        f"This {header_name} was already used with a different request (method, path or body).",
    )


def _in_progress() -> ProblemDetail:
    return ProblemDetail(
        409,
        "idempotency-in-progress",
        "Request in progress",
        "The original request with this idempotency key is still being processed; retry later.",
        headers={"Retry-After": "1"},
    )


# ---------------------------------------------------------------------------------------------
# enforcement


def _config(request: Request) -> IdempotencyConfig:
    config = getattr(request.app.state, "idempotency", None)
    if not isinstance(config, IdempotencyConfig):
        raise RuntimeError("idempotent route without a store: call install_idempotency(app, ...)")
    return config


async def _heartbeat(config: IdempotencyConfig, scope_id: str, key: str, token: str) -> None:
    interval = config.lock_timeout / 3
    while True:
        await asyncio.sleep(interval)
        try:
            if not await config.store.extend(scope_id, key, config.lock_timeout, token=token):
                log.warning("idempotency claim on key %r lost while its handler ran", key)
                return
        except Exception:  # a store hiccup must not kill the request; the claim may lapse
            log.exception("idempotency heartbeat failed")


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _answer_existing(
    request: Request, record: IdempotencyRecord, fingerprint: str, header_name: str
) -> ProblemDetail | Response:
    if record.fingerprint != fingerprint:
        return _conflict(header_name)
    if record.state == "in_progress" or record.response is None:
        return _in_progress()
    return StoredBytesResponse(record.response, extra_headers=[REPLAYED_HEADER])


def _key_of(request: Request, header_name: str, required: bool) -> str | ProblemDetail | None:
    """The request's idempotency key; the problem to answer with when it is missing (and
    required) or invalid; None when none was sent and none is required."""
    wanted = header_name.lower().encode("latin-1")
    values = [v for k, v in request.scope["headers"] if k.lower() == wanted]
    if not values:
        if required:
            record("idempotency", "missing_key")
            return _key_missing(header_name)
        return None
    if len(values) > 1:
        record("idempotency", "invalid_key")
        return _key_invalid(header_name, "send the header once")
    try:
        key = parse_idempotency_key(values[0].decode("latin-1"))
        if principal_of(request) is None:
            check_anonymous_key(key)
    except ValueError as exc:
        record("idempotency", "invalid_key")
        return _key_invalid(header_name, str(exc))
    return key


async def enforce(request: Request, inner: Handler, header_name: str, required: bool) -> Response:
    """Run `inner` (FastAPI's handler for the route) under the idempotency contract."""
    config = _config(request)
    if not config.enabled:
        return await inner(request)
    key = _key_of(request, header_name, required)
    if key is None:
        return await inner(request)
    if isinstance(key, ProblemDetail):
        return await _problem(request, key)
    body = await request.body()  # cached on the request: FastAPI's handler reads it from there
    scope_id = principal_scope(request)
    fingerprint = request_fingerprint(
        request.method,
        request.scope.get("root_path", "") + request.scope["path"],
        request.scope.get("query_string", b""),
        body,
    )
    outcome = await config.store.claim(scope_id, key, fingerprint, config.lock_timeout)
    if isinstance(outcome, Existing):
        answer = _answer_existing(request, outcome.record, fingerprint, header_name)
        kind = (
            "replayed" if isinstance(answer, Response) else answer.kind.removeprefix("idempotency-")
        )
        record("idempotency", kind.replace("-", "_"))
        return await _problem(request, answer) if isinstance(answer, ProblemDetail) else answer

    token = outcome.token
    record("idempotency", "executed")
    claim = KeyClaim(
        config.store, scope_id, key, token, fingerprint, config.lock_timeout, config.result_ttl
    )
    bind_claim(request, claim)
    heartbeat = asyncio.create_task(_heartbeat(config, scope_id, key, token))
    completed = False
    try:
        try:
            response = await inner(request)
        except RequestValidationError:
            raise  # nothing ran: the claim is released below, the app renders the 422
        except Exception as exc:
            handled = await _handled(request, exc)
            if handled is None:
                raise
            response = handled
        stored, background = await _render(response, request.scope)
        await _stop(heartbeat)
        if claim.held is not None:  # the handler's transaction commits with the answer
            storable = stored.status < 500 and stored.status not in NOT_STORED_STATUSES
            completed = await settle(claim, stored if storable else None)
            if storable and not completed:  # taken over: this run's writes rolled back
                return await _problem(request, claim_lost())
            return StoredBytesResponse(stored, background=background)
        if stored.status < 500 and stored.status not in NOT_STORED_STATUSES:
            try:
                completed = await config.store.complete(
                    scope_id, key, _without_cookies(stored), config.result_ttl, token=token
                )
            except Exception:  # the operation ran: answer it even if the store is down
                log.exception("idempotency store failed to keep the result of key %r", key)
                # and leave the claim to lapse: releasing it would invite an immediate rerun
                completed = True
                return StoredBytesResponse(stored, background=background)
            if not completed:
                log.warning("idempotency claim on key %r expired before its result was stored", key)
        return StoredBytesResponse(stored, background=background)
    finally:
        await _stop(heartbeat)
        if claim.held is not None:  # the handler raised: its transaction rolls back
            await settle(claim, None)
        if not completed:
            try:
                await config.store.release(scope_id, key, token=token)
            except Exception:  # never mask the request's own outcome; the claim will lapse
                log.exception("idempotency store failed to release key %r", key)


class _IdempotentRouteMixin(APIRoute):
    idempotency_header: str = DEFAULT_HEADER
    idempotency_required: bool = False

    def get_route_handler(self) -> Handler:
        inner = super().get_route_handler()
        header_name, required = self.idempotency_header, self.idempotency_required

        async def handler(request: Request) -> Response:
            return await enforce(request, inner, header_name, required)

        return handler


@functools.cache
def idempotent_route(
    header_name: str = DEFAULT_HEADER,
    required: bool = False,
    base: type[APIRoute] = APIRoute,
) -> type[APIRoute]:
    """An `APIRoute` class enforcing `header_name` as an idempotency key (see module doc).

    `base` composes it with another route class (e.g. problems.GuardedRoute): `base`'s wrapping
    runs first (its guards answer 415/429 before any key is claimed), then the claim, then
    FastAPI's own handler (body validation, the endpoint)."""
    suffix = "Required" if required else "Optional"
    bases: tuple[type[APIRoute], ...] = (
        (_IdempotentRouteMixin,) if base is APIRoute else (base, _IdempotentRouteMixin)
    )
    name = f"Idempotent{suffix}{'' if base is APIRoute else base.__name__}"
    attrs = {"idempotency_header": header_name, "idempotency_required": required}
    return type(name, bases, attrs)
