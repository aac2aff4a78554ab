"""Handles for long-running operations answered with `202 Accepted` + `Location`.

Public API (`AsyncJobHandle` is the same with awaitable methods):

- `JobHandle(client, response, result_type, *, cancel_path=None, cancel_method="DELETE",
  poll_interval=1.0)`: built by generated code from the 202 `APIResponse`; `result_type` is
  the type (or `pydantic.TypeAdapter`) of the job's `result` member.
- `.wait(*, timeout=None, poll_interval=None) -> T`: polls `Location` (resolved against the
  request URL), waiting what the last `Retry-After` said (else `poll_interval`) through the
  client's injected sleep and clock; returns the parsed `result` once `status == "completed"`;
  raises `JobFailed` (with the job's `error` problem) on `failed`, `JobCancelled` on
  `cancelled`, `JobTimeout` as soon as the next allowed poll would fall after the deadline.
- `.refresh() -> str`: one poll; returns the new status.
- Polls and cancels send the credentials the starting call's operation requires (the
  `security` of its response), so the job's owner asks about it.
- `.cancel() -> None`: `DELETE` on `Location`, or `cancel_method` on `cancel_path` (a path
  relative to the client's base URL, as generated code formats it).
- `.job` (last job body), `.status`, `.id`, `.location`, `.retry_after`, `.done`,
  `.last_response`.
- `JOB_STATES` (queued, running, completed, failed, cancelled) and `TERMINAL_STATES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar, cast

import pydantic

from ._base import AsyncAPIClient, RequestOptions, SyncAPIClient
from ._errors import (
    APIError,
    APIResponseValidationError,
    JobCancelled,
    JobFailed,
    JobTimeout,
    ProblemDetails,
)
from ._response import APIResponse
from ._retry import parse_retry_after

T = TypeVar("T")

JOB_STATES: tuple[str, ...] = ("queued", "running", "completed", "failed", "cancelled")
TERMINAL_STATES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
DEFAULT_POLL_INTERVAL = 1.0


class _JobState(Generic[T]):
    """State and decisions shared by the sync and async handles."""

    def __init__(
        self,
        client: SyncAPIClient | AsyncAPIClient,
        response: APIResponse,
        result_type: type[T] | pydantic.TypeAdapter[T],
        *,
        cancel_path: str | None,
        cancel_method: str,
        poll_interval: float,
    ) -> None:
        self._adapter: pydantic.TypeAdapter[T] = (
            result_type
            if isinstance(result_type, pydantic.TypeAdapter)
            else pydantic.TypeAdapter(result_type)
        )
        self._cancel_path = cancel_path
        self._cancel_method = cancel_method
        self.poll_interval = poll_interval
        self.job: dict[str, Any] = {}
        self.retry_after: float | None = None
        self.last_response = response
        # Polls and cancels authenticate as the call that started the job did: the job
        # belongs to that principal.
        self._security = response.security
        self._clock = client._clock  # pyright: ignore[reportPrivateUsage] (the runtime's own)
        location = response.headers.get("location")
        self.location: str | None = None
        if location is not None:
            # A Location is a URI reference: resolve it against the URL that answered 202.
            self.location = str(response.http_response.request.url.join(location))
        self._absorb(response)
        if self.location is None and not self.done:
            raise APIError(f"HTTP {response.status_code} for a job carried no Location header")

    @property
    def status(self) -> str:
        """The job's last known state; "queued" until the server has said otherwise."""
        status = self.job.get("status")
        return status.lower() if isinstance(status, str) else "queued"

    @property
    def id(self) -> str | None:
        job_id = self.job.get("id")
        return job_id if isinstance(job_id, str) else None

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_STATES

    def _absorb(self, response: APIResponse) -> None:
        self.last_response = response
        self.retry_after = parse_retry_after(response.headers, now=self._clock())
        try:
            body = response.json()
        except APIResponseValidationError:
            body = None
        if isinstance(body, Mapping):
            self.job = dict(cast("Mapping[str, Any]", body))

    def _poll_options(self) -> RequestOptions:
        if self.location is None:
            raise APIError("this job has no Location to poll")
        return RequestOptions("GET", self.location, security=self._security)

    def _cancel_options(self) -> RequestOptions:
        path = self._cancel_path or self.location
        if path is None:
            raise APIError("this job has no Location to cancel")
        return RequestOptions(self._cancel_method, path, security=self._security)

    def _outcome(self) -> tuple[T] | None:
        """`(result,)` when completed; raises for failed/cancelled; None while the job is
        still queued or running."""
        status = self.status
        if status == "completed":
            return (self.last_response.validate(self.job.get("result"), self._adapter),)
        if status == "failed":
            raise JobFailed(ProblemDetails.from_json(self.job.get("error")), self.job)
        if status == "cancelled":
            raise JobCancelled(self.job)
        return None

    def _delay(
        self, poll_interval: float | None, deadline: float | None, timeout: float | None
    ) -> float:
        """Seconds to sleep before the next poll; raises JobTimeout when that poll would come
        after the deadline (the server asked us not to ask sooner, so waiting is pointless)."""
        interval = self.poll_interval if poll_interval is None else poll_interval
        delay = self.retry_after if self.retry_after is not None else interval
        if deadline is not None and timeout is not None and self._clock() + delay > deadline:
            raise JobTimeout(timeout, self.job)
        return delay


