"""The generated client through the fault proxy (tests/e2e/faultproxy.py) to the generated
server: lost responses, connection resets, slow and truncated responses, 429/503/409 answers.
For every run the effects are counted in the server's executions ledger (exactly once per
logical call) and the client's waits are read from its injected sleep/clock: exact values when
the server gave Retry-After, the documented backoff schedule (0.5 s doubling, capped at 8 s,
minus up to 25 % jitter) otherwise."""

from __future__ import annotations

import asyncio
import email.utils
import random
import uuid
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.conftest import MakeClient, Server
from tests.e2e.faultproxy import Fault, FaultPlan, FaultProxy, HttpRequest
from tests.e2e.harness import EPOCH, RUNS, FaultRun, Waits, Wire, payment_body

IN_PROGRESS = "https://api.acme.example.com/problems/idempotency-in-progress"


def payments_attempt(*numbers: int) -> Any:
    """Match POST /v1/payments attempts by their X-Retry-Count (0 = the first attempt)."""
    wanted = {str(n) for n in numbers}

    def match(request: HttpRequest) -> bool:
        return (
            request.method == "POST"
            and request.path == "/v1/payments"
            and request.header("x-retry-count") in wanted
        )

    return match


def backoff_bounds(retries_taken: int) -> tuple[float, float]:
    base = min(0.5 * 2**retries_taken, 8.0)
    return base * 0.75, base


class Run:
    """One fault run: logical `payments.create` calls through the proxy with `plan`, by a client
    whose attempts are recorded (`wire`) and whose waits go through `waits`."""

    def __init__(
        self,
        name: str,
        make_client: MakeClient,
        proxy: FaultProxy,
        server: Server,
        plan: FaultPlan,
        *,
        waits: Waits | None = None,
        **client_kw: Any,
    ) -> None:
        self.name, self.proxy, self.server = name, proxy, server
        proxy.reset(plan)
        self.wire = Wire()
        self.waits = waits or Waits()
        self.client = make_client(self.wire, self.waits, base_url=proxy.url, **client_kw)
        self.raws: list[Any] = []
        self.keys: list[str] = []

    def call(self, n: int = 1) -> None:
        """`n` logical calls, one after the other; a call that raises stops the run (its
        key is known, so its effects are still counted)."""
        for _ in range(n):
            key = str(uuid.uuid4())
            self.keys.append(key)
            raw = self.client.payments.with_raw_response.create(
                body=payment_body(), idempotency_key=key
            )
            self.raws.append(raw)

    def effects(self) -> dict[str, int]:
        return self.server.ledger.executions(self.keys)

    def record(self) -> FaultRun:
        stats = self.proxy.stats.snapshot()
        assert stats.requests == len(self.wire.exchanges)  # every attempt went through the proxy
        run = FaultRun(
            self.name,
            calls=len(self.keys),
            sent=len(self.wire.exchanges),
            server_saw=stats.forwarded,
            effects=sum(self.effects().values()),
            retries=sum(1 for e in self.wire.exchanges if e.retry_count != "0"),
            waits=list(self.waits.slept),
            faults=dict(stats.faults),
        )
        RUNS.append(run)
        return run


def assert_exactly_once(run: Run) -> None:
    assert all(r.status_code == 201 for r in run.raws)  # no fault leaked to the caller
    assert run.effects() == dict.fromkeys(run.keys, 1)


@pytest.mark.parametrize(
    ("fault", "server_saw_first"),
    [
        (Fault.drop_response(), True),
        (Fault.reset(after=True), True),
        (Fault.truncate(), True),
        (Fault.reset(), False),
    ],
    ids=["response dropped after commit", "RST after commit", "truncated body", "RST before"],
)
def test_lost_connection_is_retried_with_the_same_key_and_runs_once(
    make_client: MakeClient,
    proxy: FaultProxy,
    server: Server,
    fault: Fault,
    server_saw_first: bool,
) -> None:
    calls = 4
    plan = FaultPlan([fault] * calls, match=payments_attempt(0))
    run = Run(f"{fault.label} x{calls}", make_client, proxy, server, plan)
    run.call(calls)
    figures = run.record()

    assert_exactly_once(run)
    # the retry was answered from the idempotency store iff the first attempt had committed
    assert [r.replayed for r in run.raws] == [server_saw_first] * calls
    assert [r.retries_taken for r in run.raws] == [1] * calls
    assert (figures.sent, figures.server_saw) == (2 * calls, (2 if server_saw_first else 1) * calls)
    assert proxy.stats.faults == {fault.label: calls}
    for key in run.keys:  # one key per logical call, on both of its attempts
        assert [e.retry_count for e in run.wire.exchanges if e.idempotency_key == key] == ["0", "1"]
    assert run.waits.slept == [0.5] * calls  # first step of the backoff (no jitter)


