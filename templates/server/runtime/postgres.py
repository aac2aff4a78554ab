"""PostgreSQL: the handlers' shared transactions and every store (idempotency records, the
webhook outbox, jobs, the repository), in the database the handlers' own tables live in
(`postgresql://user@host:port/db`; the `postgres` extra: psycopg 3 and psycopg-pool).
`stores.py` opens them by URL.

- `database(url)`: this process's connection pool for `url` (psycopg's `AsyncConnectionPool`,
  autocommit connections), shared by every store and the handlers' transactions; the schema
  is created and migrated (`schema.py`) when the pool first opens.
- `PostgresDatabase`: where the handlers' shared transactions (`transaction.py`) open on
  PostgreSQL — a pooled connection inside `BEGIN`, `?` placeholders written as `%s`.
- `PostgresIdempotencyStore`: the claim is an `INSERT … ON CONFLICT DO NOTHING`, and taking
  over an expired claim an `UPDATE` conditional on the old token, so of two processes racing
  for a key exactly one wins. Completing inside a handler's transaction is
  `transaction.py`'s job.
- `PostgresOutbox`: events and deliveries as rows; senders claim due deliveries with
  `SELECT … FOR UPDATE SKIP LOCKED`, so several workers and hosts take disjoint deliveries
  without waiting on each other; `enqueue_in(conn, …)` writes an event inside the caller's
  transaction.
- `PostgresJobStore`: 202 jobs as rows, run by each process's in-process worker; the next job
  is claimed with `FOR UPDATE SKIP LOCKED`, and a job's end and its callback event commit in
  one transaction when the outbox is in the same database.
- `PostgresRepository`: the versioned repository handlers keep resources in
  (`repository.py`), one conditional statement per write.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .idempotency_store import (
    Claimed,
    ClaimResult,
    Existing,
    IdempotencyRecord,
    IdempotencyStore,
    StoredResponse,
    _decode_headers,
    _encode_headers,
    _new_token,
)
from .job_store import Job, JobStore, WebhookBuilder, _claim_or_abandon
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
from .repository import KeyExists, Record, Repository, VersionConflict, Versioned, dump_value
from .schema import migrate_postgres
from .transaction import Dialect, KeyClaim, SqlDatabase, Transaction, claim_lost

POOL_SIZE = 10  # connections per process and database

# ------------------------------------------------------------------------------------ pools


class Database:
    """One pool per process, event loop and URL; opened (and the schema migrated) on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool: Any = None
        self._opening = asyncio.Lock()
        self.users = 0

    async def pool(self) -> Any:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    from psycopg_pool import AsyncConnectionPool

                    pool = AsyncConnectionPool(
                        self.url,
                        min_size=1,
                        max_size=POOL_SIZE,
                        kwargs={"autocommit": True},
                        open=False,
                    )
                    await pool.open(wait=True, timeout=30)
                    async with pool.connection() as conn:
                        await migrate_postgres(conn)
                    self._pool = pool
        return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()


_DATABASES: dict[tuple[int, int, str], Database] = {}


def database(url: str) -> Database:
    """This process's `Database` for `url` in the running event loop; each user calls
    `await release(db)` when done (the last one closes the pool)."""
    key = (os.getpid(), id(asyncio.get_running_loop()), url)
    db = _DATABASES.get(key)
    if db is None:
        db = _DATABASES[key] = Database(url)
    db.users += 1
    return db


async def release(db: Database) -> None:
    db.users -= 1
    if db.users <= 0:
        for key, found in list(_DATABASES.items()):
            if found is db:
                del _DATABASES[key]
        await db.close()


async def ping(url: str, timeout: float) -> None:
    """Run `SELECT 1` on `url` (readiness): through this process's pool when it is open — so a
    pool whose server went away is noticed — else on a connection of its own. Raises when
    the database does not answer within `timeout` seconds."""
    async with asyncio.timeout(timeout):
        db = _DATABASES.get((os.getpid(), id(asyncio.get_running_loop()), url))
        if db is not None and db._pool is not None:
            async with db._pool.connection(timeout=timeout) as conn:
                await conn.execute("SELECT 1")
            return
        import psycopg

        conn = await psycopg.AsyncConnection.connect(
            url, autocommit=True, connect_timeout=max(1, round(timeout))
        )
        try:
            await conn.execute("SELECT 1")
        finally:
            await conn.close()


