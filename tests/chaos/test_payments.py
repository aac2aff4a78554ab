"""Chaos run: logical payments through the generated client, a fault proxy and two workers.

Every POST /v1/payments attempt (first tries, retries and recoveries alike) goes through a
seeded mix of faults: the response dropped after the server answered, a TCP reset before the
server saw the request or after it answered, a truncated body, a short delay, and a delay
longer than the client's timeout. A few keys are doomed: every attempt of their first call
loses its response, so the caller gets a typed error and recovers by calling again with the
same key. Judged from the server's own executions ledger and response log.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from tests.chaos.conftest import PAYMENTS, SEED, THREADS
from tests.chaos.harness import ChaosPlan, Served, by_status, fast_sleep, record, run_threads
from tests.e2e.faultproxy import Fault, FaultProxy, HttpRequest
from tests.e2e.harness import Wire, payment_body

TIMEOUT = 2.0  # the clients' timeout; the long delay exceeds it
MAX_RETRIES = 6
RECOVERIES = 5  # calls again with the same key after a typed error, at most
DOOMED = max(2, PAYMENTS // 100)  # keys whose first call fails with a typed error

WEIGHTS = {
    "drop_response": (Fault.drop_response(), 12),
    "reset_before": (Fault.reset(), 5),
    "reset_after": (Fault.reset(after=True), 5),
    "truncate": (Fault.truncate(), 4),
    "delay_0.1s": (Fault.delay(0.1), 7),
    "delay_2.5s": (Fault.delay(TIMEOUT + 0.5), 2),
    "pass": (Fault.passthrough(), 65),
}
AFTER_COMMIT = ("drop_response", "reset_after", "truncate", "delay_2.5s")


def is_payment(request: HttpRequest) -> bool:
    return request.method == "POST" and request.path == "/v1/payments"


@dataclass
class Outcome:
    key: str
    payment_id: str | None = None
    replayed: bool = False
    calls: int = 0  # logical calls made for this payment (1 + recoveries)
    errors: list[str] = field(default_factory=list)  # typed errors the caller saw


def pay(acme: ModuleType, client: Any, outcome: Outcome) -> None:
    """One logical payment: call; on a typed error, call again with the same key."""
    body = payment_body(amount=1000 + len(outcome.key))
    for _ in range(1 + RECOVERIES):
        outcome.calls += 1
        try:
            raw = client.payments.with_raw_response.create(body=body, idempotency_key=outcome.key)
        except acme.APIError as exc:  # every failure the client raises is typed
            outcome.errors.append(f"{type(exc).__name__}:{getattr(exc, 'status_code', None) or ''}")
            continue
        assert raw.status_code == 201, raw.status_code
        outcome.payment_id = raw.parsed.id
        outcome.replayed = raw.replayed
        return


def ledger_rows(served: Served, keys: set[str]) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(served.ledger, timeout=10)) as db:
        rows = db.execute("SELECT idempotency_key, payment_id FROM executions").fetchall()
    return [(k, p) for k, p in rows if k in keys]


def test_every_payment_executes_exactly_once_under_faults(
    acme: ModuleType, acme_server: Served
) -> None:
    outcomes = [Outcome(str(uuid.uuid4())) for _ in range(PAYMENTS)]
    keys = {o.key for o in outcomes}
    doomed = {o.key: MAX_RETRIES + 1 for o in outcomes[:: max(1, PAYMENTS // DOOMED)][:DOOMED]}
    seed = SEED + (1 if acme_server.backend == "redis" else 0)
    plan = ChaosPlan(WEIGHTS, seed=seed, match=is_payment, doomed=doomed)
    wires: list[Wire] = []
    started = time.monotonic()
    with FaultProxy(acme_server.url, plan) as proxy:

        def worker(mine: list[Outcome]) -> None:
            wire = Wire()
            wires.append(wire)
            with acme.Client(
                base_url=proxy.url,
                bearer_auth="chaos-payments",
                timeout=TIMEOUT,
                max_retries=MAX_RETRIES,
                transport=wire,
                sleep=fast_sleep,
            ) as client:
                for outcome in mine:
                    pay(acme, client, outcome)

        run_threads([functools.partial(worker, outcomes[i::THREADS]) for i in range(THREADS)])
        stats = proxy.stats.snapshot()
    elapsed = time.monotonic() - started

    # the server's own ledger: every payment ran exactly once, and it is the one returned
    rows = ledger_rows(acme_server, keys)
    executions = Counter(k for k, _ in rows)
    paid = {k: p for k, p in rows}
    lost = [o.key for o in outcomes if o.payment_id is None]
    twice = {k: n for k, n in executions.items() if n != 1}
    missing = keys - set(executions)
    wrong = [o.key for o in outcomes if o.payment_id and paid.get(o.key) != o.payment_id]

    exchanges = [e for w in wires for e in w.exchanges]
    attempts = [e for e in exchanges if e.method == "POST"]
    leaked_5xx = [e for e in attempts if e.status is not None and e.status >= 500]
    answers = served_answers(acme_server, keys)
    statuses = Counter(a.status for a in answers)
    server_replays = sum(1 for a in answers if a.replayed)
    client_replays = sum(1 for o in outcomes if o.replayed)
    after_commit = (
        sum(plan.injected[name] for name in AFTER_COMMIT)
        + plan.injected["drop_response (doomed key)"]
    )
    errors = Counter(e.split(":")[0] for o in outcomes for e in o.errors)

    record(
        "payments",
        f"{acme_server.backend}: {PAYMENTS} payments, {THREADS} threads, 2 workers",
        payments_attempted=PAYMENTS,
        payments_returned=PAYMENTS - len(lost),
        executions_in_ledger=len(rows),
        executed_exactly_once=sum(1 for n in executions.values() if n == 1),
        http_attempts=len(attempts),
        client_retries=sum(1 for e in attempts if e.retry_count not in ("", "0")),
        requests_the_server_answered=len(answers),
        server_statuses=by_status(answers),
        server_replays=server_replays,
        client_saw_replayed=client_replays,
        faults_injected=dict(sorted(plan.injected.items())),
        faults_total=sum(plan.injected.values()),
        typed_errors_then_recovered=dict(errors),
        recovery_calls=sum(o.calls - 1 for o in outcomes),
        leaked_5xx=len(leaked_5xx),
        workers_answering=acme_server.log.pids(),
        seconds=round(elapsed, 1),
    )

    assert not lost, f"{len(lost)} payments never returned: {lost[:5]}"
    assert not missing and not twice, (missing, twice)
    assert not wrong, f"a replay returned another payment than the one executed: {wrong[:5]}"
    assert not leaked_5xx, leaked_5xx[:5]
    assert all(s < 500 for s in statuses), statuses  # nor did the server produce one
    # every request the proxy forwarded was answered, fresh (one per payment) or replayed
    assert len(answers) == stats.forwarded
    assert sum(1 for a in answers if a.status == 201 and not a.replayed) == PAYMENTS
    assert set(statuses) <= {201, 409}, statuses  # 409: the same key still in flight
    # a response lost after the server answered is followed by a replay of it
    assert server_replays >= after_commit > 0
    assert client_replays > 0
    # the doomed keys: a typed connection error, then a recovered replay
    for o in outcomes:
        if o.key in doomed:
            assert o.calls >= 2 and o.errors and o.replayed, o
    assert acme_server.log.pids() == 2  # both workers took part


def served_answers(served: Served, keys: set[str]) -> list[Any]:
    return served.log.answers(
        lambda a: a.method == "POST" and a.path == "/v1/payments" and a.key in keys
    )
