"""Rate-limit accuracy: several clients hammer one credential's limit (`RATE_LIMIT`, e.g.
50/second) on two workers that share their counters in Redis; the allowed (2xx) answers are
counted per window from the server's own response log and compared with the limit, for the
sliding-window-counter (the default) and the fixed-window strategies.

Windows: the limiter's windows start at the credential's first hit (`t_ref`, just before
it is sent) and, under saturating demand, follow each other back to back, so the allowed
answers are counted per window [t_ref + k*W, t_ref + (k+1)*W). Besides those, the largest
number of allowed answers in *any* interval of length W (the "sliding" count) shows what
the strategy lets through across window boundaries.
"""

from __future__ import annotations

import functools
import math
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

import pytest
from limits import parse

from tests.chaos.conftest import LIMIT_ENV, RATE_LIMIT, RATE_TOKEN, RATE_WINDOWS
from tests.chaos.harness import Served, record, run_threads, serve_acme
from tests.e2e.conftest import SERVER_PACKAGE, Products
from tests.e2e.harness import payment_body

CLIENTS = 4  # client threads, one generated Client each, all with the measured credential
ITEM = parse(RATE_LIMIT)
LIMIT, WINDOW = ITEM.amount, ITEM.get_expiry()
MAX_OVER = 0.15  # allowed per window may exceed the limit by at most this share (log-time skew)


@pytest.fixture(scope="module")
def fixed_window_server(
    products: Products, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    env = {
        **LIMIT_ENV,
        "APIFORGE_REDIS_URL": redis_url,
        "APIFORGE_RATE_LIMIT_STRATEGY": "fixed-window",
    }
    state = tmp_path_factory.mktemp("chaos_fixed_window")
    with serve_acme(products.server, SERVER_PACKAGE, state, backend="redis", env=env) as served:
        yield served


@dataclass
class Measured:
    per_window: list[int]  # allowed answers in each window
    sliding_max: int  # most allowed answers in any interval of length WINDOW
    requests: int
    allowed: int
    limited: int  # 429s the clients got (typed RateLimited)
    statuses: Counter[int]  # as the server logged them


def hammer(acme: ModuleType, served: Served) -> Measured:
    with acme.Client(base_url=served.url, bearer_auth="chaos-rate-setup") as setup:
        payment = setup.payments.create(body=payment_body(), idempotency_key=str(uuid.uuid4()))
    path = f"/v1/payments/{payment.id}"
    lock = threading.Lock()
    outcomes: Counter[str] = Counter()

    clients = [
        acme.Client(base_url=served.url, bearer_auth=RATE_TOKEN, max_retries=0)
        for _ in range(CLIENTS)
    ]
    t_ref = time.time()
    clients[0].payments.get(payment_id=payment.id)  # the first hit opens the window
    deadline = t_ref + RATE_WINDOWS * WINDOW - 0.02

    def worker(client: object) -> None:
        seen: Counter[str] = Counter()
        while time.time() < deadline:
            try:
                client.payments.get(payment_id=payment.id)  # type: ignore[attr-defined]
                seen["allowed"] += 1
            except acme.RateLimited:
                seen["limited"] += 1
        with lock:
            outcomes.update(seen)

    try:
        run_threads([functools.partial(worker, c) for c in clients], timeout=60)
    finally:
        for c in clients:
            c.close()

    answers = served.log.answers(lambda a: a.method == "GET" and a.path == path)
    allowed = [a.t for a in answers if 200 <= a.status < 300]
    per_window = [0] * RATE_WINDOWS
    for t in allowed:
        k = math.floor((t - t_ref) / WINDOW)
        if 0 <= k < RATE_WINDOWS:
            per_window[k] += 1
    sliding_max, start = 0, 0
    for end, t in enumerate(allowed):
        while allowed[start] <= t - WINDOW:
            start += 1
        sliding_max = max(sliding_max, end - start + 1)
    return Measured(
        per_window,
        sliding_max,
        requests=len(answers),
        allowed=len(allowed),
        limited=outcomes["limited"],
        statuses=Counter(a.status for a in answers),
    )


def report(strategy: str, m: Measured) -> dict[str, object]:
    mean = sum(m.per_window) / len(m.per_window)
    figures: dict[str, object] = {
        "limit": f"{LIMIT} per {WINDOW} s",
        "allowed_per_window": m.per_window,
        "max_per_window": max(m.per_window),
        "max_per_window_error_pct": round(100 * (max(m.per_window) - LIMIT) / LIMIT, 1),
        "mean_per_window": round(mean, 1),
        "mean_per_window_error_pct": round(100 * (mean - LIMIT) / LIMIT, 1),
        "max_in_any_window_long_interval": m.sliding_max,
        "max_in_any_interval_error_pct": round(100 * (m.sliding_max - LIMIT) / LIMIT, 1),
        "requests": m.requests,
        "allowed": m.allowed,
        "rejected_429": m.limited,
        "server_statuses": dict(sorted(m.statuses.items())),
    }
    record("rate-limit", f"{strategy}: {CLIENTS} clients, 2 workers, Redis", **figures)
    return figures


def check(m: Measured) -> None:
    assert set(m.statuses) <= {200, 429}, m.statuses
    assert m.requests >= 1.5 * LIMIT * RATE_WINDOWS, "the demand did not saturate the limit"
    assert m.limited > 0
    # shared counters: two workers together never let through more than the limit per window
    # (the tolerance covers the log's timestamps, taken just after each decision)
    assert max(m.per_window) <= LIMIT * (1 + MAX_OVER), m.per_window
    # and saturating demand gets (nearly) the whole quota: the limiter does not starve callers
    assert sum(m.per_window) >= 0.8 * LIMIT * RATE_WINDOWS, m.per_window


@pytest.mark.parametrize("acme_server", ["redis"], indirect=True)
def test_sliding_window_counter_accuracy(acme: ModuleType, acme_server: Served) -> None:
    m = hammer(acme, acme_server)
    report("sliding-window-counter", m)
    check(m)
    # the counter weighs the previous window as if its hits were spread evenly: across a
    # boundary it lets somewhat more than the limit through (measured +5..+30% under load; a
    # burst at a window's very end could approach 2x in theory), never a second full quota
    # the way a fixed window can
    assert m.sliding_max <= LIMIT * 1.5, m.sliding_max


def test_fixed_window_accuracy(acme: ModuleType, fixed_window_server: Served) -> None:
    m = hammer(acme, fixed_window_server)
    report("fixed-window", m)
    check(m)
    # across a boundary a fixed window can let up to two quotas through
    assert m.sliding_max <= 2 * LIMIT, m.sliding_max
