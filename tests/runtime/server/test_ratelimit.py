"""Rate limiting (runtime/ratelimit.py): unit tests, then the test app under uvicorn on the
memory storage (one worker) and a real Redis (two workers sharing the counters)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from tests.runtime.server.conftest import RuntimeModules, app_package
from tests.support import free_port, uvicorn_server

PRO_KEY = "pro-secret-key-123"
PRO_ACCOUNT = "acct-" + hashlib.sha256(PRO_KEY.encode()).hexdigest()[:12]  # patterns_app's id


def make_request(
    rt: RuntimeModules, headers: dict[str, str] | None = None, client: str = "10.0.0.1"
) -> Any:
    from starlette.requests import Request

    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    return Request(
        {"type": "http", "method": "GET", "path": "/", "headers": raw, "client": (client, 1234)}
    )


# --- unit --------------------------------------------------------------------------------


def test_configuration_errors(rt: RuntimeModules) -> None:
    rl = rt.ratelimit
    with pytest.raises(ValueError, match="strategy"):
        rl.RateLimiter(strategy="token-bucket")
    with pytest.raises(ValueError, match="100/minute"):
        rl.RateLimiter(default="lots")
    with pytest.raises(ValueError, match="family"):
        rl.rate_limited("x-rate")


def test_caller_is_the_verified_principal_or_the_ip(rt: RuntimeModules) -> None:
    rl = rt.ratelimit
    limiter = rl.RateLimiter(default="5/minute", anonymous="2/minute", tiers={"pro": "9/minute"})
    # a credential nobody verified is not a key: the caller counts by IP, whatever it sends
    for headers in ({"Authorization": f"Bearer {PRO_KEY}"}, {"X-API-Key": "invented"}, {}):
        anon = limiter.caller(make_request(rt, headers, client="192.0.2.7"))
        assert anon == rl.Caller("ip:192.0.2.7", None, True)
        assert limiter.limit_for(anon).amount == 2
    verified = make_request(rt, {"Authorization": "Bearer x"})
    verified.state.principal = rt.security.Principal("usr_1", tier="pro")
    caller = limiter.caller(verified)
    assert caller == rl.Caller("user:usr_1", "pro", False)
    assert limiter.limit_for(caller).amount == 9
    untiered = make_request(rt)
    untiered.state.principal = rt.security.Principal("usr_2", tier="unknown-tier")
    assert limiter.limit_for(limiter.caller(untiered)).amount == 5


def test_header_families(rt: RuntimeModules) -> None:
    rl = rt.ratelimit
    result = rl.RateLimitResult(True, 100, 42, 1_000_030.2, 60, "default", "100 per 1 minute")
    now = 1_000_000.0
    assert rl.rate_limit_headers("x-ratelimit", result, now) == [
        ("X-RateLimit-Limit", "100"),
        ("X-RateLimit-Remaining", "42"),
        ("X-RateLimit-Reset", "1000031"),
    ]
    assert rl.rate_limit_headers("ratelimit", result, now) == [
        ("RateLimit-Limit", "100"),
        ("RateLimit-Remaining", "42"),
        ("RateLimit-Reset", "31"),
    ]
    assert rl.rate_limit_headers("ietf", result, now) == [
        ("RateLimit", '"default";r=42;t=31'),
        ("RateLimit-Policy", '"default";q=100;w=60'),
    ]
    assert result.retry_after(now) == 31
    assert result.retry_after(now + 100) == 1  # never below 1
    with pytest.raises(ValueError):
        rl.rate_limit_headers("bogus", result, now)


@pytest.mark.parametrize("strategy", ["sliding-window-counter", "fixed-window", "moving-window"])
def test_strategies_enforce_the_limit(rt: RuntimeModules, strategy: str) -> None:
    limiter = rt.ratelimit.RateLimiter(strategy=strategy, default="3/minute")
    request = make_request(rt, {"X-API-Key": "k"})

    async def run() -> list[Any]:
        return [await limiter.hit(request) for _ in range(5)]

    results = asyncio.run(run())
    assert [r.allowed for r in results] == [True, True, True, False, False]
    assert [r.remaining for r in results] == [2, 1, 0, 0, 0]
    now = time.time()
    assert all(now < r.reset_at <= now + 60.5 for r in results)
    assert all(r.window == 60 and r.limit == 3 for r in results)


def test_redis_sliding_window_is_one_round_trip_and_agrees_with_limits(
    rt: RuntimeModules, redis_url: str
) -> None:
    """On Redis the limiter makes one round trip per request (one script) where limits' own
    `hit` + `get_window_stats` make two; both decide and report the same."""
    client = redis.Redis.from_url(redis_url)

    def evalsha_calls() -> int:
        stats = client.info("commandstats").get("cmdstat_evalsha", {})
        return int(stats.get("calls", 0)) if isinstance(stats, dict) else 0

    async def run(one_trip: bool) -> tuple[list[Any], int, float]:
        limiter = rt.ratelimit.RateLimiter(
            storage_url=redis_url, default="5/minute", key_prefix=f"t{uuid.uuid4().hex}"
        )
        assert limiter._one_trip is not None
        if not one_trip:
            limiter._one_trip = None
        request = make_request(rt, {"X-API-Key": "k"})
        first = await limiter.hit(request)  # scripts loaded, connection open
        # the window has just begun (the script's TTL is exactly two windows): its reset is
        # a window away, not "now"
        assert first is not None and 59 < first.reset_at - time.time() <= 60
        before = evalsha_calls()
        started = time.perf_counter()
        results = [await limiter.hit(request) for _ in range(7)]
        took = (time.perf_counter() - started) / 7
        calls = evalsha_calls() - before
        await limiter.storage.reset()
        return results, calls, took

    one, one_calls, one_took = asyncio.run(run(True))
    two, two_calls, two_took = asyncio.run(run(False))
    assert (one_calls, two_calls) == (7, 14)
    assert [r.allowed for r in one] == [r.allowed for r in two] == [True] * 4 + [False] * 3
    assert [r.remaining for r in one] == [r.remaining for r in two] == [3, 2, 1, 0, 0, 0, 0]
    for a, b in zip(one, two, strict=True):
        assert abs(a.reset_at - b.reset_at) < 1
    print(f"\nredis hit+stats: one trip {one_took * 1e6:.0f} µs, two calls {two_took * 1e6:.0f} µs")


@pytest.mark.parametrize("ttl", [120.0, 60.0, 119.25])
def test_a_window_that_has_just_begun_resets_a_window_away(rt: RuntimeModules, ttl: float) -> None:
    """The current window's key lives for the rest of the window plus one window: a TTL of
    exactly two (or one) windows is a reset 60 s away, never "now" (X-RateLimit-Reset)."""
    item = rt.ratelimit.parse("5/minute")
    before = time.time()
    stats = rt.ratelimit._window_stats(item, 0, 0.0, 1, ttl)
    expected = ttl % 60 or 60
    assert before + expected <= stats.reset_time <= time.time() + expected
    assert stats.remaining == 4


def test_redis_concurrent_hits_share_pipelines_and_decide_exactly(
    rt: RuntimeModules, redis_url: str
) -> None:
    """Concurrent requests' script calls go out in shared pipelines (auto-pipelining), one
    EVALSHA per request still: exactly the limit is let through, each remaining count once."""
    client = redis.Redis.from_url(redis_url)

    def evalsha_calls() -> int:
        stats = client.info("commandstats").get("cmdstat_evalsha", {})
        return int(stats.get("calls", 0)) if isinstance(stats, dict) else 0

    async def run() -> tuple[list[Any], int, int, int]:
        limiter = rt.ratelimit.RateLimiter(
            storage_url=redis_url, default="5/minute", key_prefix=f"t{uuid.uuid4().hex}"
        )
        await limiter.hit(make_request(rt, client="10.0.0.2"))  # the script loaded
        one_trip = limiter._one_trip
        before = (evalsha_calls(), one_trip.calls, one_trip.batches)
        request = make_request(rt, {"X-API-Key": "k"})
        results = list(await asyncio.gather(*(limiter.hit(request) for _ in range(20))))
        calls = evalsha_calls() - before[0]
        await limiter.storage.reset()
        return results, calls, one_trip.calls - before[1], one_trip.batches - before[2]

    results, evalsha, calls, batches = asyncio.run(run())
    assert evalsha == calls == 20
    assert batches < 20  # shared round trips
    assert sum(r.allowed for r in results) == 5
    assert sorted(r.remaining for r in results if r.allowed) == [0, 1, 2, 3, 4]


def test_redis_script_flushed_is_loaded_again_without_double_counting(
    rt: RuntimeModules, redis_url: str
) -> None:
    """A Redis that lost its scripts (restarted, SCRIPT FLUSH) answers NOSCRIPT: the script is
    loaded and only the calls that did not run are sent again."""
    client = redis.Redis.from_url(redis_url)

    async def run() -> list[Any]:
        limiter = rt.ratelimit.RateLimiter(
            storage_url=redis_url, default="5/minute", key_prefix=f"t{uuid.uuid4().hex}"
        )
        request = make_request(rt, {"X-API-Key": "k"})
        first = await limiter.hit(request)
        client.script_flush()
        rest = list(await asyncio.gather(*(limiter.hit(request) for _ in range(3))))
        await limiter.storage.reset()
        return [first, *rest]

    results = asyncio.run(run())
    assert all(r is not None and r.allowed for r in results)
    assert sorted(r.remaining for r in results) == [1, 2, 3, 4]


def _evalsha_calls(client: redis.Redis) -> int:
    stats = client.info("commandstats").get("cmdstat_evalsha", {})
    return int(stats.get("calls", 0)) if isinstance(stats, dict) else 0


def test_redis_leases_units_while_the_window_has_room(rt: RuntimeModules, redis_url: str) -> None:
    """A caller far from its limit: one script call takes up to `lease` units ahead, the next
    requests of this worker use them without a round trip, and every request still sees
    exactly one unit less remaining (Redis counted the leased units at once)."""
    client = redis.Redis.from_url(redis_url)

    async def run(lease: int) -> tuple[list[Any], int, int]:
        prefix = f"t{uuid.uuid4().hex}"
        limiter = rt.ratelimit.RateLimiter(
            storage_url=redis_url, default="10000/minute", key_prefix=prefix, lease=lease
        )
        await limiter.hit(make_request(rt, client="10.0.0.2"))  # the script loaded
        request = make_request(rt, {"X-API-Key": "k"})
        before = _evalsha_calls(client)
        results = [await limiter.hit(request) for _ in range(200)]
        calls = _evalsha_calls(client) - before
        counted = sum(int(client.get(k) or 0) for k in client.keys(f"{prefix}*") if b"/-1" not in k)
        await limiter.storage.reset()
        return results, calls, counted

    leased, leased_calls, counted = asyncio.run(run(32))
    exact, exact_calls, _ = asyncio.run(run(1))
    assert all(r.allowed for r in leased + exact)
    assert (
        [r.remaining for r in leased] == [r.remaining for r in exact] == list(range(9999, 9799, -1))
    )
    assert exact_calls == 200
    assert leased_calls == 1 + -(-199 // 32)  # the first call learns the window, then 32 each
    assert 200 <= counted < 200 + 32  # the units of the last lease are counted, unused yet


def test_redis_leases_never_let_more_than_the_limit(rt: RuntimeModules, redis_url: str) -> None:
    """Two workers (two limiters on one Redis) hitting one caller concurrently past its limit:
    exactly the limit is let through, as without leases; near the limit leases shrink to one
    unit, so the last requests are exact calls."""

    async def run() -> tuple[list[Any], int]:
        prefix = f"t{uuid.uuid4().hex}"
        workers = [
            rt.ratelimit.RateLimiter(
                storage_url=redis_url, default="1000/minute", key_prefix=prefix, lease=32
            )
            for _ in range(2)
        ]
        request = make_request(rt, {"X-API-Key": "k"})
        results: list[Any] = []
        for _ in range(60):  # waves of 12 concurrent requests per worker
            wave = [w.hit(request) for w in workers for _ in range(12)]
            results += await asyncio.gather(*wave)
        calls = sum(w._one_trip.calls for w in workers)
        await workers[0].storage.reset()
        return results, calls

    results, calls = asyncio.run(run())
    assert sum(r.allowed for r in results) == 1000
    assert calls < len(results) / 2  # far fewer round trips than requests
    # refused while the other worker still held leased units: at most one lease's worth
    last_allowed = max(i for i, r in enumerate(results) if r.allowed)
    early_refusals = sum(not r.allowed for r in results[:last_allowed])
    print(f"\nround trips {calls} for {len(results)} requests; early refusals {early_refusals}")
    assert early_refusals <= 32


def test_redis_leased_units_expire(
    rt: RuntimeModules, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Units a worker leased and did not use within the lease's time are dropped: the next
    request asks Redis again."""
    monkeypatch.setattr(rt.ratelimit, "_LEASE_SECONDS", 0.05)

    async def run() -> list[int]:
        limiter = rt.ratelimit.RateLimiter(
            storage_url=redis_url, default="10000/minute", key_prefix=f"t{uuid.uuid4().hex}"
        )
        request = make_request(rt, {"X-API-Key": "k"})
        calls = []
        for pause in (0, 0, 0, 0.1, 0):
            await asyncio.sleep(pause)
            await limiter.hit(request)
            calls.append(limiter._one_trip.calls)
        await limiter.storage.reset()
        return calls

    assert asyncio.run(run()) == [1, 2, 2, 3, 3]


