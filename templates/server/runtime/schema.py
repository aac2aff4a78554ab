"""The stores' schema: created and migrated at start-up, recorded in a version table.

Each database (the SQLite file, the PostgreSQL database) has `apiforge_schema_version`, one
row per component with the highest migration applied. A migration is a numbered list of
statements; the first process to open the database applies what is missing, in one
transaction (SQLite: `BEGIN IMMEDIATE`, the file's write lock; PostgreSQL: a transaction
holding an advisory lock), so several workers starting together migrate it once. A database
migrated by a newer server (a higher version than this one knows) is refused with a clear
error rather than written to in a shape this code does not know.

Tables created by the stores' own modules with `CREATE TABLE IF NOT EXISTS` (SQLite's
idempotency records, outbox and jobs) keep doing so; on PostgreSQL every table is here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

COMPONENT = "apiforge"
_ADVISORY_LOCK = 0x61706966  # "apif": serialises migrations across processes

_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS apiforge_schema_version ("
    " component TEXT PRIMARY KEY, version INTEGER NOT NULL, migrated_at DOUBLE PRECISION)"
)

#: SQLite: the tables the shared transaction adds to the store's file.
SQLITE_MIGRATIONS: Sequence[Sequence[str]] = (
    (
        """CREATE TABLE IF NOT EXISTS apiforge_recovery_points (
            scope TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL,
            fingerprint TEXT NOT NULL, result TEXT NOT NULL,
            created_at REAL NOT NULL, expires_at REAL NOT NULL,
            PRIMARY KEY (scope, key, name)
        ) WITHOUT ROWID""",
        "CREATE INDEX IF NOT EXISTS apiforge_recovery_points_expiry"
        " ON apiforge_recovery_points (expires_at)",
    ),
)

#: PostgreSQL: every table the server keeps there.
POSTGRES_MIGRATIONS: Sequence[Sequence[str]] = (
    (
        """CREATE TABLE IF NOT EXISTS apiforge_idempotency (
            scope TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL,
            fingerprint TEXT NOT NULL, token TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            status INTEGER, headers TEXT, body BYTEA,
            PRIMARY KEY (scope, key)
        )""",
        "CREATE INDEX IF NOT EXISTS apiforge_idempotency_expiry"
        " ON apiforge_idempotency (expires_at)",
        """CREATE TABLE IF NOT EXISTS apiforge_recovery_points (
            scope TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL,
            fingerprint TEXT NOT NULL, result TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (scope, key, name)
        )""",
        "CREATE INDEX IF NOT EXISTS apiforge_recovery_points_expiry"
        " ON apiforge_recovery_points (expires_at)",
        """CREATE TABLE IF NOT EXISTS apiforge_webhook_events (
            id TEXT PRIMARY KEY, type TEXT NOT NULL, body BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS apiforge_webhook_deliveries (
            seq BIGSERIAL UNIQUE,
            id TEXT PRIMARY KEY,
            event_id TEXT NOT NULL REFERENCES apiforge_webhook_events(id),
            event_type TEXT NOT NULL, url TEXT NOT NULL, signer_key TEXT NOT NULL,
            status TEXT NOT NULL, attempt_count INTEGER NOT NULL,
            next_attempt_at DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
            last_status_code INTEGER, last_error TEXT,
            claim TEXT NOT NULL DEFAULT '', request_id TEXT, owner TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS apiforge_webhook_deliveries_due"
        " ON apiforge_webhook_deliveries (status, next_attempt_at)",
        "CREATE INDEX IF NOT EXISTS apiforge_webhook_deliveries_event"
        " ON apiforge_webhook_deliveries (event_id)",
        """CREATE TABLE IF NOT EXISTS apiforge_webhook_attempts (
            delivery_id TEXT NOT NULL, number INTEGER NOT NULL,
            at DOUBLE PRECISION NOT NULL, status_code INTEGER, error TEXT,
            duration_ms DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (delivery_id, number)
        )""",
    ),
    (
        """CREATE TABLE IF NOT EXISTS apiforge_jobs (
            id TEXT PRIMARY KEY, status TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, lease_until DOUBLE PRECISION,
            record TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS apiforge_jobs_due ON apiforge_jobs (status, created_at)",
    ),
    (
        """CREATE TABLE IF NOT EXISTS apiforge_records (
            namespace TEXT NOT NULL, key TEXT COLLATE "C" NOT NULL,
            value TEXT NOT NULL, version INTEGER NOT NULL,
            PRIMARY KEY (namespace, key)
        )""",
    ),
)


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer server than this one."""


def _check(found: int, known: int, where: str) -> None:
    if found > known:
        raise SchemaTooNew(
            f"{where}: schema version {found} is newer than this server's {known}; "
            "upgrade the server (or point it at another database)"
        )


def migrate_sqlite(
    conn: sqlite3.Connection, steps: Sequence[Sequence[str]] = SQLITE_MIGRATIONS
) -> int:
    """Bring the file's schema to the newest version; returns it. `conn` is in autocommit mode
    (`storage.connect_sqlite`)."""
    conn.execute(_VERSION_TABLE)
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT version FROM apiforge_schema_version WHERE component = ?", (COMPONENT,)
        ).fetchone()
        current = 0 if row is None else int(row[0])
        _check(current, len(steps), "the SQLite store")
        for version in range(current + 1, len(steps) + 1):
            for statement in steps[version - 1]:
                conn.execute(statement)
        if current < len(steps):
            conn.execute(
                "INSERT INTO apiforge_schema_version (component, version, migrated_at)"
                " VALUES (?, ?, strftime('%s','now')) ON CONFLICT (component)"
                " DO UPDATE SET version = excluded.version, migrated_at = excluded.migrated_at",
                (COMPONENT, len(steps)),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(steps)


async def migrate_postgres(conn: Any, steps: Sequence[Sequence[str]] = POSTGRES_MIGRATIONS) -> int:
    """The same on PostgreSQL (`conn`: a psycopg `AsyncConnection` in autocommit mode)."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_LOCK,))
        await conn.execute(_VERSION_TABLE)
        cur = await conn.execute(
            "SELECT version FROM apiforge_schema_version WHERE component = %s", (COMPONENT,)
        )
        row = await cur.fetchone()
        current = 0 if row is None else int(row[0])
        _check(current, len(steps), "the PostgreSQL store")
        for version in range(current + 1, len(steps) + 1):
            for statement in steps[version - 1]:
                await conn.execute(statement)
        if current < len(steps):
            await conn.execute(
                "INSERT INTO apiforge_schema_version (component, version, migrated_at)"
                " VALUES (%s, %s, extract(epoch from now())) ON CONFLICT (component)"
                " DO UPDATE SET version = excluded.version, migrated_at = excluded.migrated_at",
                (COMPONENT, len(steps)),
            )
    return len(steps)
