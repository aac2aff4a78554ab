"""Where idempotency records live: one async interface, three implementations.

A record is keyed by `(scope, key)` — the scope is the caller's principal (a hash), the key
the client's `Idempotency-Key`. It is either

- `in_progress`: a request claimed the key and its handler is running. The claim carries a
  random token (only its owner may complete, release or extend it) and expires after the
  lock timeout, so a claim abandoned by a worker that died is taken over by the next retry;
- `completed`: the stored status, headers and body, kept for the result TTL (24 h by default).

Implementations, chosen by `stores.open_idempotency_store(url)`:

- `memory://`          — `MemoryIdempotencyStore`, this process only (tests);
- `sqlite:///file.db`  — `SQLiteIdempotencyStore`, the default: one file, correct across several
  worker processes on one host (the claim is one `BEGIN IMMEDIATE` transaction);
- `redis://host:port/db` — `RedisIdempotencyStore`: every operation is one Lua script, so
  claim-or-read and the token compare-and-set run atomically on the server; expiry is Redis'
  own `PEXPIRE`, so hosts' clocks never matter;
- `postgresql://…` — `postgres.PostgresIdempotencyStore`, in the database the handlers' own
  tables live in.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal

from .storage import connect_sqlite

RecordState = Literal["in_progress", "completed"]

DEFAULT_LOCK_TIMEOUT = 60.0  # seconds an unfinished claim lives without a heartbeat
DEFAULT_RESULT_TTL = 24 * 60 * 60.0  # seconds a completed result is replayed


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """Exactly what the first request answered: status, raw header pairs, body bytes."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    state: RecordState
    fingerprint: str
    expires_at: float  # unix seconds
    token: str = ""
    response: StoredResponse | None = None  # set when state == "completed"


@dataclass(frozen=True, slots=True)
class Claimed:
    """The caller owns the key now; `token` proves it to complete/release/extend."""

    token: str


@dataclass(frozen=True, slots=True)
class Existing:
    """Someone claimed the key before (still running, or completed)."""

    record: IdempotencyRecord


ClaimResult = Claimed | Existing


def _encode_headers(headers: tuple[tuple[bytes, bytes], ...]) -> str:
    # header bytes are latin-1 by HTTP's rules, so this round-trips every byte exactly
    return json.dumps([[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers])


def _decode_headers(text: str | bytes) -> tuple[tuple[bytes, bytes], ...]:
    pairs: list[list[str]] = json.loads(text)
    return tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs)


class IdempotencyStore(ABC):
    """The protocol the enforcement layer (`idempotency.py`) speaks.

    `token=None` on complete/release/extend acts on whatever in-progress claim is there;
    the enforcement layer always passes its token, so a claim that expired and was taken
    over by another request is never completed or released by its former owner.
    """

    @abstractmethod
    async def claim(self, scope: str, key: str, fingerprint: str, lock_ttl: float) -> ClaimResult:
        """Atomically: no live record → create an in-progress one (Claimed); else Existing."""

    @abstractmethod
    async def complete(
        self,
        scope: str,
        key: str,
        response: StoredResponse,
        ttl: float,
        *,
        token: str | None = None,
    ) -> bool:
        """Turn the in-progress claim into a completed record kept `ttl` seconds.
        False if the claim is no longer ours (expired and taken over, or released)."""

    @abstractmethod
    async def release(self, scope: str, key: str, *, token: str | None = None) -> bool:
        """Drop an in-progress claim so the key may be claimed again at once."""

    @abstractmethod
    async def extend(self, scope: str, key: str, lock_ttl: float, *, token: str) -> bool:
        """Heartbeat: push an in-progress claim's expiry to now + lock_ttl."""

    @abstractmethod
    async def get(self, scope: str, key: str) -> IdempotencyRecord | None:
        """The live record, or None (never claimed, released or expired)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Free connections."""


def _new_token() -> str:
    return secrets.token_hex(16)


# ---------------------------------------------------------------------------------------------
# memory


