"""Webhook events and their persisted outbox (sending them is ``delivery.py``).

- Every event is an envelope ``{"id": "evt_…", "type", "createdAt", "data"}``; the id is sent
  on every attempt (``webhook-id``) so consumers dedupe on it. Its bytes are fixed at enqueue
  time: every retry sends the identical body.
- ``Outbox.enqueue(event, endpoints)`` writes the event and one delivery per endpoint
  atomically (one SQLite transaction, one Redis script). It is idempotent on the event id.
  To write the event in the *same* transaction as the handler's own data: on SQLite call
  ``SqliteOutbox.enqueue_in(conn, …)`` inside your ``BEGIN … COMMIT`` on the same file; on
  Redis ``await RedisOutbox.enqueue_in(pipe, …)`` adds it to your ``MULTI`` pipeline.
- ``Outbox.claim_due`` hands due deliveries to one sender at a time (a lease: several workers
  and hosts never send one delivery concurrently; a sender that died leaves it due again when
  the lease ends); ``record_attempt`` stores each attempt (time, status code, error) and the
  delivery's next state, ``release`` gives a claimed delivery back unsent.
- The clock is injectable, so tests drive the schedule without waiting.
- No secret is stored here: an endpoint names its signer by key, resolved at send time.

Stores by URL (``storage.parse_store_url``): ``memory://``, ``sqlite:///file.db``, ``redis://…``,
``postgresql://…`` (``postgres.PostgresOutbox``: senders claim with ``FOR UPDATE SKIP LOCKED``).
This module imports nothing of the sending side: ``delivery.py`` imports it.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .observability import current_request_id
from .storage import connect_sqlite, parse_store_url

if TYPE_CHECKING:  # redis is the `redis` extra: imported only by the Redis outbox
    import redis.asyncio as aioredis

DeliveryStatus = Literal["pending", "sending", "delivered", "dead"]
Clock = Callable[[], float]
T = TypeVar("T")


def _token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(16).replace("-", "a").replace("_", "b")


def isoformat(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_event(
    type: str, data: Any, *, event_id: str | None = None, now: float | None = None
) -> dict[str, Any]:
    """The envelope every webhook carries. Pass ``event_id`` to make enqueueing idempotent."""
    created = time.time() if now is None else now
    return {
        "id": event_id or _token("evt_"),
        "type": type,
        "createdAt": isoformat(created),
        "data": data,
    }


def encode_event(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where to deliver; ``signer_key`` picks the signer (and so the secrets) at send time, so
    a rotated secret applies to pending retries and no secret is stored in the outbox."""

    url: str
    signer_key: str = "default"
    #: the principal on whose behalf it is sent (a job's owner): the dispatcher shares its
    #: sending slots fairly between principals (None: the server's own events)
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    id: str
    event_id: str
    event_type: str
    url: str
    signer_key: str
    status: DeliveryStatus
    attempt_count: int
    next_attempt_at: float | None
    created_at: float
    updated_at: float
    last_status_code: int | None = None
    last_error: str | None = None
    claim: str = ""
    request_id: str | None = None  # the request that caused the event: on the log lines
    owner: str | None = None  # the principal it is sent for (Endpoint.owner)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "eventId": self.event_id,
            "eventType": self.event_type,
            "url": self.url,
            "status": self.status,
            "attemptCount": self.attempt_count,
            "nextAttemptAt": None
            if self.next_attempt_at is None
            else isoformat(self.next_attempt_at),
            "createdAt": isoformat(self.created_at),
            "updatedAt": isoformat(self.updated_at),
            "lastStatusCode": self.last_status_code,
            "lastError": self.last_error,
        }


@dataclass(frozen=True, slots=True)
class Attempt:
    delivery_id: str
    number: int
    at: float
    status_code: int | None
    error: str | None
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    def to_json(self) -> dict[str, Any]:
        return {
            "deliveryId": self.delivery_id,
            "number": self.number,
            "at": self.at,
            "statusCode": self.status_code,
            "error": self.error,
            "durationMs": self.duration_ms,
        }


