"""202 async jobs on memory, SQLite (in-process worker) and Redis (arq workers): states,
results, problems, cancellation, signed callbacks, and a server killed mid-job."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import httpx
import pytest

from tests.support import stop_process_group, uvicorn_server

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"
T = TypeVar("T")
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

# A small app as a generated server wires the job helpers: router, problem handler, lifespan.
APP = """
from __future__ import annotations

import asyncio
import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from PKG.runtime.destinations import DestinationPolicy
from PKG.runtime.jobs import JobRegistry, open_jobs
from PKG.runtime.problems import PROBLEM_JSON, ProblemDetail
from PKG.runtime.webhook_signing import WebhookSigner
from PKG.runtime.delivery import WebhookDispatcher
from PKG.runtime.webhooks import open_outbox

registry = JobRegistry()


@registry.handler("report")
async def report(payload: dict[str, Any]) -> dict[str, Any]:
    marks = Path(payload["marks"]) if payload.get("marks") else None
    if marks:
        with open(marks / "started", "a") as f:
            f.write(f"{os.getpid()}\\n")
    await asyncio.sleep(float(payload.get("sleep", 0)))
    if marks:
        with open(marks / "done", "a") as f:
            f.write(f"{os.getpid()}\\n")
    return {"reportUrl": "https://cdn.example.com/reports/" + payload.get("name", "r") + ".csv"}


@registry.handler("add")
async def add(payload: dict[str, Any]) -> int:
    return int(payload["a"]) + int(payload["b"])


@asynccontextmanager
async def lifespan(app: FastAPI) -> Any:
    url = os.environ["APIFORGE_JOBS_URL"]
    outbox = open_outbox(os.environ.get("APIFORGE_WEBHOOKS_URL", url))
    dispatcher = WebhookDispatcher(
        outbox,
        WebhookSigner(tuple(os.environ["APIFORGE_WEBHOOK_SECRETS"].split(","))),
        policy=DestinationPolicy(allow_http=True, allow=("127.0.0.1",)),  # the test consumer
    )
    jobs = open_jobs(
        url,
        registry,
        outbox=outbox,
        base_path="/v1/jobs",
        lease_seconds=float(os.environ.get("APIFORGE_JOBS_LEASE_SECONDS", "30")),
        poll_interval=0.1,
    )
    await jobs.start()
    dispatcher.start()
    app.state.jobs = jobs
    yield
    await jobs.close()
    await dispatcher.stop()
    await outbox.close()


app = FastAPI(lifespan=lifespan)


@app.exception_handler(ProblemDetail)
async def problem(request: Request, exc: ProblemDetail) -> Response:
    return Response(exc.encode(request.url.path), exc.status, exc.headers, PROBLEM_JSON)


@app.post("/v1/reports", status_code=202)
async def create_report(request: Request) -> Response:
    body = await request.json()
    return await request.app.state.jobs.submit_response("report", body, callback_url=body.get("callbackUrl"))


@app.get("/v1/jobs/{job_id}")
async def get_job(job_id: str, request: Request) -> Response:
    return await request.app.state.jobs.get_response(job_id)


@app.delete("/v1/jobs/{job_id}")
async def cancel_job(job_id: str, request: Request) -> Response:
    return await request.app.state.jobs.cancel_response(job_id)
