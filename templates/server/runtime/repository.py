"""The versioned repository handlers keep resources in: every write names the version it saw.

Values are JSON-serialisable (`dict`, `list`, `str`, numbers, bools, None; for a Pydantic model
store `model.model_dump(mode="json")`); each read returns a fresh copy. Versions start at 1 and
go up by one per update; `concurrency.etag_for_version(version)` makes the ETag.

Integration surface (async, since handlers are):

- `await repo.get(key) -> Versioned(value, version) | None`
- `await repo.create(key, value) -> version` (1); `KeyExists` (409 problem) if taken
- `await repo.update(key, value, expected_version) -> new version`; `VersionConflict`
  (412 `precondition-failed` problem) when the stored version is not `expected_version`
  or the key is gone. The compare and the write are ONE atomic step
  (`UPDATE … WHERE key=? AND version=?` on SQLite), so of N writers holding the same version
  exactly one wins.
- `await repo.delete(key, expected_version)`; `VersionConflict` likewise
- `await repo.list(prefix="", after=None, limit=100) -> list[Record(key, value, version)]`,
  ordered by key; pass the last key as `after` for the next page
- `stores.open_repository(store_url, namespace)` — `memory://` → `MemoryRepository`,
  `sqlite:///file.db` → `SQLiteRepository` (the namespace separates resource types in one
  file), `postgresql://…` → `postgres.PostgresRepository` (table `apiforge_records`, created
  by the schema's migrations). `VersionConflict` and `KeyExists` are `ProblemDetail`s, so a handler can let them
  propagate and the client gets the right problem.

`MemoryRepository` is asyncio-safe: each operation runs without awaiting between its compare
and its write. `SQLiteRepository` is one file shared safely by several uvicorn worker
processes (WAL, busy timeout, single-statement conditional writes); reads run inline (short,
never blocked by writers under WAL), writes run in a worker thread so waiting on another
process's write lock never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from .problems import ProblemDetail
from .storage import connect_sqlite


class Versioned(NamedTuple):
    value: Any
    version: int


class Record(NamedTuple):
    key: str
    value: Any
    version: int


class VersionConflict(ProblemDetail):
    """The stored version moved (or the key is gone) — answered as 412 precondition-failed."""

    def __init__(self, key: str, expected: int, current: int | None) -> None:
        super().__init__(
            412,
            "precondition-failed",
            "Precondition failed",
            "The resource was modified since you last fetched it. Re-fetch and retry.",
        )
        self.key = key
        self.expected = expected
        self.current = current  # None: the key no longer exists


class KeyExists(ProblemDetail):
    """`create` on a key that is taken — answered as 409 conflict."""

    def __init__(self, key: str) -> None:
        super().__init__(409, "conflict", "Conflict", "A resource with this identifier exists.")
        self.key = key


def dump_value(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"repository values must be JSON-serialisable: {exc}") from exc


class Repository(ABC):
    """The interface handlers get; see the module docstring."""

    @abstractmethod
    async def get(self, key: str) -> Versioned | None: ...

    @abstractmethod
    async def create(self, key: str, value: Any) -> int: ...

    @abstractmethod
    async def update(self, key: str, value: Any, expected_version: int) -> int: ...

    @abstractmethod
    async def delete(self, key: str, expected_version: int) -> None: ...

    @abstractmethod
    async def list(
        self, *, prefix: str = "", after: str | None = None, limit: int = 100
    ) -> list[Record]: ...

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (no-op by default)."""


