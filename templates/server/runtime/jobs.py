"""202 async jobs: the service the router calls, and the workers that run jobs (the job
record and its stores are in ``job_store.py``; the PostgreSQL store in ``postgres.py``; the
store a URL names is opened by ``stores.py``).

A job is ``queued → running → completed | failed | cancelled``. Handlers write the work as an
ordinary async function registered by name::

    registry = JobRegistry()

    @registry.handler("generate_report")
    async def generate_report(payload: dict[str, Any]) -> dict[str, Any]:
        ...  # raise ProblemDetail(...) to fail with that problem under `error`
        return {"reportUrl": ...}

The generated router calls ``JobService``: ``submit_response`` (202 + ``Location`` +
``Retry-After``), ``get_response`` (GET the job), ``cancel_response`` (DELETE). A failed job
embeds an RFC 9457 problem under ``error``; a completed one its ``result``; a job with a
``callbackUrl`` gets a signed webhook (``job.completed`` / ``job.failed`` / ``job.cancelled``,
through ``webhooks.Outbox``) when it ends.

Two ways to run jobs, chosen by the store URL:

- ``sqlite:///file.db`` (the embedded default) and ``memory://`` (tests): the job is a row;
  an in-process ``JobWorker`` (an asyncio task started in the app lifespan, one per uvicorn
  worker) claims jobs atomically (``BEGIN IMMEDIATE``) under a lease it renews while the job
  runs. After a crash or restart, queued jobs run and a job whose lease ran out (its worker
  died) is claimed again — at most ``max_attempts`` times, then it fails with the problem
  ``job-abandoned``. Results are written only by the current claim holder of a ``running``
  job, so a job completes at most once. With SQLite for both jobs and webhooks (one file), the
  final state and its callback event are written in one transaction. On SQLite and
  PostgreSQL, ``submit(..., tx=tx)`` queues a job inside a handler's ``ctx.transaction()``:
  it exists, and the worker runs it, only if that transaction commits.
- ``redis://…`` (several processes or hosts): job state in Redis, execution by **arq**
  workers started with ``arq <package>.worker.WorkerSettings`` (a module that assigns
  ``WorkerSettings = arq_worker_settings(registry, url)``) or
  ``python -m <package>.runtime.worker <package>.<module>:registry --url redis://…``.

Why arq rather than saq, taskiq, dramatiq or Celery: it is asyncio-native (handlers are the
same ``async def`` as in the embedded mode, no thread or sync bridge), small (one dependency
besides redis-py, which the server already uses), Redis-only (the one backend we already run),
and has what we would otherwise hand-roll built in: atomic pickup across workers, retries with
a try counter, re-running a job whose worker died (its in-progress key expires), job results,
timeouts and a worker CLI. Celery and dramatiq are sync-first and much larger; saq and taskiq
would do, but add more moving parts (saq's web UI/sweeper, taskiq's broker/result-backend
split) for nothing this runtime needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from starlette.responses import JSONResponse

from .job_store import (
    Clock,
    Job,
    JobStatus,
    JobStore,
    RedisJobStore,
    WebhookBuilder,
    _abandon,
    _claim,
    new_job_id,
    problem,
)
from .job_view import RUNTIME_VIEW, JobView
from .observability import bind_request_id, current_request_id, record
from .problems import ProblemDetail
from .stores import open_job_store
from .transaction import Transaction
from .webhooks import Endpoint, Outbox, new_event, open_outbox

JobHandler: TypeAlias = Callable[[Any], Coroutine[Any, Any, Any]]

logger = logging.getLogger(__name__)

ARQ_FUNCTION = "apiforge_run_job"
DEFAULT_QUEUE = "apiforge:jobs:queue"


# --------------------------------------------------------------------------- registry


class JobRegistry:
    """Job handlers by name: ``async def handler(input) -> result``.

    It also carries what every process running these jobs (the app's in-process worker and
    arq workers alike) must agree on: ``event_types`` — the ``type`` of the webhook sent when
    a job ends, per final status, as the spec declares it (``{"completed": "job.finished",
    …}``; a status not listed sends ``job.<status>``); ``event_endpoints`` — endpoints that
    get that webhook for every job besides its own ``callbackUrl`` (when the spec declares the
    event among its ``webhooks``, i.e. subscribers get it); ``base_path`` — where job
    resources live (``Location``, problem ``instance``); ``view`` — how a job is shown, in the
    vocabulary of the spec's job schema (see ``job_view``)."""

    def __init__(
        self,
        *,
        event_types: Mapping[str, str] | None = None,
        event_endpoints: Sequence[str] = (),
        base_path: str | None = None,
        view: JobView = RUNTIME_VIEW,
    ) -> None:
        self._handlers: dict[str, JobHandler] = {}
        self.event_types: dict[str, str] = dict(event_types or {})
        self.event_endpoints: tuple[str, ...] = tuple(event_endpoints)
        self.base_path = base_path
        self.view = view

    def event_type(self, status: str) -> str:
        """The webhook ``type`` of a job that ended with ``status``."""
        return self.event_types.get(status, f"job.{status}")

    def register(self, name: str, handler: JobHandler) -> None:
        self._handlers[name] = handler

    def handler(self, name: str) -> Callable[[JobHandler], JobHandler]:
        def decorate(fn: JobHandler) -> JobHandler:
            self.register(name, fn)
            return fn

        return decorate

    def get(self, name: str) -> JobHandler | None:
        return self._handlers.get(name)

    def names(self) -> list[str]:
        return sorted(self._handlers)


