"""Where the generated server keeps state, chosen by one URL setting.

- `memory://`                 — in this process only (tests)
- `sqlite:///path/to/file.db` — the embedded default: one file, safe for several workers on one host
- `redis://host:port/db`      — several processes or hosts
- `postgresql://user@host:port/db` — several processes or hosts, with the handler's own
  tables in the same transactions (`transaction.py`; needs the `postgres` extra)
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

StoreKind = Literal["memory", "sqlite", "redis", "postgres"]


@dataclass(frozen=True, slots=True)
class StoreURL:
    kind: StoreKind
    url: str
    path: str  # the SQLite file for sqlite://, "" otherwise


def parse_store_url(url: str) -> StoreURL:
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        return StoreURL("memory", url, "")
    if scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy spells them
        path = url[len("sqlite:///") :] if url.startswith("sqlite:///") else ""
        if not path:
            raise ValueError(f"store URL {url!r}: write sqlite:///path/to/file.db")
        return StoreURL("sqlite", url, path)
    if scheme in ("redis", "rediss", "unix"):
        return StoreURL("redis", url, "")
    if scheme in ("postgresql", "postgres"):
        return StoreURL("postgres", url, "")
    raise ValueError(
        f"store URL {url!r}: use memory://, sqlite:///FILE, redis://HOST:PORT/DB or "
        "postgresql://USER@HOST:PORT/DB"
    )


def connect_sqlite(path: str) -> sqlite3.Connection:
    """A connection that several processes can share a file through: WAL, and waiting on
    locks instead of failing at once. Autocommit mode; callers open their own transactions
    (`BEGIN IMMEDIATE` where a read must be followed by a write atomically)."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=30000")
    # Switching a new file to WAL takes a lock that the busy timeout does not cover: several
    # workers opening the file at once can see "database is locked" here, so retry briefly.
    deadline = time.monotonic() + 10
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn
