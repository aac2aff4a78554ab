"""A 202 job started inside the handler's shared transaction (`submit(..., tx=tx)`), on SQLite
and PostgreSQL, in process: the job exists — and the in-process worker runs it — only if the
transaction commits; a handler that fails after creating it leaves no job row, no run, and its
idempotency key free for a fresh retry."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from tests.runtime.server.conftest import RuntimeModules
from tests.support import sql_query

KEY = "-0123456789abcdef"  # a key without credentials needs 16+ characters, 8 distinct


def build_app(rt: RuntimeModules, url: str, behaviour: dict[str, Any]) -> Any:
    """An idempotent POST whose handler writes a row and queues a job in one transaction."""
    ctxmod, idem, webhooks, jobs = rt.context, rt.idempotency, rt.webhooks, rt.jobs
    services = ctxmod.Services(None, url)
    services.outbox = webhooks.open_outbox(url)
    registry = jobs.JobRegistry()
    runs = behaviour.setdefault("runs", [])

    @registry.handler("report")
    async def report(payload: dict[str, Any]) -> dict[str, Any]:
        runs.append(payload["order"])
        return {"rows": len(runs)}

    services.jobs = jobs.open_jobs(url, registry, outbox=services.outbox, poll_interval=0.02)
    app = FastAPI()
    rt.problems.install_problem_handlers(app, max_body_bytes=1 << 20)
    services.idempotency = idem.install_idempotency(app, url, lock_timeout=5.0)
    ctxmod.install_services(app, services, None)
    router = APIRouter(route_class=idem.idempotent_route("Idempotency-Key", required=True))

    @router.post("/orders")
    async def create(request: Request) -> Any:
        ctx = ctxmod.request_context(request, JSONResponse({}))
        order = (await request.json())["id"]
        if behaviour.get("as_router"):  # what a generated 202 operation's endpoint does
            async with ctx.job_transaction() as job_tx:
                behaviour["shared"] = job_tx is not None
                answer = await ctx.services.require_jobs().submit_response(
                    "report", {"order": order}, tx=job_tx
                )
                if behaviour.get("fail"):  # between the job's row and the key's stored 202
                    behaviour["fail"] -= 1
                    raise RuntimeError("the answer fails after the job was written")
            return answer
        async with ctx.transaction() as tx:
            await tx.execute("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY)")
            await tx.execute("INSERT INTO orders (id) VALUES (?)", (order,))
            answer = await ctx.services.require_jobs().submit_response(
                "report", {"order": order}, tx=tx
            )
            await asyncio.sleep(0.2)  # the worker polls meanwhile: the job is not there yet
            behaviour.setdefault("runs_before_commit", []).append(list(runs))
            if behaviour.get("fail"):
                behaviour["fail"] -= 1
                raise RuntimeError("the handler fails after queueing its job")
        return answer

    app.include_router(router)
    app.state.services = services
    return app


def exchange(app: Any, key: str, order: str, settle_seconds: float = 0.0) -> httpx.Response:
    """POST the order with `key`, the job worker running; then wait for the job to end (or,
    when nothing was queued, `settle_seconds` of worker polls) before shutting down."""

    async def go() -> httpx.Response:
        services = app.state.services
        await services.start()
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                answer = await client.post(
                    "/orders", json={"id": order}, headers={"Idempotency-Key": key + KEY}
                )
                if answer.status_code == 202:
                    job_id = answer.json()["id"]
                    for _ in range(300):
                        if (await services.jobs.get(job_id)).terminal:
                            break
                        await asyncio.sleep(0.02)
                await asyncio.sleep(settle_seconds)
                return answer
        finally:
            await services.close()

    return asyncio.run(go())


def count(url: str, table: str) -> int:
    return int(sql_query(url, f"SELECT count(*) FROM {table}")[0][0])  # type: ignore[call-overload]


def test_a_committed_handler_queues_exactly_one_job(rt: RuntimeModules, store_url: str) -> None:
    behaviour: dict[str, Any] = {}
    first = exchange(build_app(rt, store_url, behaviour), "j1", "o1")
    assert first.status_code == 202, first.text
    job_id = first.json()["id"]
    assert behaviour["runs_before_commit"] == [[]], "the worker ran the job before the commit"
    assert behaviour["runs"] == ["o1"]
    rows = sql_query(store_url, "SELECT id, status FROM apiforge_jobs")
    assert rows == [(job_id, "completed")]
    # the replay answers the stored 202: no second job, no second run
    again = exchange(build_app(rt, store_url, behaviour), "j1", "o1")
    assert again.status_code == 202 and again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    assert count(store_url, "apiforge_jobs") == 1 and behaviour["runs"] == ["o1"]


def test_a_failing_handler_leaves_no_job(rt: RuntimeModules, store_url: str) -> None:
    behaviour: dict[str, Any] = {"fail": 1}
    failed = exchange(build_app(rt, store_url, behaviour), "j2", "o2", settle_seconds=0.3)
    assert failed.status_code == 500
    assert count(store_url, "apiforge_jobs") == 0
    assert not _has_orders(store_url)  # its CREATE TABLE rolled back with the rest
    assert behaviour["runs"] == [], "a job of a rolled-back transaction ran"
    assert count(store_url, "apiforge_idempotency") == 0  # the claim was released
    # so the retry with the same key runs afresh (not 409, not a replay) and queues one job
    retry = exchange(build_app(rt, store_url, behaviour), "j2", "o2")
    assert retry.status_code == 202 and "idempotent-replayed" not in retry.headers
    assert count(store_url, "apiforge_jobs") == 1 and behaviour["runs"] == ["o2"]
    assert count(store_url, "orders") == 1


def _has_orders(url: str) -> bool:
    """Whether the handler's table exists."""
    try:
        sql_query(url, "SELECT 1 FROM orders")
    except Exception:
        return False
    return True


