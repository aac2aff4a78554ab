"""202 jobs' state: the job record, its transitions, and the stores that keep it.

- ``Job``: the record (``to_json`` what clients see, ``to_record`` the JSON every store keeps);
  the transitions (claim, abandon) are pure functions each store applies atomically through
  ``JobStore.update``.
- ``MemoryJobStore`` (``memory://``, tests) and ``SqliteJobStore`` (``sqlite:///file.db``, the
  embedded default: one file, several uvicorn workers on one host; jobs claimed with
  ``BEGIN IMMEDIATE``; a job's end and its callback event in one transaction when the outbox
  is in the same file); ``RedisJobStore`` (``redis://…``: records as JSON strings, optimistic
  ``WATCH``/``MULTI`` transitions, run by arq workers). The PostgreSQL store lives with the
  other PostgreSQL stores in ``postgres.py``.
- ``JobStore.create_in(tx, job)``: a new job written inside a handler's shared transaction
  (``transaction.py``) when the store is in that database.

``jobs.py`` runs them (the service, the in-process worker, arq).
"""

from __future__ import annotations

import abc
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .outbox import Endpoint, Outbox, isoformat
from .outbox_sqlite import (
    SqliteOutbox,
    SqliteRunner,
    ensure_sqlite_schema,
    sqlite_enqueue_in,
    sqlite_transaction,
)
from .problems import ProblemDetail
from .transaction import SqlDatabase, SqliteDatabase, Transaction

if TYPE_CHECKING:  # redis is the `redis` extra: imported only by the Redis store
    import redis.asyncio as aioredis

JobStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
Clock: TypeAlias = Callable[[], float]
# builds the callback webhook (event, endpoints) for a job that has just ended
WebhookBuilder: TypeAlias = Callable[["Job"], tuple[dict[str, Any], list[Endpoint | str]]]


def new_job_id() -> str:
    return "job_" + secrets.token_hex(13)