class _Lazy:
    """A store's handle on `database(url)`, taken on first use (inside the event loop)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._db: Database | None = None

    async def pool(self) -> Any:
        if self._db is None:
            self._db = database(self.url)
        return await self._db.pool()

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        pool = await self.pool()
        async with pool.connection() as conn:
            cur = await conn.execute(sql, params)
            return list(await cur.fetchall()) if cur.description else []

    async def changed(self, sql: str, params: Sequence[Any] = ()) -> int:
        pool = await self.pool()
        async with pool.connection() as conn:
            cur = await conn.execute(sql, params)
            return int(cur.rowcount)

    async def aclose(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await release(db)


# ----------------------------------------------------------------------------- transactions

_QMARK = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|%|\?")


def to_pyformat(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (and a literal `%` as `%%`), quoted text untouched."""

    def swap(match: re.Match[str]) -> str:
        text = match.group(0)
        return "%s" if text == "?" else "%%" if text == "%" else text

    return _QMARK.sub(swap, sql)


class PostgresTransaction(Transaction):
    dialect: Dialect = "postgresql"

    def __init__(self, db: PostgresDatabase, pool: Any, conn: Any, outbox: Outbox | None) -> None:
        super().__init__(db, outbox)
        self._pool = pool
        self.connection = conn  # psycopg AsyncConnection, inside BEGIN

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = await self.connection.execute(to_pyformat(sql), tuple(params))
        return list(await cur.fetchall()) if cur.description else []

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.connection.cursor() as cur:
            await cur.executemany(to_pyformat(sql), [tuple(r) for r in rows])

    async def _enqueue(self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str]) -> None:
        await enqueue_in(self.connection, event, endpoints)

    async def _finish(self, verb: str) -> None:
        try:
            await self.connection.execute(verb)
        except Exception:
            if verb == "COMMIT":
                raise
        finally:
            await self._pool.putconn(self.connection)