class MemoryIdempotencyStore(IdempotencyStore):
    """One process, one event loop; no operation awaits, so each is atomic."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], IdempotencyRecord] = {}

    def _live(self, scope: str, key: str) -> IdempotencyRecord | None:
        record = self._records.get((scope, key))
        if record is not None and record.expires_at <= time.time():
            del self._records[(scope, key)]
            return None
        return record

    async def claim(self, scope: str, key: str, fingerprint: str, lock_ttl: float) -> ClaimResult:
        record = self._live(scope, key)
        if record is not None:
            return Existing(record)
        token = _new_token()
        self._records[(scope, key)] = IdempotencyRecord(
            "in_progress", fingerprint, time.time() + lock_ttl, token
        )
        return Claimed(token)

    def _owned(self, scope: str, key: str, token: str | None) -> IdempotencyRecord | None:
        record = self._live(scope, key)
        if record is None or record.state != "in_progress":
            return None
        if token is not None and record.token != token:
            return None
        return record

    async def complete(
        self,
        scope: str,
        key: str,
        response: StoredResponse,
        ttl: float,
        *,
        token: str | None = None,
    ) -> bool:
        record = self._owned(scope, key, token)
        if record is None:
            return False
        self._records[(scope, key)] = IdempotencyRecord(
            "completed", record.fingerprint, time.time() + ttl, record.token, response
        )
        return True

    async def release(self, scope: str, key: str, *, token: str | None = None) -> bool:
        if self._owned(scope, key, token) is None:
            return False
        del self._records[(scope, key)]
        return True

    async def extend(self, scope: str, key: str, lock_ttl: float, *, token: str) -> bool:
        record = self._owned(scope, key, token)
        if record is None:
            return False
        self._records[(scope, key)] = IdempotencyRecord(
            "in_progress", record.fingerprint, time.time() + lock_ttl, record.token
        )
        return True

    async def get(self, scope: str, key: str) -> IdempotencyRecord | None:
        return self._live(scope, key)


# ---------------------------------------------------------------------------------------------
# SQLite

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS apiforge_idempotency (
    scope       TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    token       TEXT    NOT NULL,
    expires_at  REAL    NOT NULL,
    status      INTEGER,
    headers     TEXT,
    body        BLOB,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID
"""
_SQLITE_COLUMNS = "state, fingerprint, token, expires_at, status, headers, body"
_PURGE_EVERY = 300.0  # seconds between sweeps of expired rows


def _sqlite_record(row: tuple[Any, ...]) -> IdempotencyRecord:
    state, fingerprint, token, expires_at, status, headers, body = row
    response = None
    if state == "completed":
        response = StoredResponse(int(status), _decode_headers(headers), bytes(body))
    return IdempotencyRecord(state, fingerprint, float(expires_at), token, response)


