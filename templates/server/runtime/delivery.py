"""Sending webhooks: the dispatcher that takes due deliveries from the outbox and POSTs them.

- **Only allowed destinations** (``destinations.py``): every attempt re-checks the URL
  (``https`` only unless ``allow_http``; no credentials; public hosts unless allow-listed) and
  the connection itself resolves the host, checks every address and connects to the checked
  address. Environment proxies are ignored and redirects are not followed: a 3xx is a failed
  attempt. A refused destination is recorded as a failed attempt whose error says why, and
  the delivery is ``dead`` at once: the same URL will be refused again, so retrying only
  delays telling anyone (an operator who widens the policy re-enqueues the event).
- **Cannot be stalled**: each attempt has one deadline for all of it (resolve, connect, TLS,
  send, status line; ``attempt_timeout``). The answer is its status code; up to
  ``max_response_bytes`` of the body are then read (streamed, never the whole body; what is
  left when the cap or the deadline is reached is dropped with the connection). Attempts run
  in a pool of ``concurrency`` slots refilled as each ends, so a slow endpoint holds one slot
  for at most one deadline, and no destination (scheme, host, port) holds more than
  ``per_destination`` slots: deliveries beyond that are given back to the outbox for later
  (``Outbox.release``), not counted as attempts.
- **Fair between principals**: the deliveries sent for one principal (a job's owner,
  ``Endpoint.owner``) hold at most ``per_principal`` slots, whatever their number or their
  destinations', and while a principal holds its share the outbox is asked for the others'
  deliveries only (``claim_due(skip_owners=...)``), so another principal's delivery does not
  queue behind that backlog. While fewer than ``concurrency / per_principal`` principals are
  at their share a due delivery starts at once; otherwise it waits for the next slot to free,
  at most one attempt deadline.
- **Retries**: an attempt fails on a non-2xx answer, a timeout or a connection error; the next
  one is 1 min, 5 min, 15 min, 1 h, 6 h, 24 h later; after the last the delivery is ``dead``.
- **Secrets** (signing secrets) are never part of a recorded error, a log line or a ``repr``:
  a signer failure is recorded by its exception type only, and URLs are not repeated in errors.
- Claims are atomic (several workers and hosts never send one delivery concurrently); the lease
  outlasts the attempt deadline, so a delivery is never sent twice at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

import httpcore
import httpx

from .destinations import DestinationPolicy, DestinationRefused, Resolver, guarded_client
from .observability import bind_request_id, record
from .outbox import Attempt, Clock, Delivery, DeliveryStatus, Outbox
from .webhook_signing import WebhookSigner

logger = logging.getLogger(__name__)

RETRY_SCHEDULE: tuple[float, ...] = (60, 300, 900, 3600, 6 * 3600, 24 * 3600)
#: One attempt's deadline: resolve + connect + TLS + send + the status line + the capped body.
ATTEMPT_TIMEOUT_SECONDS = 10.0
#: How much of a response body is read (the status code is the answer; the rest is dropped).
MAX_RESPONSE_BYTES = 4096
#: Attempts in flight at once (per dispatcher, i.e. per process).
CONCURRENCY = 16
#: Attempts in flight at once to one destination (scheme, host, port).
PER_DESTINATION = 4
#: Attempts in flight at once for one principal (the deliveries of its jobs' events).
PER_PRINCIPAL = 4
MAX_ERROR_LENGTH = 300

SignerSource: TypeAlias = (
    WebhookSigner | Mapping[str, WebhookSigner] | Callable[[str], WebhookSigner]
)


def destination_key(url: str) -> str:
    """Deliveries to one ``scheme://host:port`` share that destination's slots."""
    try:
        parsed = httpx.URL(url)
        return f"{parsed.scheme}://{parsed.raw_host.decode('ascii', 'replace')}:{parsed.port}"
    except Exception:
        return url


def describe_error(exc: BaseException, url: str) -> str:
    """An attempt's error for the record: its type and message, without the URL (its query
    may carry a token) and cut to ``MAX_ERROR_LENGTH``."""
    message = str(exc).replace(url, "<url>")
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text[:MAX_ERROR_LENGTH]