"""


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The runtime copied into tmp as a package (as generation does) plus the app above."""
    root = tmp_path_factory.mktemp("jobsrt")
    package = "jobsrt_" + uuid.uuid4().hex[:8]
    (root / package / "runtime").mkdir(parents=True)
    (root / package / "__init__.py").touch()
    (root / package / "runtime" / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, root / package / "runtime" / src.name)
    app_module = f"{package}_app"
    (root / f"{app_module}.py").write_text(APP.replace("PKG", package))
    sys.path.insert(0, str(root))
    try:
        yield SimpleNamespace(
            root=root,
            package=package,
            app_module=app_module,
            jobs=importlib.import_module(f"{package}.runtime.jobs"),
            job_store=importlib.import_module(f"{package}.runtime.job_store"),
            delivery=importlib.import_module(f"{package}.runtime.delivery"),
            wh=importlib.import_module(f"{package}.runtime.webhooks"),
            ws=importlib.import_module(f"{package}.runtime.webhook_signing"),
            dst=importlib.import_module(f"{package}.runtime.destinations"),
            problems=importlib.import_module(f"{package}.runtime.problems"),
        )
    finally:
        sys.path.remove(str(root))


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_registry(rt: SimpleNamespace, state: dict[str, Any]) -> Any:
    registry = rt.jobs.JobRegistry()

    @registry.handler("add")
    async def add(payload: dict[str, int]) -> int:
        state["add_calls"] = state.get("add_calls", 0) + 1
        return payload["a"] + payload["b"]

    @registry.handler("boom")
    async def boom(payload: Any) -> None:
        raise rt.problems.ProblemDetail(
            422, "invalid-range", "Invalid range", "endDate < startDate"
        )

    @registry.handler("crash")
    async def crash(payload: Any) -> None:
        raise RuntimeError("secret internals")

    @registry.handler("slow")
    async def slow(payload: Any) -> str:
        state["slow_started"] = True
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            state["slow_cancelled"] = True
            raise
        return "never"

    return registry


