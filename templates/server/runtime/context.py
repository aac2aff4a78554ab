"""What a generated server hands its hand-written handlers, and how it turns their results
into responses.

Integration surface (used by the generated `main.py`, routers and job registry):

- `Services(settings, store_url)` — the app's shared state: `repository(namespace)` (a
  `repository.Repository`, one per namespace, all in the store), and, when the API needs them,
  `idempotency`, `jobs` (a `jobs.JobService`), `outbox` + `dispatcher` (webhooks) and `events`
  (the generated typed event helpers). `await start()` / `await close()` in the app lifespan.
- `install_services(app, services, handlers)` — keeps both on `app.state`; routers read them
  back with `services_of(request)` / `handlers_of(request)`.
- `RequestContext` — the first argument of every handler method: the request, the services,
  the parsed `If-Match` (`if_match`), `precondition(version)` (412 unless `If-Match` names
  that version; returns it, for `repository.update(..., expected_version=...)`), and `headers`
  to add to the response.
- `RequestContext.principal` / `JobContext.principal` — who called, as authentication
  verified it (`security.Principal`; None on a public operation called without credentials).
- `JobContext` — the first argument of a 202 operation's job function (no request: it runs
  later, in a worker; its principal is the one that submitted the job).
- `Reply(value, version=, etag=, status=, headers=)` — what a handler returns when the
  response needs more than its body: `version` becomes the strong ETag `"v<version>"`, `status`
  picks one of the operation's declared success codes. A plain value (model or dict) is the
  body with the operation's default status; a starlette `Response` is sent as it is.
- `respond(ctx, result, ...)` — the generated router's last step: status, headers, ETag, and
  for a conditional GET the 304 (`If-None-Match`).
- `install_method_not_allowed(app, {path: methods})` — 405 with the full `Allow` list.
- `request_context(request, response, if_match=, if_match_required=)` — the endpoint's first
  step: the context, with the `If-Match` read (`concurrency.read_if_match`: 428 when required
  and missing, empty or malformed; 412 when malformed and optional).
- `RequestContext.transaction()` / `JobContext.transaction()` — the transaction the handler
  shares with the server (its rows, the key's stored response, its webhook events), and
  `atomic_phase` / `external_call` / `derived_key`, its recovery points (`transaction.py`).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from .concurrency import (
    Condition,
    check_if_match,
    etag_for_version,
    not_modified,
    read_if_match,
)
from .problems import ProblemDetail
from .repository import Repository
from .security import Principal, authentication_of, principal_of, principals_of
from .storage import parse_store_url
from .stores import open_database, open_repository
from .transaction import (
    RecoveryPoints,
    SqlDatabase,
    Transaction,
    claim_of,
    request_transaction,
)

if TYPE_CHECKING:
    from .delivery import WebhookDispatcher
    from .destinations import DestinationPolicy
    from .idempotency import IdempotencyConfig
    from .jobs import JobService
    from .outbox import Outbox

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
_STATE_SERVICES = "apiforge_services"
_STATE_HANDLERS = "apiforge_handlers"


@dataclass(frozen=True, slots=True)
class Reply(Generic[T]):
    """A handler's result with response metadata (see the module docstring)."""

    value: T
    version: int | None = None
    etag: str | None = None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


class Services:
    """The state a server shares between requests and jobs (see the module docstring)."""

    def __init__(self, settings: Any, store_url: str) -> None:
        self.settings = settings
        self.store_url = store_url
        #: False: no ETags, `If-None-Match`/`If-Match` ignored (`APIFORGE_PATTERNS_ENABLED=0`)
        self.patterns_enabled: bool = bool(getattr(settings, "patterns_enabled", True))
        self.idempotency: IdempotencyConfig | None = None
        self.jobs: JobService | None = None
        self.outbox: Outbox | None = None
        self.dispatcher: WebhookDispatcher | None = None
        #: where the server may send requests of its own (callbacks, webhooks)
        self.destinations: DestinationPolicy | None = None
        self.events: Any = None
        self._repositories: dict[str, Repository] = {}
        self._database: SqlDatabase | None = None

    def database(self) -> SqlDatabase:
        """The store's database, where handlers' transactions run (`transaction.py`)."""
        if self._database is None:
            self._database = open_database(self.store_url)
        return self._database

    def repository(self, namespace: str = "default") -> Repository:
        """The versioned repository for `namespace` (one table, keyed by namespace)."""
        repo = self._repositories.get(namespace)
        if repo is None:
            repo = open_repository(self.store_url, namespace)
            self._repositories[namespace] = repo
        return repo

    def require_jobs(self) -> JobService:
        if self.jobs is None:
            raise RuntimeError("this server has no job service (no 202 operation in the spec)")
        return self.jobs

    async def start(self) -> None:
        if parse_store_url(self.store_url).kind in ("sqlite", "postgres"):
            await self.database().prepare()  # the schema, created or migrated
        if self.jobs is not None:
            await self.jobs.start()
        if self.dispatcher is not None:
            self.dispatcher.start()

    async def close(self) -> None:
        if self.dispatcher is not None:
            await self.dispatcher.stop()
        if self.jobs is not None:
            await self.jobs.close()
        if self.outbox is not None:
            await self.outbox.close()
        if self.idempotency is not None:
            with contextlib.suppress(Exception):
                await self.idempotency.store.aclose()
        for repo in self._repositories.values():
            await repo.close()
        self._repositories.clear()
        if self._database is not None:
            await self._database.close()
            self._database = None


