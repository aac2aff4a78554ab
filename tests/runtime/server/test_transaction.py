"""The shared transaction (runtime/transaction.py) on SQLite and PostgreSQL, in process: an app
with an idempotent route whose handler writes a row and a webhook event in `ctx.transaction()`,
driven through httpx's ASGI transport; the outcome is read from the database itself."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from tests.runtime.server.conftest import RuntimeModules
from tests.support import fresh_database, sql_query


class Rows:
    """The business table and the outbox, read outside the server."""

    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return sql_query(self.url, sql)

    def payments(self) -> list[tuple[Any, ...]]:
        return self.query("SELECT id, amount FROM payments ORDER BY id")

    def events(self) -> list[str]:
        return [
            str(r[0]) for r in self.query("SELECT type FROM apiforge_webhook_events ORDER BY type")
        ]


def build_app(
    rt: RuntimeModules, url: str, behaviour: dict[str, Any], records: str | None = None
) -> Any:
    """The app on store `url`; its idempotency records there too, or at `records`."""
    ctxmod, idem, webhooks = rt.context, rt.idempotency, rt.webhooks
    services = ctxmod.Services(None, url)
    services.outbox = webhooks.open_outbox(url)
    app = FastAPI()
    rt.problems.install_problem_handlers(app, max_body_bytes=1 << 20)
    services.idempotency = idem.install_idempotency(app, records or url, lock_timeout=5.0)
    ctxmod.install_services(app, services, None)
    router = APIRouter(route_class=idem.idempotent_route("Idempotency-Key", required=True))

    @router.post("/payments")
    async def create(request: Request) -> Any:
        ctx = ctxmod.request_context(request, JSONResponse({}))
        body = await request.json()
        calls = behaviour.setdefault("calls", [])

        async def charge(key: str) -> dict[str, Any]:
            calls.append(key)
            if behaviour.get("fail_after_charge"):
                behaviour["fail_after_charge"] -= 1
                raise RuntimeError("crash after the external call")
            return {"charge": "ch_" + key[:8]}

        charged = await ctx.external_call("charge", charge)
        async with ctx.transaction() as tx:
            await tx.execute(
                "CREATE TABLE IF NOT EXISTS payments (id TEXT PRIMARY KEY, amount INTEGER)"
            )
            runs = behaviour["runs"] = behaviour.get("runs", 0) + 1  # its nth run: "id#n"
            row = body["id"] if runs == 1 else f"{body['id']}#{runs}"
            await tx.execute(
                "INSERT INTO payments (id, amount) VALUES (?, ?)", (row, body["amount"])
            )
            event = webhooks.new_event("payment.created", {"id": body["id"]})
            await tx.enqueue(event, ["https://hooks.example/a"])
        if behaviour.get("fail_after_tx"):
            behaviour["fail_after_tx"] -= 1
            raise RuntimeError("the handler fails after its transaction block")
        if behaviour.get("answer") is not None:
            return JSONResponse({"busy": True}, status_code=behaviour["answer"])
        return JSONResponse({"id": body["id"], **charged}, status_code=201)

    app.include_router(router)
    app.state.services = services
    return app


def post(app: Any, key: str, body: dict[str, Any]) -> httpx.Response:
    # a caller without credentials must send a key of 16+ characters, 8 of them distinct
    key = f"{key}-0123456789abcdef"

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            try:
                return await client.post("/payments", json=body, headers={"Idempotency-Key": key})
            finally:
                await app.state.services.close()

    return asyncio.run(go())


Make = Callable[[dict[str, Any]], Any]


@pytest.fixture
def make(rt: RuntimeModules, store_url: str) -> Make:
    return lambda behaviour: build_app(rt, store_url, behaviour)


def test_row_event_and_answer_commit_together(make: Make, store_url: str) -> None:
    behaviour: dict[str, Any] = {}
    first = post(make(behaviour), "k1", {"id": "p1", "amount": 5})
    assert first.status_code == 201, first.text
    again = post(make(behaviour), "k1", {"id": "p1", "amount": 5})
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.content == first.content
    rows = Rows(store_url)
    assert rows.payments() == [("p1", 5)]
    assert rows.events() == ["payment.created"]
    assert len(behaviour["calls"]) == 1


def test_a_failure_after_the_block_rolls_everything_back(make: Make, store_url: str) -> None:
    behaviour: dict[str, Any] = {"fail_after_tx": 1}
    assert post(make(behaviour), "k2", {"id": "p2", "amount": 7}).status_code == 500
    rows = Rows(store_url)
    assert rows.query("SELECT count(*) FROM apiforge_webhook_events") == [(0,)]
    # the retry runs the handler again and commits once; the external call is not repeated
    retry = post(make(behaviour), "k2", {"id": "p2", "amount": 7})
    assert retry.status_code == 201, retry.text
    assert rows.payments() == [("p2#2", 7)]  # the first run's row was rolled back
    assert rows.events() == ["payment.created"]
    assert len(behaviour["calls"]) == 1


def test_a_not_stored_status_rolls_back(make: Make, store_url: str) -> None:
    behaviour: dict[str, Any] = {"answer": 503}
    assert post(make(behaviour), "k3", {"id": "p3", "amount": 1}).status_code == 503
    assert Rows(store_url).query("SELECT count(*) FROM apiforge_webhook_events") == [(0,)]


def test_external_call_gets_one_derived_key_across_retries(make: Make) -> None:
    behaviour: dict[str, Any] = {"fail_after_charge": 2}
    for _ in range(2):
        assert post(make(behaviour), "k4", {"id": "p4", "amount": 1}).status_code == 500
    ok = post(make(behaviour), "k4", {"id": "p4", "amount": 1})
    assert ok.status_code == 201
    keys = behaviour["calls"]
    assert len(keys) == 3 and len(set(keys)) == 1  # called again after each crash, same key
    other = post(make(behaviour), "k5", {"id": "p5", "amount": 1})
    assert other.status_code == 201 and behaviour["calls"][-1] != keys[0]
    assert json.loads(ok.content)["charge"] == "ch_" + keys[0][:8]


def test_a_lost_claim_keeps_nothing(rt: RuntimeModules, make: Make, store_url: str) -> None:
    """A claim taken over while the handler ran (its lock lapsed): the transaction refuses to
    start, nothing is written, and the client is told to retry."""
    behaviour: dict[str, Any] = {}
    app = make(behaviour)
    store = app.state.services.idempotency.store

    async def steal(scope: str, key: str) -> None:
        await store.release(scope, key)  # as if it expired and another request claimed it
        await store.claim(scope, key, "someone-else", 30.0)

    original = rt.transaction.request_transaction

    def stealing(db: Any, outbox: Any, request: Any) -> Any:
        claim = rt.transaction.claim_of(request)
        return _Stealing(original(db, outbox, request), steal, claim)

    rt.context.request_transaction = stealing
    try:
        answer = post(app, "k6", {"id": "p6", "amount": 1})
    finally:
        rt.context.request_transaction = original
    assert answer.status_code == 409
    assert answer.json()["type"].endswith("idempotency-in-progress")
    assert Rows(store_url).query("SELECT count(*) FROM apiforge_webhook_events") == [(0,)]


class _Stealing:
    """`request_transaction` with the claim stolen just before the transaction begins."""

    def __init__(self, inner: Any, steal: Any, claim: Any) -> None:
        self.inner, self.steal, self.claim = inner, steal, claim

    async def __aenter__(self) -> Any:
        await self.steal(self.claim.scope, self.claim.key)
        return await self.inner.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


def test_schema_version_table(rt: RuntimeModules, store_url: str, make: Make) -> None:
    post(make({}), "k7", {"id": "p7", "amount": 1})
    rows = Rows(store_url).query("SELECT component, version FROM apiforge_schema_version")
    newest = len(
        rt.schema.SQLITE_MIGRATIONS
        if store_url.startswith("sqlite")
        else rt.schema.POSTGRES_MIGRATIONS
    )
    assert rows == [("apiforge", newest)]


def test_two_job_workers_on_postgres_run_each_job_once(
    rt: RuntimeModules, postgres_url: str
) -> None:
    """Two services on one database (as two processes): `FOR UPDATE SKIP LOCKED` claims."""
    url = fresh_database(postgres_url, "jobs_" + uuid.uuid4().hex[:10])

    async def scenario() -> list[int]:
        calls: list[int] = []
        registry = rt.jobs.JobRegistry()

        @registry.handler("note")
        async def note(n: int) -> int:
            calls.append(n)
            await asyncio.sleep(0.01)
            return n

        a = rt.jobs.open_jobs(url, registry, poll_interval=0.02)
        b = rt.jobs.open_jobs(url, registry, poll_interval=0.02)
        jobs = [await (a if i % 2 else b).submit("note", i) for i in range(30)]
        await a.start()
        await b.start()
        states: list[str] = []
        for _ in range(500):
            states = [(await a.get(j.id)).status for j in jobs]
            if all(s == "completed" for s in states):
                break
            await asyncio.sleep(0.02)
        await a.close()
        await b.close()
        assert states == ["completed"] * 30
        return calls

    assert sorted(asyncio.run(scenario())) == list(range(30)), "each job ran exactly once"


def test_with_the_records_in_redis_only_the_rows_are_atomic(
    rt: RuntimeModules, tmp_path: Path, redis_url: str
) -> None:
    """The documented limit: records in Redis, rows in SQLite. The block commits when it ends
    and the answer is stored after it, so a failure between the two keeps the row and the
    retry runs the handler again; the recovery point still saves the external call."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    key = "redis-" + uuid.uuid4().hex
    behaviour: dict[str, Any] = {"fail_after_tx": 1}
    assert (
        post(build_app(rt, url, behaviour, redis_url), key, {"id": "r1", "amount": 3}).status_code
        == 500
    )
    assert Rows(url).payments() == [("r1", 3)]  # committed although the request failed
    retry = post(build_app(rt, url, behaviour, redis_url), key, {"id": "r1", "amount": 3})
    assert retry.status_code == 201
    assert Rows(url).payments() == [("r1", 3), ("r1#2", 3)]  # the handler ran twice
    assert len(behaviour["calls"]) == 1  # the external call did not
