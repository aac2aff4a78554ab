"""The transaction a handler shares with the server: its own rows, the idempotency key's stored
response and the webhook events it emits commit together or not at all.

In a handler::

    async with ctx.transaction() as tx:
        await tx.execute("INSERT INTO payments (id, amount) VALUES (?, ?)", (pid, amount))
        await events(ctx, tx).payment_created({"id": pid, "amount": amount})
    return Reply(...)

- The database is the store's (`APIFORGE_STORE_URL`): the SQLite file (the handler's tables in
  the same file; `BEGIN IMMEDIATE`, so one writer at a time across the host's workers) or
  PostgreSQL (`postgresql://…`, a pooled connection per transaction). `tx.execute` takes `?`
  placeholders on both (written as `%s` for psycopg), and returns the rows a statement gives.
- On an operation with an idempotency key whose records live in the same database (the
  default: everything in the store), the transaction does not commit when the block ends: it
  stays open until the response is rendered, and commits with the key's completion (the
  stored status, headers and body). A crash anywhere before that commit leaves no trace — no
  row, no event, no stored answer — and the retry runs the handler afresh once the dead
  worker's claim has lapsed; a crash after it leaves everything, and the retry gets the stored
  answer. A handler that raises or answers 5xx/408/409/425/429 rolls the transaction back.
  Every `ctx.transaction()` of one request is that one transaction.
- Without a key (or with the key's records elsewhere, e.g. Redis) the block commits when it
  ends; a response is then stored separately, after it.
- `events(ctx, tx)` writes webhook events into the transaction (the outbox must be in the same
  database: the default); the sender sees them once the transaction commits.

Recovery points, for work that calls the outside world (Stripe's "atomic phases"): a handler
splits its work into named phases whose results are stored with the idempotency key::

    charge = await ctx.external_call("charge", lambda key: psp.charge(amount, idempotency_key=key))
    await ctx.atomic_phase("reserve", lambda tx: reserve_stock(tx, order))

A retry after a crash gets the stored result of every phase that completed instead of running
it again, and resumes with the next one. `external_call` passes the call a key derived from
the request's idempotency key and the phase's name (`ctx.derived_key(name)`), the same on
every retry, so a call that ran but whose result was not stored (the crash came between) is
deduplicated by the other system. Results are JSON values. Phases run before the request's
`ctx.transaction()` (which holds the store's write lock on SQLite).
"""

from __future__ import annotations

import abc
import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .idempotency_store import (
    IdempotencyStore,
    SQLiteIdempotencyStore,
    StoredResponse,
    _encode_headers,
)
from .outbox_sqlite import SqliteOutbox, sqlite_enqueue_in
from .problems import ProblemDetail
from .schema import migrate_sqlite
from .storage import connect_sqlite

if TYPE_CHECKING:
    from starlette.requests import Request

    from .outbox import Endpoint, Outbox

T = TypeVar("T")
Dialect = Literal["sqlite", "postgresql"]
_CLAIM_STATE = "apiforge_key_claim"


def claim_lost() -> ProblemDetail:
    """The request's key was taken over (its claim lapsed): nothing of this run is kept."""
    return ProblemDetail(
        409,
        "idempotency-in-progress",
        "Request in progress",
        "The original request with this idempotency key is being processed by another "
        "attempt; retry later.",
        headers={"Retry-After": "1"},
    )


# ------------------------------------------------------------------------------ transactions