def problem(status: int, kind: str, title: str, detail: str, instance: str) -> dict[str, Any]:
    return ProblemDetail(status, kind, title, detail).body(instance)


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    name: str
    status: JobStatus
    created_at: float
    input: Any = None
    started_at: float | None = None
    completed_at: float | None = None
    result: Any = None
    error: dict[str, Any] | None = None
    callback_url: str | None = None
    attempts: int = 0
    lease_until: float | None = None
    claim: str = ""
    owner: str | None = None  # the id of the principal who submitted it (None: public)
    request_id: str | None = None  # the submitting request's: on the job's log lines

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_json(self) -> dict[str, Any]:
        """The job resource as clients see it."""
        body: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "createdAt": isoformat(self.created_at),
        }
        if self.started_at is not None:
            body["startedAt"] = isoformat(self.started_at)
        if self.completed_at is not None:
            body["completedAt"] = isoformat(self.completed_at)
        if self.status == "completed":
            body["result"] = self.result
        if self.status == "failed" and self.error is not None:
            body["error"] = self.error
        if self.callback_url:
            body["callbackUrl"] = self.callback_url
        return body

    def to_record(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "name": self.name,
                "status": self.status,
                "created_at": self.created_at,
                "input": self.input,
                "started_at": self.started_at,
                "completed_at": self.completed_at,
                "result": self.result,
                "error": self.error,
                "callback_url": self.callback_url,
                "attempts": self.attempts,
                "lease_until": self.lease_until,
                "claim": self.claim,
                "owner": self.owner,
                "request_id": self.request_id,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_record(cls, raw: str | bytes) -> Job:
        r = json.loads(raw)
        return cls(
            r["id"],
            r["name"],
            r["status"],
            r["created_at"],
            r["input"],
            r["started_at"],
            r["completed_at"],
            r["result"],
            r["error"],
            r["callback_url"],
            r["attempts"],
            r["lease_until"],
            r["claim"],
            r.get("owner"),
            r.get("request_id"),
        )


# --------------------------------------------------------------------------- transitions
# Pure functions: each store applies them atomically. None = no change.


def _claim(job: Job, now: float, lease_seconds: float, claim: str) -> Job | None:
    if job.status not in ("queued", "running"):
        return None
    return replace(
        job,
        status="running",
        started_at=job.started_at or now,
        attempts=job.attempts + 1,
        lease_until=now + lease_seconds,
        claim=claim,
    )


def _abandon(job: Job, now: float, instance: str) -> Job | None:
    if job.terminal:
        return None
    detail = f"The job was interrupted {job.attempts} time(s) and is not retried again."
    return replace(
        job,
        status="failed",
        completed_at=now,
        error=problem(500, "job-abandoned", "Job abandoned", detail, instance),
        lease_until=None,
        claim="",
    )


def _claim_or_abandon(
    job: Job, now: float, lease_seconds: float, claim: str, max_attempts: int, instance: str
) -> Job | None:
    if job.status == "running" and job.attempts >= max_attempts:
        return _abandon(job, now, instance)
    return _claim(job, now, lease_seconds, claim)


def _due(job: Job, now: float) -> bool:
    return job.status == "queued" or (
        job.status == "running" and (job.lease_until is None or job.lease_until <= now)
    )


class JobStore(abc.ABC):
    """Job state. ``update`` is the one atomic read-modify-write every transition uses."""

    @abc.abstractmethod
    async def create(self, job: Job) -> None: ...

    def joins(self, tx: Transaction) -> bool:
        """Whether this store's rows live in `tx`'s database (so a job can be created in it)."""
        return self.lives_in(tx.db)

    def lives_in(self, db: SqlDatabase) -> bool:
        """Whether this store keeps its rows in `db`."""
        return False

    async def create_in(self, tx: Transaction, job: Job) -> None:
        """Write the new job inside the caller's open transaction `tx` (no COMMIT here): the
        job exists, and a worker can see it, exactly when `tx` commits."""
        if not self.joins(tx):
            raise RuntimeError(
                "the job store is not in the store's database: a job cannot join this "
                "transaction (APIFORGE_JOBS_STORE_URL / APIFORGE_REDIS_URL point elsewhere)"
            )
        await tx.execute(
            "INSERT INTO apiforge_jobs (id, status, created_at, lease_until, record)"
            " VALUES (?, ?, ?, ?, ?)",
            (job.id, job.status, job.created_at, job.lease_until, job.to_record()),
        )

    @abc.abstractmethod
    async def get(self, job_id: str) -> Job | None: ...

    @abc.abstractmethod
    async def update(
        self,
        job_id: str,
        change: Callable[[Job], Job | None],
        webhook: WebhookBuilder | None = None,
    ) -> Job | None:
        """Apply ``change`` atomically; returns the new job, or None if nothing changed. When
        the job becomes terminal and ``webhook`` is given, the store writes the callback event
        in the same transaction (only stores for which ``shares_outbox`` is true)."""

    async def claim_next(
        self,
        now: float,
        lease_seconds: float,
        max_attempts: int,
        instance_for: Callable[[str], str],
        webhook: WebhookBuilder | None = None,
        skip_owners: Collection[str] = (),
    ) -> Job | None:
        """The embedded worker's pick: the oldest queued job, or a running one whose lease ran
        out, of an owner not in ``skip_owners`` ("" for public jobs). Returns it running (run
        it) or failed (attempts exhausted: only notify)."""
        raise NotImplementedError(f"{type(self).__name__} jobs run on arq workers")

    def shares_outbox(self, outbox: Outbox | None) -> bool:
        return False

    async def queued(self) -> int | None:
        """How many jobs wait to run (a metrics gauge); None where the store cannot say
        cheaply (Redis: arq's queue is the measure there)."""
        return None

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass


class MemoryJobStore(JobStore):
    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    async def create(self, job: Job) -> None:
        self._jobs[job.id] = job

    async def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    async def queued(self) -> int | None:
        return sum(1 for job in self._jobs.values() if job.status == "queued")

    async def update(
        self,
        job_id: str,
        change: Callable[[Job], Job | None],
        webhook: WebhookBuilder | None = None,
    ) -> Job | None:
        job = self._jobs.get(job_id)
        new = None if job is None else change(job)
        if new is not None:
            self._jobs[job_id] = new
        return new

    async def claim_next(
        self,
        now: float,
        lease_seconds: float,
        max_attempts: int,
        instance_for: Callable[[str], str],
        webhook: WebhookBuilder | None = None,
        skip_owners: Collection[str] = (),
    ) -> Job | None:
        for job in sorted(self._jobs.values(), key=lambda j: j.created_at):
            if _due(job, now) and (job.owner or "") not in skip_owners:
                claim = secrets.token_hex(8)
                new = _claim_or_abandon(
                    job, now, lease_seconds, claim, max_attempts, instance_for(job.id)
                )
                if new is not None:
                    self._jobs[job.id] = new
                    return new
        return None


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS apiforge_jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    lease_until REAL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS apiforge_jobs_due ON apiforge_jobs (status, created_at);
"""


class SqliteJobStore(JobStore):
    """The embedded default: one file, several uvicorn workers on one host."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = SqliteRunner(path)
        for statement in _SQLITE_SCHEMA.split(";"):
            if statement.strip():
                self._db.conn.execute(statement)
        ensure_sqlite_schema(self._db.conn)  # callback events share the file and transaction

    def shares_outbox(self, outbox: Outbox | None) -> bool:
        return isinstance(outbox, SqliteOutbox) and os.path.realpath(
            outbox.path
        ) == os.path.realpath(self.path)

    def lives_in(self, db: SqlDatabase) -> bool:
        return isinstance(db, SqliteDatabase) and os.path.realpath(db.path) == os.path.realpath(
            self.path
        )

    @staticmethod
    def _write(conn: sqlite3.Connection, job: Job, webhook: WebhookBuilder | None) -> None:
        conn.execute(
            "UPDATE apiforge_jobs SET status = ?, lease_until = ?, record = ? WHERE id = ?",
            (job.status, job.lease_until, job.to_record(), job.id),
        )
        if webhook is not None and job.terminal:
            event, endpoints = webhook(job)
            sqlite_enqueue_in(conn, event, endpoints)

    async def create(self, job: Job) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO apiforge_jobs (id, status, created_at, lease_until, record)"
                " VALUES (?,?,?,?,?)",
                (job.id, job.status, job.created_at, job.lease_until, job.to_record()),
            )

        await self._db.run(work)

    async def queued(self) -> int | None:
        def work(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT COUNT(*) FROM apiforge_jobs WHERE status = 'queued'")
            return int(row.fetchone()[0])

        return await self._db.run(work)

    async def get(self, job_id: str) -> Job | None:
        def work(conn: sqlite3.Connection) -> Job | None:
            row = conn.execute(
                "SELECT record FROM apiforge_jobs WHERE id = ?", (job_id,)
            ).fetchone()
            return None if row is None else Job.from_record(row[0])

        return await self._db.run(work)

    async def update(
        self,
        job_id: str,
        change: Callable[[Job], Job | None],
        webhook: WebhookBuilder | None = None,
    ) -> Job | None:
        def work(conn: sqlite3.Connection) -> Job | None:
            with sqlite_transaction(conn):
                row = conn.execute(
                    "SELECT record FROM apiforge_jobs WHERE id = ?", (job_id,)
                ).fetchone()
                new = None if row is None else change(Job.from_record(row[0]))
                if new is not None:
                    self._write(conn, new, webhook)
                return new

        return await self._db.run(work)

    async def claim_next(
        self,
        now: float,
        lease_seconds: float,
        max_attempts: int,
        instance_for: Callable[[str], str],
        webhook: WebhookBuilder | None = None,
        skip_owners: Collection[str] = (),
    ) -> Job | None:
        claim = secrets.token_hex(8)
        skip = sorted(skip_owners)
        marks = ",".join("?" * len(skip))
        owner_allowed = (
            f" AND COALESCE(json_extract(record, '$.owner'), '') NOT IN ({marks})" if skip else ""
        )

        def work(conn: sqlite3.Connection) -> Job | None:
            with sqlite_transaction(conn):
                row = conn.execute(
                    "SELECT record FROM apiforge_jobs WHERE (status = 'queued'"
                    " OR (status = 'running' AND (lease_until IS NULL OR lease_until <= ?)))"
                    + owner_allowed
                    + " ORDER BY created_at LIMIT 1",
                    (now, *skip),
                ).fetchone()
                if row is None:
                    return None
                job = Job.from_record(row[0])
                new = _claim_or_abandon(
                    job, now, lease_seconds, claim, max_attempts, instance_for(job.id)
                )
                if new is not None:
                    self._write(conn, new, webhook)
                return new

        return await self._db.run(work)

    async def close(self) -> None:
        self._db.close()


class RedisJobStore(JobStore):
    """Job records as JSON strings; transitions are optimistic ``WATCH``/``MULTI``
    transactions. Ended jobs expire after ``retention_seconds``."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "apiforge:jobs:",
        retention_seconds: int = 7 * 24 * 3600,
        client: aioredis.Redis | None = None,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.retention_seconds = retention_seconds
        if client is None:
            import redis.asyncio as aioredis

            client = aioredis.Redis.from_url(url)
        self.redis: aioredis.Redis = client

    def _key(self, job_id: str) -> str:
        return f"{self.prefix}job:{job_id}"

    async def create(self, job: Job) -> None:
        await self.redis.set(self._key(job.id), job.to_record())

    async def get(self, job_id: str) -> Job | None:
        raw = await self.redis.get(self._key(job_id))
        return None if raw is None else Job.from_record(raw)

    async def update(
        self,
        job_id: str,
        change: Callable[[Job], Job | None],
        webhook: WebhookBuilder | None = None,
    ) -> Job | None:
        from redis.exceptions import WatchError

        key = self._key(job_id)
        async with self.redis.pipeline(transaction=True) as p:
            pipe: Any = p  # redis-py leaves reset/multi untyped
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    new = None if raw is None else change(Job.from_record(raw))
                    if new is None:
                        await pipe.reset()
                        return None
                    pipe.multi()
                    ttl = self.retention_seconds if new.terminal else None
                    pipe.set(key, new.to_record(), ex=ttl)
                    await pipe.execute()
                    return new
                except WatchError:
                    continue

    async def close(self) -> None:
        await self.redis.aclose()