@pytest.fixture
def consumer(rt: SimpleNamespace) -> Iterator[SimpleNamespace]:
    """A callback consumer on 127.0.0.1 that verifies Standard Webhooks signatures."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = dict(self.headers.items())
            try:
                rt.ws.verify_standard([SECRET], headers, body, tolerance=10**9)
                verified = True
            except rt.ws.WebhookVerificationError:
                verified = False
            received.append(
                {"verified": verified, "webhook_id": headers.get("webhook-id"), **json.loads(body)}
            )
            self.send_response(200 if verified else 401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield SimpleNamespace(
            url=f"http://127.0.0.1:{server.server_address[1]}/cb", received=received
        )
    finally:
        server.shutdown()
        server.server_close()


EMBEDDED = ["memory", "sqlite"]


def embedded_url(kind: str, tmp_path: Path) -> str:
    return "memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'jobs.db'}"


@pytest.mark.parametrize("kind", EMBEDDED)
def test_states_results_problems_and_responses(
    rt: SimpleNamespace, kind: str, tmp_path: Path
) -> None:
    ProblemDetail = rt.problems.ProblemDetail

    async def scenario() -> None:
        state: dict[str, Any] = {}
        svc = rt.jobs.open_jobs(
            embedded_url(kind, tmp_path),
            make_registry(rt, state),
            base_path="/v1/jobs",
            retry_after=7,
        )
        worker = rt.jobs.JobWorker(svc)

        resp = await svc.submit_response("add", {"a": 2, "b": 40})
        assert resp.status_code == 202
        body = json.loads(resp.body)
        assert body["id"].startswith("job_") and body["status"] == "queued"
        assert set(body) == {"id", "status", "createdAt"}
        assert resp.headers["location"] == f"/v1/jobs/{body['id']}"
        assert resp.headers["retry-after"] == "7"
        polled = await svc.get_response(body["id"])
        assert (
            json.loads(polled.body)["status"] == "queued" and polled.headers["retry-after"] == "7"
        )

        done = await worker.run_once()
        assert done.status == "completed" and done.result == 42 and done.attempts == 1
        got = await svc.get_response(body["id"])
        job = json.loads(got.body)
        assert job["status"] == "completed" and job["result"] == 42
        assert {"startedAt", "completedAt"} <= set(job) and "error" not in job
        assert "retry-after" not in got.headers
        assert await worker.run_once() is None and state["add_calls"] == 1

        await svc.submit("boom")
        failed = await worker.run_once()
        assert failed.status == "failed" and failed.result is None
        assert failed.to_json()["error"] == {
            "type": "/problems/invalid-range",
            "title": "Invalid range",
            "status": 422,
            "detail": "endDate < startDate",
            "instance": f"/v1/jobs/{failed.id}",
        }
        await svc.submit("crash")
        crashed = await worker.run_once()
        err = crashed.to_json()["error"]
        assert err["type"].endswith("/job-failed") and err["status"] == 500
        assert "secret" not in json.dumps(err), "exception text is not leaked to clients"

        queued = await svc.submit("add", {"a": 1, "b": 1})
        cancelled = json.loads((await svc.cancel_response(queued.id)).body)
        assert cancelled["status"] == "cancelled" and "completedAt" in cancelled
        assert await worker.run_once() is None, "a cancelled job never runs"
        assert (await svc.cancel(queued.id)).status == "cancelled"  # idempotent
        with pytest.raises(ProblemDetail) as conflict:
            await svc.cancel(done.id)
        assert conflict.value.status == 409 and conflict.value.kind == "job-not-cancellable"
        with pytest.raises(ProblemDetail) as missing:
            await svc.get_response("job_nope")
        assert missing.value.status == 404
        with pytest.raises(LookupError):
            await svc.submit("no-such-handler")
        await svc.close()

    run(scenario())


@pytest.mark.parametrize("kind", EMBEDDED)
def test_cancel_stops_a_running_job(rt: SimpleNamespace, kind: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        state: dict[str, Any] = {}
        svc = rt.jobs.open_jobs(
            embedded_url(kind, tmp_path),
            make_registry(rt, state),
            lease_seconds=0.3,
            poll_interval=0.05,
        )
        await svc.start()
        job = await svc.submit("slow")
        for _ in range(200):
            if state.get("slow_started"):
                break
            await asyncio.sleep(0.01)
        assert (await svc.get(job.id)).status == "running"
        assert (await svc.cancel(job.id)).status == "cancelled"
        await asyncio.sleep(0.3)
        assert state.get("slow_cancelled"), "the handler was stopped"
        final = await svc.get(job.id)
        assert final.status == "cancelled" and final.result is None
        await svc.close()

    run(scenario())


@pytest.mark.parametrize("kind", EMBEDDED)
def test_interrupted_job_is_retried_once_then_abandoned(
    rt: SimpleNamespace, kind: str, tmp_path: Path
) -> None:
    """A worker that dies leaves its job running with a lease; the next claim after the lease
    re-runs it; the stale claim cannot complete it; attempts are bounded."""

    async def scenario() -> None:
        state: dict[str, Any] = {}
        clock = FakeClock()
        svc = rt.jobs.open_jobs(
            embedded_url(kind, tmp_path),
            make_registry(rt, state),
            clock=clock,
            lease_seconds=30,
            max_attempts=2,
        )
        job = await svc.submit("add", {"a": 1, "b": 2})
        first = await svc.claim_next()  # ...and the worker dies here
        assert first.status == "running" and first.attempts == 1
        clock.now += 29
        assert await svc.claim_next() is None, "the lease still holds"
        clock.now += 1
        second = await svc.claim_next()
        assert second.id == job.id and second.attempts == 2 and second.claim != first.claim
        assert await svc.execute(first) is None, "the stale claim cannot complete the job"
        completed = await svc.execute(second)
        assert completed.status == "completed" and completed.result == 3
        assert await svc.execute(second) is None, "never completed twice"

        other = await svc.submit("add", {"a": 0, "b": 0})
        await svc.claim_next()
        clock.now += 30
        await svc.claim_next()
        clock.now += 30
        assert await svc.claim_next() is None
        abandoned = await svc.get(other.id)
        assert abandoned.status == "failed" and abandoned.attempts == 2
        assert abandoned.to_json()["error"]["type"].endswith("/job-abandoned")
        await svc.close()

    run(scenario())


def test_queued_jobs_survive_a_restart(rt: SimpleNamespace, tmp_path: Path) -> None:
    async def scenario() -> None:
        url = f"sqlite:///{tmp_path / 'restart.db'}"
        before = rt.jobs.open_jobs(url, make_registry(rt, {}))
        ids = [(await before.submit("add", {"a": i, "b": 1})).id for i in range(3)]
        await before.close()  # the process ends before its worker ran anything
        after = rt.jobs.open_jobs(url, make_registry(rt, {}), poll_interval=0.02)
        await after.start()
        for _ in range(300):
            states = [(await after.get(i)).status for i in ids]
            if states == ["completed"] * 3:
                break
            await asyncio.sleep(0.02)
        assert [(await after.get(i)).result for i in ids] == [1, 2, 3]
        await after.close()

    run(scenario())


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_one_owners_queue_does_not_delay_another_owners_job(
    rt: SimpleNamespace, kind: str, tmp_path: Path
) -> None:
    """Alice queues 40 jobs of 0.3 s, then Bob one: with 4 slots and 2 per owner, Bob's job
    starts at once instead of after Alice's 40 (10 rounds of 0.3 s before)."""

    async def scenario() -> tuple[float, int]:
        started: dict[str, float] = {}
        running: dict[str, int] = {"alice": 0, "most": 0}
        registry = rt.jobs.JobRegistry()

        @registry.handler("work")
        async def work(payload: dict[str, str]) -> None:
            started.setdefault(payload["who"], time.monotonic())
            if payload["who"] == "alice":
                running["alice"] += 1
                running["most"] = max(running["most"], running["alice"])
                await asyncio.sleep(0.3)
                running["alice"] -= 1

        url = "memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'fair.db'}"
        svc = rt.jobs.open_jobs(url, registry, poll_interval=0.02, concurrency=4)
        for _ in range(40):
            await svc.submit("work", {"who": "alice"}, owner="alice")
        await svc.start()
        await asyncio.sleep(0.1)  # alice's first jobs are running
        queued = time.monotonic()
        await svc.submit("work", {"who": "bob"}, owner="bob")
        for _ in range(500):
            if "bob" in started:
                break
            await asyncio.sleep(0.01)
        await svc.close()
        return started["bob"] - queued, running["most"]

    delay, most = run(scenario())
    print(f"\n{kind}: bob's job started after {delay * 1000:.0f} ms; alice ran {most} at once")
    assert most == 2, "one owner's jobs take half the slots"
    assert delay < 0.3, f"bob's job waited {delay:.2f} s behind alice's queue"