def test_slow_responses_time_out_and_the_retry_is_replayed(
    make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    plan = FaultPlan([Fault.delay(2.0)] * 2, match=payments_attempt(0))
    run = Run("delay 2 s > timeout 1 s", make_client, proxy, server, plan, timeout=1.0)
    run.call(2)
    run.record()
    assert_exactly_once(run)
    assert [r.replayed for r in run.raws] == [True, True]
    assert [e.error for e in run.wire.exchanges if e.status is None] == ["ReadTimeout"] * 2
    assert run.waits.slept == [0.5, 0.5]

    # slower than usual but within the timeout: nothing to retry
    plan = FaultPlan([Fault.delay(0.3)] * 2, match=payments_attempt(0))
    run = Run("delay 0.3 s < timeout 5 s", make_client, proxy, server, plan, timeout=5.0)
    run.call(2)
    run.record()
    assert_exactly_once(run)
    assert [(r.replayed, r.retries_taken) for r in run.raws] == [(False, 0)] * 2
    assert run.waits.slept == []


def test_429_waits_exactly_what_retry_after_says(
    acme: ModuleType, make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    # delta seconds
    plan = FaultPlan([Fault.status(429, retry_after=3)], match=payments_attempt(0))
    run = Run("429 Retry-After: 3", make_client, proxy, server, plan)
    run.call()
    run.record()
    assert_exactly_once(run)
    assert run.waits.slept == [3.0] and run.raws[0].replayed is False

    # an HTTP date, read against the client's clock
    when = email.utils.formatdate(EPOCH + 7, usegmt=True)
    plan = FaultPlan([Fault.status(429, retry_after=when)], match=payments_attempt(0))
    run = Run("429 Retry-After: <date +7 s>", make_client, proxy, server, plan)
    run.call()
    run.record()
    assert_exactly_once(run)
    assert run.waits.slept == [7.0]

    # retry-after-ms is more precise and wins
    fault = Fault.status(429, retry_after=2, headers={"retry-after-ms": "1500"})
    run = Run("429 retry-after-ms: 1500", make_client, proxy, server, FaultPlan([fault]))
    run.call()
    run.record()
    assert_exactly_once(run)
    assert run.waits.slept == [1.5]

    # longer than the client's cap (60 s): raised at once, typed, no sleep, no effect
    plan = FaultPlan([Fault.status(429, retry_after=120)], match=payments_attempt(0))
    run = Run("429 Retry-After: 120 (over cap)", make_client, proxy, server, plan)
    with pytest.raises(acme.RateLimited) as limited:
        run.call()
    run.record()
    assert limited.value.retry_after == 120.0
    assert run.waits.slept == [] and run.effects() == {run.keys[0]: 0}


def test_bursts_of_503_follow_retry_after_then_the_backoff_schedule(
    acme: ModuleType, make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    burst = [Fault.status(503, retry_after=2), Fault.status(503), Fault.status(503)]
    plan = FaultPlan(burst, match=payments_attempt(0, 1, 2))
    run = Run("503 x3 burst", make_client, proxy, server, plan, max_retries=3)
    run.call()
    run.record()
    assert_exactly_once(run)
    assert run.waits.slept == [2.0, 1.0, 2.0]  # Retry-After, then 0.5 * 2**1, 0.5 * 2**2
    assert run.raws[0].retries_taken == 3

    # with the default jitter the backoff stays inside the documented bounds
    plan = FaultPlan([Fault.status(503)] * 4, match=payments_attempt(0, 1, 2, 3))
    run = Run(
        "503 x4 burst, random jitter",
        make_client,
        proxy,
        server,
        plan,
        max_retries=4,
        jitter=random.random,
    )
    run.call()
    run.record()
    assert_exactly_once(run)
    for retries_taken, waited in enumerate(run.waits.slept):
        low, high = backoff_bounds(retries_taken)
        assert low <= waited <= high, (retries_taken, waited)

    # a burst longer than the retries allow: a typed ServerError, and nothing ran
    plan = FaultPlan([Fault.status(503, retry_after=1)] * 3, match=payments_attempt(0, 1, 2))
    run = Run("503 x3 burst > max_retries=2", make_client, proxy, server, plan)
    with pytest.raises(acme.ServerError) as failed:
        run.call()
    run.record()
    assert failed.value.status_code == 503
    assert run.waits.slept == [1.0, 1.0] and run.effects() == {run.keys[0]: 0}


def test_503_after_commit_is_retried_into_a_replay(
    make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    fault = Fault.status(503, retry_after=1, after=True)
    run = Run(
        "503 after commit x3",
        make_client,
        proxy,
        server,
        FaultPlan([fault] * 3, match=payments_attempt(0)),
    )
    run.call(3)
    figures = run.record()
    assert_exactly_once(run)
    assert [r.replayed for r in run.raws] == [True] * 3
    assert figures.server_saw == 6 and run.waits.slept == [1.0] * 3


def test_409_in_progress_is_retried_after_retry_after(
    make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    # as the proxy says it: exact wait
    fault = Fault.status(409, retry_after=1, problem_type=IN_PROGRESS)
    run = Run(
        "409 in progress (injected)",
        make_client,
        proxy,
        server,
        FaultPlan([fault], match=payments_attempt(0)),
    )
    run.call()
    run.record()
    assert_exactly_once(run)
    assert run.waits.slept == [1.0]

    # as the server says it: the first attempt times out while the handler still runs (2 s),
    # the retry finds the key claimed (409, Retry-After: 1), a later one gets the replay
    waits = Waits(real=True)
    run = Run(
        "409 in progress (slow handler)",
        make_client,
        proxy,
        server,
        FaultPlan(),
        waits=waits,
        timeout=0.6,
        max_retries=6,
    )
    key = str(uuid.uuid4())
    run.keys.append(key)
    run.raws.append(
        run.client.payments.with_raw_response.create(
            body={**payment_body(), "metadata": {"handlerDelay": "2"}}, idempotency_key=key
        )
    )
    run.record()
    assert_exactly_once(run)
    statuses = run.wire.statuses()
    assert statuses[0] == "ReadTimeout" and 409 in statuses and statuses[-1] == 201
    assert run.raws[0].replayed is True
    assert waits.slept[0] == 0.5  # backoff after the timeout
    in_progress = [e for e in run.wire.exchanges if e.status == 409]
    assert all(e.headers["retry-after"] == "1" for e in in_progress)
    # one wait after each attempt but the last: after every 409 exactly its Retry-After
    assert len(waits.slept) == len(statuses) - 1
    for exchange, waited in zip(run.wire.exchanges, waits.slept, strict=False):
        if exchange.status == 409:
            assert waited == 1.0


def test_seeded_mix_of_faults_every_call_runs_exactly_once(
    make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    max_retries = 4
    weights = {
        Fault.passthrough(): 4,
        Fault.drop_response(): 2,
        Fault.reset(): 1,
        Fault.reset(after=True): 1,
        Fault.truncate(): 1,
        Fault.status(503): 1,
        Fault.status(503, retry_after=1, after=True): 1,
        Fault.status(429, retry_after=1): 1,
        Fault.status(409, retry_after=1, problem_type=IN_PROGRESS): 1,
    }
    # the last attempt a call may make always passes: the retries suffice by construction
    plan = FaultPlan(weights=weights, seed=7, match=payments_attempt(*range(max_retries)))
    run = Run("seeded mix (seed 7)", make_client, proxy, server, plan, max_retries=max_retries)
    run.call(16)
    figures = run.record()
    assert_exactly_once(run)
    assert sum(proxy.stats.faults.values()) >= 8  # the mix really hit
    assert figures.sent == 16 + figures.retries
    assert set(run.waits.slept) <= {0.5, 1.0, 2.0, 4.0}  # Retry-After (1) or backoff steps


def test_async_client_survives_a_dropped_response(
    acme: ModuleType, proxy: FaultProxy, server: Server
) -> None:
    proxy.reset(FaultPlan([Fault.drop_response()], match=payments_attempt(0)))
    waits = Waits()

    async def main() -> Any:
        async with acme.AsyncClient(
            base_url=proxy.url, bearer_auth="e2e-token", sleep=waits.asleep, jitter=lambda: 0.0
        ) as client:
            return await client.payments.with_raw_response.create(body=payment_body())

    raw = asyncio.run(main())
    stats = proxy.stats.snapshot()
    key = raw.idempotency_key
    RUNS.append(
        FaultRun(
            "drop_response (async client)",
            1,
            stats.requests,
            stats.forwarded,
            server.ledger.total([key]),
            raw.retries_taken,
            list(waits.slept),
            dict(stats.faults),
        )
    )
    assert (raw.status_code, raw.replayed, raw.retries_taken) == (201, True, 1)
    assert server.ledger.executions([key]) == {key: 1}
    assert waits.slept == [0.5]


def test_safe_methods_are_retried_through_resets(
    acme: ModuleType, make_client: MakeClient, proxy: FaultProxy, server: Server
) -> None:
    def reads(request: HttpRequest) -> bool:
        return request.method == "GET" and request.header("x-retry-count") == "0"

    proxy.reset(FaultPlan([Fault.reset(after=True), Fault.reset()], match=reads))
    wire, waits = Wire(), Waits()
    client = make_client(wire, waits, base_url=proxy.url)
    page = client.payments.with_raw_response.list(limit=1)
    created = client.customers.create(body={"email": "b@example.com", "name": "B"})
    got = client.customers.with_raw_response.get(customer_id=created.id)
    assert page.retries_taken == 1 and got.retries_taken == 1
    assert got.etag == '"v1"'
    assert waits.slept == [0.5, 0.5]