class MemoryRepository(Repository):
    """In this process only (tests, demos). Values are stored as JSON text."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[str, int]] = {}

    async def get(self, key: str) -> Versioned | None:
        row = self._rows.get(key)
        return None if row is None else Versioned(json.loads(row[0]), row[1])

    async def create(self, key: str, value: Any) -> int:
        text = dump_value(value)
        if key in self._rows:
            raise KeyExists(key)
        self._rows[key] = (text, 1)
        return 1

    async def update(self, key: str, value: Any, expected_version: int) -> int:
        text = dump_value(value)
        row = self._rows.get(key)
        if row is None or row[1] != expected_version:
            raise VersionConflict(key, expected_version, None if row is None else row[1])
        self._rows[key] = (text, expected_version + 1)
        return expected_version + 1

    async def delete(self, key: str, expected_version: int) -> None:
        row = self._rows.get(key)
        if row is None or row[1] != expected_version:
            raise VersionConflict(key, expected_version, None if row is None else row[1])
        del self._rows[key]

    async def list(
        self, *, prefix: str = "", after: str | None = None, limit: int = 100
    ) -> list[Record]:
        keys = sorted(
            k for k in self._rows if k.startswith(prefix) and (after is None or k > after)
        )
        return [Record(k, json.loads(self._rows[k][0]), self._rows[k][1]) for k in keys[:limit]]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS apiforge_records (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    version   INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
"""


class SQLiteRepository(Repository):
    """One SQLite file (table `apiforge_records`), safe across worker processes."""

    def __init__(self, path: str, namespace: str = "default") -> None:
        self.path = path
        self.namespace = namespace
        self._writer = connect_sqlite(path)
        self._writer.execute(_SCHEMA)
        self._reader = connect_sqlite(path)
        self._write_lock = threading.Lock()

    async def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        def run() -> int:
            with self._write_lock:
                return self._writer.execute(sql, params).rowcount

        return await asyncio.to_thread(run)

    async def get(self, key: str) -> Versioned | None:
        row = self._reader.execute(
            "SELECT value, version FROM apiforge_records WHERE namespace=? AND key=?",
            (self.namespace, key),
        ).fetchone()
        return None if row is None else Versioned(json.loads(row[0]), int(row[1]))

    async def _current_version(self, key: str) -> int | None:
        found = await self.get(key)
        return None if found is None else found.version

    async def create(self, key: str, value: Any) -> int:
        text = dump_value(value)
        try:
            await self._write(
                "INSERT INTO apiforge_records (namespace, key, value, version) VALUES (?, ?, ?, 1)",
                (self.namespace, key, text),
            )
        except sqlite3.IntegrityError:
            raise KeyExists(key) from None
        return 1

    async def update(self, key: str, value: Any, expected_version: int) -> int:
        text = dump_value(value)
        changed = await self._write(
            "UPDATE apiforge_records SET value=?, version=version+1"
            " WHERE namespace=? AND key=? AND version=?",
            (text, self.namespace, key, expected_version),
        )
        if changed != 1:
            raise VersionConflict(key, expected_version, await self._current_version(key))
        return expected_version + 1

    async def delete(self, key: str, expected_version: int) -> None:
        changed = await self._write(
            "DELETE FROM apiforge_records WHERE namespace=? AND key=? AND version=?",
            (self.namespace, key, expected_version),
        )
        if changed != 1:
            raise VersionConflict(key, expected_version, await self._current_version(key))

    async def list(
        self, *, prefix: str = "", after: str | None = None, limit: int = 100
    ) -> list[Record]:
        sql = "SELECT key, value, version FROM apiforge_records WHERE namespace=?"
        params: list[Any] = [self.namespace]
        if prefix:
            # a range instead of LIKE: no wildcard escaping, and it uses the primary key
            sql += " AND key >= ? AND key < ?"
            params += [prefix, prefix + "\U0010ffff"]
        if after is not None:
            sql += " AND key > ?"
            params.append(after)
        sql += " ORDER BY key LIMIT ?"
        params.append(limit)
        rows = self._reader.execute(sql, params).fetchall()
        return [Record(str(k), json.loads(v), int(ver)) for k, v, ver in rows]

    async def close(self) -> None:
        self._reader.close()
        with self._write_lock:
            self._writer.close()