def install_services(app: Any, services: Services, handlers: Any) -> None:
    setattr(app.state, _STATE_SERVICES, services)
    setattr(app.state, _STATE_HANDLERS, handlers)


def services_of(request: Request) -> Services:
    services = getattr(request.app.state, _STATE_SERVICES, None)
    if not isinstance(services, Services):
        raise RuntimeError("the app has no services: build it with create_app()")
    return services


def handlers_of(request: Request) -> Any:
    return getattr(request.app.state, _STATE_HANDLERS)


@dataclass
class RequestContext:
    """The first argument of every handler method (see the module docstring)."""

    request: Request
    response: Response
    services: Services
    if_match: Condition | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def settings(self) -> Any:
        return self.services.settings

    @property
    def principal(self) -> Principal | None:
        """Who called (None: a public operation called without credentials)."""
        return principal_of(self.request)

    @property
    def principals(self) -> Mapping[str, Principal]:
        """Each credential's principal by scheme name, when the operation requires several
        together (an AND): all have the principal's `id`, each with its own scopes and tier."""
        return principals_of(self.request)

    def repository(self, namespace: str = "default") -> Repository:
        return self.services.repository(namespace)

    def precondition(self, version: int | None) -> int:
        """412 unless the request's `If-Match` (if any) names `version` (None: the resource
        does not exist); returns `version` for an atomic `repository.update`."""
        check_if_match(self.if_match, None if version is None else etag_for_version(version))
        if version is None:
            raise ProblemDetail(404, "not-found", "Not found", "No such resource.")
        return version

    def not_found(self, detail: str = "No such resource.") -> ProblemDetail:
        return ProblemDetail(404, "not-found", "Not found", detail)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """The request's transaction: its writes, the idempotency key's stored response and
        the events written with `events(ctx, tx)` commit together (`transaction.py`)."""
        db = self.services.database()
        async with request_transaction(db, self.services.outbox, self.request) as tx:
            yield tx

    @contextlib.asynccontextmanager
    async def job_transaction(self) -> AsyncIterator[Transaction | None]:
        """Where the generated router's 202 writes its job: the request's transaction when the
        key's record and the job store live in the store's database (the default), so the
        job exists exactly when the key's stored 202 does (a crash between the two cannot
        leave a job that the retry queues again); None otherwise (written on its own)."""
        if not self._job_shares_transaction():
            yield None
            return
        async with self.transaction() as tx:
            yield tx

    def _job_shares_transaction(self) -> bool:
        claim, jobs = claim_of(self.request), self.services.jobs
        if claim is None or jobs is None:
            return False
        if parse_store_url(self.services.store_url).kind not in ("sqlite", "postgres"):
            return False
        db = self.services.database()
        return db.holds(claim.store) and jobs.store.lives_in(db)

    def _recovery(self) -> RecoveryPoints:
        state = self.request.state
        fallback = getattr(state, "apiforge_phase_seed", None)
        if fallback is None:
            fallback = state.apiforge_phase_seed = secrets.token_hex(16)
        return RecoveryPoints(self.services.database(), claim_of(self.request), fallback)

    def derived_key(self, name: str) -> str:
        """The idempotency key phase `name` sends to another system: derived from this
        request's key, the same on every retry."""
        return self._recovery().key_for(name)

    async def external_call(self, name: str, call: Callable[[str], Awaitable[R]]) -> R:
        """Run `call(derived_key)` once per idempotency key: a retry after it completed gets
        its stored (JSON) result; one after a crash calls again with the same derived key."""
        return await self._recovery().external(name, call)

    async def atomic_phase(self, name: str, step: Callable[[Transaction], Awaitable[R]]) -> R:
        """Run `step(tx)` in its own transaction, committed with its (JSON) result as a
        recovery point: once per idempotency key, however often the request is retried."""
        return await self._recovery().atomic(name, step)