class PostgresDatabase(SqlDatabase):
    """The store's PostgreSQL database, through this process's pool (`database`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._db = _Lazy(url)

    async def begin(self, outbox: Outbox | None, claim: KeyClaim | None = None) -> Transaction:
        pool = await self._db.pool()
        conn = await pool.getconn()
        try:
            await conn.execute("BEGIN")
        except BaseException:
            await pool.putconn(conn)
            raise
        tx = PostgresTransaction(self, pool, conn, outbox if self.holds(outbox) else None)
        if claim is not None and not await tx.own_claim(claim):
            await tx.rollback()
            raise claim_lost()
        return tx

    def holds(self, store: IdempotencyStore | Outbox | None) -> bool:
        if isinstance(store, PostgresIdempotencyStore | PostgresOutbox):
            return store.url == self.url
        return False

    async def close(self) -> None:
        await self._db.aclose()


# ------------------------------------------------------------------------------ idempotency

_COLUMNS = "state, fingerprint, token, expires_at, status, headers, body"


def _record(row: Sequence[Any]) -> IdempotencyRecord:
    state, fingerprint, token, expires_at, status, headers, body = row
    response = None
    if state == "completed":
        response = StoredResponse(int(status), _decode_headers(headers), bytes(body))
    return IdempotencyRecord(state, fingerprint, float(expires_at), token, response)


class PostgresIdempotencyStore(IdempotencyStore):
    """Idempotency records in PostgreSQL (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.db = _Lazy(url)
        self._last_purge = 0.0

    async def claim(self, scope: str, key: str, fingerprint: str, lock_ttl: float) -> ClaimResult:
        for _ in range(20):  # each round either decides or saw the row change under it
            now = time.time()
            token = _new_token()
            if await self.db.changed(
                "INSERT INTO apiforge_idempotency"
                " (scope, key, state, fingerprint, token, expires_at)"
                " VALUES (%s, %s, 'in_progress', %s, %s, %s) ON CONFLICT DO NOTHING",
                (scope, key, fingerprint, token, now + lock_ttl),
            ):
                await self._purge(now)
                return Claimed(token)
            rows = await self.db.fetch(
                f"SELECT {_COLUMNS} FROM apiforge_idempotency WHERE scope = %s AND key = %s",
                (scope, key),
            )
            if not rows:
                continue  # released meanwhile: insert again
            record = _record(rows[0])
            if record.expires_at > now:
                return Existing(record)
            # expired: take it over, if nobody else did first (the old token still there);
            # a transaction still holding the row (a slow handler) makes this wait for it
            if await self.db.changed(
                "UPDATE apiforge_idempotency SET state = 'in_progress', fingerprint = %s,"
                " token = %s, expires_at = %s, status = NULL, headers = NULL, body = NULL"
                " WHERE scope = %s AND key = %s AND token = %s AND expires_at <= %s",
                (fingerprint, token, now + lock_ttl, scope, key, record.token, now),
            ):
                return Claimed(token)
        raise RuntimeError(f"idempotency key {key!r}: the claim kept changing under this request")

    async def _purge(self, now: float) -> None:
        if now - self._last_purge > 300:
            self._last_purge = now
            await self.db.changed("DELETE FROM apiforge_idempotency WHERE expires_at <= %s", (now,))
            await self.db.changed(
                "DELETE FROM apiforge_recovery_points WHERE expires_at <= %s", (now,)
            )

    @staticmethod
    def _owner(token: str | None) -> tuple[str, tuple[str, ...]]:
        return ("", ()) if token is None else (" AND token = %s", (token,))

    async def complete(
        self,
        scope: str,
        key: str,
        response: StoredResponse,
        ttl: float,
        *,
        token: str | None = None,
    ) -> bool:
        clause, extra = self._owner(token)
        now = time.time()
        done = await self.db.changed(
            "UPDATE apiforge_idempotency SET state = 'completed', expires_at = %s,"
            " status = %s, headers = %s, body = %s"
            " WHERE scope = %s AND key = %s AND state = 'in_progress' AND expires_at > %s" + clause,
            (
                now + ttl,
                response.status,
                _encode_headers(response.headers),
                response.body,
                scope,
                key,
                now,
                *extra,
            ),
        )
        return done == 1

    async def release(self, scope: str, key: str, *, token: str | None = None) -> bool:
        clause, extra = self._owner(token)
        done = await self.db.changed(
            "DELETE FROM apiforge_idempotency"
            " WHERE scope = %s AND key = %s AND state = 'in_progress'" + clause,
            (scope, key, *extra),
        )
        return done == 1

    async def extend(self, scope: str, key: str, lock_ttl: float, *, token: str) -> bool:
        # SKIP LOCKED: while the handler's own transaction holds the row (it extended the
        # claim when it began), the heartbeat does not queue behind it
        now = time.time()
        if await self.db.changed(
            "UPDATE apiforge_idempotency SET expires_at = %s WHERE (scope, key) IN ("
            " SELECT scope, key FROM apiforge_idempotency WHERE scope = %s AND key = %s"
            " AND state = 'in_progress' AND token = %s FOR UPDATE SKIP LOCKED)",
            (now + lock_ttl, scope, key, token),
        ):
            return True
        record = await self.get(scope, key)
        return record is not None and record.state == "in_progress" and record.token == token

    async def get(self, scope: str, key: str) -> IdempotencyRecord | None:
        rows = await self.db.fetch(
            f"SELECT {_COLUMNS} FROM apiforge_idempotency"
            " WHERE scope = %s AND key = %s AND expires_at > %s",
            (scope, key, time.time()),
        )
        return _record(rows[0]) if rows else None

    async def aclose(self) -> None:
        await self.db.aclose()


# ----------------------------------------------------------------------------------- outbox

_PG_DELIVERY_COLUMNS = _DELIVERY_COLUMNS  # the same columns, in the same order


async def enqueue_in(
    conn: Any,
    event: Mapping[str, Any],
    endpoints: Sequence[Endpoint | str],
    now: float | None = None,
) -> list[Delivery]:
    """Write the event and its deliveries inside the caller's transaction on `conn` (no
    BEGIN/COMMIT here): the event exists exactly when the caller's writes commit."""
    at = time.time() if now is None else now
    event_id = str(event["id"])
    cur = await conn.execute(
        "INSERT INTO apiforge_webhook_events (id, type, body, created_at)"
        " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (event_id, str(event.get("type", "")), encode_event(event), at),
    )
    if cur.rowcount == 0:
        cur = await conn.execute(
            f"SELECT {_PG_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries"
            " WHERE event_id = %s ORDER BY seq",
            (event_id,),
        )
        return [_delivery_row(r) for r in await cur.fetchall()]
    deliveries = _new_deliveries(event, endpoints, at)
    async with conn.cursor() as cursor:
        await cursor.executemany(
            f"INSERT INTO apiforge_webhook_deliveries ({_PG_DELIVERY_COLUMNS})"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [delivery_values(d) for d in deliveries],
        )
    return deliveries


class PostgresOutbox(Outbox):
    """The outbox in PostgreSQL: several processes and hosts (see the module docstring)."""

    def __init__(self, url: str, clock: Clock = time.time) -> None:
        super().__init__(clock)
        self.url = url
        self.db = _Lazy(url)

    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]:
        pool = await self.db.pool()
        async with pool.connection() as conn, conn.transaction():
            return await enqueue_in(conn, event, endpoints, now)

    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        claim = _token("clm_")
        until = now + lease_seconds
        pool = await self.db.pool()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                f"SELECT {_PG_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries"
                " WHERE status IN ('pending', 'sending') AND next_attempt_at <= %s"
                " AND NOT (COALESCE(owner, '') = ANY(%s))"
                " ORDER BY next_attempt_at, seq LIMIT %s FOR UPDATE SKIP LOCKED",
                (now, sorted(skip_owners), limit),
            )
            rows = await cur.fetchall()
            if not rows:
                return []
            ids = [r[0] for r in rows]
            await conn.execute(
                "UPDATE apiforge_webhook_deliveries SET status = 'sending',"
                " next_attempt_at = %s, claim = %s WHERE id = ANY(%s)",
                (until, claim, ids),
            )
            cur = await conn.execute(
                "SELECT d.id, e.body FROM apiforge_webhook_deliveries d"
                " JOIN apiforge_webhook_events e ON e.id = d.event_id WHERE d.id = ANY(%s)",
                (ids,),
            )
            bodies = {row[0]: bytes(row[1]) for row in await cur.fetchall()}
        return [
            (
                replace(_delivery_row(r), status="sending", next_attempt_at=until, claim=claim),
                bodies[r[0]],
            )
            for r in rows
        ]

    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        pool = await self.db.pool()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE apiforge_webhook_deliveries SET status = %s, attempt_count = %s,"
                " next_attempt_at = %s, updated_at = %s, last_status_code = %s,"
                " last_error = %s, claim = '' WHERE id = %s AND claim = %s",
                recorded_values(delivery, attempt, status, next_attempt_at),
            )
            if cur.rowcount == 0:
                return False
            await conn.execute(
                "INSERT INTO apiforge_webhook_attempts"
                " (delivery_id, number, at, status_code, error, duration_ms)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (delivery_id, number) DO UPDATE"
                " SET at = excluded.at, status_code = excluded.status_code,"
                " error = excluded.error, duration_ms = excluded.duration_ms",
                attempt_values(attempt),
            )
            return True

    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        done = await self.db.changed(
            "UPDATE apiforge_webhook_deliveries SET status = 'pending', next_attempt_at = %s,"
            " claim = '' WHERE id = %s AND claim = %s",
            (next_attempt_at, delivery.id, delivery.claim),
        )
        return done == 1

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        rows = await self.db.fetch(
            f"SELECT {_PG_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries WHERE id = %s",
            (delivery_id,),
        )
        return _delivery_row(rows[0]) if rows else None

    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        clause, params = delivery_filter(event_id, status, "%s")
        rows = await self.db.fetch(
            f"SELECT {_PG_DELIVERY_COLUMNS} FROM apiforge_webhook_deliveries{clause}"
            " ORDER BY created_at DESC, seq DESC LIMIT %s",
            (*params, limit),
        )
        return [_delivery_row(r) for r in rows]

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        rows = await self.db.fetch(
            "SELECT delivery_id, number, at, status_code, error, duration_ms"
            " FROM apiforge_webhook_attempts WHERE delivery_id = %s ORDER BY number",
            (delivery_id,),
        )
        return [Attempt(r[0], int(r[1]), float(r[2]), r[3], r[4], float(r[5])) for r in rows]

    async def get_event(self, event_id: str) -> dict[str, Any] | None:
        rows = await self.db.fetch(
            "SELECT body FROM apiforge_webhook_events WHERE id = %s", (event_id,)
        )
        return dict(json.loads(bytes(rows[0][0]))) if rows else None

    async def close(self) -> None:
        await self.db.aclose()