# --------------------------------------------------------------------------- service


class JobService:
    """What the generated router and the workers use. Build it with ``open_jobs``."""

    def __init__(
        self,
        store: JobStore,
        registry: JobRegistry,
        *,
        outbox: Outbox | None = None,
        base_path: str | None = None,
        retry_after: int = 5,
        lease_seconds: float = 30.0,
        max_attempts: int = 3,
        concurrency: int = 4,
        per_owner: int | None = None,
        poll_interval: float = 0.5,
        clock: Clock = time.time,
        arq_url: str | None = None,
        queue_name: str = DEFAULT_QUEUE,
        callback_signer_key: str = "default",
    ) -> None:
        self.store = store
        self.registry = registry
        self.outbox = outbox
        self.base_path = (base_path or registry.base_path or "/jobs").rstrip("/")
        self.retry_after = retry_after
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        #: jobs of one owner running at once in this process (default: half the slots), so
        #: one owner's queue never holds every slot
        self.per_owner = max(1, min(per_owner or concurrency // 2, concurrency))
        self.poll_interval = poll_interval
        self.clock = clock
        self.arq_url = arq_url
        self.queue_name = queue_name
        self.callback_signer_key = callback_signer_key
        self._atomic_webhooks = store.shares_outbox(outbox)
        self._arq: Any = None  # arq.connections.ArqRedis, created on first submit
        self.worker: JobWorker | None = None

    # ---- what the router calls

    def location(self, job_id: str) -> str:
        return f"{self.base_path}/{job_id}"

    async def submit(
        self,
        name: str,
        input: Any = None,
        *,
        callback_url: str | None = None,
        owner: str | None = None,
        tx: Transaction | None = None,
    ) -> Job:
        """Queue a job. With `tx` (the handler's `ctx.transaction()`), the job is written in
        that transaction: it exists, and the worker runs it, only if the transaction commits
        (the job store must be in the store's database: SQLite file or PostgreSQL)."""
        if self.registry.get(name) is None:
            raise LookupError(f"no job handler registered as {name!r}")
        job = Job(
            new_job_id(),
            name,
            "queued",
            self.clock(),
            input,
            callback_url=callback_url,
            owner=owner,
            request_id=current_request_id(),
        )
        if tx is not None:
            await self.store.create_in(tx, job)
            tx.after_commit(self._queued)
            return job
        await self.store.create(job)
        if self.arq_url is not None:
            await self._enqueue_arq(job.id)
        self._queued()
        return job

    def _queued(self) -> None:
        record("jobs", "queued")
        if self.worker is not None:
            self.worker.wake()

    def shown(self, job: Job) -> dict[str, Any]:
        """The job as the spec's schema shows it (the registry's ``view``)."""
        return self.registry.view.present(job.to_json())

    def accepted_response(self, job: Job) -> JSONResponse:
        return JSONResponse(
            self.shown(job),
            status_code=202,
            headers={"Location": self.location(job.id), "Retry-After": str(self.retry_after)},
        )

    async def submit_response(
        self,
        name: str,
        input: Any = None,
        *,
        callback_url: str | None = None,
        owner: str | None = None,
        tx: Transaction | None = None,
    ) -> JSONResponse:
        """202 Accepted, ``Location: <base>/{id}``, ``Retry-After``, the queued job as body.
        ``owner``: the submitting principal's id; only that principal sees the job. ``tx``:
        as for ``submit``."""
        job = await self.submit(name, input, callback_url=callback_url, owner=owner, tx=tx)
        return self.accepted_response(job)

    async def get(self, job_id: str) -> Job:
        job = await self.store.get(job_id)
        if job is None:
            raise ProblemDetail(404, "job-not-found", "Job not found", f"No job {job_id}.")
        return job

    async def get_for(self, job_id: str, viewer: str | None) -> Job:
        """The job as ``viewer`` (a principal id, None: anonymous) may see it: a job with an
        owner is the owner's alone; anyone else gets the same 404 as for an unknown id, so
        job ids of other principals cannot even be confirmed."""
        job = await self.get(job_id)
        if job.owner is not None and job.owner != viewer:
            raise ProblemDetail(404, "job-not-found", "Job not found", f"No job {job_id}.")
        return job

    async def get_response(self, job_id: str, *, viewer: str | None = None) -> JSONResponse:
        """200 with the job; ``Retry-After`` while it has not ended; 404 problem if unknown
        or not ``viewer``'s."""
        job = await self.get_for(job_id, viewer)
        headers = {} if job.terminal else {"Retry-After": str(self.retry_after)}
        return JSONResponse(self.shown(job), headers=headers)

    async def cancel(self, job_id: str) -> Job:
        """Cancel a queued or running job (a running one is stopped at its next heartbeat).
        Cancelling a cancelled job is a no-op; a completed or failed one is a 409 problem."""

        def change(job: Job) -> Job | None:
            if job.terminal:
                return None
            return replace(
                job, status="cancelled", completed_at=self.clock(), lease_until=None, claim=""
            )

        new = await self.store.update(job_id, change, self._webhook_for_store)
        if new is not None:
            await self._ended(new)
            if self.worker is not None:
                self.worker.cancel_local(job_id)
            return new
        job = await self.get(job_id)
        if job.status != "cancelled":
            raise ProblemDetail(
                409,
                "job-not-cancellable",
                "Job cannot be cancelled",
                f"The job has already {job.status}.",
            )
        return job

    async def cancel_response(self, job_id: str, *, viewer: str | None = None) -> JSONResponse:
        await self.get_for(job_id, viewer)
        return JSONResponse(self.shown(await self.cancel(job_id)))

    # ---- lifecycle (app lifespan)

    async def start(self) -> None:
        """Start the in-process worker (embedded stores). With arq, workers are separate."""
        if self.arq_url is None and self.worker is None:
            self.worker = JobWorker(self)
            self.worker.start()

    async def stop(self) -> None:
        if self.worker is not None:
            await self.worker.stop()
            self.worker = None
        if self._arq is not None:
            await self._arq.aclose()
            self._arq = None

    async def close(self) -> None:
        await self.stop()
        await self.store.close()

    # ---- callbacks

    def callback_webhook(self, job: Job) -> tuple[dict[str, Any], list[Endpoint | str]]:
        """The event of a job that ended (its ``type`` from ``registry.event_type``), for the
        job's ``callbackUrl`` and the registry's ``event_endpoints``; one event id per job, so
        enqueueing it twice (a worker retried after a crash) stores it once."""
        event = new_event(
            self.registry.event_type(job.status),
            self.shown(job),
            event_id="evt_" + job.id.removeprefix("job_"),
            now=job.completed_at,
        )
        # sent on the owner's behalf: the dispatcher shares its slots fairly between owners
        endpoints: list[Endpoint | str] = []
        if job.callback_url:
            endpoints.append(Endpoint(job.callback_url, self.callback_signer_key, job.owner))
        endpoints.extend(
            Endpoint(u, owner=job.owner)
            for u in self.registry.event_endpoints
            if u != job.callback_url
        )
        return event, endpoints

    def _notifies(self, job: Job) -> bool:
        return bool(job.callback_url or self.registry.event_endpoints)

    @property
    def _webhook_for_store(self) -> WebhookBuilder | None:
        return self.callback_webhook if self._atomic_webhooks else None

    async def _ended(self, job: Job) -> None:
        """A job reached a terminal state: notify its callback unless the store already did."""
        record("jobs", job.status, log=f"job {job.id} ({job.name})")
        if self._atomic_webhooks and self.outbox is not None:
            self.outbox.notify()  # written with the job: wake this process's dispatcher
            return
        if self._notifies(job) and self.outbox is not None:
            event, endpoints = self.callback_webhook(job)
            await self.outbox.enqueue(event, endpoints)

    # ---- running one claimed job (embedded worker and arq alike)

    async def execute(self, job: Job) -> Job | None:
        """Run a claimed (running) job to its end; None if it was cancelled or lost its claim
        meanwhile. Renews the lease every third of it; stops the handler if the job is
        cancelled. If this task is cancelled (shutdown), the job goes back to the queue. Its
        log lines (and its problem, if it fails) carry the submitting request's id."""
        with bind_request_id(job.request_id):
            record("jobs", "running")
            return await self._execute(job)

    async def _execute(self, job: Job) -> Job | None:
        handler = self.registry.get(job.name)
        instance = self.location(job.id)
        if handler is None:
            detail = f"No handler is registered for jobs of type {job.name!r}."
            err = problem(500, "job-handler-missing", "Job handler missing", detail, instance)
            return await self._finish(job, "failed", None, err)
        task: asyncio.Task[Any] = asyncio.create_task(handler(job.input))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.lease_seconds / 3)
                if done:
                    break
                now = self.clock()

                def renew(j: Job, until: float = now + self.lease_seconds) -> Job | None:
                    if j.status != "running" or j.claim != job.claim:
                        return None
                    return replace(j, lease_until=until)

                try:
                    renewed = await self.store.update(job.id, renew)
                except Exception:
                    continue  # store briefly unavailable: the lease has slack (renewed at 1/3)
                if renewed is None:
                    task.cancel()  # cancelled, or claimed by another worker after we stalled
                    with contextlib.suppress(BaseException):
                        await task
                    return None
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            await asyncio.shield(self._release(job))
            raise
        try:
            result = task.result()
        except asyncio.CancelledError:
            return None
        except ProblemDetail as exc:
            return await self._finish(job, "failed", None, exc.body(instance))
        except Exception:  # the handler's bug: its traceback goes to the log, not the client
            logger.exception("job %s (%s) failed with an unexpected error", job.id, job.name)
            detail = "The job failed with an unexpected error."
            err = problem(500, "job-failed", "Job failed", detail, instance)
            return await self._finish(job, "failed", None, err)
        try:
            json.dumps(result)
        except (TypeError, ValueError) as exc:
            logger.error(
                "job %s (%s) returned a result that is not JSON: %s", job.id, job.name, exc
            )
            detail = "The job's result is not JSON."
            err = problem(500, "job-failed", "Job failed", detail, instance)
            return await self._finish(job, "failed", None, err)
        return await self._finish(job, "completed", result, None)

    async def _finish(
        self, job: Job, status: JobStatus, result: Any, error: dict[str, Any] | None
    ) -> Job | None:
        now = self.clock()

        def change(j: Job) -> Job | None:
            if j.status != "running" or j.claim != job.claim:
                return None  # cancelled meanwhile, or no longer ours: never completes twice
            return replace(
                j,
                status=status,
                completed_at=now,
                result=result,
                error=error,
                lease_until=None,
                claim="",
            )

        new = await self.store.update(job.id, change, self._webhook_for_store)
        if new is not None:
            await self._ended(new)
        return new

    async def _release(self, job: Job) -> None:
        """Shutdown while running: back to queued now, rather than when the lease runs out."""

        def change(j: Job) -> Job | None:
            if j.status != "running" or j.claim != job.claim:
                return None
            return replace(j, status="queued", lease_until=None, claim="")

        with contextlib.suppress(Exception):
            await self.store.update(job.id, change)

    async def claim_next(self, skip_owners: Collection[str] = ()) -> Job | None:
        """Embedded: claim the next due job of an owner not in ``skip_owners``; a job out of
        attempts is failed (and notified)."""
        while True:
            job = await self.store.claim_next(
                self.clock(),
                self.lease_seconds,
                self.max_attempts,
                self.location,
                self._webhook_for_store,
                skip_owners,
            )
            if job is None or job.status == "running":
                return job
            await self._ended(job)  # abandoned: try the next one

    # ---- arq

    async def _enqueue_arq(self, job_id: str) -> None:
        from arq.connections import RedisSettings, create_pool

        if self._arq is None:
            assert self.arq_url is not None
            self._arq = await create_pool(
                RedisSettings.from_dsn(self.arq_url), default_queue_name=self.queue_name
            )
        await self._arq.enqueue_job(ARQ_FUNCTION, job_id, _job_id=job_id)

    async def run_arq_job(self, job_id: str, job_try: int) -> None:
        """The body of the arq function: claim, run, finish. arq guarantees one worker at a
        time per job and re-runs it if its worker died; the claim guards completion."""
        job = await self.store.get(job_id)
        if job is None:
            return
        if job.terminal:
            # a worker died between finishing and notifying: notifying is idempotent
            if self._notifies(job) and self.outbox is not None and not self._atomic_webhooks:
                await self._ended(job)
            return
        now = self.clock()
        if job_try > self.max_attempts:
            abandoned = await self.store.update(
                job_id, lambda j: _abandon(j, now, self.location(j.id)), self._webhook_for_store
            )
            if abandoned is not None:
                await self._ended(abandoned)
            return
        claim = secrets.token_hex(8)
        claimed = await self.store.update(
            job_id, lambda j: _claim(j, now, self.lease_seconds, claim)
        )
        if claimed is not None:
            await self.execute(claimed)


class JobWorker:
    """The embedded, in-process worker: an asyncio task that claims and runs due jobs, up to
    ``concurrency`` at a time and ``per_owner`` of one owner's (the others' queued jobs are
    claimed past that owner's, oldest first). Several processes may each run one on the same
    SQLite file."""

    def __init__(self, service: JobService) -> None:
        self.service = service
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._running: dict[str, asyncio.Task[Job | None]] = {}
        self._owners: dict[str, str] = {}  # running job id → its owner ("" for none)
        self._slots = asyncio.Semaphore(service.concurrency)

    def wake(self) -> None:
        self._wake.set()

    def cancel_local(self, job_id: str) -> None:
        task = self._running.get(job_id)
        if task is not None:
            task.cancel()

    async def run_once(self) -> Job | None:
        """Claim one due job and run it to the end (tests); None if nothing was due."""
        job = await self.service.claim_next()
        return None if job is None else await self.service.execute(job)

    def _full_owners(self) -> set[str]:
        counts: dict[str, int] = {}
        for owner in self._owners.values():
            counts[owner] = counts.get(owner, 0) + 1
        return {owner for owner, n in counts.items() if n >= self.service.per_owner}

    async def _run_one(self, job: Job) -> Job | None:
        try:
            return await self.service.execute(job)
        finally:
            self._running.pop(job.id, None)
            self._owners.pop(job.id, None)
            self._slots.release()
            self._wake.set()

    async def run(self) -> None:
        while True:
            await self._slots.acquire()
            try:
                job = await self.service.claim_next(self._full_owners())
            except asyncio.CancelledError:
                self._slots.release()
                raise
            except Exception:  # store briefly unavailable
                job = None
            if job is not None:
                self._owners[job.id] = job.owner or ""
                self._running[job.id] = asyncio.create_task(self._run_one(job))
                continue
            self._slots.release()
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel that
            # arrives as the event is set, and stop() would then wait for ever
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.service.poll_interval):
                    await self._wake.wait()
            self._wake.clear()

    @property
    def running(self) -> bool:
        """Whether its loop is alive (readiness)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="apiforge-job-worker")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._running.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        self._task = None


def open_jobs(
    url: str,
    registry: JobRegistry,
    *,
    outbox: Outbox | None = None,
    queue_name: str = DEFAULT_QUEUE,
    **options: Any,
) -> JobService:
    """The job service for a store URL. ``memory://``, ``sqlite:///…`` and
    ``postgresql://…`` run jobs in process (``await service.start()`` in the lifespan);
    ``redis://…`` hands them to arq.
    ``options``: ``base_path``, ``retry_after``, ``lease_seconds``, ``max_attempts``,
    ``concurrency``, ``poll_interval``, ``clock``, ``callback_signer_key``."""
    store = open_job_store(url)
    if isinstance(store, RedisJobStore):
        return JobService(
            store, registry, outbox=outbox, arq_url=url, queue_name=queue_name, **options
        )
    return JobService(store, registry, outbox=outbox, **options)


# --------------------------------------------------------------------------- arq worker


async def _arq_run_job(ctx: dict[str, Any], job_id: str) -> None:
    service: JobService = ctx["apiforge_jobs"]
    await service.run_arq_job(job_id, int(ctx.get("job_try", 1)))


def arq_worker_settings(
    registry: JobRegistry,
    url: str,
    *,
    webhooks_url: str | None = None,
    queue_name: str = DEFAULT_QUEUE,
    max_attempts: int = 3,
    job_timeout: int = 300,
    max_jobs: int = 10,
    **options: Any,
) -> type:
    """A class for ``arq`` (``WorkerSettings = arq_worker_settings(registry, url)``). A job
    whose worker died is re-run by arq once its in-progress key expires (``job_timeout`` +
    10 s); after ``max_attempts`` tries it fails with the problem ``job-abandoned``."""
    from arq.connections import RedisSettings
    from arq.worker import func

    async def on_startup(ctx: dict[str, Any]) -> None:
        outbox = open_outbox(webhooks_url or url)
        service = open_jobs(
            url,
            registry,
            outbox=outbox,
            queue_name=queue_name,
            max_attempts=max_attempts,
            **options,
        )
        ctx["apiforge_jobs"] = service
        ctx["apiforge_outbox"] = outbox

    async def on_shutdown(ctx: dict[str, Any]) -> None:
        service: JobService | None = ctx.get("apiforge_jobs")
        if service is not None:
            await service.close()
        outbox: Outbox | None = ctx.get("apiforge_outbox")
        if outbox is not None:
            await outbox.close()

    attrs: dict[str, Any] = {
        # arq gives up *before* calling us after max_tries; one more lets us record the failure
        "functions": [func(_arq_run_job, name=ARQ_FUNCTION, max_tries=max_attempts + 1)],
        "redis_settings": RedisSettings.from_dsn(url),
        "queue_name": queue_name,
        "on_startup": on_startup,
        "on_shutdown": on_shutdown,
        "job_timeout": job_timeout,
        "max_jobs": max_jobs,
        "keep_result": 60,
    }
    return type("WorkerSettings", (), attrs)


def registry_from_string(spec: str) -> JobRegistry:
    """``package.module:attribute`` → the JobRegistry it names."""
    import importlib

    module_name, _, attr = spec.partition(":")
    found = getattr(importlib.import_module(module_name), attr or "registry")
    if not isinstance(found, JobRegistry):
        raise TypeError(f"{spec} is a {type(found).__name__}, not a JobRegistry")
    return found


def env_options(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Job options from ``APIFORGE_JOBS_*`` environment variables (the worker command)."""
    options: dict[str, Any] = {}
    for name, key, cast in (
        ("APIFORGE_JOBS_BASE_PATH", "base_path", str),
        ("APIFORGE_JOBS_MAX_ATTEMPTS", "max_attempts", int),
        ("APIFORGE_JOBS_LEASE_SECONDS", "lease_seconds", float),
        ("APIFORGE_JOBS_TIMEOUT_SECONDS", "job_timeout", int),
    ):
        if environ.get(name):
            options[key] = cast(environ[name])
    return options
