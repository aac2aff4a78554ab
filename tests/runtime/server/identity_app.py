"""A small server wired as a generated one wires authentication (copied beside `runtime/`):
served with `uvicorn <pkg>.identity_app:create_app --factory`.

Credentials: bearer tokens `tok-<account>[:<scope>,…]` (the scopes after the colon), API keys
`key-<account>` in `X-Key` or in the `sid` cookie, basic `<account>:pw-<account>`; anything
else is rejected. Settings come from `APIFORGE_*`; `TEST_REALM` is the challenges' realm.

- `POST /transfers` needs the key AND basic credentials; answers both principals;
- `GET /public` is public, with an optional bearer alternative that needs scope `read`;
- `GET /secret` needs a bearer token;
- `POST /session` (unsafe) and `GET /session` take the cookie key;
- `GET /login` takes basic credentials checked by `TEST_BASIC_EXAMPLE`: the body of a basic
  verifier method (the example of the generated verifier's docstring), over a table with one
  user, `alice` / `pw-alice`, scrypt-hashed;
- `POST /signups` is public and idempotent (`Idempotency-Key` required): a 201 with a new
  session cookie, the count of executions in the body;
- `GET /healthz` answers at once, to see whether the event loop is free.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
import textwrap
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from .runtime.client_address import client_ip, install_trusted_proxies
from .runtime.idempotency import idempotent_route, install_idempotency
from .runtime.problems import GuardedRoute, install_problem_handlers
from .runtime.security import (
    AuthContext,
    AuthRequirement,
    AuthScheme,
    Principal,
    install_authentication,
    principal_of,
    principals_of,
)
from .runtime.settings import Settings

SCHEMES = (
    AuthScheme("bearer", "bearer", "bearer"),
    AuthScheme("basic", "basic", "basic"),
    AuthScheme("key", "apiKey", "key", type="apiKey", parameter="X-Key"),
    AuthScheme("cookie", "apiKey", "key", type="apiKey", location="cookie", parameter="sid"),
    AuthScheme("hashed", "basic", "hashed"),
)


class User(NamedTuple):
    id: str
    salt: bytes
    hash: bytes
    plan: str | None = None


def _scrypt(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)


def example_verifier(body: str) -> Callable[[str, str], Awaitable[Any]] | None:
    """The docstring's example as a function of (username, password)."""
    if not body:
        return None
    salt = secrets.token_bytes(16)
    namespace: dict[str, Any] = {
        "asyncio": asyncio,
        "hashlib": hashlib,
        "hmac": hmac,
        "Principal": Principal,
        "USERS": {"alice": User("alice", salt, _scrypt("pw-alice", salt))},
        "DUMMY_USER": User("", salt, _scrypt(secrets.token_hex(16), salt)),
    }
    source = "async def check(username, password):\n" + textwrap.indent(body, "    ")
    exec(compile(source, "<verifier example>", "exec"), namespace)
    found: Callable[[str, str], Awaitable[Any]] = namespace["check"]
    return found


class Verifier:
    def __init__(self) -> None:
        self.example = example_verifier(os.environ.get("TEST_BASIC_EXAMPLE", ""))

    async def hashed(
        self, username: str, password: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Any:
        return None if self.example is None else await self.example(username, password)

    async def bearer(self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext) -> Any:
        if not token.startswith("tok-"):
            return None
        account, _, granted = token.removeprefix("tok-").partition(":")
        return Principal(account, scopes=frozenset(s for s in granted.split(",") if s))

    async def basic(
        self, username: str, password: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Any:
        return Principal(username) if password == f"pw-{username}" else None

    async def key(self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext) -> Any:
        return Principal(key.removeprefix("key-")) if key.startswith("key-") else None


def caller(request: Request) -> dict[str, Any]:
    principal = principal_of(request)
    return {
        "principal": principal.id if principal else None,
        "principals": {k: p.id for k, p in sorted(principals_of(request).items())},
        "client": client_ip(request),
    }


def create_app() -> FastAPI:
    settings = Settings.from_env()
    app = FastAPI()
    install_problem_handlers(app, max_body_bytes=settings.max_body_bytes)
    install_authentication(
        app,
        SCHEMES,
        Verifier(),
        realm=os.environ.get("TEST_REALM", "identity"),
        failure_limit=settings.auth_failure_limit,
        storage_url=settings.rate_limit_storage_url,
        allowed_origins=settings.csrf_allowed_origins,
    )
    install_trusted_proxies(app, settings.trusted_proxies)
    router = APIRouter(route_class=GuardedRoute)

    @router.post(
        "/transfers", dependencies=[Depends(AuthRequirement((("key", ()), ("basic", ()))))]
    )
    async def transfer(request: Request) -> Any:
        return caller(request)

    public = AuthRequirement(public=True, optional=((("bearer", ("read",)),),))

    @router.get("/public", dependencies=[Depends(public)])
    async def public_op(request: Request) -> Any:
        return caller(request)

    @router.get("/secret", dependencies=[Depends(AuthRequirement((("bearer", ()),)))])
    async def secret(request: Request) -> Any:
        return caller(request)

    session = AuthRequirement((("cookie", ()),))

    @router.post("/session", dependencies=[Depends(session)])
    async def change_session(request: Request) -> Any:
        return caller(request)

    @router.get("/session", dependencies=[Depends(session)])
    async def read_session(request: Request) -> Any:
        return caller(request)

    @router.get("/login", dependencies=[Depends(AuthRequirement((("hashed", ()),)))])
    async def login(request: Request) -> Any:
        return caller(request)

    install_idempotency(app, "memory://", lock_timeout=5)
    signups: list[int] = []

    async def signup(request: Request) -> Any:
        signups.append(1)
        response = JSONResponse({"executions": len(signups)}, status_code=201)
        response.set_cookie("session", secrets.token_hex(8))
        return response

    router.add_api_route(
        "/signups",
        signup,
        methods=["POST"],
        dependencies=[Depends(public)],
        route_class_override=idempotent_route("Idempotency-Key", required=True, base=GuardedRoute),
    )

    @app.get("/healthz")
    async def healthz() -> Any:
        return {"ok": True}

    app.include_router(router)
    return app