class Transaction(abc.ABC):
    """One open transaction on the store's database (see the module docstring)."""

    dialect: Dialect

    def __init__(self, db: SqlDatabase, outbox: Outbox | None) -> None:
        self.db = db  # the database it runs in: stores ask `db.holds(...)` before joining
        self.outbox = outbox  # set when the server's outbox is in this database
        self._after_commit: list[Callable[[], None]] = []
        self.done = False

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this transaction has committed (never on a rollback): how a
        worker learns of a job or an event written here only when it exists."""
        self._after_commit.append(callback)

    @abc.abstractmethod
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders); the rows it returns (none for a write)."""

    @abc.abstractmethod
    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""

    async def enqueue(self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str]) -> None:
        """Write a webhook event and its deliveries in this transaction."""
        if self.outbox is None:
            raise RuntimeError(
                "the webhook outbox is not in the store's database: events cannot join this "
                "transaction (APIFORGE_WEBHOOKS_STORE_URL / APIFORGE_REDIS_URL point elsewhere)"
            )
        await self._enqueue(event, endpoints)
        self._after_commit.append(self.outbox.notify)

    @abc.abstractmethod
    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str]
    ) -> None: ...

    async def own_claim(self, claim: KeyClaim) -> bool:
        """Check in this transaction that `claim` is still ours and push its expiry out (and,
        on PostgreSQL, lock its row until the commit); False when it was taken over."""
        return bool(await self.execute(*own_statement(claim)))

    async def complete_and_commit(self, claim: KeyClaim, response: StoredResponse) -> bool:
        """Store `response` as the key's answer and commit; roll back (False) if the claim
        is not ours any more."""
        try:
            stored = bool(await self.execute(*complete_statement(claim, response)))
        except BaseException:
            await self.rollback()
            raise
        await (self.commit() if stored else self.rollback())
        return stored

    async def commit(self) -> None:
        if self.done:
            return
        self.done = True
        await self._finish("COMMIT")
        for callback in self._after_commit:
            callback()

    async def rollback(self) -> None:
        if self.done:
            return
        self.done = True
        await self._finish("ROLLBACK")

    @abc.abstractmethod
    async def _finish(self, verb: str) -> None:
        """COMMIT or ROLLBACK, then give the connection back."""


def own_statement(claim: KeyClaim) -> tuple[str, tuple[Any, ...]]:
    # SQLite: BEGIN IMMEDIATE holds the file's write lock, so nobody can take the key over
    # until the transaction ends; PostgreSQL: the row stays locked until then, and a retry
    # that finds the claim expired waits for this transaction, then sees it completed (or
    # rolled back) — never both running to the end
    return (
        "UPDATE apiforge_idempotency SET expires_at = ? WHERE scope = ? AND key = ?"
        " AND state = 'in_progress' AND token = ? RETURNING 1",
        (time.time() + claim.lock_timeout, claim.scope, claim.key, claim.token),
    )


def complete_statement(claim: KeyClaim, response: StoredResponse) -> tuple[str, tuple[Any, ...]]:
    return (
        "UPDATE apiforge_idempotency SET state = 'completed', expires_at = ?, status = ?,"
        " headers = ?, body = ? WHERE scope = ? AND key = ? AND state = 'in_progress'"
        " AND token = ? RETURNING 1",
        (
            time.time() + claim.result_ttl,
            response.status,
            _encode_headers(response.headers),
            response.body,
            claim.scope,
            claim.key,
            claim.token,
        ),
    )


class SqliteTransaction(Transaction):
    dialect: Dialect = "sqlite"

    def __init__(self, db: SqliteDatabase, slot: _Slot, outbox: Outbox | None) -> None:
        super().__init__(db, outbox)
        self._db = db
        self._slot = slot
        self.connection = slot.conn  # for what `execute` does not cover (from `run`)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on this transaction's own thread."""
        return await self._slot.run(fn)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self.run(lambda conn: list(conn.execute(sql, tuple(params)).fetchall()))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self.run(lambda conn: conn.executemany(sql, [tuple(r) for r in rows]))

    async def _enqueue(self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str]) -> None:
        await self.run(lambda conn: sqlite_enqueue_in(conn, event, endpoints))

    async def complete_and_commit(self, claim: KeyClaim, response: StoredResponse) -> bool:
        sql, params = complete_statement(claim, response)

        def finish(conn: sqlite3.Connection) -> bool:  # one trip to the connection's thread
            try:
                stored = bool(conn.execute(sql, params).fetchall())
                conn.execute("COMMIT" if stored else "ROLLBACK")
                return stored
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        self.done = True
        try:
            stored = await self.run(finish)
        finally:
            self._db.give_back(self._slot)
        if stored:
            for callback in self._after_commit:
                callback()
        return stored

    async def _finish(self, verb: str) -> None:
        def finish(conn: sqlite3.Connection) -> None:
            try:
                conn.execute(verb)
            except sqlite3.OperationalError:
                if verb == "COMMIT":
                    raise

        try:
            await self.run(finish)
        finally:
            self._db.give_back(self._slot)


# -------------------------------------------------------------------------------- databases


