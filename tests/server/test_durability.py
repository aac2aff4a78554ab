"""Through the generated acme server, "lost" and "twice" never apply.

- 50 concurrent requests with one Idempotency-Key run the handler exactly once (the handler's
  own ledger counts executions) — SQLite with two uvicorn workers, and Redis;
- SIGKILL in the middle of a handler and of a job (SQLite, in-process worker): after a restart
  on the same file, the retry with the same key executes once in total, and the job completes
  exactly once with its `job.finished` webhook (the event type the spec declares);
- on Redis, jobs run on an arq worker started with the documented command, 202 → completed.

Handlers: acme_handlers.py (its `TEST_LEDGER` hooks). Short lock timeouts and leases come
from the generated settings (`APIFORGE_IDEMPOTENCY_LOCK_TIMEOUT_SECONDS`,
`APIFORGE_JOBS_LEASE_SECONDS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest

from tests.golden import spec_names
from tests.server.conftest import (
    ACME_PACKAGE,
    SPECS,
    Receiver,
    authed,
    base_env,
    generate,
    poll,
    problem,
)
from tests.server.test_contracts import PAYMENT
from tests.support import stop_process_group, uvicorn_server

BURST = 50
LOCK_TIMEOUT = 6  # seconds: longer than a restart, so the dead claim is seen holding the key
LEASE = 1.5  # seconds a running job stays claimed without renewal


@contextlib.contextmanager
def server(
    project: Path, state: Path, env: Mapping[str, str], workers: int = 1
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    state.mkdir(parents=True, exist_ok=True)
    full = {**base_env(state), **env}
    app = f"{ACME_PACKAGE}.main:app"
    with uvicorn_server(app, cwd=state, env=full, workers=workers, pythonpath=[project]) as found:
        yield found


def count(ledger: Path, name: str) -> int:
    path = ledger / name
    return len(path.read_text().split()) if path.exists() else 0


def wait_until(check: object, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


async def _burst(base: str, headers: dict[str, str]) -> list[httpx.Response]:
    """BURST requests, one key: half at once, half over the next two seconds (the handler
    takes 0.5 s), so a duplicate meets both an in-flight original (409) and a stored one (replay)."""
    limits = httpx.Limits(max_connections=BURST, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as client:

        async def one(i: int) -> httpx.Response:
            await asyncio.sleep(0 if i < BURST // 2 else (i - BURST // 2) * 4 / BURST)
            return await client.post("/v1/payments", json=PAYMENT, headers=headers)

        return list(await asyncio.gather(*(one(i) for i in range(BURST))))


@pytest.mark.parametrize("store", ["sqlite-2-workers", "redis"])
def test_50_concurrent_same_key_requests_execute_once(
    store: str, acme_project: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    env = {"TEST_LEDGER": str(ledger), "TEST_PAY_DELAY": "0.5"}
    if store == "redis":
        env["APIFORGE_REDIS_URL"] = request.getfixturevalue("redis_url")
    headers = {"Idempotency-Key": str(uuid.uuid4()), "Authorization": f"Bearer {uuid.uuid4()}"}
    with server(acme_project, tmp_path / "state", env, workers=2) as (base, _):
        answers = asyncio.run(_burst(base, headers))
        after = authed.post(base + "/v1/payments", json=PAYMENT, headers=headers, timeout=10)
        listed = authed.get(base + "/v1/payments", params={"limit": 100}).json()["data"]

    originals = [
        r for r in answers if r.status_code == 201 and "idempotent-replayed" not in r.headers
    ]
    replays = [r for r in answers if r.headers.get("idempotent-replayed") == "true"]
    in_progress = [r for r in answers if r.status_code == 409]
    assert count(ledger, "payments.started") == 1
    assert count(ledger, "payments.done") == 1
    assert len(originals) == 1
    assert len(originals) + len(replays) + len(in_progress) == BURST
    for r in in_progress:
        problem(r, 409, "idempotency-in-progress")
    for r in [*replays, after]:
        assert r.status_code == 201
        assert r.content == originals[0].content
        assert r.headers["location"] == originals[0].headers["location"]
    assert [p["id"] for p in listed] == [originals[0].json()["id"]]
    print(
        f"\n[{store}] {BURST} same-key requests: executions=1 original=1 "
        f"replays={len(replays)} 409={len(in_progress)}"
    )


def test_sigkill_mid_handler_and_mid_job_then_restart(
    acme_project: Path, tmp_path: Path, receiver: Receiver
) -> None:
    """One kill, one restart on the same SQLite file: the payment handler and a report job were
    both running. The payment's retry (same key) gets 409 while the dead claim lives, then runs
    once, then replays; the job is retried by the restarted in-process worker and completes
    once, and its `job.finished` webhook is delivered once."""
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    env = {
        "TEST_LEDGER": str(ledger),
        "APIFORGE_IDEMPOTENCY_LOCK_TIMEOUT_SECONDS": str(LOCK_TIMEOUT),
        "APIFORGE_JOBS_LEASE_SECONDS": str(LEASE),
    }
    state = tmp_path / "state"
    (ledger / "payments.hold").touch()
    (ledger / "reports.hold").touch()
    pay_headers = {"Idempotency-Key": str(uuid.uuid4()), "Authorization": "Bearer killed"}
    report = {
        "type": "sales",
        "startDate": "2026-01-01",
        "endDate": "2026-03-31",
        "callbackUrl": receiver.url,
    }

    with server(acme_project, state, env) as (base, proc):
        job = authed.post(base + "/v1/reports", json=report, headers={"Idempotency-Key": "r-1"})
        assert job.status_code == 202, job.text
        location = job.headers["location"]
        errors: list[BaseException] = []

        def doomed() -> None:
            try:
                authed.post(base + "/v1/payments", json=PAYMENT, headers=pay_headers, timeout=30)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=doomed)
        thread.start()
        wait_until(lambda: count(ledger, "payments.started") and count(ledger, "reports.started"))
        assert authed.get(base + location).json()["status"] == "running"
        time.sleep(LEASE)  # past the first lease and a third of the lock: both were renewed
        stop_process_group(proc, signal.SIGKILL)  # no shutdown, no cleanup
        killed_at = time.monotonic()
    thread.join(10)
    assert errors, "the in-flight payment must have died with its server"
    assert count(ledger, "payments.done") == count(ledger, "reports.done") == 0
    (ledger / "payments.hold").unlink()
    (ledger / "reports.hold").unlink()

    with server(acme_project, state, env) as (base, _):
        restarted_in = time.monotonic() - killed_at
        statuses: list[int] = []
        while True:
            r = authed.post(base + "/v1/payments", json=PAYMENT, headers=pay_headers, timeout=10)
            statuses.append(r.status_code)
            if r.status_code != 409:
                break
            problem(r, 409, "idempotency-in-progress")
            assert time.monotonic() - killed_at < LOCK_TIMEOUT + 5, "the dead claim never expired"
            time.sleep(0.1)
        recovered_in = time.monotonic() - killed_at
        assert r.status_code == 201, r.text
        replay = authed.post(base + "/v1/payments", json=PAYMENT, headers=pay_headers)
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.content == r.content

        done = poll(
            lambda: authed.get(base + location),
            lambda resp: resp.json()["status"] in ("completed", "failed"),
            timeout=20,
        )
        job_done_in = time.monotonic() - killed_at
        assert done.json()["status"] == "completed", done.text
        assert done.json()["result"]["reportUrl"] == "https://cdn.example.com/sales.csv"
        event = receiver.wait_for(
            lambda e: e["type"] == "job.finished" and e["data"]["id"] == job.json()["id"]
        )
        assert event["data"]["status"] == "completed"
        listed = authed.get(base + "/v1/payments", params={"limit": 100}).json()["data"]

    if restarted_in < LOCK_TIMEOUT * 2 / 3:  # the restart beat the lock: it must have held
        assert statuses[0] == 409
    assert count(ledger, "payments.started") == 2  # the killed attempt and the one retry
    assert count(ledger, "payments.done") == 1  # executed once in total
    assert [p["id"] for p in listed] == [r.json()["id"]]
    assert count(ledger, "reports.started") == 2  # interrupted once, retried once
    assert count(ledger, "reports.done") == 1  # ran to completion once
    deliveries = [b for _, b in receiver.received if job.json()["id"].encode() in b]
    assert len(deliveries) == 1, deliveries
    print(
        f"\n[sqlite] SIGKILL mid-handler: restart took {restarted_in:.2f}s, "
        f"{statuses.count(409)} retries got 409, then one execution {recovered_in:.2f}s after "
        f"the kill (lock timeout {LOCK_TIMEOUT}s), then replays; completed executions=1\n"
        f"[sqlite] SIGKILL mid-job: completed {job_done_in:.2f}s after the kill "
        f"(lease {LEASE}s), runs started=2 completed=1, job.finished delivered once"
    )


def test_jobs_on_redis_run_on_the_documented_arq_worker(
    acme_project: Path, tmp_path: Path, redis_url: str, receiver: Receiver
) -> None:
    """`python -m <package>.runtime.worker <package>.services:registry --url redis://…` (the
    command the generated README and services.py document) runs the 202 job; the server polls it
    to completed and delivers its webhook from the Redis outbox. A job that fails there records
    its problem under the problem base the app answers with (`APIFORGE_PROBLEM_BASE`)."""
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    state = tmp_path / "state"
    env = {"TEST_LEDGER": str(ledger), "APIFORGE_REDIS_URL": redis_url}
    env["APIFORGE_PROBLEM_BASE"] = "https://errors.acme.test/v1/"
    worker_env = {**os.environ, **base_env(state), **env}
    worker_env["PYTHONPATH"] = str(acme_project)
    state.mkdir(parents=True)
    command = [sys.executable, "-m", f"{ACME_PACKAGE}.runtime.worker"]
    command += [f"{ACME_PACKAGE}.services:registry", "--url", redis_url]
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        command, cwd=state, env=worker_env, stdout=log, stderr=log, start_new_session=True
    )
    try:
        with server(acme_project, state, env) as (base, _):
            report = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
            headers = {"Idempotency-Key": str(uuid.uuid4())}
            accepted = authed.post(base + "/v1/reports", json=report, headers=headers)
            assert accepted.status_code == 202, accepted.text
            assert accepted.json()["status"] == "queued"
            location = accepted.headers["location"]
            assert location == f"/v1/jobs/{accepted.json()['id']}"
            done = poll(
                lambda: authed.get(base + location),
                lambda r: r.json()["status"] in ("completed", "failed"),
                timeout=30,
            )
            assert done.json()["status"] == "completed", (done.text, worker_log(tmp_path))
            assert "retry-after" not in done.headers
            replay = authed.post(base + "/v1/reports", json=report, headers=headers)
            assert replay.content == accepted.content
            refunds = {**report, "type": "refunds"}  # the handler fails it with a problem
            headers = {"Idempotency-Key": str(uuid.uuid4())}
            accepted = authed.post(base + "/v1/reports", json=refunds, headers=headers)
            failed = poll(
                lambda: authed.get(base + accepted.headers["location"]),
                lambda r: r.json()["status"] in ("completed", "failed"),
                timeout=30,
            )
            assert failed.json()["status"] == "failed", (failed.text, worker_log(tmp_path))
            error = failed.json()["error"]
            assert error["type"] == "https://errors.acme.test/v1/report-too-large", error
            # the app's own problems start at the same base
            gone = authed.get(base + "/v1/jobs/job_00000000000000000000000000")
            assert gone.json()["type"] == "https://errors.acme.test/v1/job-not-found"
    finally:
        stop_process_group(worker)
        log.close()
    assert count(ledger, "reports.done") == 1
    pids = set((ledger / "reports.done").read_text().split())
    assert pids == {str(worker.pid)}, "the job ran in the arq worker, not in the server"


def test_servers_run_on_sqlite_without_redis_installed(tmp_path: Path) -> None:
    """redis and arq are the generated project's `redis` extra: every example server builds
    its app, serves a request and shuts down on SQLite with both unimportable."""
    code = (
        "import importlib, sys\n"
        "sys.modules['redis'] = sys.modules['arq'] = None  # ImportError on import\n"
        "from fastapi.testclient import TestClient\n"
        "for name in sys.argv[1:]:\n"
        "    main = importlib.import_module(name + '.main')\n"
        "    with TestClient(main.create_app()) as client:\n"
        "        assert client.get('/__nothing__').status_code == 404\n"
        "    assert not any(m.startswith(('redis', 'arq')) for m in sys.modules if sys.modules[m])\n"
        "    print(name)\n"
    )
    packages, paths = [], []
    for spec in spec_names():
        project = tmp_path / "projects" / spec
        plan, _, _ = generate(SPECS / f"{spec}.yaml", project, None)
        packages.append(plan.package)
        paths.append(str(project))
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["APIFORGE_STORE_URL"] = f"sqlite:///{tmp_path / 'app.db'}"
    proc = subprocess.run(
        [sys.executable, "-c", code, *packages], cwd=tmp_path, env=env, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert proc.stdout.decode().split() == packages


def worker_log(tmp_path: Path) -> str:
    return (tmp_path / "worker.log").read_text()[-3000:]
