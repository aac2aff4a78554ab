"""Lost-update storm: K clients increment one counter (a customer's `metadata.counter`) with
the generated client's `read_modify_write` (GET, change, PATCH with If-Match, again on 412),
through the fault proxy, against two workers. Every increment must count: the final value is
the number of increments applied, each value 1..K*M was written exactly once, and the
version moved once per increment (a PATCH whose response was lost and was retried with its
idempotency key is replayed, not applied twice)."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from tests.chaos.conftest import SEED, STORM_CLIENTS, STORM_INCREMENTS
from tests.chaos.harness import ChaosPlan, Served, by_status, fast_sleep, record, run_threads
from tests.e2e.faultproxy import Fault, FaultProxy, HttpRequest
from tests.e2e.harness import Wire

TIMEOUT = 2.0
MAX_RETRIES = 6
RECOVERIES = 5  # the same call again (same key) after a typed error other than 412
MAX_ATTEMPTS = 10_000  # read_modify_write rounds: contention, not faults, needs them

WEIGHTS = {
    "drop_response": (Fault.drop_response(), 8),
    "reset_before": (Fault.reset(), 4),
    "reset_after": (Fault.reset(after=True), 4),
    "truncate": (Fault.truncate(), 3),
    "delay_0.05s": (Fault.delay(0.05), 6),
    "pass": (Fault.passthrough(), 75),
}


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    written: list[int] = field(default_factory=list)  # the value each applied increment set
    preconditions_failed: int = 0  # 412s: someone else wrote in between
    errors: Counter[str] = field(default_factory=Counter)  # typed errors, then recovered


def again(acme: ModuleType, tally: Tally, call: Any) -> Any:
    """`call()`, called again (it reuses its idempotency key) after a typed error that is
    not a 412: the error says the outcome is unknown, the same key makes a repeat safe."""
    for attempt in range(1 + RECOVERIES):
        try:
            return call()
        except acme.PreconditionFailed:
            with tally.lock:
                tally.preconditions_failed += 1
            raise
        except acme.APIError as exc:
            with tally.lock:
                tally.errors[type(exc).__name__] += 1
            if attempt == RECOVERIES:
                raise
    raise AssertionError("unreachable")


def increment(acme: ModuleType, client: Any, customer_id: str, tally: Tally) -> None:
    def read() -> tuple[Any, str | None]:
        raw = again(
            acme,
            tally,
            lambda: client.customers.with_raw_response.get(customer_id=customer_id),
        )
        return raw.parsed, raw.etag

    def apply(customer: Any) -> int:
        return int(customer.metadata["counter"]) + 1

    def write(value: int, etag: str) -> Any:
        key = str(uuid.uuid4())  # one key per conditional write, kept by its repeats
        return again(
            acme,
            tally,
            lambda: client.customers.update(
                customer_id=customer_id,
                body={"metadata": {"counter": str(value)}},
                if_match=etag,
                idempotency_key=key,
            ),
        )

    updated = acme.read_modify_write(read, apply, write, max_attempts=MAX_ATTEMPTS)
    with tally.lock:
        tally.written.append(int(updated.metadata["counter"]))


def test_concurrent_increments_lose_nothing_through_faults(
    acme: ModuleType, acme_server: Served
) -> None:
    with acme.Client(base_url=acme_server.url, bearer_auth="chaos-storm") as direct:
        created = direct.customers.create(
            body={"email": "storm@example.com", "name": "Storm", "metadata": {"counter": "0"}}
        )
    customer_id, first_version = created.id, created.version
    target = f"/v1/customers/{customer_id}"

    def on_counter(request: HttpRequest) -> bool:
        return request.path == target

    seed = SEED + (11 if acme_server.backend == "redis" else 10)
    plan = ChaosPlan(WEIGHTS, seed=seed, match=on_counter)
    tally = Tally()
    wires: list[Wire] = []
    started = time.monotonic()
    with FaultProxy(acme_server.url, plan) as proxy:

        def worker() -> None:
            wire = Wire()
            wires.append(wire)
            with acme.Client(
                base_url=proxy.url,
                bearer_auth="chaos-storm",
                timeout=TIMEOUT,
                max_retries=MAX_RETRIES,
                transport=wire,
                sleep=fast_sleep,
            ) as client:
                for _ in range(STORM_INCREMENTS):
                    increment(acme, client, customer_id, tally)

        run_threads([worker] * STORM_CLIENTS)
    elapsed = time.monotonic() - started

    with acme.Client(base_url=acme_server.url, bearer_auth="chaos-storm") as direct:
        final = direct.customers.get(customer_id=customer_id)
    expected = STORM_CLIENTS * STORM_INCREMENTS
    counter = int(final.metadata["counter"])
    exchanges = [e for w in wires for e in w.exchanges]
    patches = [e for e in exchanges if e.method == "PATCH"]
    answers = acme_server.log.answers(lambda a: a.path == target and a.method == "PATCH")
    record(
        "storm",
        f"{acme_server.backend}: {STORM_CLIENTS} clients x {STORM_INCREMENTS} increments",
        increments_applied=len(tally.written),
        final_value=counter,
        increments_lost=expected - counter,
        version_moves=final.version - first_version,
        http_attempts=len(exchanges),
        patch_attempts=len(patches),
        client_retries=sum(1 for e in exchanges if e.retry_count not in ("", "0")),
        preconditions_failed_412=tally.preconditions_failed,
        server_patch_replays=sum(1 for a in answers if a.replayed),
        server_patch_statuses=by_status(answers),
        faults_injected=dict(sorted(plan.injected.items())),
        typed_errors_then_recovered=dict(tally.errors),
        seconds=round(elapsed, 1),
    )

    assert len(tally.written) == expected
    assert counter == expected, f"{expected - counter} increments lost"
    assert sorted(tally.written) == list(range(1, expected + 1))  # each value written once
    assert final.version - first_version == expected  # no increment applied twice
    assert all(e.status is None or e.status < 500 for e in exchanges)
    assert sum(plan.injected.values()) > 0