class SqlDatabase(abc.ABC):
    """Where transactions are opened: the store's database, in this process."""

    url: str

    @abc.abstractmethod
    async def begin(self, outbox: Outbox | None, claim: KeyClaim | None = None) -> Transaction:
        """A new transaction; with `claim`, owning it (`Transaction.own_claim`), else
        `claim_lost()` is raised."""

    @abc.abstractmethod
    def holds(self, store: IdempotencyStore | Outbox | None) -> bool:
        """Whether `store` keeps its rows in this database (so they join its transactions)."""

    async def prepare(self) -> None:
        """Connect once, creating or migrating the schema (`schema.py`): at start-up."""
        await (await self.begin(None)).rollback()

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass


@dataclass
class _Slot:
    """A connection and the one thread that uses it. A transaction's statements never queue
    for the event loop's shared thread pool, whose threads may all be waiting for the write
    lock this very transaction holds."""

    conn: sqlite3.Connection
    thread: ThreadPoolExecutor

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.thread, fn, self.conn)

    def close(self) -> None:
        self.thread.shutdown(wait=False)
        self.conn.close()


class SqliteDatabase(SqlDatabase):
    """The store's SQLite file: connections (each with its own thread) opened as needed and
    kept for the next transaction of this process."""

    def __init__(self, path: str) -> None:
        self.url = f"sqlite:///{path}"
        self.path = path
        self._idle: list[_Slot] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._migrated = False

    def _take(self) -> _Slot | None:
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's connections are not ours
                self._idle, self._pid = [], os.getpid()
            return self._idle.pop() if self._idle else None

    def _open(self) -> sqlite3.Connection:
        conn = connect_sqlite(self.path)
        if not self._migrated:
            migrate_sqlite(conn)
            self._migrated = True
        return conn

    def give_back(self, slot: _Slot) -> None:
        if slot.conn.in_transaction:  # a COMMIT that failed
            slot.close()
            return
        with self._lock:
            self._idle.append(slot)

    async def begin(self, outbox: Outbox | None, claim: KeyClaim | None = None) -> Transaction:
        slot = self._take()
        if slot is None:
            thread = ThreadPoolExecutor(1, thread_name_prefix="apiforge-tx")
            conn = await asyncio.get_running_loop().run_in_executor(thread, self._open)
            slot = _Slot(conn, thread)
        own = None if claim is None else own_statement(claim)

        def start(conn: sqlite3.Connection) -> bool:  # one trip to the connection's thread
            conn.execute("BEGIN IMMEDIATE")
            if own is None or conn.execute(*own).fetchall():
                return True
            conn.execute("ROLLBACK")
            return False

        try:
            owned = await slot.run(start)
        except BaseException:
            self.give_back(slot)
            raise
        if not owned:
            self.give_back(slot)
            raise claim_lost()
        return SqliteTransaction(self, slot, outbox if self.holds(outbox) else None)

    def holds(self, store: IdempotencyStore | Outbox | None) -> bool:
        if isinstance(store, SQLiteIdempotencyStore | SqliteOutbox):
            return os.path.realpath(store.path) == os.path.realpath(self.path)
        return False

    async def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for slot in idle:
            slot.close()


# ------------------------------------------------------------------------- the key's claim


@dataclass
class KeyClaim:
    """The idempotency key a request holds while its handler runs (bound by `idempotency.py`)."""

    store: IdempotencyStore
    scope: str
    key: str
    token: str
    fingerprint: str
    lock_timeout: float
    result_ttl: float
    held: Transaction | None = None  # the request's transaction, waiting for the response
    phases: dict[str, Any] = field(default_factory=dict)


def bind_claim(request: Request, claim: KeyClaim) -> None:
    setattr(request.state, _CLAIM_STATE, claim)


def claim_of(request: Request | None) -> KeyClaim | None:
    if request is None:
        return None
    claim = getattr(request.state, _CLAIM_STATE, None)
    return claim if isinstance(claim, KeyClaim) else None


async def settle(claim: KeyClaim, response: StoredResponse | None) -> bool:
    """The end of an idempotent request: store `response` (None: nothing to store) — in the
    request's held transaction when there is one, which then commits (or rolls back, when
    `response` is None or the claim was lost). True when the response is stored."""
    tx, claim.held = claim.held, None
    if tx is None:
        if response is None:
            return False
        return await claim.store.complete(
            claim.scope, claim.key, response, claim.result_ttl, token=claim.token
        )
    if response is None:
        await tx.rollback()
        return False
    return await tx.complete_and_commit(claim, response)


