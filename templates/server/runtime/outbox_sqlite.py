"""The SQLite outbox, the embedded default: one file, correct with several processes on one
host. To write an event in the *same* transaction as the handler's own data, call
``SqliteOutbox.enqueue_in(conn, …)`` inside your ``BEGIN … COMMIT`` on the same file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from .outbox import (
    _DELIVERY_COLUMNS,
    Attempt,
    Clock,
    Delivery,
    DeliveryStatus,
    Endpoint,
    Outbox,
    _delivery_row,
    _new_deliveries,
    _token,
    attempt_values,
    delivery_filter,
    delivery_values,
    encode_event,
    recorded_values,
)
from .storage import connect_sqlite

T = TypeVar("T")

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS apiforge_webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS apiforge_webhook_deliveries (
    id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES apiforge_webhook_events(id),
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    signer_key TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    next_attempt_at REAL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_status_code INTEGER,
    last_error TEXT,
    claim TEXT NOT NULL DEFAULT '',
    request_id TEXT,
    owner TEXT
);
CREATE INDEX IF NOT EXISTS apiforge_webhook_deliveries_due
    ON apiforge_webhook_deliveries (status, next_attempt_at);
CREATE INDEX IF NOT EXISTS apiforge_webhook_deliveries_event
    ON apiforge_webhook_deliveries (event_id);
CREATE TABLE IF NOT EXISTS apiforge_webhook_attempts (
    delivery_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    at REAL NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms REAL NOT NULL,
    PRIMARY KEY (delivery_id, number)
);
"""


def ensure_sqlite_schema(conn: sqlite3.Connection) -> None:
    for statement in SQLITE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(apiforge_webhook_deliveries)")}
    for column in ("request_id", "owner"):
        if column not in columns:  # a file written by an earlier version
            with contextlib.suppress(sqlite3.OperationalError):  # another worker added it
                conn.execute(f"ALTER TABLE apiforge_webhook_deliveries ADD COLUMN {column} TEXT")


@contextlib.contextmanager
def sqlite_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def sqlite_enqueue_in(
    conn: sqlite3.Connection,
    event: Mapping[str, Any],
    endpoints: Sequence[Endpoint | str],
    now: float | None = None,
) -> list[Delivery]:
    """Write the event and its deliveries with ``conn`` *inside the caller's transaction*
    (no BEGIN/COMMIT here): the event exists exactly when the caller's own writes commit."""
    at = time.time() if now is None else now
    event_id = str(event["id"])
    cur = conn.execute(
        "INSERT OR IGNORE INTO apiforge_webhook_events (id, type, body, created_at) VALUES (?,?,?,?)",
        (event_id, str(event.get("type", "")), encode_event(event), at),
    )
    if cur.rowcount == 0:
        rows = conn.execute(
            f"SELECT {_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries WHERE event_id = ?",
            (event_id,),
        ).fetchall()
        return [_delivery_row(r) for r in rows]
    deliveries = _new_deliveries(event, endpoints, at)
    conn.executemany(
        f"INSERT INTO apiforge_webhook_deliveries ({_DELIVERY_COLUMNS})"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [delivery_values(d) for d in deliveries],
    )
    return deliveries