class SQLiteIdempotencyStore(IdempotencyStore):
    """One file shared by every worker process on the host.

    Each process holds one connection (opened lazily, reopened after a fork) used from a
    worker thread, so the event loop never blocks on SQLite's file locks. The claim is a
    `BEGIN IMMEDIATE` transaction — it takes the database's write lock before reading, so two
    processes can never both see "free" and both insert.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # opened lazily, per process
        self._pid = 0
        self._last_purge = 0.0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            conn = self._open()
            self._conn, self._pid = conn, os.getpid()
            return conn
        return self._conn

    def _open(self) -> sqlite3.Connection:
        # Workers starting together race to switch a new file to WAL, and SQLite answers
        # that race with an immediate "database is locked" (no busy wait): retry briefly.
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = connect_sqlite(self.path)
                try:
                    conn.execute(_SQLITE_SCHEMA)
                except BaseException:
                    conn.close()
                    raise
                return conn
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01 + secrets.randbelow(40) / 1000)

    async def _run(self, fn: Any, *args: Any) -> Any:
        def call() -> Any:
            with self._lock:
                return fn(self._connection(), *args)

        return await asyncio.to_thread(call)

    @staticmethod
    def _select(
        conn: sqlite3.Connection, scope: str, key: str, now: float
    ) -> IdempotencyRecord | None:
        row = conn.execute(
            f"SELECT {_SQLITE_COLUMNS} FROM apiforge_idempotency "
            "WHERE scope = ? AND key = ? AND expires_at > ?",
            (scope, key, now),
        ).fetchone()
        return None if row is None else _sqlite_record(row)

    def _claim(
        self, conn: sqlite3.Connection, scope: str, key: str, fingerprint: str, lock_ttl: float
    ) -> ClaimResult:
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = time.time()
            record = self._select(conn, scope, key, now)
            if record is not None:
                conn.execute("COMMIT")
                return Existing(record)
            token = _new_token()
            # the row may exist but be expired: replace it
            conn.execute(
                "INSERT INTO apiforge_idempotency (scope, key, state, fingerprint, token, expires_at) "
                "VALUES (?, ?, 'in_progress', ?, ?, ?) "
                "ON CONFLICT (scope, key) DO UPDATE SET state = excluded.state, "
                "fingerprint = excluded.fingerprint, token = excluded.token, "
                "expires_at = excluded.expires_at, status = NULL, headers = NULL, body = NULL",
                (scope, key, fingerprint, token, now + lock_ttl),
            )
            if now - self._last_purge > _PURGE_EVERY:
                self._last_purge = now
                conn.execute("DELETE FROM apiforge_idempotency WHERE expires_at <= ?", (now,))
            conn.execute("COMMIT")
            return Claimed(token)
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    async def claim(self, scope: str, key: str, fingerprint: str, lock_ttl: float) -> ClaimResult:
        result: ClaimResult = await self._run(self._claim, scope, key, fingerprint, lock_ttl)
        return result

    @staticmethod
    def _owner_clause(token: str | None) -> tuple[str, tuple[str, ...]]:
        if token is None:
            return "", ()
        return " AND token = ?", (token,)

    async def complete(
        self,
        scope: str,
        key: str,
        response: StoredResponse,
        ttl: float,
        *,
        token: str | None = None,
    ) -> bool:
        clause, extra = self._owner_clause(token)

        def run(conn: sqlite3.Connection) -> bool:
            now = time.time()
            cur = conn.execute(
                "UPDATE apiforge_idempotency SET state = 'completed', expires_at = ?, "
                "status = ?, headers = ?, body = ? "
                "WHERE scope = ? AND key = ? AND state = 'in_progress' AND expires_at > ?" + clause,
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
            return bool(cur.rowcount == 1)

        done: bool = await self._run(run)
        return done

    async def release(self, scope: str, key: str, *, token: str | None = None) -> bool:
        clause, extra = self._owner_clause(token)

        def run(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "DELETE FROM apiforge_idempotency "
                "WHERE scope = ? AND key = ? AND state = 'in_progress' AND expires_at > ?" + clause,
                (scope, key, time.time(), *extra),
            )
            return bool(cur.rowcount == 1)

        done: bool = await self._run(run)
        return done

    async def extend(self, scope: str, key: str, lock_ttl: float, *, token: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            now = time.time()
            cur = conn.execute(
                "UPDATE apiforge_idempotency SET expires_at = ? "
                "WHERE scope = ? AND key = ? AND state = 'in_progress' AND expires_at > ? "
                "AND token = ?",
                (now + lock_ttl, scope, key, now, token),
            )
            return bool(cur.rowcount == 1)

        done: bool = await self._run(run)
        return done

    async def get(self, scope: str, key: str) -> IdempotencyRecord | None:
        record: IdempotencyRecord | None = await self._run(self._select, scope, key, time.time())
        return record

    async def aclose(self) -> None:
        def close() -> None:
            with self._lock:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(close)


# ---------------------------------------------------------------------------------------------
# Redis

# KEYS[1] record; ARGV: token, fingerprint, lock_ms.
# Returns {} when claimed, else {pttl, field, value, ...} of the live record — claim-or-read in
# one atomic step, so a record cannot vanish between a failed SET NX and the GET that follows.
_LUA_CLAIM = """
local cur = redis.call('HGETALL', KEYS[1])
if #cur > 0 then
  local out = {redis.call('PTTL', KEYS[1])}
  for i = 1, #cur do out[#out + 1] = cur[i] end
  return out
