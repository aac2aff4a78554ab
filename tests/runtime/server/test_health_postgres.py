"""/readyz on PostgreSQL (runtime/health.py): a real cluster started by the test answers
`SELECT 1` through the process's pool; once it is stopped, and for a DSN to a closed loopback
port, /readyz answers 503 within the check's timeout, naming only the failed check — never the
DSN, its host, port or password."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid

import httpx
import pytest
from fastapi import FastAPI

from tests.runtime.server.conftest import RuntimeModules
from tests.support import free_port, postgres_server

SECRET = "s3cr3t-pw"
CHECK_TIMEOUT = 1.0  # seconds: health.CHECK_TIMEOUT_SECONDS


def probe_app(rt: RuntimeModules, url: str) -> FastAPI:
    app = FastAPI()
    rt.problems.install_problem_handlers(app, max_body_bytes=1 << 20)
    checks = rt.health.store_checks({"resources": url, "idempotency": url})
    rt.health.install_probes(app, None, checks, metrics_path="")
    return app


async def ready(app: FastAPI) -> tuple[httpx.Response, float]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        started = time.monotonic()
        answer = await client.get("/readyz")
        return answer, time.monotonic() - started


def assert_not_ready(answer: httpx.Response, elapsed: float, secrets: list[str]) -> None:
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["checks"] == {"postgres (resources, idempotency)": "failed"}
    assert body["detail"] == "Not ready: postgres (resources, idempotency)."
    for secret in secrets:
        assert secret not in answer.text
    assert elapsed < CHECK_TIMEOUT + 1.5, f"/readyz took {elapsed:.1f}s"


def test_readyz_follows_a_postgres_that_stops(
    rt: RuntimeModules, caplog: pytest.LogCaptureFixture
) -> None:
    assert rt.health.CHECK_TIMEOUT_SECONDS == CHECK_TIMEOUT
    cluster = postgres_server()
    admin = cluster.__enter__()
    port = admin.rsplit(":", 1)[1].split("/")[0]

    async def scenario() -> list[tuple[httpx.Response, float]]:
        pg = rt.postgres.database(admin)  # the stores' pool, open as in a running server
        await pg.pool()
        app = probe_app(rt, admin)
        try:
            answers = [await ready(app)]
            # pg_ctl stop (immediate) under the live pool: the server is gone
            await asyncio.to_thread(cluster.__exit__, None, None, None)
            answers.append(await ready(app))
            return answers
        finally:
            with contextlib.suppress(Exception):
                await rt.postgres.release(pg)

    try:
        with caplog.at_level(logging.WARNING):
            up, down = asyncio.run(scenario())
    finally:
        with contextlib.suppress(Exception):
            cluster.__exit__(None, None, None)  # stopped already unless the scenario failed
    answer, _ = up
    assert answer.status_code == 200, answer.text
    assert answer.json()["checks"] == {"postgres (resources, idempotency)": "ok"}
    assert_not_ready(*down, [admin, f":{port}", "127.0.0.1"])
    assert "not ready: postgres (resources, idempotency)" in caplog.text  # the why: in the log


def test_readyz_with_postgres_on_a_closed_port(rt: RuntimeModules) -> None:
    url = f"postgresql://apiforge:{SECRET}@127.0.0.1:{free_port()}/db_{uuid.uuid4().hex[:6]}"
    answer, elapsed = asyncio.run(ready(probe_app(rt, url)))
    assert_not_ready(answer, elapsed, [url, SECRET, "127.0.0.1"])