def _attempt_from_json(raw: Mapping[str, Any]) -> Attempt:
    return Attempt(
        raw["deliveryId"],
        int(raw["number"]),
        float(raw["at"]),
        raw["statusCode"],
        raw["error"],
        float(raw["durationMs"]),
    )


def _new_deliveries(
    event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
) -> list[Delivery]:
    out = []
    for ep in endpoints:
        endpoint = Endpoint(ep) if isinstance(ep, str) else ep
        out.append(
            Delivery(
                _token("dlv_"),
                str(event["id"]),
                str(event.get("type", "")),
                endpoint.url,
                endpoint.signer_key,
                "pending",
                0,
                now,
                now,
                now,
                request_id=current_request_id(),
                owner=endpoint.owner,
            )
        )
    return out


class Outbox(abc.ABC):
    """One interface over the three stores."""

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._listeners: list[Callable[[], None]] = []

    def add_listener(self, callback: Callable[[], None]) -> None:
        """Called after each enqueue in this process (the dispatcher wakes up)."""
        self._listeners.append(callback)

    def notify(self) -> None:
        """Wake this process's dispatcher (also after writing with ``enqueue_in``)."""
        for callback in self._listeners:
            callback()

    async def enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str]
    ) -> list[Delivery]:
        """Persist the event and one pending delivery per endpoint, atomically. If an event
        with this id is already stored, nothing is written and its deliveries are returned."""
        deliveries = await self._enqueue(event, endpoints, self.clock())
        self.notify()
        return deliveries

    @abc.abstractmethod
    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]: ...

    @abc.abstractmethod
    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        """Atomically take up to ``limit`` deliveries due at ``now`` (pending, or sending with an
        expired lease), oldest due first, leaving those of the owners in ``skip_owners`` (""
        for no owner) where they are; mark them ``sending`` until ``now + lease_seconds``,
        return them with their event bodies. Each returned delivery carries the claim token to
        record with."""

    @abc.abstractmethod
    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        """Store the attempt and the delivery's new state, if the claim is still ours."""

    @abc.abstractmethod
    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        """Give a claimed delivery back unsent, if the claim is still ours: pending again at
        ``next_attempt_at``, no attempt counted (the dispatcher defers a delivery whose
        destination already has its share of the sending slots)."""

    @abc.abstractmethod
    async def get_delivery(self, delivery_id: str) -> Delivery | None: ...

    @abc.abstractmethod
    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        """Newest first."""

    @abc.abstractmethod
    async def attempts(self, delivery_id: str) -> list[Attempt]:
        """Oldest first."""

    @abc.abstractmethod
    async def get_event(self, event_id: str) -> dict[str, Any] | None: ...

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass


# --------------------------------------------------------------------------- memory


class MemoryOutbox(Outbox):
    """In this process only: tests and demos."""

    def __init__(self, clock: Clock = time.time) -> None:
        super().__init__(clock)
        self._events: dict[str, tuple[dict[str, Any], bytes]] = {}
        self._deliveries: dict[str, Delivery] = {}
        self._attempts: dict[str, list[Attempt]] = {}

    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]:
        event_id = str(event["id"])
        if event_id in self._events:
            return [d for d in self._deliveries.values() if d.event_id == event_id]
        self._events[event_id] = (dict(event), encode_event(event))
        deliveries = _new_deliveries(event, endpoints, now)
        for d in deliveries:
            self._deliveries[d.id] = d
            self._attempts[d.id] = []
        return deliveries

    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        due = sorted(
            (
                d
                for d in self._deliveries.values()
                if d.status in ("pending", "sending")
                and d.next_attempt_at is not None
                and d.next_attempt_at <= now
                and (d.owner or "") not in skip_owners
            ),
            key=lambda d: (d.next_attempt_at or 0.0, d.created_at),
        )[:limit]
        claim = _token("clm_")
        out = []
        for d in due:
            claimed = replace(d, status="sending", next_attempt_at=now + lease_seconds, claim=claim)
            self._deliveries[d.id] = claimed
            out.append((claimed, self._events[d.event_id][1]))
        return out

    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        current = self._deliveries.get(delivery.id)
        if current is None or current.claim != delivery.claim:
            return False
        self._deliveries[delivery.id] = replace(
            current,
            status=status,
            attempt_count=attempt.number,
            next_attempt_at=next_attempt_at,
            updated_at=attempt.at,
            last_status_code=attempt.status_code,
            last_error=attempt.error,
            claim="",
        )
        self._attempts[delivery.id].append(attempt)
        return True

    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        current = self._deliveries.get(delivery.id)
        if current is None or current.claim != delivery.claim:
            return False
        self._deliveries[delivery.id] = replace(
            current, status="pending", next_attempt_at=next_attempt_at, claim=""
        )
        return True

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        return self._deliveries.get(delivery_id)

    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        found = [
            d
            for d in self._deliveries.values()
            if (event_id is None or d.event_id == event_id)
            and (status is None or d.status == status)
        ]
        return sorted(found, key=lambda d: d.created_at, reverse=True)[:limit]

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        return list(self._attempts.get(delivery_id, []))

    async def get_event(self, event_id: str) -> dict[str, Any] | None:
        found = self._events.get(event_id)
        return None if found is None else dict(found[0])