def test_a_job_store_elsewhere_cannot_join(rt: RuntimeModules, tmp_path: Path) -> None:
    """The job store in another database than the transaction's: refused, nothing queued."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    registry = rt.jobs.JobRegistry()

    @registry.handler("noop")
    async def noop(payload: Any) -> None:
        return None

    async def go() -> None:
        service = rt.jobs.open_jobs(f"sqlite:///{tmp_path / 'jobs.db'}", registry)
        db = rt.stores.open_database(url)
        tx = await db.begin(None)
        try:
            with pytest.raises(RuntimeError, match="not in the store's database"):
                await service.submit("noop", {}, tx=tx)
            assert await service.store.queued() == 0
        finally:
            await tx.rollback()
            await db.close()
            await service.close()

    asyncio.run(go())


def test_the_routers_202_job_commits_with_the_stored_answer(
    rt: RuntimeModules, store_url: str
) -> None:
    """The generated router's 202 writes its job in the request's transaction: a failure
    before the key's 202 is stored leaves no job, so the retry queues the only one."""
    behaviour: dict[str, Any] = {"as_router": True, "fail": 1}
    failed = exchange(build_app(rt, store_url, behaviour), "r1", "o3", settle_seconds=0.3)
    assert failed.status_code == 500 and behaviour["shared"]
    assert count(store_url, "apiforge_jobs") == 0 and behaviour["runs"] == []
    assert count(store_url, "apiforge_idempotency") == 0
    retry = exchange(build_app(rt, store_url, behaviour), "r1", "o3")
    assert retry.status_code == 202 and "idempotent-replayed" not in retry.headers
    assert count(store_url, "apiforge_jobs") == 1 and behaviour["runs"] == ["o3"]
    again = exchange(build_app(rt, store_url, behaviour), "r1", "o3")
    assert again.content == retry.content and again.headers["idempotent-replayed"] == "true"
    assert count(store_url, "apiforge_jobs") == 1


def test_the_routers_202_job_stands_alone_when_the_job_store_is_elsewhere(
    rt: RuntimeModules, tmp_path: Path
) -> None:
    """Jobs in memory beside an SQLite key store: no shared transaction (the job is written
    on its own, as before), and the answer is still a 202."""
    behaviour: dict[str, Any] = {"as_router": True}
    app = build_app(rt, f"sqlite:///{tmp_path / 'store.db'}", behaviour)
    registry = app.state.services.jobs.registry
    app.state.services.jobs = rt.jobs.open_jobs("memory://", registry, poll_interval=0.02)
    answer = exchange(app, "r2", "o4")
    assert answer.status_code == 202, answer.text
    assert behaviour["shared"] is False and behaviour["runs"] == ["o4"]