@asynccontextmanager
async def request_transaction(
    db: SqlDatabase, outbox: Outbox | None, request: Request | None
) -> AsyncIterator[Transaction]:
    """`ctx.transaction()`: see the module docstring."""
    claim = claim_of(request)
    if claim is not None and claim.held is not None:
        yield claim.held  # the request's one transaction, already open
        return
    hold = claim is not None and db.holds(claim.store)
    tx = await db.begin(outbox, claim if hold else None)
    try:
        yield tx
    except BaseException:
        await tx.rollback()
        raise
    if hold and claim is not None:
        claim.held = tx  # committed by `settle`, with the stored response
    else:
        await tx.commit()


# -------------------------------------------------------------------------- recovery points


def derived_key(claim: KeyClaim | None, name: str, fallback: str) -> str:
    """The idempotency key a phase uses with another system: the same on every retry of the
    request's key (`fallback`, a per-request value, when the request has no key)."""
    base = f"{claim.scope}\0{claim.key}" if claim is not None else fallback
    return hashlib.sha256(f"{base}\0{name}".encode()).hexdigest()[:40]


class RecoveryPoints:
    """Phase results stored with the request's key (see the module docstring)."""

    def __init__(self, db: SqlDatabase, claim: KeyClaim | None, fallback: str) -> None:
        self.db = db
        self.claim = claim
        self.fallback = fallback

    def key_for(self, name: str) -> str:
        return derived_key(self.claim, name, self.fallback)

    def _check_order(self) -> None:
        if self.claim is not None and self.claim.held is not None:
            raise RuntimeError("recovery phases run before the request's ctx.transaction()")

    async def stored(self, name: str) -> tuple[bool, Any]:
        """(True, result) when phase `name` completed in an earlier attempt of this key."""
        claim = self.claim
        if claim is None:
            return False, None
        if name in claim.phases:
            return True, claim.phases[name]
        tx = await self.db.begin(None)
        try:
            rows = await tx.execute(
                "SELECT result FROM apiforge_recovery_points WHERE scope = ? AND key = ?"
                " AND name = ? AND fingerprint = ? AND expires_at > ?",
                (claim.scope, claim.key, name, claim.fingerprint, time.time()),
            )
        finally:
            await tx.rollback()
        if not rows:
            return False, None
        claim.phases[name] = json.loads(rows[0][0])
        return True, claim.phases[name]

    async def _save(self, tx: Transaction, name: str, result: Any) -> None:
        claim = self.claim
        if claim is None:
            return
        # with the records in this database, only the claim's owner writes a phase's result
        if self.db.holds(claim.store) and not await tx.own_claim(claim):
            raise claim_lost()
        now = time.time()
        await tx.execute(
            "INSERT INTO apiforge_recovery_points"
            " (scope, key, name, fingerprint, result, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key, name) DO UPDATE SET"
            " fingerprint = excluded.fingerprint, result = excluded.result,"
            " created_at = excluded.created_at, expires_at = excluded.expires_at",
            (
                claim.scope,
                claim.key,
                name,
                claim.fingerprint,
                _dump(result),
                now,
                now + claim.result_ttl,
            ),
        )
        claim.phases[name] = result

    async def atomic(self, name: str, step: Callable[[Transaction], Awaitable[T]]) -> T:
        self._check_order()
        found, result = await self.stored(name)
        if found:
            return result  # type: ignore[no-any-return]
        tx = await self.db.begin(None)
        try:
            value = await step(tx)
            await self._save(tx, name, value)
        except BaseException:
            await tx.rollback()
            raise
        await tx.commit()
        return value

    async def external(self, name: str, call: Callable[[str], Awaitable[T]]) -> T:
        self._check_order()
        found, result = await self.stored(name)
        if found:
            return result  # type: ignore[no-any-return]
        value = await call(self.key_for(name))
        tx = await self.db.begin(None)
        try:
            await self._save(tx, name, value)
        except BaseException:
            await tx.rollback()
            raise
        await tx.commit()
        return value


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a recovery point's result must be a JSON value: {exc}") from None