def test_two_workers_on_one_sqlite_file_run_each_job_once(
    rt: SimpleNamespace, tmp_path: Path
) -> None:
    """Two services on one file (as two uvicorn workers): claims are atomic."""

    async def scenario() -> None:
        calls: list[int] = []
        registry = rt.jobs.JobRegistry()

        @registry.handler("note")
        async def note(n: int) -> int:
            calls.append(n)
            await asyncio.sleep(0.01)
            return n

        url = f"sqlite:///{tmp_path / 'shared.db'}"
        a = rt.jobs.open_jobs(url, registry, poll_interval=0.02)
        b = rt.jobs.open_jobs(url, registry, poll_interval=0.02)
        jobs = [await (a if i % 2 else b).submit("note", i) for i in range(30)]
        await a.start()
        await b.start()
        for _ in range(500):
            states = [(await a.get(j.id)).status for j in jobs]
            if all(s == "completed" for s in states):
                break
            await asyncio.sleep(0.02)
        assert states == ["completed"] * 30
        assert sorted(calls) == list(range(30)), "each job ran exactly once"
        await a.close()
        await b.close()

    run(scenario())


async def run_arq_burst(rt: SimpleNamespace, registry: Any, url: str, queue: str) -> None:
    from arq.worker import create_worker

    settings = rt.jobs.arq_worker_settings(registry, url, queue_name=queue, base_path="/v1/jobs")
    worker = create_worker(settings, burst=True, handle_signals=False, poll_delay=0.05)
    try:
        await worker.async_run()
    finally:
        await worker.close()


