"""Exactly once across crashes: a generated server with two uvicorn workers, its workers
SIGKILLed at seeded points of a payment's handling (harness.py), on the SQLite store and on
PostgreSQL. Each key's client retries with its one key until it gets an answer; then, from the
database, the payment provider and the webhook consumer:

- exactly one business row per key (the table has no constraint that would force it);
- exactly one webhook event per key, delivered (counted by `webhook-id`; a consumer dedupes
  on it), and no event for a payment that does not exist;
- every answer a key got, and one more replay after the run, byte-identical;
- the provider saw one derived key per request key, however often it was called;
- no claim left in progress, and no key waited past the lock timeout (plus a worker's restart)
  after its last kill.

Sized for `make test` (`CRASH_KEYS` keys per store, default 10); `make crash` runs more.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.chaos.harness import run_threads
from tests.crash.harness import (
    KILLER,
    POINTS,
    TABLE,
    KeyRun,
    Provider,
    drive,
    generate_server,
    kills,
    schedule,
)
from tests.e2e.harness import Receiver
from tests.support import fresh_database, sql_query, uvicorn_server

KEYS = int(os.environ.get("CRASH_KEYS", 5))
THREADS = int(os.environ.get("CRASH_THREADS", 2))
SEED = int(os.environ.get("CRASH_SEED", 20261254))
LOCK_TIMEOUT = 1  # seconds: APIFORGE_IDEMPOTENCY_LOCK_TIMEOUT_SECONDS
RESTART_SLACK = 20.0  # seconds a killed worker may take to serve again on a loaded machine
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

FIGURES: list[dict[str, Any]] = []


@pytest.fixture(scope="module")
def server_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_server(tmp_path_factory.mktemp("crash"))


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    found = Provider()
    try:
        yield found
    finally:
        found.close()


@pytest.fixture(scope="module")
def consumer() -> Iterator[Receiver]:
    found = Receiver()
    try:
        yield found
    finally:
        found.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = fresh_database(request.getfixturevalue("postgres_url"), "crash_" + str(SEED))
    sql_query(url, TABLE)
    return url


def deliveries_by_payment(consumer: Receiver) -> dict[str, set[str]]:
    """payment id → the webhook ids delivered for it."""
    found: dict[str, set[str]] = {}
    for headers, body in list(consumer.received):
        try:
            event = json.loads(body)
        except ValueError:  # cut short: its sender was killed mid-request (sent again later)
            continue
        if event.get("type") == "payment.created":
            found.setdefault(event["data"]["id"], set()).add(headers["webhook-id"])
    return found


@pytest.mark.timeout(120 + 15 * KEYS)
def test_exactly_once_across_kills(
    server_project: Path, store: str, provider: Provider, consumer: Receiver, tmp_path: Path
) -> None:
    kind = "sqlite" if store.startswith("sqlite") else "postgres"
    keys = [f"{kind}-{SEED}-{i:04d}-abcdefgh" for i in range(KEYS)]  # 16+ chars, 8 distinct
    plan = schedule(keys, SEED)
    runs = {key: KeyRun(key, plan[key], 100 + i) for i, key in enumerate(keys)}
    provider.calls.clear()
    consumer.received.clear()
    (tmp_path / "crash_app.py").write_text(KILLER, encoding="utf-8")
    kill_log = tmp_path / "kills.log"
    env = {
        "APIFORGE_STORE_URL": store,
        "APIFORGE_IDEMPOTENCY_LOCK_TIMEOUT_SECONDS": str(LOCK_TIMEOUT),
        "APIFORGE_RATE_LIMIT_ENABLED": "0",
        "APIFORGE_WEBHOOK_SECRETS": SECRET,
        "APIFORGE_WEBHOOK_ENDPOINTS": consumer.url,
        "APIFORGE_WEBHOOK_ALLOW_HTTP": "1",
        "APIFORGE_WEBHOOK_ALLOW_DESTINATIONS": "127.0.0.1",
        "APIFORGE_WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "1",
        "APIFORGE_WEBHOOK_LEASE_SECONDS": "1",
        "APIFORGE_METRICS_PATH": "",
        "CRASH_PSP": provider.url,
        "CRASH_KILLS": str(kill_log),
    }
    started = time.monotonic()
    with uvicorn_server(
        "crash_app:app",
        cwd=tmp_path,
        env=env,
        workers=2,
        pythonpath=[server_project],
        output=tmp_path / "server.log",
    ) as (url, _proc):
        deadline = time.monotonic() + 60 + 8 * KEYS
        targets = []
        for n in range(THREADS):
            mine = keys[n::THREADS]

            def work(mine: list[str] = mine) -> None:
                for key in mine:
                    drive(url, runs[key], deadline, kill_log)

            targets.append(work)
        run_threads(targets, timeout=deadline - time.monotonic() + 30)
        answered = time.monotonic()
        rows = sql_query(store, "SELECT idem_key, payment_id FROM crash_payments")
        payment_of = {str(k): str(p) for k, p in rows}
        # every event delivered (a delivery held by a killed sender is due again after its lease)
        wait_until = time.monotonic() + 40
        while time.monotonic() < wait_until:
            delivered = deliveries_by_payment(consumer)
            if all(payment_of.get(k) in delivered for k in keys):
                break
            time.sleep(0.2)
        replays = {}
        with httpx.Client(base_url=url, timeout=30) as client:
            for key in keys:
                headers = {"Idempotency-Key": key}
                replays[key] = (
                    client.post("/payments", json={"amount": runs[key].amount}, headers=headers),
                    client.post("/payments", json={"amount": -1}, headers=headers),
                )
        in_progress = sql_query(
            store, "SELECT count(*) FROM apiforge_idempotency WHERE state = 'in_progress'"
        )
        events_stored = sql_query(store, "SELECT count(*) FROM apiforge_webhook_events")

    delivered = deliveries_by_payment(consumer)
    per_key = Counter(str(k) for k, _ in rows)
    assert {k: n for k, n in per_key.items() if n != 1 and k in runs} == {}
    assert sorted(per_key) == sorted(keys), "a row for a key nobody sent, or a key without one"
    for key, run in runs.items():
        assert len(set(run.answers)) == 1, f"{key}: answers differ"
        assert json.loads(run.answers[0])["id"] == payment_of[key]
        again, conflict = replays[key]
        assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
        assert again.content == run.answers[0], f"{key}: the replay after the run differs"
        assert conflict.status_code == 422  # another body under the key: the first one stands
        assert run.answered_at - run.killed_at <= LOCK_TIMEOUT + RESTART_SLACK or not run.lost
    # the provider saw one derived key per request key, however often a retry called it
    derived = Counter(provider.calls)
    assert len(derived) == KEYS
    assert len({json.loads(r.answers[0])["charge"] for r in runs.values()}) == KEYS
    assert in_progress == [(0,)]
    assert events_stored == [(KEYS,)]
    for key in keys:
        assert len(delivered.get(payment_of[key], set())) == 1, f"{key}: webhook not delivered once"
    assert set(delivered) <= set(payment_of.values()), "an event for a payment that does not exist"

    planned = Counter(p for run in runs.values() for p in run.crashes)
    killed = Counter(point for (_key, point), n in kills(kill_log).items() for _ in range(n))
    FIGURES.append(
        {
            "store": kind,
            "keys": KEYS,
            "kill points planned": dict(sorted(planned.items())),
            "workers killed, by point": dict(sorted(killed.items())),
            "connections lost (kills, own and collateral)": sum(r.lost for r in runs.values()),
            "409 while a dead worker's claim lived": sum(r.in_progress for r in runs.values()),
            "answers (fresh / replayed)": (
                sum(len(r.answers) - r.replayed for r in runs.values()),
                sum(r.replayed for r in runs.values()),
            ),
            "provider calls / distinct derived keys": (len(provider.calls), len(derived)),
            "webhook receipts (raw, cut short included)": len(consumer.received),
            "seconds (answers / total)": (
                round(answered - started, 1),
                round(time.monotonic() - started, 1),
            ),
        }
    )
    # a planned kill is skipped only when another request's kill answered the key first
    assert all(killed[p] <= planned[p] for p in POINTS) and sum(killed.values()) > 0