end
redis.call('HSET', KEYS[1], 'state', 'in_progress', 'fp', ARGV[2], 'token', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {}
"""
# Owner check shared by complete/release/extend: ARGV[1] is the token ('' = any owner).
_LUA_OWNED = """
local function owned()
  if redis.call('HGET', KEYS[1], 'state') ~= 'in_progress' then return false end
  return ARGV[1] == '' or redis.call('HGET', KEYS[1], 'token') == ARGV[1]
end
"""
# ARGV: token, status, headers, body, ttl_ms
_LUA_COMPLETE = (
    _LUA_OWNED
    + """
if not owned() then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'status', ARGV[2], 'headers', ARGV[3],
           'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"""
)
# ARGV: token
_LUA_RELEASE = (
    _LUA_OWNED + "\nif not owned() then return 0 end\nreturn redis.call('DEL', KEYS[1])\n"
)
# ARGV: token, lock_ms
_LUA_EXTEND = (
    _LUA_OWNED
    + "\nif not owned() then return 0 end\nreturn redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _redis_record(pttl: int, fields: dict[bytes, bytes]) -> IdempotencyRecord:
    state = fields[b"state"].decode()
    response = None
    if state == "completed":
        response = StoredResponse(
            int(fields[b"status"]), _decode_headers(fields[b"headers"]), fields[b"body"]
        )
    expires_at = time.time() + max(pttl, 0) / 1000
    return IdempotencyRecord(
        "completed" if state == "completed" else "in_progress",
        fields[b"fp"].decode(),
        expires_at,
        fields.get(b"token", b"").decode(),
        response,
    )


class RedisIdempotencyStore(IdempotencyStore):
    """A Redis hash per record; every state change is one Lua script (atomic on the server)."""

    def __init__(self, url: str, *, prefix: str = "apiforge:idem:") -> None:
        import redis.asyncio as aioredis

        self.prefix = prefix
        self._redis = aioredis.Redis.from_url(url, decode_responses=False)
        self._claim = self._redis.register_script(_LUA_CLAIM)
        self._complete = self._redis.register_script(_LUA_COMPLETE)
        self._release = self._redis.register_script(_LUA_RELEASE)
        self._extend = self._redis.register_script(_LUA_EXTEND)

    def _key(self, scope: str, key: str) -> str:
        # scopes are fixed-length hex digests, so "scope:key" is unambiguous
        return f"{self.prefix}{scope}:{key}"

    async def claim(self, scope: str, key: str, fingerprint: str, lock_ttl: float) -> ClaimResult:
        token = _new_token()
        reply = await self._claim(
            keys=[self._key(scope, key)], args=[token, fingerprint, _ms(lock_ttl)]
        )
        if not reply:
            return Claimed(token)
        pttl, flat = int(reply[0]), list(reply[1:])
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        return Existing(_redis_record(pttl, fields))

    async def complete(
        self,
        scope: str,
        key: str,
        response: StoredResponse,
        ttl: float,
        *,
        token: str | None = None,
    ) -> bool:
        args = [
            token or "",
            response.status,
            _encode_headers(response.headers),
            response.body,
            _ms(ttl),
        ]
        done = await self._complete(keys=[self._key(scope, key)], args=args)
        return bool(done)

    async def release(self, scope: str, key: str, *, token: str | None = None) -> bool:
        done = await self._release(keys=[self._key(scope, key)], args=[token or ""])
        return bool(done)

    async def extend(self, scope: str, key: str, lock_ttl: float, *, token: str) -> bool:
        done = await self._extend(keys=[self._key(scope, key)], args=[token, _ms(lock_ttl)])
        return bool(done)

    async def get(self, scope: str, key: str) -> IdempotencyRecord | None:
        name = self._key(scope, key)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.pttl(name)
            pipe.hgetall(name)
            pttl, fields = await pipe.execute()
        if not fields:
            return None
        return _redis_record(int(pttl), dict(fields))

    async def aclose(self) -> None:
        await self._redis.aclose()