# --------------------------------------------------------------------------- SQLite

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

_DELIVERY_COLUMNS = (
    "id, event_id, event_type, url, signer_key, status, attempt_count, next_attempt_at,"
    " created_at, updated_at, last_status_code, last_error, claim, request_id, owner"
)


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


def delivery_filter(
    event_id: str | None, status: DeliveryStatus | None, mark: str = "?"
) -> tuple[str, list[Any]]:
    """The WHERE clause (with `mark` placeholders) and parameters of ``list_deliveries``."""
    where, params = [], []
    if event_id is not None:
        where.append(f"event_id = {mark}")
        params.append(event_id)
    if status is not None:
        where.append(f"status = {mark}")
        params.append(status)
    return (" WHERE " + " AND ".join(where)) if where else "", params


def attempt_values(attempt: Attempt) -> tuple[Any, ...]:
    """An attempt's row: delivery_id, number, at, status_code, error, duration_ms."""
    return (
        attempt.delivery_id,
        attempt.number,
        attempt.at,
        attempt.status_code,
        attempt.error,
        attempt.duration_ms,
    )


def _delivery_row(row: Sequence[Any]) -> Delivery:
    return Delivery(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        int(row[6]),
        row[7],
        float(row[8]),
        float(row[9]),
        row[10],
        row[11],
        row[12] or "",
        row[13],
        row[14],
    )


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
        [
            (
                d.id,
                d.event_id,
                d.event_type,
                d.url,
                d.signer_key,
                d.status,
                d.attempt_count,
                d.next_attempt_at,
                d.created_at,
                d.updated_at,
                None,
                None,
                "",
                d.request_id,
                d.owner,
            )
            for d in deliveries
        ],
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
                    (
                        status,
                        attempt.number,
                        next_attempt_at,
                        attempt.at,
                        attempt.status_code,
                        attempt.error,
                        delivery.id,
                        delivery.claim,
                    ),
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


# --------------------------------------------------------------------------- Redis

_REDIS_ENQUEUE = """
-- KEYS[1] event hash, KEYS[2] event's delivery list, KEYS[3] due zset, KEYS[4] all zset
-- ARGV[1] event type, ARGV[2] body, ARGV[3] now, ARGV[4] prefix, ARGV[5] deliveries JSON
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('LRANGE', KEYS[2], 0, -1)
end
redis.call('HSET', KEYS[1], 'type', ARGV[1], 'body', ARGV[2], 'created_at', ARGV[3])
local ids = {}
for _, d in ipairs(cjson.decode(ARGV[5])) do
  redis.call('HSET', ARGV[4] .. 'delivery:' .. d['id'],
    'id', d['id'], 'event_id', d['event_id'], 'event_type', ARGV[1], 'url', d['url'],
    'signer_key', d['signer_key'], 'status', 'pending', 'attempt_count', '0',
    'next_attempt_at', ARGV[3], 'created_at', ARGV[3], 'updated_at', ARGV[3],
    'last_status_code', '', 'last_error', '', 'claim', '', 'request_id', d['request_id'],
    'owner', d['owner'])
  redis.call('ZADD', KEYS[3], ARGV[3], d['id'])
  redis.call('ZADD', KEYS[4], ARGV[3], d['id'])
  redis.call('RPUSH', KEYS[2], d['id'])
  table.insert(ids, d['id'])
end
return ids
"""

