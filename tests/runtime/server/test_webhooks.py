"""The webhook outbox and dispatcher on memory, SQLite and a real Redis, delivering to a real
consumer on 127.0.0.1 (allow-listed, plain http allowed) that verifies signatures and fails the
first N times. Destination checks and stall resistance: test_delivery_guard.py."""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, TypeVar

import pytest

from tests.support import free_port

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"
T = TypeVar("T")
SCHEDULE = [60, 300, 900, 3600, 6 * 3600, 24 * 3600]
T0 = 1_800_000_000.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """The runtime copied into tmp as a package, as generation does."""
    root = tmp_path_factory.mktemp("whrt")
    package = "whrt_" + uuid.uuid4().hex[:8]
    (root / package / "runtime").mkdir(parents=True)
    (root / package / "__init__.py").touch()
    (root / package / "runtime" / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, root / package / "runtime" / src.name)
    sys.path.insert(0, str(root))
    try:
        yield SimpleNamespace(
            delivery=importlib.import_module(f"{package}.runtime.delivery"),
            wh=importlib.import_module(f"{package}.runtime.webhooks"),
            ws=importlib.import_module(f"{package}.runtime.webhook_signing"),
            storage=importlib.import_module(f"{package}.runtime.storage"),
            dst=importlib.import_module(f"{package}.runtime.destinations"),
        )
    finally:
        sys.path.remove(str(root))


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Consumer:
    """A webhook consumer: verifies every request, answers 500 to the first `fail_first`."""

    ws: ModuleType
    secrets: list[str]
    scheme: str = "standard"
    fail_first: int = 0
    url: str = ""
    received: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, headers: dict[str, str], body: bytes) -> int:
        from_ws = self.ws
        try:
            if self.scheme == "standard":
                msg_id = from_ws.verify_standard(self.secrets, headers, body, tolerance=10**9)
            else:
                from_ws.verify_stripe(
                    self.secrets, headers["Acme-Signature"], body, tolerance=10**9
                )
                msg_id = headers["Acme-Webhook-Id"]
            verified = True
        except from_ws.WebhookVerificationError:
            msg_id, verified = "", False
        with self.lock:
            self.received.append(
                {"id": msg_id, "verified": verified, "body": json.loads(body), "headers": headers}
            )
            n = len(self.received)
        if not verified:
            return 401
        return 500 if n <= self.fail_first else 204


@pytest.fixture
def consumer_factory(rt: SimpleNamespace) -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def make(**kwargs: Any) -> Consumer:
        consumer = Consumer(rt.ws, **kwargs)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                code = consumer.handle(dict(self.headers.items()), body)
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        consumer.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
        return consumer

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'outbox.db'}"
    url: str = request.getfixturevalue("redis_url")
    return url


def loopback(rt: SimpleNamespace) -> Any:
    """The policy of these tests: their consumers listen on http://127.0.0.1."""
    return rt.dst.DestinationPolicy(allow_http=True, allow=("127.0.0.1",))


def open_outbox(rt: SimpleNamespace, url: str, clock: FakeClock) -> Any:
    if url.startswith("redis"):
        return rt.wh.RedisOutbox(url, prefix=f"t:{uuid.uuid4().hex[:8]}:", clock=clock)
    return rt.wh.open_outbox(url, clock=clock)


