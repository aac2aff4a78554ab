"""State shared by processes: concurrent writers on SQLite with two uvicorn workers, and
rate limits + idempotency on a real Redis with the IETF header family (reports spec), a job
whose callbackUrl gets a signed webhook."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.server import acme_handlers
from tests.server.conftest import (
    ACME_PACKAGE,
    SPECS,
    TINY_KEY,
    Receiver,
    authed,
    generate,
    problem,
    serve,
    write_handler,
)
from tests.server.test_contracts import CUSTOMER, PAYMENT

WRITERS = 8


def test_one_of_n_concurrent_writers_wins_across_two_workers(
    acme_project: Path, tmp_path: Path
) -> None:
    env = {"TEST_PATCH_DELAY": "0.3"}
    with serve(acme_project, ACME_PACKAGE, tmp_path, env=env, workers=2) as base:
        created = authed.post(
            base + "/v1/customers", json=CUSTOMER, headers={"Idempotency-Key": "c-1"}
        )
        assert created.status_code == 201, created.text
        url = f"{base}/v1/customers/{created.json()['id']}"

        def write(i: int) -> httpx.Response:
            headers = {"If-Match": '"v1"', "Idempotency-Key": f"w-{i}"}
            return authed.patch(url, json={"name": f"writer {i}"}, headers=headers, timeout=30)

        with ThreadPoolExecutor(WRITERS) as pool:
            results = list(pool.map(write, range(WRITERS)))
        statuses = sorted(r.status_code for r in results)
        assert statuses == [200] + [412] * (WRITERS - 1), [r.text for r in results]
        for r in results:
            if r.status_code == 412:
                problem(r, 412, "precondition-failed")
        winner = next(r for r in results if r.status_code == 200)
        current = authed.get(url)
        assert current.headers["etag"] == winner.headers["etag"] == '"v2"'
        assert current.json()["name"] == winner.json()["name"]

        # 20 concurrent requests with one idempotency key: one execution
        headers = {"Idempotency-Key": str(uuid.uuid4()), "Authorization": "Bearer same"}

        def pay(_: int) -> httpx.Response:
            return authed.post(base + "/v1/payments", json=PAYMENT, headers=headers, timeout=30)

        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(pay, range(20)))
        assert {r.status_code for r in answers} <= {201, 409}, [r.text for r in answers]
        created_ids = {r.json()["id"] for r in answers if r.status_code == 201}
        assert len(created_ids) == 1
        listed = authed.get(base + "/v1/payments", params={"limit": 100}).json()["data"]
        assert [p["id"] for p in listed] == sorted(created_ids)


REPORTS_HANDLER = """
from __future__ import annotations


from .. import models
from ..interfaces import ReportsBase
from ..runtime.context import JobContext


class ReportsHandler(ReportsBase):
    async def create_report(self, ctx: JobContext, *, body: models.ReportRequest) -> Any:
        return {"reportUrl": f"https://cdn.example.com/{body.type.value}.csv"}
"""


def test_reports_on_redis_ietf_headers_replay_job_and_signed_callback(
    tmp_path: Path,
    redis_url: str,
    receiver: Receiver,
) -> None:
    project = tmp_path / "project"
    generate(SPECS / "reports.yaml", project, "reports_srv")
    write_handler(project, "reports_srv", "reports", REPORTS_HANDLER)
    (project / "reports_srv" / "verifier.py").write_text(acme_handlers.VERIFIER.lstrip())
    env = {
        "APIFORGE_RATE_LIMIT_STORAGE_URL": redis_url,
        "APIFORGE_IDEMPOTENCY_STORE_URL": redis_url,
    }
    hook_url = receiver.url
    with serve(project, "reports_srv", tmp_path / "state", env=env) as base:
        request = {
            "type": "sales",
            "startDate": "2026-01-01",
            "endDate": "2026-03-31",
            "callbackUrl": hook_url,
        }
        headers = {"Idempotency-Key": str(uuid.uuid4()), "Authorization": f"Bearer {TINY_KEY}"}
        first = authed.post(base + "/v1/reports", json=request, headers=headers)
        assert first.status_code == 202, first.text
        assert first.headers["ratelimit-policy"] == '"default";q=3;w=60'
        assert first.headers["ratelimit"].startswith('"default";r=2;t=')
        assert "x-ratelimit-limit" not in first.headers
        replay = authed.post(base + "/v1/reports", json=request, headers=headers)
        assert replay.content == first.content
        assert replay.headers["idempotent-replayed"] == "true"
        location = first.headers["location"]
        assert location == f"/v1/jobs/{first.json()['id']}"

        # the job is its submitter's alone: a stranger does not see it
        problem(authed.get(base + location), 404, "job-not-found")
        # wait for its callback instead of polling, which would spend the tiny quota
        event = receiver.wait_for(lambda e: e["type"] == "job.completed")
        done = authed.get(base + location, headers=headers)
        assert done.json()["result"] == {"reportUrl": "https://cdn.example.com/sales.csv"}
        assert done.headers["ratelimit"].startswith('"default";r=0;t=')
        limited = authed.get(base + location, headers=headers)
        problem(limited, 429, "rate-limited")
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.headers["ratelimit-policy"] == '"default";q=3;w=60'
    assert event["data"]["id"] == first.json()["id"]
    assert event["data"]["result"] == {"reportUrl": "https://cdn.example.com/sales.csv"}