class WebhookDispatcher:
    """Picks due deliveries and sends them. Run ``start()`` in the app lifespan (one per
    process is fine: claims are atomic), or call ``run_once()`` from tests with a fake clock.

    ``policy``: where deliveries may go (default: public ``https`` destinations only).
    ``resolver`` / ``network_backend`` / ``verify``: injected by tests (a fake DNS, a
    recording connector, a private CA); production leaves them unset."""

    def __init__(
        self,
        outbox: Outbox,
        signer: SignerSource,
        *,
        policy: DestinationPolicy | None = None,
        clock: Clock | None = None,
        attempt_timeout: float = ATTEMPT_TIMEOUT_SECONDS,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        concurrency: int = CONCURRENCY,
        per_destination: int = PER_DESTINATION,
        per_principal: int = PER_PRINCIPAL,
        schedule: Sequence[float] = RETRY_SCHEDULE,
        poll_interval: float = 1.0,
        lease_seconds: float = 60.0,
        user_agent: str = "apiforge-webhooks/1",
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        if attempt_timeout <= 0 or min(concurrency, per_destination, per_principal) < 1:
            raise ValueError(
                "attempt_timeout must be > 0, concurrency, per_destination and per_principal >= 1"
            )
        if max_response_bytes < 0:
            raise ValueError("max_response_bytes must be >= 0")
        self.outbox = outbox
        self._signer = signer
        self.policy = policy or DestinationPolicy()
        self.clock: Clock = clock or outbox.clock
        self.attempt_timeout = attempt_timeout
        self.max_response_bytes = max_response_bytes
        self.concurrency = concurrency
        self.per_destination = min(per_destination, concurrency)
        self.per_principal = min(per_principal, concurrency)
        #: how long a delivery given back for a busy destination waits before it is due again
        self.defer_seconds = min(attempt_timeout, 1.0)
        self.schedule = tuple(schedule)
        self.poll_interval = poll_interval
        # the lease outlasts an attempt (its deadline) and the writes around it
        self.lease_seconds = max(lease_seconds, attempt_timeout * 2 + 10)
        self.user_agent = user_agent
        self._resolver = resolver
        self._network_backend = network_backend
        self._verify = verify
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        #: each attempt in flight → (its destination, its principal: "" for none)
        self._inflight: dict[asyncio.Task[Attempt | None], tuple[str, str]] = {}
        self._wake = asyncio.Event()
        outbox.add_listener(self.wake)

    def __repr__(self) -> str:
        return (
            f"WebhookDispatcher(policy={self.policy!r}, attempt_timeout={self.attempt_timeout},"
            f" concurrency={self.concurrency}, per_destination={self.per_destination},"
            f" per_principal={self.per_principal})"
        )

    def signer_for(self, key: str) -> WebhookSigner:
        if isinstance(self._signer, WebhookSigner):
            return self._signer
        if isinstance(self._signer, Mapping):
            return self._signer[key]
        return self._signer(key)

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = guarded_client(
                self.policy,
                timeout=self.attempt_timeout,
                resolver=self._resolver,
                network_backend=self._network_backend,
                verify=self._verify,
                headers={"User-Agent": self.user_agent},
            )
        return self._client

    def next_attempt(self, failures: int, now: float) -> float | None:
        """When to try again after ``failures`` failed attempts; None: give up (dead)."""
        if failures <= len(self.schedule):
            return now + self.schedule[failures - 1]
        return None

    # ---- one attempt

    async def deliver(self, delivery: Delivery, body: bytes) -> Attempt:
        """One attempt (POST), recorded with its outcome and the next step; its log lines
        carry the id of the request that caused the event."""
        with bind_request_id(delivery.request_id):
            return await self._deliver(delivery, body)

    async def _deliver(self, delivery: Delivery, body: bytes) -> Attempt:
        started = self.clock()
        number = delivery.attempt_count + 1
        code: int | None = None
        error: str | None = None
        refused = False
        t0 = time.monotonic()
        headers = {"Content-Type": "application/json"}
        try:
            signer = self.signer_for(delivery.signer_key)
            headers.update(signer.headers(delivery.event_id, body, int(started)))
        except Exception as exc:  # no message: it could quote key material
            error = f"signing failed: {type(exc).__name__} (signer {delivery.signer_key!r})"
        if error is None:
            code, error, refused = await self._attempt(delivery.url, body, headers)
        attempt = Attempt(delivery.id, number, started, code, error, (time.monotonic() - t0) * 1000)
        next_at: float | None = None
        if attempt.ok:
            status: DeliveryStatus = "delivered"
        elif refused:
            status = "dead"
        else:
            next_at = self.next_attempt(number, self.clock())
            status = "pending" if next_at is not None else "dead"
        outcome: str = "delivered" if attempt.ok else "refused" if refused else status
        outcome = "failed" if outcome == "pending" else outcome
        record(
            "webhook_deliveries",
            outcome,
            log=f"delivery {delivery.id} ({delivery.event_type}): {error}",
            attempt=number,
        )
        await self.outbox.record_attempt(delivery, attempt, status, next_at)
        return attempt

    async def _attempt(
        self, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int | None, str | None, bool]:
        """(status code, error, refused) of one POST under the attempt's deadline."""
        answered: list[int] = []

        async def post() -> None:
            async with self.client.stream("POST", url, content=body, headers=headers) as resp:
                answered.append(resp.status_code)  # the answer, whatever the body does next
                received = 0
                if self.max_response_bytes:
                    async for chunk in resp.aiter_raw():
                        received += len(chunk)
                        if received >= self.max_response_bytes:
                            break

        error: str | None = None
        refused = False
        try:
            async with asyncio.timeout(self.attempt_timeout):
                await post()
        except DestinationRefused as exc:
            error, refused = f"destination refused: {exc.reason}", True
        except (TimeoutError, httpx.TimeoutException):
            if not answered:
                error = f"timed out: no answer within the {self.attempt_timeout:g} s deadline"
        except Exception as exc:  # a connection or protocol error (httpx.HTTPError), or other
            if not answered:
                error = describe_error(exc, url)
        code = answered[0] if answered else None
        if code is not None and not 200 <= code < 300:
            error = f"HTTP {code}" + (" (redirects are not followed)" if 300 <= code < 400 else "")
        return code, error, refused

    # ---- the pool

    def _busy(self) -> tuple[dict[str, int], dict[str, int]]:
        """Attempts in flight by destination and by principal."""
        destinations: dict[str, int] = {}
        principals: dict[str, int] = {}
        for destination, principal in self._inflight.values():
            destinations[destination] = destinations.get(destination, 0) + 1
            principals[principal] = principals.get(principal, 0) + 1
        return destinations, principals

    def _full_principals(self) -> set[str]:
        """The principals holding their share of the slots (the outbox skips them)."""
        return {p for p, n in self._busy()[1].items() if n >= self.per_principal}

    async def _admit(self, claimed: list[tuple[Delivery, bytes]]) -> list[tuple[Delivery, bytes]]:
        """The claimed deliveries whose destination and principal have a free slot; the
        others are given back to the outbox, due again shortly (``release``: no attempt is
        counted)."""
        destinations, principals = self._busy()
        admitted = []
        later = self.clock() + self.defer_seconds
        for delivery, body in claimed:
            key, owner = destination_key(delivery.url), delivery.owner or ""
            if (
                destinations.get(key, 0) >= self.per_destination
                or principals.get(owner, 0) >= self.per_principal
            ):
                with contextlib.suppress(Exception):  # if not, its lease runs out: due again
                    await self.outbox.release(delivery, later)
                continue
            destinations[key] = destinations.get(key, 0) + 1
            principals[owner] = principals.get(owner, 0) + 1
            admitted.append((delivery, body))
        return admitted

    async def _deliver_logged(self, delivery: Delivery, body: bytes) -> Attempt | None:
        try:
            return await self.deliver(delivery, body)
        except asyncio.CancelledError:
            raise
        except Exception:  # recording failed (store unavailable): due again when the lease ends
            logger.exception("webhook delivery %s: recording the attempt failed", delivery.id)
            return None

    def _spawn(self, delivery: Delivery, body: bytes) -> None:
        task = asyncio.create_task(self._deliver_logged(delivery, body))
        self._inflight[task] = (destination_key(delivery.url), delivery.owner or "")
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Attempt | None]) -> None:
        self._inflight.pop(task, None)
        self._wake.set()  # a slot is free: refill it

    async def fill(self) -> bool:
        """Claim as many due deliveries as there are free slots and start sending them;
        True when every free slot was offered one (more may be due)."""
        free = self.concurrency - len(self._inflight)
        if free <= 0:
            return False
        claimed = await self.outbox.claim_due(
            self.clock(), free, self.lease_seconds, skip_owners=self._full_principals()
        )
        for delivery, body in await self._admit(claimed):
            self._spawn(delivery, body)
        return len(claimed) == free

    async def run_once(self) -> int:
        """Claim what is due now (up to ``concurrency``), send it all at once and wait for
        the attempts; returns how many were made (tests, with a fake clock; the shares per
        destination and per principal apply to the pool, ``run``)."""
        claimed = await self.outbox.claim_due(self.clock(), self.concurrency, self.lease_seconds)
        if claimed:
            await asyncio.gather(*(self.deliver(d, body) for d, body in claimed))
        return len(claimed)

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        """The pool: keep every free slot busy with a due delivery; sleep until an enqueue, a
        finished attempt or ``poll_interval``."""
        while True:
            self._wake.clear()
            try:
                more = await self.fill()
            except asyncio.CancelledError:
                raise
            except Exception:  # the store is briefly unavailable: try again next round
                more = False
            if more:
                continue
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel (stop())
            # that arrives as the event is set, and the loop would never end
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_interval):
                    await self._wake.wait()

    @property
    def running(self) -> bool:
        """Whether its loop is alive (readiness)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="apiforge-webhook-dispatcher")

    async def stop(self, grace: float | None = None) -> None:
        """Stop claiming, then let the attempts in flight finish within ``grace`` seconds
        (default: one attempt deadline) so a shutdown sends what it started; what is still
        running then is cancelled (its delivery is due again when its lease ends; consumers
        dedupe on ``webhook-id``)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        inflight = list(self._inflight)
        if inflight:
            wait = self.attempt_timeout if grace is None else grace
            with contextlib.suppress(BaseException):
                await asyncio.wait(inflight, timeout=wait)
        for task in inflight:
            task.cancel()
        for task in inflight:
            with contextlib.suppress(BaseException):
                await task
        self._task = None
        self._inflight.clear()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