def test_arq_jobs_on_redis(rt: SimpleNamespace, redis_url: str) -> None:
    async def scenario() -> None:
        state: dict[str, Any] = {}
        registry = make_registry(rt, state)
        queue = f"q:{uuid.uuid4().hex[:8]}"
        svc = rt.jobs.open_jobs(redis_url, registry, queue_name=queue, base_path="/v1/jobs")
        await svc.start()  # no in-process worker: arq runs them
        assert svc.worker is None
        ok = await svc.submit("add", {"a": 20, "b": 22})
        bad = await svc.submit("boom")
        crash = await svc.submit("crash")
        dropped = await svc.submit("add", {"a": 0, "b": 0})
        await svc.cancel(dropped.id)
        resp = await svc.get_response(ok.id)
        assert json.loads(resp.body)["status"] == "queued"

        await run_arq_burst(rt, registry, redis_url, queue)

        assert (await svc.get(ok.id)).result == 42
        assert (await svc.get(ok.id)).status == "completed"
        assert (await svc.get(bad.id)).error["type"].endswith("/invalid-range")
        assert (await svc.get(crash.id)).error["type"].endswith("/job-failed")
        assert (await svc.get(dropped.id)).status == "cancelled"
        assert state["add_calls"] == 1, "the cancelled job never ran"

        # arq re-runs a job whose worker died; past max_attempts it is failed, not forgotten
        lost = await svc.submit("add", {"a": 1, "b": 1})
        await svc.store.update(lost.id, lambda j: rt.job_store._claim(j, 0.0, 30, "dead-worker"))
        await svc.run_arq_job(lost.id, job_try=4)
        assert (await svc.get(lost.id)).error["type"].endswith("/job-abandoned")
        await svc.close()

    run(scenario())


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
def test_callback_url_gets_a_signed_webhook(
    rt: SimpleNamespace,
    kind: str,
    tmp_path: Path,
    consumer: SimpleNamespace,
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("redis_url") if kind == "redis" else embedded_url(kind, tmp_path)

    async def scenario() -> None:
        registry = make_registry(rt, {})
        outbox = rt.wh.open_outbox(url)
        queue = f"q:{uuid.uuid4().hex[:8]}"
        svc = rt.jobs.open_jobs(url, registry, outbox=outbox, queue_name=queue)
        if kind == "sqlite":
            assert svc.store.shares_outbox(outbox), "job end and callback: one transaction"
        dispatcher = rt.delivery.WebhookDispatcher(
            outbox,
            rt.ws.WebhookSigner((SECRET,)),
            policy=rt.dst.DestinationPolicy(allow_http=True, allow=("127.0.0.1",)),
        )
        ok = await svc.submit("add", {"a": 1, "b": 2}, callback_url=consumer.url)
        bad = await svc.submit("boom", callback_url=consumer.url)
        if kind == "redis":
            await run_arq_burst(rt, registry, url, queue)
        else:
            worker = rt.jobs.JobWorker(svc)
            await worker.run_once()
            await worker.run_once()
        await svc.submit("add", {"a": 0, "b": 0})  # no callbackUrl: no webhook
        cancelled = await svc.submit("add", {"a": 0, "b": 0}, callback_url=consumer.url)
        await svc.cancel(cancelled.id)
        while await dispatcher.run_once():
            pass
        deliveries = await outbox.list_deliveries(event_id="evt_" + ok.id.removeprefix("job_"))
        assert [d.status for d in deliveries] == ["delivered"]
        await dispatcher.stop()
        await svc.close()
        await outbox.close()

        by_type = {r["type"]: r for r in consumer.received}
        assert all(r["verified"] for r in consumer.received)
        assert sorted(by_type) == ["job.cancelled", "job.completed", "job.failed"]
        assert by_type["job.completed"]["data"]["id"] == ok.id
        assert by_type["job.completed"]["data"]["result"] == 3
        assert all(r["webhook_id"] == r["id"] for r in consumer.received)  # consumers dedupe on it
        assert by_type["job.failed"]["data"]["error"]["status"] == 422
        assert by_type["job.failed"]["data"]["id"] == bad.id
        assert by_type["job.cancelled"]["data"]["status"] == "cancelled"

    run(scenario())


def test_documented_worker_command_runs_arq(rt: SimpleNamespace, redis_url: str) -> None:
    """`python -m <package>.runtime.worker <module>:registry --url redis://…` runs the jobs."""

    async def submit() -> tuple[Any, str]:
        queue = "apiforge:jobs:queue"  # the default the command uses
        app = importlib.import_module(rt.app_module)
        svc = rt.jobs.open_jobs(redis_url, app.registry, queue_name=queue)
        job = await svc.submit("add", {"a": 5, "b": 6})
        await svc.close()
        return job, queue

    job, _ = run(submit())
    env = {**os.environ, "PYTHONPATH": str(rt.root)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            f"{rt.package}.runtime.worker",
            f"{rt.app_module}:registry",
            "--url",
            redis_url,
            "--burst",
        ],
        cwd=rt.root,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]

    async def check() -> Any:
        store = rt.job_store.RedisJobStore(redis_url)
        found = await store.get(job.id)
        await store.close()
        return found

    done = run(check())
    assert done.status == "completed" and done.result == 11