class JobHandle(_JobState[T]):
    """A running job, polled with the synchronous client."""

    def __init__(
        self,
        client: SyncAPIClient,
        response: APIResponse,
        result_type: type[T] | pydantic.TypeAdapter[T],
        *,
        cancel_path: str | None = None,
        cancel_method: str = "DELETE",
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        super().__init__(
            client,
            response,
            result_type,
            cancel_path=cancel_path,
            cancel_method=cancel_method,
            poll_interval=poll_interval,
        )
        self._client = client

    def refresh(self) -> str:
        """Poll the job once; returns its status."""
        self._absorb(self._client.request(self._poll_options()))
        return self.status

    def wait(self, *, timeout: float | None = None, poll_interval: float | None = None) -> T:
        """Poll until the job ends; return its typed result or raise (see module docstring)."""
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            outcome = self._outcome()
            if outcome is not None:
                return outcome[0]
            self._client._sleep(self._delay(poll_interval, deadline, timeout))  # pyright: ignore[reportPrivateUsage]
            self.refresh()

    def cancel(self) -> None:
        """Ask the server to cancel the job; the body, if it is a job, updates `.job`."""
        self._absorb(self._client.request(self._cancel_options()))


class AsyncJobHandle(_JobState[T]):
    """A running job, polled with the asynchronous client."""

    def __init__(
        self,
        client: AsyncAPIClient,
        response: APIResponse,
        result_type: type[T] | pydantic.TypeAdapter[T],
        *,
        cancel_path: str | None = None,
        cancel_method: str = "DELETE",
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        super().__init__(
            client,
            response,
            result_type,
            cancel_path=cancel_path,
            cancel_method=cancel_method,
            poll_interval=poll_interval,
        )
        self._client = client

    async def refresh(self) -> str:
        """Poll the job once; returns its status."""
        self._absorb(await self._client.request(self._poll_options()))
        return self.status

    async def wait(self, *, timeout: float | None = None, poll_interval: float | None = None) -> T:
        """Poll until the job ends; return its typed result or raise (see module docstring)."""
        deadline = None if timeout is None else self._clock() + timeout
        while True:
            outcome = self._outcome()
            if outcome is not None:
                return outcome[0]
            await self._client._sleep(self._delay(poll_interval, deadline, timeout))  # pyright: ignore[reportPrivateUsage]
            await self.refresh()

    async def cancel(self) -> None:
        """Ask the server to cancel the job; the body, if it is a job, updates `.job`."""
        self._absorb(await self._client.request(self._cancel_options()))
