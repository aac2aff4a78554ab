"""Webhook events and their persisted outbox, opened by store URL (sending them is
``delivery.py``).

- ``outbox.py``: the envelope (``new_event``), endpoints, deliveries, attempts, the ``Outbox``
  interface and the in-memory store.
- ``outbox_sqlite.py``: ``SqliteOutbox``; ``sqlite_enqueue_in`` writes an event inside the
  caller's own transaction on the same file.
- ``outbox_redis.py``: ``RedisOutbox``; ``enqueue_in(pipe, …)`` joins the caller's ``MULTI``.
- ``postgres.py``: ``PostgresOutbox`` (senders claim with ``FOR UPDATE SKIP LOCKED``).

``open_outbox(url)`` (from ``stores.py``) opens the outbox a store URL names: ``memory://``,
``sqlite:///file.db``, ``redis://…``, ``postgresql://…``. The names above are importable from
here, the one place the generated server and the runtime's request-side modules take them
from; the stores themselves take them from ``outbox*.py``, below this module.
"""

from __future__ import annotations

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
from .stores import open_outbox

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