def test_retries_follow_the_schedule_until_delivered(
    rt: SimpleNamespace, store_url: str, consumer_factory: Any
) -> None:
    secret = rt.ws.generate_secret()
    consumer = consumer_factory(secrets=[secret], fail_first=3)

    async def scenario() -> None:
        clock = FakeClock()
        outbox = open_outbox(rt, store_url, clock)
        dispatcher = rt.delivery.WebhookDispatcher(
            outbox, rt.ws.WebhookSigner((secret,)), clock=clock, policy=loopback(rt)
        )
        event = rt.wh.new_event("order.completed", {"orderId": "ord_1"}, now=clock())
        [delivery] = await outbox.enqueue(event, [consumer.url])
        assert delivery.status == "pending" and delivery.event_id == event["id"]

        expected_times = [T0, T0 + 60, T0 + 60 + 300, T0 + 60 + 300 + 900]
        for i, at in enumerate(expected_times):
            clock.now = at - 1
            assert await dispatcher.run_once() == 0, "nothing is due before the schedule says"
            clock.now = at
            assert await dispatcher.run_once() == 1
            d = await outbox.get_delivery(delivery.id)
            if i < 3:
                assert d.status == "pending"
                assert d.next_attempt_at == at + SCHEDULE[i]
                assert d.last_status_code == 500 and d.last_error == "HTTP 500"
            else:
                assert d.status == "delivered" and d.next_attempt_at is None
        clock.now += 10**6
        assert await dispatcher.run_once() == 0, "a delivered delivery is not sent again"

        attempts = await outbox.attempts(delivery.id)
        assert [a.number for a in attempts] == [1, 2, 3, 4]
        assert [a.status_code for a in attempts] == [500, 500, 500, 204]
        assert [a.at for a in attempts] == expected_times
        assert [a.error for a in attempts] == ["HTTP 500"] * 3 + [None]
        listed = await outbox.list_deliveries(event_id=event["id"])
        assert [d.id for d in listed] == [delivery.id]
        assert [d.id for d in await outbox.list_deliveries(status="delivered")] == [delivery.id]
        assert (await outbox.get_event(event["id"])) == event
        await dispatcher.stop()
        await outbox.close()

    run(scenario())
    # every attempt carried the same event id, signed, with the identical body
    assert len(consumer.received) == 4
    assert all(r["verified"] for r in consumer.received)
    assert {r["id"] for r in consumer.received} == {consumer.received[0]["body"]["id"]}
    assert consumer.received[0]["body"]["type"] == "order.completed"
    assert consumer.received[0]["headers"]["Content-Type"] == "application/json"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_connection_errors_then_dead_after_the_last_retry(
    rt: SimpleNamespace, kind: str, tmp_path: Path
) -> None:
    url = "memory://" if kind == "memory" else f"sqlite:///{tmp_path / 'o.db'}"
    closed = f"http://127.0.0.1:{free_port()}/nobody-listens"

    async def scenario() -> None:
        clock = FakeClock()
        outbox = open_outbox(rt, url, clock)
        dispatcher = rt.delivery.WebhookDispatcher(
            outbox,
            rt.ws.WebhookSigner((rt.ws.generate_secret(),)),
            clock=clock,
            policy=loopback(rt),
        )
        [delivery] = await outbox.enqueue(rt.wh.new_event("ping", {}, now=clock()), [closed])
        times = [T0]
        for gap in SCHEDULE:
            times.append(times[-1] + gap)
        for at in times:
            clock.now = at
            assert await dispatcher.run_once() == 1
        d = await outbox.get_delivery(delivery.id)
        assert d.status == "dead" and d.attempt_count == 7 and d.next_attempt_at is None
        clock.now += 10**7
        assert await dispatcher.run_once() == 0
        attempts = await outbox.attempts(delivery.id)
        assert [a.at for a in attempts] == times
        assert all(a.status_code is None and "ConnectError" in a.error for a in attempts)
        assert [d.id for d in await outbox.list_deliveries(status="dead")] == [delivery.id]
        await dispatcher.stop()
        await outbox.close()

    run(scenario())


def test_stripe_scheme_and_rotation_reach_the_consumer(
    rt: SimpleNamespace, consumer_factory: Any
) -> None:
    new, old = "acme_new_secret", "acme_old_secret"
    consumer = consumer_factory(secrets=[old], scheme="stripe")  # not rotated yet

    async def scenario() -> None:
        outbox = rt.wh.open_outbox("memory://")
        signer = rt.ws.WebhookSigner((new, old), scheme="stripe", header_prefix="Acme")
        dispatcher = rt.delivery.WebhookDispatcher(outbox, {"acme": signer}, policy=loopback(rt))
        await outbox.enqueue(
            rt.wh.new_event("order.completed", {"n": 1}), [rt.wh.Endpoint(consumer.url, "acme")]
        )
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()

    run(scenario())
    assert [r["verified"] for r in consumer.received] == [True]
    assert consumer.received[0]["headers"]["Acme-Signature"].count("v1=") == 2