def test_storage_outage_fails_open(rt: RuntimeModules, caplog: pytest.LogCaptureFixture) -> None:
    limiter = rt.ratelimit.RateLimiter(
        storage_url=f"redis://127.0.0.1:{free_port()}/0", default="1/minute"
    )
    request = make_request(rt, {"X-API-Key": "k"})
    assert asyncio.run(limiter.hit(request)) is None
    assert "letting requests through" in caplog.text


def test_from_settings(rt: RuntimeModules) -> None:
    settings = rt.settings.Settings(
        rate_limit_default="7/second",
        rate_limit_anonymous="1/hour",
        rate_limit_tiers={"pro": "70/second"},
        rate_limit_strategy="fixed-window",
        rate_limit_enabled=False,
    )
    limiter = rt.ratelimit.RateLimiter.from_settings(settings)
    assert (limiter.default.amount, limiter.anonymous.amount, limiter.tiers["pro"].amount) == (
        7,
        1,
        70,
    )
    assert not limiter.enabled
    assert type(limiter.strategy).__name__ == "FixedWindowRateLimiter"
    assert rt.settings.Settings(rate_limit_lease=0).problems() == [
        "APIFORGE_RATE_LIMIT_LEASE: 0 is not 1 or more"
    ]
    with pytest.raises(ValueError, match="lease"):
        rt.ratelimit.RateLimiter(lease=0)


