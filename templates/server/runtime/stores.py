"""Every store the runtime keeps, opened by its store URL (`storage.parse_store_url`): the one
module that knows all the backends, so the stores' own modules never import each other's.

- `open_idempotency_store(url)`: idempotency records (`idempotency_store.py`);
- `open_outbox(url)`: the webhook outbox (`outbox.py`, `outbox_sqlite.py`, `outbox_redis.py`);
- `open_job_store(url)`: 202 jobs' state (`job_store.py`); `jobs.open_jobs` runs them;
- `open_repository(url, namespace)`: the versioned repository (`repository.py`);
- `open_database(url)`: where the handlers' shared transactions open (`transaction.py`).

`memory://`, `sqlite:///file.db`, `redis://…` and `postgresql://…` (`postgres.py`) where the
store has that backend. Opening a store opens no connection yet.
"""

from __future__ import annotations

import time

from .idempotency_store import (
    IdempotencyStore,
    MemoryIdempotencyStore,
    RedisIdempotencyStore,
    SQLiteIdempotencyStore,
)
from .job_store import JobStore, MemoryJobStore, RedisJobStore, SqliteJobStore
from .outbox import Clock, MemoryOutbox, Outbox
from .outbox_redis import RedisOutbox
from .outbox_sqlite import SqliteOutbox
from .postgres import (
    PostgresDatabase,
    PostgresIdempotencyStore,
    PostgresJobStore,
    PostgresOutbox,
    PostgresRepository,
)
from .repository import MemoryRepository, Repository, SQLiteRepository
from .storage import parse_store_url
from .transaction import SqlDatabase, SqliteDatabase


def open_idempotency_store(url: str, *, redis_prefix: str = "apiforge:idem:") -> IdempotencyStore:
    """Idempotency records: `MemoryIdempotencyStore` (this process only, tests),
    `SQLiteIdempotencyStore` (the default), `RedisIdempotencyStore` or
    `PostgresIdempotencyStore`."""
    parsed = parse_store_url(url)
    if parsed.kind == "memory":
        return MemoryIdempotencyStore()
    if parsed.kind == "sqlite":
        return SQLiteIdempotencyStore(parsed.path)
    if parsed.kind == "postgres":
        return PostgresIdempotencyStore(parsed.url)
    return RedisIdempotencyStore(parsed.url, prefix=redis_prefix)


def open_outbox(url: str, *, clock: Clock = time.time) -> Outbox:
    """The webhook outbox: ``memory://``, ``sqlite:///file.db``, ``redis://…`` or
    ``postgresql://…``."""
    parsed = parse_store_url(url)
    if parsed.kind == "memory":
        return MemoryOutbox(clock)
    if parsed.kind == "sqlite":
        return SqliteOutbox(parsed.path, clock)
    if parsed.kind == "postgres":
        return PostgresOutbox(url, clock)
    return RedisOutbox(url, clock=clock)


def open_job_store(url: str) -> JobStore:
    """202 jobs' state: in memory, SQLite or PostgreSQL (run by the in-process worker), or
    Redis (run by arq workers)."""
    parsed = parse_store_url(url)
    if parsed.kind == "memory":
        return MemoryJobStore()
    if parsed.kind == "sqlite":
        return SqliteJobStore(parsed.path)
    if parsed.kind == "postgres":
        return PostgresJobStore(url)
    return RedisJobStore(url)


def open_repository(store_url: str, namespace: str = "default") -> Repository:
    """The versioned repository for a store URL (`Settings.store_url`)."""
    store = parse_store_url(store_url)
    if store.kind == "memory":
        return MemoryRepository()
    if store.kind == "sqlite":
        return SQLiteRepository(store.path, namespace)
    if store.kind == "postgres":
        return PostgresRepository(store_url, namespace)
    raise ValueError(
        f"store URL {store_url!r}: the versioned repository supports memory://,"
        " sqlite:///FILE and postgresql://"
    )


def open_database(url: str) -> SqlDatabase:
    """The database of a store URL: `sqlite:///FILE` or `postgresql://…`."""
    parsed = parse_store_url(url)
    if parsed.kind == "sqlite":
        return SqliteDatabase(parsed.path)
    if parsed.kind == "postgres":
        return PostgresDatabase(parsed.url)
    raise RuntimeError(
        f"transactions need the store on SQLite or PostgreSQL, not {parsed.kind}:// "
        "(APIFORGE_STORE_URL)"
    )