class SqliteRunner:
    """One SQLite connection used from worker threads, one call at a time, so the event loop
    never waits on a file lock held by another process."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.conn = connect_sqlite(path)
        self._lock = threading.Lock()

    def _locked(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return fn(self.conn)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self._locked, fn)

    def close(self) -> None:
        with self._lock:
            self.conn.close()


class SqliteOutbox(Outbox):
    """The embedded default: one file, correct with several processes on one host."""

    def __init__(self, path: str, clock: Clock = time.time) -> None:
        super().__init__(clock)
        self.path = path
        self._db = SqliteRunner(path)
        ensure_sqlite_schema(self._db.conn)

    @staticmethod
    def enqueue_in(
        conn: sqlite3.Connection,
        event: Mapping[str, Any],
        endpoints: Sequence[Endpoint | str],
        now: float | None = None,
    ) -> list[Delivery]:
        return sqlite_enqueue_in(conn, event, endpoints, now)

    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]:
        def work(conn: sqlite3.Connection) -> list[Delivery]:
            with sqlite_transaction(conn):
                return sqlite_enqueue_in(conn, event, endpoints, now)

        return await self._db.run(work)

    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        claim = _token("clm_")
        until = now + lease_seconds
        skip = sorted(skip_owners)
        marks = ",".join("?" * len(skip))

        def work(conn: sqlite3.Connection) -> list[tuple[Delivery, bytes]]:
            with sqlite_transaction(conn):
                rows = conn.execute(
                    f"SELECT {_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries"
                    " WHERE status IN ('pending', 'sending') AND next_attempt_at <= ?"
                    + (f" AND COALESCE(owner, '') NOT IN ({marks})" if skip else "")
                    + " ORDER BY next_attempt_at, created_at LIMIT ?",
                    (now, *skip, limit),
                ).fetchall()
                out = []
                for row in rows:
                    d = replace(
                        _delivery_row(row), status="sending", next_attempt_at=until, claim=claim
                    )
                    conn.execute(
                        "UPDATE apiforge_webhook_deliveries SET status = 'sending',"
                        " next_attempt_at = ?, claim = ? WHERE id = ?",
                        (until, claim, d.id),
                    )
                    body = conn.execute(
                        "SELECT body FROM apiforge_webhook_events WHERE id = ?", (d.event_id,)
                    ).fetchone()[0]
                    out.append((d, bytes(body)))
                return out

        return await self._db.run(work)

    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            with sqlite_transaction(conn):
                cur = conn.execute(
                    "UPDATE apiforge_webhook_deliveries SET status = ?, attempt_count = ?,"
                    " next_attempt_at = ?, updated_at = ?, last_status_code = ?, last_error = ?,"
                    " claim = '' WHERE id = ? AND claim = ?",
                    recorded_values(delivery, attempt, status, next_attempt_at),
                )
                if cur.rowcount == 0:
                    return False
                conn.execute(
                    "INSERT OR REPLACE INTO apiforge_webhook_attempts"
                    " (delivery_id, number, at, status_code, error, duration_ms) VALUES (?,?,?,?,?,?)",
                    attempt_values(attempt),
                )
                return True

        return await self._db.run(work)

    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        def work(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "UPDATE apiforge_webhook_deliveries SET status = 'pending', next_attempt_at = ?,"
                " claim = '' WHERE id = ? AND claim = ?",
                (next_attempt_at, delivery.id, delivery.claim),
            )
            return cur.rowcount == 1

        return await self._db.run(work)

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        def work(conn: sqlite3.Connection) -> Delivery | None:
            row = conn.execute(
                f"SELECT {_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries WHERE id = ?",
                (delivery_id,),
            ).fetchone()
            return None if row is None else _delivery_row(row)

        return await self._db.run(work)

    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        clause, params = delivery_filter(event_id, status)

        def work(conn: sqlite3.Connection) -> list[Delivery]:
            rows = conn.execute(
                f"SELECT {_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries{clause}"
                " ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
            return [_delivery_row(r) for r in rows]

        return await self._db.run(work)

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        def work(conn: sqlite3.Connection) -> list[Attempt]:
            rows = conn.execute(
                "SELECT delivery_id, number, at, status_code, error, duration_ms"
                " FROM apiforge_webhook_attempts WHERE delivery_id = ? ORDER BY number",
                (delivery_id,),
            ).fetchall()
            return [Attempt(r[0], int(r[1]), float(r[2]), r[3], r[4], float(r[5])) for r in rows]

        return await self._db.run(work)

    async def get_event(self, event_id: str) -> dict[str, Any] | None:
        def work(conn: sqlite3.Connection) -> dict[str, Any] | None:
            row = conn.execute(
                "SELECT body FROM apiforge_webhook_events WHERE id = ?", (event_id,)
            ).fetchone()
            return None if row is None else dict(json.loads(row[0]))

        return await self._db.run(work)

    async def close(self) -> None:
        self._db.close()