@dataclass
class JobContext:
    """The first argument of a job function: the services and the principal that submitted
    the job; no request."""

    services: Services
    principal: Principal | None = None

    @property
    def settings(self) -> Any:
        return self.services.settings

    def repository(self, namespace: str = "default") -> Repository:
        return self.services.repository(namespace)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """A transaction on the store's database (committed when the block ends), in which
        `events(ctx, tx)` writes webhook events."""
        db = self.services.database()
        async with request_transaction(db, self.services.outbox, None) as tx:
            yield tx


def request_context(
    request: Request,
    response: Response,
    *,
    if_match: bool = False,
    if_match_required: bool = False,
) -> RequestContext:
    """The handler's context, made first thing in the endpoint: once the request's body and
    parameters are valid, so its `If-Match` answers (428, 412) come after their 422."""
    services = services_of(request)
    condition: Condition | None = None
    if if_match and services.patterns_enabled:
        condition = read_if_match(request, required=if_match_required)
    return RequestContext(request, response, services, condition)


def jsonable(value: Any) -> Any:
    """A model (by alias) or any value as JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=False)
    return jsonable_encoder(value, by_alias=True)


def principal_payload(request: Request) -> dict[str, Any] | None:
    """The request's principal as JSON, for a job's input (its handler's `ctx.principal`)."""
    principal = principal_of(request)
    return None if principal is None else principal.to_json()


def owner_of(request: Request) -> str | None:
    """The id of the request's principal: a job's owner, a job's viewer."""
    principal = principal_of(request)
    return None if principal is None else principal.id


def callback_url(body: Any, name: str) -> str | None:
    """The job's callback URL from the dumped request body, when it has one."""
    if isinstance(body, Mapping):
        value = body.get(name)
        if isinstance(value, str) and value:
            return value
    return None


async def checked_callback_url(request: Request, body: Any, name: str) -> str | None:
    """The job's callback URL once it passed the destination policy's static checks (https,
    no private or loopback address, ...) and the verifier's `allow_destination` hook; a 422
    problem otherwise, when the job is submitted rather than a silent failure later. The
    address it resolves to is checked again at every delivery."""
    url = callback_url(body, name)
    if url is None:
        return None
    from .destinations import DestinationPolicy, DestinationRefused

    policy = services_of(request).destinations or DestinationPolicy()
    try:
        policy.check_url(url)
    except DestinationRefused as refused:
        raise refused.problem(("body", name)) from None
    auth = authentication_of(request)
    hook = getattr(auth.verifier, "allow_destination", None) if auth is not None else None
    if hook is not None and not await hook(url, principal_of(request)):
        raise DestinationRefused("the server does not deliver to this URL").problem(("body", name))
    return url


def respond(
    ctx: RequestContext,
    result: Any,
    *,
    status: int,
    statuses: Iterable[int],
    conditional: bool = False,
    empty: Iterable[int] = (),
) -> Any:
    """The router's answer for a handler's `result` (see the module docstring)."""
    if isinstance(result, Response):
        for name, value in ctx.headers.items():
            result.headers[name] = value
        return result
    reply: Reply[Any] = result if isinstance(result, Reply) else Reply(result)
    code = reply.status if reply.status is not None else status
    allowed = set(statuses)
    if code not in allowed:
        raise RuntimeError(
            f"the handler answered status {code}; the spec declares {sorted(allowed)}"
        )
    headers = {**ctx.headers, **reply.headers}
    etag = reply.etag
    if etag is None and reply.version is not None:
        etag = etag_for_version(reply.version)
    if not ctx.services.patterns_enabled:
        etag = None
    if etag is not None:
        headers["ETag"] = etag
        if conditional:
            cached = not_modified(ctx.request, etag)
            if cached is not None:
                return cached
    if code in (204, 304) or code in set(empty):
        return Response(status_code=code, headers=headers)
    ctx.response.status_code = code
    for name, value in headers.items():
        ctx.response.headers[name] = value
    return reply.value


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def install_method_not_allowed(app: Any, allowed: Mapping[str, Iterable[str]]) -> None:
    """Answer every other method on a path with a 405 whose `Allow` names *all* the path's
    methods (Starlette alone names those of the first route that matched the path). Call it
    after including the routers: these routes only match what no router does."""
    from starlette.exceptions import HTTPException

    for path, methods in allowed.items():
        names = sorted({m.upper() for m in methods})
        allow = ", ".join(names)
        others = [m for m in _METHODS if m not in names and not (m == "HEAD" and "GET" in names)]

        async def answer(request: Request, _allow: str = allow) -> None:
            raise HTTPException(405, headers={"Allow": _allow})

        app.router.add_route(path, answer, methods=others, include_in_schema=False)
