"""Webhook events and their persisted outbox, opened by store URL (sending them is
``delivery.py``).

- ``outbox.py``: the envelope (``new_event``), endpoints, deliveries, attempts, the ``Outbox``
  interface and the in-memory store.
- ``outbox_sqlite.py``: ``SqliteOutbox``; ``sqlite_enqueue_in`` writes an event inside the
  caller's own transaction on the same file.
- ``outbox_redis.py``: ``RedisOutbox``; ``enqueue_in(pipe, …)`` joins the caller's ``MULTI``.
- ``postgres.py``: ``PostgresOutbox`` (senders claim with ``FOR UPDATE SKIP LOCKED``).

Stores by URL (``storage.parse_store_url``): ``memory://``, ``sqlite:///file.db``, ``redis://…``,
``postgresql://…``. The names above are importable from here, the one place the generated
server and the runtime's other modules take them from.
"""

from __future__ import annotations

import time

from .outbox import (
    Attempt,
    Clock,
    Delivery,
    DeliveryStatus,
    Endpoint,
    MemoryOutbox,
    Outbox,
    encode_event,
    isoformat,
    new_event,
)
from .outbox_redis import RedisOutbox
from .outbox_sqlite import (
    SqliteOutbox,
    SqliteRunner,
    ensure_sqlite_schema,
    sqlite_enqueue_in,
    sqlite_transaction,
)
from .storage import parse_store_url

__all__ = [
    "Attempt",
    "Clock",
    "Delivery",
    "DeliveryStatus",
    "Endpoint",
    "MemoryOutbox",
    "Outbox",
    "RedisOutbox",
    "SqliteOutbox",
    "SqliteRunner",
    "encode_event",
    "ensure_sqlite_schema",
    "isoformat",
    "new_event",
    "open_outbox",
    "sqlite_enqueue_in",
    "sqlite_transaction",
]


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
