"""A small server wired the way a generated one uses the runtime (copied beside `runtime/`).

Not imported from here: conftest copies it to `<pkg>/app.py`; serve `<pkg>.app:create_app` with
uvicorn's `--factory`. Settings come from `APIFORGE_*`; `TEST_PATCH_DELAY` (seconds) widens the
window between a PATCH's read and its write, so concurrent writers really race;
`TEST_REQUEST_IDS` adds the request-id middleware (ids in problems, request metrics). The probes
(`/healthz`, `/readyz`, `/metrics`) are there.

Every route is public with optional credentials (a bearer token or `X-API-Key`): any
credential not starting with "bad" is valid, its principal id is `acct-` + the first 12 hex
digits of its SHA-256 (never the secret), and `TEST_TOKEN_TIERS` (JSON, credential → tier)
gives tiers. Callers without credentials count by IP.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from pydantic import BaseModel, Field

from .runtime.concurrency import (
    check_if_match,
    etag_for_version,
    evaluate_preconditions,
    not_modified,
    require_if_match,
)
from .runtime.forms import require_body
from .runtime.health import install_probes
from .runtime.observability import RequestIdMiddleware
from .runtime.problems import (
    GuardedRoute,
    ProblemDetail,
    defer_response_headers,
    install_problem_handlers,
    problem_for_status,
    require_content_type,
)
from .runtime.ratelimit import RateLimiter, install_rate_limiting, rate_limited
from .runtime.security import (
    AuthContext,
    AuthRequirement,
    AuthScheme,
    Principal,
    install_authentication,
)
from .runtime.settings import Settings
from .runtime.stores import open_repository

JSON = Depends(require_content_type("application/json"))
SCHEMES = (
    AuthScheme("bearer", "bearer", "bearer"),
    AuthScheme("key", "apiKey", "key", type="apiKey", parameter="X-API-Key"),
)
AUTH = AuthRequirement(public=True, optional=((("bearer", ()),), (("key", ()),)))


class Verifier:
    def __init__(self) -> None:
        self.tiers = json.loads(os.environ.get("TEST_TOKEN_TIERS") or "{}")

    def principal(self, credential: str) -> Principal | None:
        if credential.startswith("bad"):
            return None
        digest = hashlib.sha256(credential.encode()).hexdigest()[:12]
        return Principal(f"acct-{digest}", tier=self.tiers.get(credential))

    async def bearer(self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext) -> Any:
        return self.principal(token)

    async def key(self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext) -> Any:
        return self.principal(key)


class Widget(BaseModel):
    name: str = Field(min_length=1)
    size: int = Field(ge=0)


class Upload(BaseModel):
    title: str
    count: int = 0
    tags: list[str] = []


class WidgetPatch(BaseModel):
    name: str | None = Field(default=None, min_length=1)
    size: int | None = Field(default=None, ge=0)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    patch_delay = float(os.environ.get("TEST_PATCH_DELAY", "0"))
    app = FastAPI()
    install_problem_handlers(app, max_body_bytes=settings.max_body_bytes)
    if os.environ.get("TEST_REQUEST_IDS"):
        app.add_middleware(RequestIdMiddleware)
    install_probes(app, None, {})
    install_authentication(app, SCHEMES, Verifier(), realm="patterns", failure_limit="")
    install_rate_limiting(app, RateLimiter.from_settings(settings))
    repo = open_repository(settings.store_url, "widgets")

    async def worker_pid(request: Request) -> None:
        defer_response_headers(request.scope, [("X-Worker-Pid", str(os.getpid()))])

    router = APIRouter(route_class=GuardedRoute, dependencies=[Depends(AUTH), Depends(worker_pid)])

    # --- optimistic concurrency, rate limited with each header family ---------------------

    @router.get("/widgets/{wid}", dependencies=[Depends(rate_limited("x-ratelimit"))])
    async def get_widget(wid: str, request: Request, response: Response) -> Any:
        found = await repo.get(wid)
        if found is None:
            raise problem_for_status(404, f"Widget {wid!r} not found.")
        etag = etag_for_version(found.version)
        cached = not_modified(request, etag)
        if cached is not None:
            return cached
        response.headers["ETag"] = etag
        return found.value

    @router.put(
        "/widgets/{wid}",
        status_code=201,
        dependencies=[Depends(rate_limited("ratelimit")), JSON],
    )
    async def create_widget(wid: str, body: Widget, request: Request, response: Response) -> Any:
        found = await repo.get(wid)
        evaluate_preconditions(request, None if found is None else etag_for_version(found.version))
        version = await repo.create(wid, body.model_dump(mode="json"))
        response.headers["ETag"] = etag_for_version(version)
        return body

    @router.patch("/widgets/{wid}", dependencies=[Depends(rate_limited("ietf")), JSON])
    async def patch_widget(
        wid: str, body: WidgetPatch, request: Request, response: Response
    ) -> Any:
        if_match = require_if_match(request, required=True)
        found = await repo.get(wid)
        if found is None:
            raise problem_for_status(404, f"Widget {wid!r} not found.")
        check_if_match(if_match, etag_for_version(found.version))
        if patch_delay:
            await asyncio.sleep(patch_delay)
        value = {**found.value, **body.model_dump(exclude_unset=True)}
        version = await repo.update(wid, value, expected_version=found.version)
        response.headers["ETag"] = etag_for_version(version)
        return value

    @router.delete("/widgets/{wid}", status_code=204)
    async def delete_widget(wid: str, request: Request) -> Response:
        if_match = require_if_match(request, required=False)
        found = await repo.get(wid)
        if found is None:
            raise problem_for_status(404, f"Widget {wid!r} not found.")
        check_if_match(if_match, etag_for_version(found.version))
        await repo.delete(wid, expected_version=found.version)
        return Response(status_code=204)

    # --- problem details ------------------------------------------------------------------

    @router.post("/echo", dependencies=[Depends(rate_limited("x-ratelimit", bucket="echo")), JSON])
    async def echo(body: Widget) -> Widget:
        return body

    @router.post(
        "/upload", dependencies=[Depends(require_content_type("application/octet-stream"))]
    )
    async def upload(request: Request) -> dict[str, int]:
        data = await request.body()
        return {"received": len(data)}

    @router.post(
        "/form",
        dependencies=[
            Depends(
                require_content_type("application/x-www-form-urlencoded", "multipart/form-data")
            ),
            Depends(require_body(Upload, required=True)),
        ],
    )
    async def form(request: Request) -> dict[str, int]:
        return {"received": len(await request.body())}

    @router.get("/boom", dependencies=[Depends(rate_limited("x-ratelimit", bucket="boom"))])
    async def boom() -> None:
        raise RuntimeError("secret-internal-detail: password=hunter2")

    @router.get("/todo", operation_id="listTodos")
    async def todo() -> None:
        raise NotImplementedError

    @router.get("/teapot")
    async def teapot() -> None:
        raise ProblemDetail(
            418, "teapot", "I'm a teapot", "Short and stout.", headers={"X-Brew": "earl-grey"}
        )

    @router.get("/items")
    async def items(limit: int = 10) -> dict[str, int]:
        return {"limit": limit}

    # --- rate limits: one bucket per header family, plus an anonymous one ------------------

    @router.get("/rl/x", dependencies=[Depends(rate_limited("x-ratelimit", bucket="x"))])
    async def rl_x() -> dict[str, bool]:
        return {"ok": True}

    @router.get("/rl/ratelimit", dependencies=[Depends(rate_limited("ratelimit", bucket="r"))])
    async def rl_ratelimit() -> dict[str, bool]:
        return {"ok": True}

    @router.get("/rl/ietf", dependencies=[Depends(rate_limited("ietf", bucket="i"))])
    async def rl_ietf() -> dict[str, bool]:
        return {"ok": True}

    @router.get("/rl/anon", dependencies=[Depends(rate_limited("x-ratelimit", bucket="anon"))])
    async def rl_anon() -> dict[str, bool]:
        return {"ok": True}

    @router.get(
        "/rl/missing/{wid}", dependencies=[Depends(rate_limited("x-ratelimit", bucket="m"))]
    )
    async def rl_missing(wid: str) -> None:
        raise problem_for_status(404, f"Widget {wid!r} not found.")

    @router.get("/plain")
    async def plain() -> dict[str, bool]:
        return {"ok": True}

    app.include_router(router)
    return app
