"""Running the generated server in production: probes, metrics across two uvicorn
workers, request ids, logs, settings checked at start-up, a clean SIGTERM. The acme server
under uvicorn on 127.0.0.1, its rate limits, idempotency records and jobs on a redis-server
of its own (stopped and started again by the readiness test)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import ACME_PACKAGE, TINY_KEY, base_env, poll, problem
from tests.server.test_contracts import CUSTOMER, PAYMENT
from tests.support import free_port, uvicorn_server, wait_for_port

OWNER = {"Authorization": "Bearer ops-owner"}
METRICS_PORT = free_port()


class Redis:
    """A redis-server on a fixed port that a test can stop and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed: run `make test`"
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self.proc = subprocess.Popen(
            [*args, "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    server = Redis()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def served(
    acme_project: Path, redis: Redis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """Two workers sharing their metrics (PROMETHEUS_MULTIPROC_DIR) and Redis; webhook events
    go to a loopback port where nothing listens; logs as JSON into a file."""
    state = tmp_path_factory.mktemp("ops_state")
    metrics_dir = state / "metrics"
    metrics_dir.mkdir()
    log = state / "server.log"
    env = {
        **base_env(state),
        "APIFORGE_REDIS_URL": redis.url,
        # jobs stay in-process (on Redis they would need arq workers of their own)
        "APIFORGE_JOBS_STORE_URL": f"sqlite:///{state / 'app.db'}",
        "APIFORGE_WEBHOOK_ENDPOINTS": f"http://127.0.0.1:{free_port()}/hooks",
        "APIFORGE_LOG_FORMAT": "json",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "TEST_TOKEN_TIERS": json.dumps({TINY_KEY: "tiny"}),
        "TEST_JOB_CRASH": "1",
        "APIFORGE_METRICS_PORT": str(METRICS_PORT),
    }
    with uvicorn_server(
        f"{ACME_PACKAGE}.main:app",
        cwd=state,
        env=env,
        workers=2,
        pythonpath=[acme_project],
        output=log,
        extra_args=["--no-access-log"],
    ) as (base, _proc):
        yield base, log


def samples(text: str, family: str) -> dict[str, float]:
    """`{labels: value}` of one metric family in the Prometheus text format."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = re.match(rf"^{family}(\{{.*\}})? ([0-9.e+-]+)$", line)
        if match:
            found[match.group(1) or ""] = float(match.group(2))
    return found


def log_lines(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_probes_answer_and_readiness_follows_redis(served: tuple[str, Path], redis: Redis) -> None:
    base, _ = served
    assert httpx.get(base + "/healthz").json() == {"status": "ok"}
    ready = httpx.get(base + "/readyz")
    assert ready.status_code == 200, ready.text
    checks = ready.json()["checks"]
    assert all(result == "ok" for result in checks.values()), checks
    assert any(name.startswith("redis") for name in checks)
    assert any(name.startswith("sqlite") for name in checks)
    # not rate limited, not authenticated, not in the API's description
    for _ in range(5):
        assert httpx.get(base + "/healthz").status_code == 200
    assert "/healthz" not in httpx.get(base + "/openapi.json").json()["paths"]
    redis.stop()
    try:
        down = httpx.get(base + "/readyz", timeout=10)
        body = problem(down, 503, "not-ready")
        assert "redis" in body["detail"]
        assert body["checks"]["job worker"] == "ok"  # only what failed is named
        # why is for the log: the error names the internal host and port
        assert str(redis.port) not in down.text and "127.0.0.1" not in down.text
        assert "failed" in body["checks"].values()
        assert httpx.get(base + "/healthz").status_code == 200  # alive, not ready
    finally:
        redis.start()
    back = poll(lambda: httpx.get(base + "/readyz"), lambda r: r.status_code == 200)
    assert back.status_code == 200, back.text


def test_a_trailing_slash_is_not_redirected_by_the_host_header(
    served: tuple[str, Path],
) -> None:
    """`/v1/customers/` is not a declared path: 404, not a 307 whose Location is built from
    a Host header the client chose."""
    base, _ = served
    answer = httpx.get(
        base + "/v1/customers/", headers={**OWNER, "Host": "evil.example"}, timeout=10
    )
    assert answer.status_code == 404, answer.headers
    assert "evil.example" not in answer.headers.get("location", "")


def test_request_ids_reach_the_response_the_problem_the_log_and_the_job(
    served: tuple[str, Path],
) -> None:
    base, log = served
    rid = "req-" + uuid.uuid4().hex
    r = httpx.get(base + "/v1/payments/nope", headers={**OWNER, "X-Request-Id": rid})
    assert r.headers["x-request-id"] == rid
    assert problem(r, 422, "validation-error")["requestId"] == rid
    made = httpx.get(base + "/v1/nothing")  # no id sent: one is made
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
    assert made.json()["requestId"] == made.headers["x-request-id"]
    hostile = httpx.get(base + "/v1/nothing", headers={"X-Request-Id": "a b\tc"})
    assert re.fullmatch(r"[0-9a-f]{32}", hostile.headers["x-request-id"])  # replaced
    # a job carries the id of the request that submitted it, into its failure and its logs
    job_rid = "job-" + uuid.uuid4().hex
    report = {"type": "payments", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    headers = {**OWNER, "X-Request-Id": job_rid, "Idempotency-Key": str(uuid.uuid4())}
    submitted = httpx.post(base + "/v1/reports", json=report, headers=headers)
    assert submitted.status_code == 202, submitted.text
    failed = poll(
        lambda: httpx.get(base + submitted.headers["location"], headers=OWNER),
        lambda resp: resp.json().get("status") in ("completed", "failed"),
    ).json()
    assert failed["status"] == "failed"
    assert failed["error"]["requestId"] == job_rid
    assert failed["error"]["detail"] == "The job failed with an unexpected error."
    time.sleep(0.3)
    lines = log_lines(log)
    access = [x for x in lines if x.get("event") == "request" and x["request_id"] == rid]
    assert access and access[0]["status"] == 422 and access[0]["route"].startswith("/v1/")
    crash = [x for x in lines if x["request_id"] == job_rid and "exc_info" in x]
    assert crash, "the job's exception is logged with its traceback and request id"
    assert "ValueError: the ledger does not balance" in str(crash[0]["exc_info"])
    assert "Traceback" in str(crash[0]["exc_info"])
    text = log.read_text()
    # no credential in any line (the test verifier makes a token its own principal id, which
    # the access line names: with a real verifier that is an account id, not a secret)
    assert "Bearer" not in text and "authorization" not in text.lower()


def test_metrics_count_every_decision_across_both_workers(served: tuple[str, Path]) -> None:
    base, log = served
    before = httpx.get(base + "/metrics").text
    # a replay
    pay_rid = "pay-" + uuid.uuid4().hex
    key = {**OWNER, "Idempotency-Key": str(uuid.uuid4()), "X-Request-Id": pay_rid}
    assert httpx.post(base + "/v1/payments", json=PAYMENT, headers=key).status_code == 201
    replay = httpx.post(base + "/v1/payments", json=PAYMENT, headers=key)
    assert replay.headers["idempotent-replayed"] == "true"
    # a 429 (the tiny tier: 3 per minute, counted in Redis by both workers)
    tiny = {"Authorization": f"Bearer {TINY_KEY}"}
    statuses = [httpx.get(base + "/v1/payments", headers=tiny).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    # a 412
    created = httpx.post(
        base + "/v1/customers",
        json=CUSTOMER,
        headers={**OWNER, "Idempotency-Key": str(uuid.uuid4())},
    )
    url = base + "/v1/customers/" + created.json()["id"]
    stale = httpx.patch(
        url,
        json={"name": "B"},
        headers={**OWNER, "If-Match": '"v7"', "Idempotency-Key": str(uuid.uuid4())},
    )
    assert stale.status_code == 412
    # a job that completes
    report = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    job = httpx.post(
        base + "/v1/reports",
        json=report,
        headers={**OWNER, "Idempotency-Key": str(uuid.uuid4())},
    )
    poll(
        lambda: httpx.get(base + job.headers["location"], headers=OWNER),
        lambda resp: resp.json().get("status") == "completed",
    )
    # the payment's and the job's events fail to reach the closed loopback port
    time.sleep(1.5)
    after = httpx.get(base + "/metrics").text

    def delta(family: str, labels: str) -> float:
        return samples(after, family).get(labels, 0.0) - samples(before, family).get(labels, 0.0)

    assert delta("apiforge_idempotency_total", '{outcome="replayed"}') == 1
    assert delta("apiforge_idempotency_total", '{outcome="executed"}') == 4  # pay, cus, 2 jobs
    assert delta("apiforge_rate_limit_total", '{bucket="default",decision="limited"}') == 1
    assert delta("apiforge_preconditions_total", '{outcome="412"}') == 1
    assert delta("apiforge_jobs_total", '{state="completed"}') == 1
    assert delta("apiforge_jobs_total", '{state="queued"}') == 1
    failed = delta("apiforge_webhook_deliveries_total", '{attempt="1",outcome="failed"}')
    assert failed == 2, after  # payment.succeeded and the job's event, once each
    assert (
        delta(
            "apiforge_requests_total",
            '{method="PATCH",route="/v1/customers/{customerId}",status="412"}',
        )
        == 1
    )
    # both workers' numbers are in one scrape, and the gauges read the stores
    assert samples(after, "apiforge_jobs_queued") == {"": 0.0}
    # the same numbers on the metrics port of their own (served by one of the two workers)
    own_port = httpx.get(f"http://127.0.0.1:{METRICS_PORT}/metrics").text
    assert samples(own_port, "apiforge_preconditions_total") == samples(
        after, "apiforge_preconditions_total"
    )
    assert delta("apiforge_webhook_outbox_pending", "") == 2  # both wait for their retry
    assert not re.search(r'route="/v1/customers/cus_', after)  # templates, never raw paths
    # the payment's event delivery failed under the id of the request that paid
    failures = [x for x in log_lines(log) if x.get("event") == "webhook_deliveries"]
    assert any(x["request_id"] == pay_rid and x["outcome"] == "failed" for x in failures)


def test_bad_settings_stop_the_server_with_one_message(acme_project: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(acme_project),
        "APIFORGE_STORE_URL": "mysql://nope",
        "APIFORGE_RATE_LIMIT_DEFAULT": "lots",
        "APIFORGE_LOG_FORMAT": "xml",
    }
    done = subprocess.run(
        [sys.executable, "-c", f"import {ACME_PACKAGE}.main"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "APIFORGE_STORE_URL: 'mysql://nope' is not a store URL" in done.stderr
    assert "APIFORGE_RATE_LIMIT_DEFAULT: 'lots' is not a limit" in done.stderr
    assert "APIFORGE_LOG_FORMAT: 'xml'" in done.stderr


def test_sigterm_lets_a_slow_request_finish(acme_project: Path, tmp_path: Path) -> None:
    env = {**base_env(tmp_path), "TEST_PAY_DELAY": "1.5"}
    with uvicorn_server(
        f"{ACME_PACKAGE}.main:app", cwd=tmp_path, env=env, pythonpath=[acme_project]
    ) as (base, proc):
        result: dict[str, httpx.Response] = {}

        def pay() -> None:
            headers = {**OWNER, "Idempotency-Key": str(uuid.uuid4())}
            result["r"] = httpx.post(
                base + "/v1/payments", json=PAYMENT, headers=headers, timeout=30
            )

        thread = threading.Thread(target=pay)
        thread.start()
        time.sleep(0.5)  # the request is in the handler
        os.killpg(proc.pid, signal.SIGTERM)
        thread.join(30)
        assert result["r"].status_code == 201, result["r"].text
        # uvicorn shuts down gracefully, then re-raises the signal it handled
        assert proc.wait(30) in (0, -signal.SIGTERM)