def test_enqueue_is_atomic_and_idempotent_on_the_event_id(
    rt: SimpleNamespace, store_url: str
) -> None:
    async def scenario() -> None:
        outbox = open_outbox(rt, store_url, FakeClock())
        event = rt.wh.new_event("a.b", {"x": 1})
        first = await outbox.enqueue(event, ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"])
        again = await outbox.enqueue(event, ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"])
        assert len(first) == 2
        assert sorted(d.id for d in again) == sorted(d.id for d in first)
        assert len(await outbox.list_deliveries(event_id=event["id"])) == 2
        await outbox.close()

    run(scenario())


def test_sqlite_event_commits_with_the_handlers_transaction(
    rt: SimpleNamespace, tmp_path: Path
) -> None:
    path = str(tmp_path / "app.db")

    async def scenario() -> None:
        outbox = rt.wh.SqliteOutbox(path)
        conn = rt.storage.connect_sqlite(path)
        conn.execute("CREATE TABLE orders (id TEXT PRIMARY KEY)")
        rolled_back = rt.wh.new_event("order.created", {"id": "o1"})
        with pytest.raises(RuntimeError), rt.wh.sqlite_transaction(conn):
            conn.execute("INSERT INTO orders VALUES ('o1')")
            outbox.enqueue_in(conn, rolled_back, ["http://127.0.0.1:9/"])
            raise RuntimeError("the handler fails after writing")
        committed = rt.wh.new_event("order.created", {"id": "o2"})
        with rt.wh.sqlite_transaction(conn):
            conn.execute("INSERT INTO orders VALUES ('o2')")
            outbox.enqueue_in(conn, committed, ["http://127.0.0.1:9/"])
        assert await outbox.get_event(rolled_back["id"]) is None
        assert await outbox.list_deliveries(event_id=rolled_back["id"]) == []
        assert await outbox.get_event(committed["id"]) == committed
        assert len(await outbox.list_deliveries(event_id=committed["id"])) == 1
        conn.close()
        await outbox.close()

    run(scenario())


def test_redis_event_commits_with_the_handlers_multi(rt: SimpleNamespace, redis_url: str) -> None:
    async def scenario() -> None:
        outbox = rt.wh.RedisOutbox(redis_url, prefix=f"t:{uuid.uuid4().hex[:8]}:")
        event = rt.wh.new_event("order.created", {"id": "o3"})
        async with outbox.redis.pipeline(transaction=True) as pipe:
            pipe.set(f"order:{event['id']}", "o3")
            await outbox.enqueue_in(pipe, event, ["http://127.0.0.1:9/"])
            await pipe.execute()
        assert await outbox.get_event(event["id"]) == event
        assert len(await outbox.list_deliveries(event_id=event["id"])) == 1
        await outbox.close()

    run(scenario())


def test_claims_are_exclusive_and_leases_expire(rt: SimpleNamespace, store_url: str) -> None:
    """Two dispatchers (two processes) never take the same delivery; a sender that died
    leaves it due again when its lease ends, and its late result is ignored."""

    async def scenario() -> None:
        clock = FakeClock()
        a = open_outbox(rt, store_url, clock)
        if store_url.startswith("memory"):
            b = a
        elif store_url.startswith("redis"):
            b = rt.wh.RedisOutbox(store_url, prefix=a.prefix, clock=clock)
        else:
            b = rt.wh.open_outbox(store_url, clock=clock)
        for i in range(10):
            await a.enqueue(rt.wh.new_event("e", {"i": i}), ["http://127.0.0.1:9/"])
        got_a, got_b = await asyncio.gather(a.claim_due(T0, 6, 60), b.claim_due(T0, 6, 60))
        ids_a = {d.id for d, _ in got_a}
        ids_b = {d.id for d, _ in got_b}
        assert not ids_a & ids_b and len(ids_a | ids_b) == 10
        assert await a.claim_due(T0 + 59, 100, 60) == []
        stale, body = got_a[0]
        assert json.loads(body)["type"] == "e"
        again = await b.claim_due(T0 + 60, 100, 60)  # every lease ran out
        assert len(again) == 10
        attempt = rt.wh.Attempt(stale.id, 1, T0 + 61, 204, None, 1.0)
        assert await a.record_attempt(stale, attempt, "delivered", None) is False
        fresh = next(d for d, _ in again if d.id == stale.id)
        assert await b.record_attempt(fresh, attempt, "delivered", None) is True
        assert (await a.get_delivery(stale.id)).status == "delivered"
        assert len(await a.attempts(stale.id)) == 1
        await a.close()
        if b is not a:
            await b.close()

    run(scenario())


def test_release_gives_a_claim_back_unsent(rt: SimpleNamespace, store_url: str) -> None:
    """The dispatcher gives back deliveries whose destination has no free slot: pending again
    at the given time, no attempt counted; a stale claim cannot release."""

    async def scenario() -> None:
        outbox = open_outbox(rt, store_url, FakeClock())
        [delivery] = await outbox.enqueue(rt.wh.new_event("e", {}), ["https://hooks.example/"])
        [(claimed, _)] = await outbox.claim_due(T0, 10, 60)
        assert await outbox.release(claimed, T0 + 5) is True
        assert await outbox.release(claimed, T0 + 5) is False, "the claim is gone"
        d = await outbox.get_delivery(delivery.id)
        assert (d.status, d.attempt_count, d.next_attempt_at) == ("pending", 0, T0 + 5)
        assert await outbox.claim_due(T0 + 4, 10, 60) == []
        [(again, _)] = await outbox.claim_due(T0 + 5, 10, 60)
        assert again.id == delivery.id and await outbox.attempts(delivery.id) == []
        await outbox.close()

    run(scenario())


def test_dispatcher_loop_delivers_promptly(
    rt: SimpleNamespace, consumer_factory: Any, tmp_path: Path
) -> None:
    secret = rt.ws.generate_secret()
    consumer = consumer_factory(secrets=[secret])

    async def scenario() -> float:
        outbox = rt.wh.open_outbox(f"sqlite:///{tmp_path / 'o.db'}")
        dispatcher = rt.delivery.WebhookDispatcher(
            outbox, rt.ws.WebhookSigner((secret,)), poll_interval=30, policy=loopback(rt)
        )
        dispatcher.start()
        await asyncio.sleep(0.05)
        t = time.monotonic()
        await outbox.enqueue(rt.wh.new_event("e", {}), [consumer.url])
        while not consumer.received and time.monotonic() - t < 5:
            await asyncio.sleep(0.01)
        elapsed = time.monotonic() - t
        await dispatcher.stop()
        await outbox.close()
        return elapsed

    elapsed = run(scenario())
    assert consumer.received and consumer.received[0]["verified"]
    assert elapsed < 2, "enqueue wakes the dispatcher instead of waiting for its poll"


def test_claims_skip_the_owners_asked_and_keep_each_deliverys_owner(
    rt: SimpleNamespace, store_url: str
) -> None:
    """The dispatcher asks for the deliveries of principals not at their share of the slots:
    the others stay due, oldest first, behind however many of the skipped owner's."""

    async def scenario() -> None:
        outbox = open_outbox(rt, store_url, FakeClock())
        for i in range(300):
            endpoint = rt.wh.Endpoint("https://hooks.example/a", owner="alice")
            await outbox.enqueue(rt.wh.new_event("e", {"i": i}), [endpoint])
        [bob] = await outbox.enqueue(
            rt.wh.new_event("e", {}), [rt.wh.Endpoint("https://hooks.example/b", owner="bob")]
        )
        [server] = await outbox.enqueue(rt.wh.new_event("e", {}), ["https://hooks.example/c"])
        assert (await outbox.get_delivery(bob.id)).owner == "bob"
        assert (await outbox.get_delivery(server.id)).owner is None
        claimed = await outbox.claim_due(T0, 5, 60, skip_owners={"alice"})
        # oldest due first (same due time: any order)
        assert {(d.id, d.owner) for d, _ in claimed} == {(bob.id, "bob"), (server.id, None)}
        rest = await outbox.claim_due(T0, 5, 60, skip_owners={""})
        assert [d.owner for d, _ in rest] == ["alice"] * 5
        await outbox.close()

    run(scenario())
