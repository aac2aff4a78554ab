"""AsyncAPIClient: the same loop, awaited; checked against the real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from templates.client.runtime import (
    APIConnectionError,
    AsyncAPIClient,
    RateLimit,
    RequestOptions,
    ServerError,
)

from .fakes import PROBLEM_HEADERS, FakeClock, Reply, ScriptServer, problem


def make_client(url: str, clock: FakeClock, **kwargs: object) -> AsyncAPIClient:
    return AsyncAPIClient(url, sleep=clock.async_sleep, clock=clock, jitter=lambda: 0.0, **kwargs)  # type: ignore[arg-type]


def unavailable(**headers: str) -> Reply:
    return Reply(503, json=problem(503, "unavailable"), headers={**PROBLEM_HEADERS, **headers})


def test_async_retries_reuse_one_key_and_resend_a_buffered_stream(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "POST",
        "/v1/uploads",
        unavailable(),
        unavailable(**{"Retry-After": "2"}),
        Reply(201, json={"ok": True}),
    )

    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"a" * 10, b"b" * 5):
            yield part

    async def main() -> None:
        async with make_client(server.url, clock) as client:
            result = await client.request(
                RequestOptions(
                    "POST", "/v1/uploads", content=chunks(), idempotency_header="Idempotency-Key"
                )
            )
            assert result.retries_taken == 2 and result.json() == {"ok": True}

    asyncio.run(main())
    assert [r.body for r in server.requests] == [b"a" * 10 + b"b" * 5] * 3
    assert len({r.headers["idempotency-key"] for r in server.requests}) == 1
    assert [r.headers["x-retry-count"] for r in server.requests] == ["0", "1", "2"]
    assert clock.sleeps == [0.5, 2.0]


def test_async_post_without_key_is_not_retried(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/emails", unavailable())

    async def main() -> None:
        async with make_client(server.url, clock) as client:
            with pytest.raises(ServerError):
                await client.request(RequestOptions("POST", "/v1/emails", json={}))

    asyncio.run(main())
    assert len(server.requests) == 1 and clock.sleeps == []


def test_async_dropped_response_wraps_the_error(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/flaky", Reply(drop=True))

    async def main() -> None:
        async with make_client(server.url, clock, max_retries=1) as client:
            with pytest.raises(APIConnectionError):
                await client.request(RequestOptions("GET", "/flaky"))

    asyncio.run(main())
    assert len(server.requests) == 2 and clock.sleeps == [0.5]


def test_async_wait_on_rate_limit(server: ScriptServer, clock: FakeClock) -> None:
    server.on(
        "GET",
        "/v1/items",
        Reply(
            200,
            json=[],
            headers={
                "X-RateLimit-Limit": "5",
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": str(int(clock.now) + 11),
            },
        ),
    )

    async def main() -> None:
        async with make_client(server.url, clock, wait_on_rate_limit=True) as client:
            await client.request(RequestOptions("GET", "/v1/items"))
            assert client.last_rate_limit == RateLimit(5, 0, clock.now + 11)
            await client.request(RequestOptions("GET", "/v1/items"))

    asyncio.run(main())
    assert clock.sleeps == [11.0]


def test_async_injected_client_is_left_open(clock: FakeClock) -> None:
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, json={"path": request.url.path})
    )

    async def main() -> None:
        http_client = httpx.AsyncClient(transport=transport)
        async with AsyncAPIClient(
            "https://api.example.com/v2",
            http_client=http_client,
            sleep=clock.async_sleep,
            clock=clock,
        ) as client:
            result = await client.request(RequestOptions("GET", "/ping"))
            assert result.json() == {"path": "/v2/ping"}
        assert not http_client.is_closed
        await http_client.aclose()

        async with AsyncAPIClient("https://api.example.com", transport=transport) as own:
            inner = own._client
        assert inner.is_closed

    asyncio.run(main())
