"""A small server wired as a generated one wires authentication (copied beside `runtime/`):
served with `uvicorn <pkg>.identity_app:create_app --factory`.

Credentials: bearer tokens `tok-<account>[:<scope>,…]` (the scopes after the colon), API keys
`key-<account>` in `X-Key` or in the `sid` cookie, basic `<account>:pw-<account>`; anything
else is rejected. Settings come from `APIFORGE_*`; `TEST_REALM` is the challenges' realm.

- `POST /transfers` needs the key AND basic credentials; answers both principals;
- `GET /public` is public, with an optional bearer alternative that needs scope `read`;
- `GET /secret` needs a bearer token;
- `POST /session` (unsafe) and `GET /session` take the cookie key.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request

from .runtime.client_address import client_ip, install_trusted_proxies
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
)


class Verifier:
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

    app.include_router(router)
    return app