_REDIS_CLAIM = """
-- KEYS[1] due zset; ARGV[1] now, ARGV[2] limit, ARGV[3] lease until, ARGV[4] claim, ARGV[5] prefix
-- ARGV[6..] owners to leave where they are ('' for none)
local limit = tonumber(ARGV[2])
local skip = {}
for i = 6, #ARGV do skip[ARGV[i]] = true end
local ids = {}
local offset = 0
while #ids < limit do
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', offset, 256)
  if #batch == 0 then break end
  for _, id in ipairs(batch) do
    local owner = redis.call('HGET', ARGV[5] .. 'delivery:' .. id, 'owner') or ''
    if not skip[owner] then
      table.insert(ids, id)
      if #ids >= limit then break end
    end
  end
  offset = offset + #batch
end
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], ARGV[3], id)
  redis.call('HSET', ARGV[5] .. 'delivery:' .. id,
    'status', 'sending', 'claim', ARGV[4], 'next_attempt_at', ARGV[3])
end
return ids
"""

_REDIS_RECORD = """
-- KEYS[1] delivery hash, KEYS[2] attempts list, KEYS[3] due zset
-- ARGV: claim, status, attempt_count, next ('' = none), updated_at, code, error, attempt, id
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'attempt_count', ARGV[3],
  'next_attempt_at', ARGV[4], 'updated_at', ARGV[5], 'last_status_code', ARGV[6],
  'last_error', ARGV[7], 'claim', '')
redis.call('RPUSH', KEYS[2], ARGV[8])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[9])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[9])
end
return 1
"""


