"""Webhook events and the outbox's vocabulary: the envelope, endpoints, deliveries, attempts,
the ``Outbox`` interface and its in-memory store; the rows the SQL stores (``outbox_sqlite.py``,
``postgres.py``) read and write. ``webhooks.py`` opens a store by URL.

- Every event is an envelope ``{"id": "evt_…", "type", "createdAt", "data"}``; the id is sent
  on every attempt (``webhook-id``) so consumers dedupe on it. Its bytes are fixed at enqueue
  time: every retry sends the identical body.
- ``Outbox.enqueue(event, endpoints)`` writes the event and one delivery per endpoint
  atomically. It is idempotent on the event id.
- ``Outbox.claim_due`` hands due deliveries to one sender at a time (a lease: several workers
  and hosts never send one delivery concurrently; a sender that died leaves it due again when
  the lease ends); ``record_attempt`` stores each attempt (time, status code, error) and the
  delivery's next state, ``release`` gives a claimed delivery back unsent.
- The clock is injectable, so tests drive the schedule without waiting.
- No secret is stored here: an endpoint names its signer by key, resolved at send time.

This module imports no store and nothing of the sending side (``delivery.py``).
"""

from __future__ import annotations

import abc
import json
import secrets
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from .observability import current_request_id

DeliveryStatus = Literal["pending", "sending", "delivered", "dead"]
Clock = Callable[[], float]


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


# ------------------------------------------------------------------ rows (SQLite, PostgreSQL)

_DELIVERY_COLUMNS = (
    "id, event_id, event_type, url, signer_key, status, attempt_count, next_attempt_at,"
    " created_at, updated_at, last_status_code, last_error, claim, request_id, owner"
)


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


def delivery_values(d: Delivery) -> tuple[Any, ...]:
    """A new delivery's row, in ``_DELIVERY_COLUMNS``' order."""
    return (
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
        d.last_status_code,
        d.last_error,
        d.claim,
        d.request_id,
        d.owner,
    )


def recorded_values(
    delivery: Delivery, attempt: Attempt, status: DeliveryStatus, next_attempt_at: float | None
) -> tuple[Any, ...]:
    """``record_attempt``'s UPDATE parameters: the new state, then the delivery's id and claim."""
    return (
        status,
        attempt.number,
        next_attempt_at,
        attempt.at,
        attempt.status_code,
        attempt.error,
        delivery.id,
        delivery.claim,
    )