# ------------------------------------------------------------------------------------- jobs


class PostgresJobStore(JobStore):
    """202 jobs in PostgreSQL (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.db = _Lazy(url)

    def shares_outbox(self, outbox: Outbox | None) -> bool:
        return isinstance(outbox, PostgresOutbox) and outbox.url == self.url

    def lives_in(self, db: SqlDatabase) -> bool:
        return isinstance(db, PostgresDatabase) and db.url == self.url

    @staticmethod
    async def _write(conn: Any, job: Job, webhook: WebhookBuilder | None) -> None:
        await conn.execute(
            "UPDATE apiforge_jobs SET status = %s, lease_until = %s, record = %s WHERE id = %s",
            (job.status, job.lease_until, job.to_record(), job.id),
        )
        if webhook is not None and job.terminal:
            event, endpoints = webhook(job)
            await enqueue_in(conn, event, endpoints)

    async def create(self, job: Job) -> None:
        await self.db.changed(
            "INSERT INTO apiforge_jobs (id, status, created_at, lease_until, record)"
            " VALUES (%s, %s, %s, %s, %s)",
            (job.id, job.status, job.created_at, job.lease_until, job.to_record()),
        )

    async def get(self, job_id: str) -> Job | None:
        rows = await self.db.fetch("SELECT record FROM apiforge_jobs WHERE id = %s", (job_id,))
        return Job.from_record(rows[0][0]) if rows else None

    async def queued(self) -> int | None:
        rows = await self.db.fetch("SELECT count(*) FROM apiforge_jobs WHERE status = 'queued'")
        return int(rows[0][0])

    async def update(
        self,
        job_id: str,
        change: Callable[[Job], Job | None],
        webhook: WebhookBuilder | None = None,
    ) -> Job | None:
        pool = await self.db.pool()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT record FROM apiforge_jobs WHERE id = %s FOR UPDATE", (job_id,)
            )
            row = await cur.fetchone()
            new = None if row is None else change(Job.from_record(row[0]))
            if new is not None:
                await self._write(conn, new, webhook)
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
        claim = _new_token()[:16]
        pool = await self.db.pool()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT record FROM apiforge_jobs WHERE (status = 'queued'"
                " OR (status = 'running' AND (lease_until IS NULL OR lease_until <= %s)))"
                " AND NOT (COALESCE(record::jsonb->>'owner', '') = ANY(%s))"
                " ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED",
                (now, sorted(skip_owners)),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            job = Job.from_record(row[0])
            new = _claim_or_abandon(
                job, now, lease_seconds, claim, max_attempts, instance_for(job.id)
            )
            if new is not None:
                await self._write(conn, new, webhook)
            return new

    async def close(self) -> None:
        await self.db.aclose()


# ------------------------------------------------------------------------------- repository


class PostgresRepository(Repository):
    """`repository.py`'s versioned repository in table `apiforge_records`: every conditional
    write is one statement (`UPDATE … WHERE version = %s`), so of N writers holding the same
    version exactly one wins, across processes and hosts."""

    def __init__(self, url: str, namespace: str = "default") -> None:
        self.namespace = namespace
        self.db = _Lazy(url)

    async def get(self, key: str) -> Versioned | None:
        rows = await self.db.fetch(
            "SELECT value, version FROM apiforge_records WHERE namespace = %s AND key = %s",
            (self.namespace, key),
        )
        return None if not rows else Versioned(json.loads(rows[0][0]), int(rows[0][1]))

    async def _current_version(self, key: str) -> int | None:
        found = await self.get(key)
        return None if found is None else found.version

    async def create(self, key: str, value: Any) -> int:
        inserted = await self.db.changed(
            "INSERT INTO apiforge_records (namespace, key, value, version)"
            " VALUES (%s, %s, %s, 1) ON CONFLICT DO NOTHING",
            (self.namespace, key, dump_value(value)),
        )
        if inserted != 1:
            raise KeyExists(key)
        return 1

    async def update(self, key: str, value: Any, expected_version: int) -> int:
        changed = await self.db.changed(
            "UPDATE apiforge_records SET value = %s, version = version + 1"
            " WHERE namespace = %s AND key = %s AND version = %s",
            (dump_value(value), self.namespace, key, expected_version),
        )
        if changed != 1:
            raise VersionConflict(key, expected_version, await self._current_version(key))
        return expected_version + 1

    async def delete(self, key: str, expected_version: int) -> None:
        changed = await self.db.changed(
            "DELETE FROM apiforge_records WHERE namespace = %s AND key = %s AND version = %s",
            (self.namespace, key, expected_version),
        )
        if changed != 1:
            raise VersionConflict(key, expected_version, await self._current_version(key))

    async def list(
        self, *, prefix: str = "", after: str | None = None, limit: int = 100
    ) -> list[Record]:
        sql = "SELECT key, value, version FROM apiforge_records WHERE namespace = %s"
        params: list[Any] = [self.namespace]
        if prefix:  # a range on the primary key (its "C" collation orders by code point)
            sql += " AND key >= %s AND key < %s"
            params += [prefix, prefix + "\U0010ffff"]
        if after is not None:
            sql += " AND key > %s"
            params.append(after)
        sql += " ORDER BY key LIMIT %s"
        params.append(limit)
        rows = await self.db.fetch(sql, params)
        return [Record(str(k), json.loads(v), int(ver)) for k, v, ver in rows]

    async def close(self) -> None:
        await self.db.aclose()