def poll(
    client: httpx.Client, location: str, until: set[str], timeout: float = 20
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        resp = client.get(location)
        assert resp.status_code == 200, resp.text
        job: dict[str, Any] = resp.json()
        if job["status"] in until or time.monotonic() > deadline:
            return job
        time.sleep(0.1)


def test_http_submit_poll_and_cancel_under_uvicorn(
    rt: SimpleNamespace, tmp_path: Path, consumer: SimpleNamespace
) -> None:
    env = {
        "APIFORGE_JOBS_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "APIFORGE_WEBHOOK_SECRETS": SECRET,
    }
    server = uvicorn_server(f"{rt.app_module}:app", cwd=rt.root, env=env)
    with server as (base, _proc), httpx.Client(base_url=base, timeout=10) as client:
        resp = client.post(
            "/v1/reports", json={"name": "q1", "sleep": 0.2, "callbackUrl": consumer.url}
        )
        assert resp.status_code == 202
        assert resp.headers["retry-after"] == "5"
        location = resp.headers["location"]
        assert location == f"/v1/jobs/{resp.json()['id']}"
        assert resp.json()["status"] == "queued"
        job = poll(client, location, {"completed", "failed"})
        assert job["status"] == "completed"
        assert job["result"] == {"reportUrl": "https://cdn.example.com/reports/q1.csv"}

        slow = client.post("/v1/reports", json={"sleep": 30}).headers["location"]
        poll(client, slow, {"running"})
        cancelled = client.delete(slow)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert client.delete(location).status_code == 409
        missing = client.get("/v1/jobs/job_missing")
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/problem+json"
        deadline = time.monotonic() + 10
        while not consumer.received and time.monotonic() < deadline:
            time.sleep(0.05)
    assert [(r["type"], r["verified"]) for r in consumer.received] == [("job.completed", True)]


def test_sigkill_mid_job_then_restart_completes_it_exactly_once(
    rt: SimpleNamespace, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {
        "APIFORGE_JOBS_URL": f"sqlite:///{tmp_path / 'app.db'}",
        "APIFORGE_WEBHOOK_SECRETS": SECRET,
        "APIFORGE_JOBS_LEASE_SECONDS": "1.5",
    }
    app = f"{rt.app_module}:app"
    with uvicorn_server(app, cwd=rt.root, env=env) as (base, proc):
        with httpx.Client(base_url=base, timeout=10) as client:
            resp = client.post("/v1/reports", json={"sleep": 2, "marks": str(marks)})
            location = resp.headers["location"]
            assert poll(client, location, {"running"})["status"] == "running"
            deadline = time.monotonic() + 5
            while not (marks / "started").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        stop_process_group(proc, signal.SIGKILL)  # mid-job: no shutdown, no cleanup
    assert not (marks / "done").exists()

    t_restart = time.monotonic()
    restarted = uvicorn_server(app, cwd=rt.root, env=env)
    with restarted as (base, _proc), httpx.Client(base_url=base, timeout=10) as client:
        job = poll(client, location, {"completed", "failed"}, timeout=20)
    recovered_in = time.monotonic() - t_restart
    assert job["status"] == "completed", job
    assert len((marks / "started").read_text().split()) == 2, "interrupted once, retried once"
    assert len((marks / "done").read_text().split()) == 1, "the side effect completed exactly once"
    print(f"restart → job completed in {recovered_in:.2f}s")