# --- functional: memory (1 worker) and Redis (2 workers) ----------------------------------


@pytest.fixture(scope="module", params=["memory", "redis"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[httpx.Client, str, str]]:
    kind = request.param
    root = tmp_path_factory.mktemp(f"rl_{kind}")
    app_package(root, "rl_app")
    env = {
        "APIFORGE_STORE_URL": "memory://",
        "APIFORGE_MAX_BODY_BYTES": "100",
        "APIFORGE_RATE_LIMIT_DEFAULT": "3/minute",
        "APIFORGE_RATE_LIMIT_ANONYMOUS": "2/minute",
        "APIFORGE_RATE_LIMIT_TIERS": "pro=5/minute",
        "TEST_TOKEN_TIERS": json.dumps({PRO_KEY: "pro"}),
    }
    workers = 1
    url = ""
    if kind == "redis":
        url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(url).flushdb()
        env["APIFORGE_RATE_LIMIT_STORAGE_URL"] = url
        workers = 2
    with (
        uvicorn_server(
            "rl_app.app:create_app", cwd=root, env=env, workers=workers, extra_args=["--factory"]
        ) as (base, _proc),
        httpx.Client(base_url=base) as client,
    ):
        yield client, kind, url


def key() -> dict[str, str]:
    return {"Authorization": f"Bearer {uuid.uuid4()}"}


def check_429(response: httpx.Response, path: str, limit: str) -> int:
    assert response.status_code == 429
    assert response.headers["content-type"] == "application/problem+json"
    retry = response.headers["retry-after"]
    assert re.fullmatch(r"[1-9][0-9]*", retry), retry
    assert response.json() == {
        "type": "/problems/rate-limited",
        "title": "Too many requests",
        "status": 429,
        "detail": f"Rate limit of {limit} exceeded. Retry after {retry}s.",
        "instance": path,
    }
    assert int(retry) <= 60
    return int(retry)


def test_x_ratelimit_family(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    headers = key()
    seen = []
    for _ in range(3):
        r = client.get("/rl/x", headers=headers)
        assert r.status_code == 200
        now = time.time()
        assert r.headers["x-ratelimit-limit"] == "3"
        reset = int(r.headers["x-ratelimit-reset"])
        assert now - 1 <= reset <= now + 61  # unix seconds
        seen.append(r.headers["x-ratelimit-remaining"])
        assert "ratelimit-limit" not in r.headers and "ratelimit" not in r.headers
    assert seen == ["2", "1", "0"]
    r = client.get("/rl/x", headers=headers)
    retry = check_429(r, "/rl/x", "3 per 1 minute")
    assert r.headers["x-ratelimit-remaining"] == "0"
    assert int(r.headers["x-ratelimit-reset"]) >= time.time() + retry - 2


def test_ratelimit_family(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    headers = key()
    for expected in ["2", "1", "0"]:
        r = client.get("/rl/ratelimit", headers=headers)
        assert r.status_code == 200
        assert r.headers["ratelimit-limit"] == "3"
        assert r.headers["ratelimit-remaining"] == expected
        assert 0 <= int(r.headers["ratelimit-reset"]) <= 60  # delta seconds
        assert "x-ratelimit-limit" not in r.headers
    r = client.get("/rl/ratelimit", headers=headers)
    check_429(r, "/rl/ratelimit", "3 per 1 minute")
    assert r.headers["ratelimit-remaining"] == "0"


def test_ietf_family(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    headers = key()
    for expected in ["2", "1", "0"]:
        r = client.get("/rl/ietf", headers=headers)
        assert r.status_code == 200
        match = re.fullmatch(r'"i";r=(\d+);t=(\d+)', r.headers["ratelimit"])
        assert match and match.group(1) == expected and int(match.group(2)) <= 60
        assert r.headers["ratelimit-policy"] == '"i";q=3;w=60'
    r = client.get("/rl/ietf", headers=headers)
    check_429(r, "/rl/ietf", "3 per 1 minute")
    assert re.fullmatch(r'"i";r=0;t=\d+', r.headers["ratelimit"])


def test_tier_from_configuration(server: tuple[httpx.Client, str, str]) -> None:
    client, kind, _ = server
    headers = {"X-API-Key": PRO_KEY}
    statuses = [client.get("/rl/x", headers=headers).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    if kind == "redis":
        stored = " ".join(k.decode() for k in redis.Redis.from_url(server[2]).keys("*"))
        assert PRO_ACCOUNT in stored and PRO_KEY not in stored


def test_anonymous_callers_limited_by_ip(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    statuses = [client.get("/rl/anon").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    # a caller with a credential on the same IP has its own quota
    assert client.get("/rl/anon", headers=key()).status_code == 200


def test_headers_on_error_responses(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    headers = key()
    responses = [
        client.get("/rl/missing/w1", headers=headers),  # 404 from the handler
        client.get("/boom", headers=headers),  # 500
    ]
    assert [r.status_code for r in responses] == [404, 500]
    for r in responses:
        assert r.headers["content-type"] == "application/problem+json"
        assert r.headers["x-ratelimit-limit"] == "3"
        assert r.headers["x-ratelimit-remaining"] == "2"  # separate buckets: m and boom
    echo = [
        client.post(
            "/echo", content=b'{"name":', headers={**headers, "content-type": "application/json"}
        ),
        client.post(
            "/echo", content=b"x" * 101, headers={**headers, "content-type": "application/json"}
        ),
        client.post("/echo", content=b"{}", headers={**headers, "content-type": "text/plain"}),
        client.post("/echo", json={"name": "a", "size": 1}, headers=headers),
    ]
    assert [r.status_code for r in echo] == [422, 413, 415, 429]
    assert [r.headers["x-ratelimit-remaining"] for r in echo] == ["2", "1", "0", "0"]


def test_unlimited_operation_has_no_headers(server: tuple[httpx.Client, str, str]) -> None:
    client, _, _ = server
    r = client.get("/plain", headers=key())
    assert r.status_code == 200
    assert not any(h.startswith(("x-ratelimit", "ratelimit")) for h in r.headers)


@pytest.mark.parametrize("server", ["redis"], indirect=True)
def test_workers_share_counters_on_redis(server: tuple[httpx.Client, str, str]) -> None:
    client, kind, _ = server
    assert kind == "redis"
    headers = {**key(), "Connection": "close"}  # a new connection each time: any worker answers
    statuses = [client.get("/rl/ratelimit", headers=headers).status_code for _ in range(8)]
    assert statuses == [200] * 3 + [429] * 5