_REDIS_RELEASE = """
-- KEYS[1] delivery hash, KEYS[2] due zset; ARGV: claim, next attempt at, id
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'pending', 'next_attempt_at', ARGV[2], 'claim', '')
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""


async def _r(result: Any) -> Any:
    """redis-py types each command as ``Awaitable[T] | T``; the asyncio client always awaits."""
    return await result


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisOutbox(Outbox):
    """Several processes or hosts. Keys live under ``prefix`` (one Redis, not a cluster)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "apiforge:webhooks:",
        clock: Clock = time.time,
        client: aioredis.Redis | None = None,
    ) -> None:
        super().__init__(clock)
        self.prefix = prefix
        if client is None:
            import redis.asyncio as aioredis

            client = aioredis.Redis.from_url(url)
        self.redis: aioredis.Redis = client
        self._enqueue_script = self.redis.register_script(_REDIS_ENQUEUE)
        self._claim_script = self.redis.register_script(_REDIS_CLAIM)
        self._record_script = self.redis.register_script(_REDIS_RECORD)
        self._release_script = self.redis.register_script(_REDIS_RELEASE)

    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def _enqueue_args(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> tuple[list[str], list[Any]]:
        event_id = str(event["id"])
        deliveries = [
            {
                "id": d.id,
                "event_id": d.event_id,
                "url": d.url,
                "signer_key": d.signer_key,
                "request_id": d.request_id or "",
                "owner": d.owner or "",
            }
            for d in _new_deliveries(event, endpoints, now)
        ]
        keys = [
            self._k("event", event_id),
            self._k("event", event_id, "deliveries"),
            self._k("due"),
            self._k("all"),
        ]
        args = [
            str(event.get("type", "")),
            encode_event(event),
            repr(now),
            self.prefix,
            json.dumps(deliveries),
        ]
        return keys, args

    async def enqueue_in(
        self,
        pipe: Any,
        event: Mapping[str, Any],
        endpoints: Sequence[Endpoint | str],
        now: float | None = None,
    ) -> None:
        """Queue the enqueue on the caller's ``MULTI`` pipeline (``redis.asyncio`` pipeline with
        ``transaction=True``): it commits or not with the caller's own commands."""
        keys, args = self._enqueue_args(event, endpoints, self.clock() if now is None else now)
        await self._enqueue_script(keys=keys, args=args, client=pipe)

    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]:
        keys, args = self._enqueue_args(event, endpoints, now)
        ids = await self._enqueue_script(keys=keys, args=args)
        found = [await self.get_delivery(_s(i)) for i in ids]
        return [d for d in found if d is not None]

    @staticmethod
    def _delivery(raw: Mapping[Any, Any]) -> Delivery:
        h = {_s(k): _s(v) for k, v in raw.items()}
        status: Any = h["status"]
        return Delivery(
            h["id"],
            h["event_id"],
            h["event_type"],
            h["url"],
            h["signer_key"],
            status,
            int(h["attempt_count"]),
            float(h["next_attempt_at"]) if h["next_attempt_at"] else None,
            float(h["created_at"]),
            float(h["updated_at"]),
            int(h["last_status_code"]) if h["last_status_code"] else None,
            h["last_error"] or None,
            h["claim"],
            h.get("request_id") or None,
            h.get("owner") or None,
        )

    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        claim = _token("clm_")
        ids = await self._claim_script(
            keys=[self._k("due")],
            args=[
                repr(now),
                limit,
                repr(now + lease_seconds),
                claim,
                self.prefix,
                *sorted(skip_owners),
            ],
        )
        out = []
        for raw_id in ids:
            d = await self.get_delivery(_s(raw_id))
            if d is None:
                continue
            body = await _r(self.redis.hget(self._k("event", d.event_id), "body"))
            out.append((d, bytes(body or b"")))
        return out

    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        done = await self._record_script(
            keys=[
                self._k("delivery", delivery.id),
                self._k("attempts", delivery.id),
                self._k("due"),
            ],
            args=[
                delivery.claim,
                status,
                attempt.number,
                "" if next_attempt_at is None else repr(next_attempt_at),
                repr(attempt.at),
                "" if attempt.status_code is None else attempt.status_code,
                attempt.error or "",
                json.dumps(attempt.to_json()),
                delivery.id,
            ],
        )
        return bool(done)

    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        done = await self._release_script(
            keys=[self._k("delivery", delivery.id), self._k("due")],
            args=[delivery.claim, repr(next_attempt_at), delivery.id],
        )
        return bool(done)

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        raw = await _r(self.redis.hgetall(self._k("delivery", delivery_id)))
        return self._delivery(raw) if raw else None

    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        if event_id is not None:
            ids = await _r(self.redis.lrange(self._k("event", event_id, "deliveries"), 0, -1))
            ids = list(reversed(ids))
        else:
            ids = await _r(self.redis.zrevrange(self._k("all"), 0, -1))
        out: list[Delivery] = []
        for raw_id in ids:
            d = await self.get_delivery(_s(raw_id))
            if d is not None and (status is None or d.status == status):
                out.append(d)
                if len(out) >= limit:
                    break
        return out

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        raw = await _r(self.redis.lrange(self._k("attempts", delivery_id), 0, -1))
        return [_attempt_from_json(json.loads(r)) for r in raw]

    async def get_event(self, event_id: str) -> dict[str, Any] | None:
        body = await _r(self.redis.hget(self._k("event", event_id), "body"))
        return None if body is None else dict(json.loads(body))

    async def close(self) -> None:
        await self.redis.aclose()


def open_outbox(url: str, *, clock: Clock = time.time) -> Outbox:
    """The outbox for a store URL: ``memory://``, ``sqlite:///file.db``, ``redis://…`` or
    ``postgresql://…``."""
    parsed = parse_store_url(url)
    if parsed.kind == "memory":
        return MemoryOutbox(clock)
    if parsed.kind == "sqlite":
        return SqliteOutbox(parsed.path, clock)
    if parsed.kind == "postgres":
        from .postgres import PostgresOutbox

        return PostgresOutbox(url, clock)
    return RedisOutbox(url, clock=clock)
