"""Job handles: polling Location with Retry-After, typed results, failures, cancel, timeout."""

from __future__ import annotations

import asyncio

import pydantic
import pytest

from templates.client.runtime import (
    APIError,
    AsyncAPIClient,
    AsyncJobHandle,
    JobCancelled,
    JobFailed,
    JobHandle,
    JobTimeout,
    RequestOptions,
    SyncAPIClient,
)

from .fakes import FakeClock, Reply, ScriptServer, problem


class Report(pydantic.BaseModel):
    report_url: str = pydantic.Field(alias="reportUrl")


def job(status: str, **extra: object) -> dict[str, object]:
    return {"id": "job_1", "status": status, **extra}


def accepted(location: str = "/v1/jobs/job_1", retry_after: str | None = "5") -> Reply:
    headers = {"Location": location}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return Reply(202, json=job("queued"), headers=headers)


def start(
    server: ScriptServer, clock: FakeClock, base: str = "", path: str = "/v1/reports"
) -> tuple[SyncAPIClient, JobHandle[Report]]:
    client = SyncAPIClient(server.url + base, sleep=clock.sleep, clock=clock, jitter=lambda: 0.0)
    response = client.request(RequestOptions("POST", path, json={"type": "sales"}))
    return client, JobHandle(client, response, Report)


def test_wait_polls_honouring_retry_after_and_returns_the_typed_result(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/reports", accepted())
    server.on(
        "GET",
        "/v1/jobs/job_1",
        Reply(200, json=job("running"), headers={"Retry-After": "2"}),
        Reply(200, json=job("running")),  # no hint: the poll interval
        Reply(200, json=job("completed", result={"reportUrl": "https://cdn/x.csv"})),
    )
    _, handle = start(server, clock)
    assert handle.status == "queued" and handle.id == "job_1" and not handle.done
    assert handle.location == server.url + "/v1/jobs/job_1"
    result = handle.wait(timeout=60, poll_interval=1.5)
    assert result == Report(reportUrl="https://cdn/x.csv")
    assert clock.sleeps == [5.0, 2.0, 1.5]
    assert len(server.received("GET")) == 3 and handle.done and handle.status == "completed"


def test_failed_job_raises_with_its_problem(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/reports", accepted(retry_after=None))
    server.on(
        "GET",
        "/v1/jobs/job_1",
        Reply(200, json=job("failed", error=problem(500, "report-failed", "no data for Q1"))),
    )
    _, handle = start(server, clock)
    with pytest.raises(JobFailed) as caught:
        handle.wait(poll_interval=0.25)
    assert caught.value.problem is not None
    assert (
        caught.value.problem.kind == "report-failed"
        and caught.value.problem.detail == "no data for Q1"
    )
    assert caught.value.job["status"] == "failed"
    assert "no data for Q1" in str(caught.value)
    assert clock.sleeps == [0.25]


def test_cancel_sends_delete_to_location_and_wait_reports_it(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/reports", accepted())
    server.on("DELETE", "/v1/jobs/job_1", Reply(202, json=job("cancelled")))
    _, handle = start(server, clock)
    handle.cancel()
    assert [r.method for r in server.requests] == ["POST", "DELETE"]
    assert handle.status == "cancelled"
    with pytest.raises(JobCancelled):
        handle.wait()
    assert clock.sleeps == []  # already terminal: no poll


def test_cancel_path_and_method_can_be_given(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/reports", accepted())
    server.on("POST", "/v1/jobs/job_1/cancel", Reply(204))
    server.on("GET", "/v1/jobs/job_1", Reply(200, json=job("cancelled")))
    client, first = start(server, clock)
    handle = JobHandle(
        client,
        first.last_response,
        Report,
        cancel_path="/v1/jobs/job_1/cancel",
        cancel_method="POST",
    )
    handle.cancel()
    assert handle.status == "queued"  # a body-less answer changes nothing
    assert handle.refresh() == "cancelled"
    assert [(r.method, r.path) for r in server.requests[1:]] == [
        ("POST", "/v1/jobs/job_1/cancel"),
        ("GET", "/v1/jobs/job_1"),
    ]


def test_wait_times_out_when_the_next_poll_would_be_late(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/reports", accepted())
    server.on(
        "GET", "/v1/jobs/job_1", Reply(200, json=job("running"), headers={"Retry-After": "5"})
    )
    _, handle = start(server, clock)
    with pytest.raises(JobTimeout) as caught:
        handle.wait(timeout=12)
    assert clock.sleeps == [5.0, 5.0]  # a third wait would end at 15 s > 12 s
    assert len(server.received("GET")) == 2
    assert caught.value.timeout == 12 and caught.value.job["status"] == "running"


def test_location_is_resolved_against_the_request_url(
    server: ScriptServer, clock: FakeClock
) -> None:
    # base URL has a path prefix; an absolute-path Location must not get it twice
    server.on("POST", "/api/v1/reports", accepted(location="/jobs/9", retry_after="0"))
    server.on("GET", "/jobs/9", Reply(200, json=job("completed", result={"reportUrl": "u"})))
    _, handle = start(server, clock, base="/api", path="/v1/reports")
    assert handle.wait().report_url == "u"
    assert server.requests[-1].path == "/jobs/9"
    # a relative Location resolves against the directory of the request
    server.on("POST", "/api/v1/exports", accepted(location="jobs/10", retry_after="0"))
    server.on(
        "GET", "/api/v1/jobs/10", Reply(200, json=job("completed", result={"reportUrl": "v"}))
    )
    _, handle = start(server, clock, base="/api", path="/v1/exports")
    assert handle.wait().report_url == "v"


def test_a_202_without_location_is_an_error(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/reports", Reply(202, json=job("queued")))
    client = SyncAPIClient(server.url, sleep=clock.sleep, clock=clock)
    response = client.request(RequestOptions("POST", "/v1/reports"))
    with pytest.raises(APIError, match="no Location"):
        JobHandle(client, response, Report)


def test_result_type_may_be_a_type_adapter(server: ScriptServer, clock: FakeClock) -> None:
    server.on(
        "POST",
        "/v1/reports",
        Reply(202, json=job("completed", result=[1, 2]), headers={"Location": "/v1/jobs/job_1"}),
    )
    client = SyncAPIClient(server.url, sleep=clock.sleep, clock=clock)
    handle = JobHandle(
        client,
        client.request(RequestOptions("POST", "/v1/reports")),
        pydantic.TypeAdapter(list[int]),
    )
    assert handle.wait() == [1, 2]


def test_async_job_handle(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/reports", accepted(retry_after="3"))
    server.on(
        "GET",
        "/v1/jobs/job_1",
        Reply(200, json=job("running"), headers={"Retry-After": "4"}),
        Reply(200, json=job("completed", result={"reportUrl": "async"})),
    )
    server.on("DELETE", "/v1/jobs/job_1", Reply(200, json=job("cancelled")))

    async def main() -> None:
        async with AsyncAPIClient(server.url, sleep=clock.async_sleep, clock=clock) as client:
            response = await client.request(RequestOptions("POST", "/v1/reports"))
            handle = AsyncJobHandle(client, response, Report)
            assert (await handle.wait(timeout=30)).report_url == "async"
            other = AsyncJobHandle(client, response, Report)
            await other.cancel()
            with pytest.raises(JobCancelled):
                await other.wait()
            timed = AsyncJobHandle(client, response, Report)
            with pytest.raises(JobTimeout):
                await timed.wait(timeout=2)  # Retry-After 3 is already past the deadline

    asyncio.run(main())
    assert clock.sleeps == [3.0, 4.0]
