"""SyncAPIClient against a real HTTP server on 127.0.0.1 (and MockTransport for wire details)."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from email.utils import formatdate

import httpx
import pydantic
import pytest

from templates.client.runtime import (
    RESERVED_ATTRIBUTES,
    RETRY_COUNT_HEADER,
    APIConnectionError,
    APITimeoutError,
    IdempotencyConflict,
    RateLimit,
    RateLimited,
    RequestOptions,
    Scheme,
    Security,
    ServerError,
    SyncAPIClient,
    UnexpectedStatus,
)
from tests.support import free_port

from .fakes import PROBLEM_HEADERS, FakeClock, Recorded, Reply, ScriptServer, problem


class Payment(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)
    id: str
    amount: int
    customer_id: str | None = pydantic.Field(default=None, alias="customerId")


def make_client(url: str, clock: FakeClock, **kwargs: object) -> SyncAPIClient:
    return SyncAPIClient(url, sleep=clock.sleep, clock=clock, jitter=lambda: 0.0, **kwargs)  # type: ignore[arg-type]


def unavailable(**headers: str) -> Reply:
    return Reply(503, json=problem(503, "unavailable"), headers={**PROBLEM_HEADERS, **headers})


def test_a_success_carries_the_pattern_headers_and_parses(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "GET",
        "/v1/payments/pay_1",
        Reply(
            200,
            json={"id": "pay_1", "amount": 5000, "customerId": "cus_1"},
            headers={
                "ETag": '"v42"',
                "X-RateLimit-Limit": "100",
                "X-RateLimit-Remaining": "99",
                "X-RateLimit-Reset": "60",
            },
        ),
    )
    with make_client(
        server.url + "/",
        clock,
        user_agent="acme-sdk/1.0",
        default_headers={"X-Tenant": "t1"},
        schemes=[
            Scheme("bearer", "bearer", argument="bearer"),
            Scheme("key", "apiKey", argument="key", location="query", parameter="api_key"),
        ],
        credentials={"bearer": "tok", "key": "k"},
    ) as client:
        result = client.request(
            RequestOptions(
                "GET",
                "/v1/payments/pay_1",
                params={"expand": ["customer", "card"], "limit": 5, "flag": True, "skip": None},
                security=Security(({"bearer": (), "key": ()},)),
            )
        )
    assert result.status_code == 200
    assert result.etag == '"v42"'
    assert result.replayed is False
    assert result.retries_taken == 0 and result.idempotency_key is None
    assert result.rate_limit == RateLimit(100, 99, clock.now + 60)
    assert client.last_rate_limit == result.rate_limit
    assert result.parse(Payment) == Payment(id="pay_1", amount=5000, customer_id="cus_1")
    assert result.parse(dict[str, object])["amount"] == 5000
    [sent] = server.requests
    assert sent.path == "/v1/payments/pay_1?api_key=k&expand=customer&expand=card&limit=5&flag=true"
    assert sent.headers["user-agent"] == "acme-sdk/1.0"
    assert sent.headers["authorization"] == "Bearer tok"
    assert sent.headers["x-tenant"] == "t1"
    assert sent.headers[RETRY_COUNT_HEADER.lower()] == "0"
    assert "idempotency-key" not in sent.headers
    assert clock.sleeps == []


def test_one_idempotency_key_for_every_retry_and_backoff_waits(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "POST",
        "/v1/payments",
        unavailable(),
        unavailable(),
        Reply(201, json={"id": "pay_1", "amount": 50}),
    )
    client = make_client(server.url, clock)
    result = client.request(
        RequestOptions(
            "POST", "/v1/payments", json={"amount": 50}, idempotency_header="Idempotency-Key"
        )
    )
    assert result.status_code == 201 and result.retries_taken == 2
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert len(keys) == 3 and len(set(keys)) == 1
    assert uuid.UUID(keys[0]).version == 4
    assert result.idempotency_key == keys[0]
    assert [r.headers["x-retry-count"] for r in server.requests] == ["0", "1", "2"]
    assert clock.sleeps == [0.5, 1.0]


def test_each_logical_call_gets_its_own_key(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/payments", Reply(201, json={}))
    client = make_client(server.url, clock)
    for _ in range(2):
        client.request(
            RequestOptions("POST", "/v1/payments", json={}, idempotency_header="Idempotency-Key")
        )
    assert len({r.headers["idempotency-key"] for r in server.requests}) == 2


def test_the_callers_key_wins(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/payments", unavailable(), Reply(201, json={}))
    client = make_client(server.url, clock)
    result = client.request(
        RequestOptions(
            "POST", "/v1/payments", json={}, idempotency_header="Idem-Key", idempotency_key="mine-1"
        )
    )
    assert [r.headers["idem-key"] for r in server.requests] == ["mine-1", "mine-1"]
    assert result.idempotency_key == "mine-1"


def test_a_callers_key_on_an_undeclared_operation_is_sent_and_makes_it_retryable(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/things", unavailable(), Reply(201, json={}))
    make_client(server.url, clock).request(
        RequestOptions("POST", "/v1/things", json={}, idempotency_key="k-9")
    )
    assert [r.headers["idempotency-key"] for r in server.requests] == ["k-9", "k-9"]


def test_a_callers_key_header_on_an_undeclared_operation_makes_it_retryable(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/things", unavailable(), Reply(201, json={}))
    result = make_client(server.url, clock).request(
        RequestOptions("POST", "/v1/things", json={}, headers={"idempotency-key": "k1"})
    )
    assert [r.headers["idempotency-key"] for r in server.requests] == ["k1", "k1"]
    assert result.idempotency_key == "k1" and result.retries_taken == 1


def test_post_without_key_is_never_retried(server: ScriptServer, clock: FakeClock) -> None:
    server.on("POST", "/v1/emails", unavailable())
    with pytest.raises(ServerError) as caught:
        make_client(server.url, clock).request(
            RequestOptions("POST", "/v1/emails", json={"to": "a@b"})
        )
    assert caught.value.status_code == 503 and caught.value.problem is not None
    assert len(server.requests) == 1 and clock.sleeps == []


def idempotent_store(effects: list[bytes]) -> object:
    """A server that commits the first request per key, drops its response once, and
    replays the stored response to any retry with the same key."""
    stored: dict[str, Reply] = {}
    dropped: set[str] = set()

    def handle(request: Recorded) -> Reply:
        key = request.headers.get("idempotency-key")
        if key is not None and key in stored:
            replay = stored[key]
            return Reply(replay.status, json=replay.json, headers={"Idempotent-Replayed": "true"})
        effects.append(request.body)
        reply = Reply(201, json={"id": f"pay_{len(effects)}", "amount": 50})
        if key is not None:
            stored[key] = reply
        if key not in dropped:
            dropped.add(key or "")
            return Reply(drop=True)  # committed, but the response is lost
        return reply

    return handle


def test_response_lost_after_commit_is_retried_once_and_replayed(
    server: ScriptServer, clock: FakeClock
) -> None:
    effects: list[bytes] = []
    server.on("POST", "/v1/payments", idempotent_store(effects))  # type: ignore[arg-type]
    result = make_client(server.url, clock).request(
        RequestOptions(
            "POST", "/v1/payments", json={"amount": 50}, idempotency_header="Idempotency-Key"
        )
    )
    assert len(effects) == 1  # charged exactly once
    assert len(server.requests) == 2
    assert result.replayed is True and result.parse(Payment).id == "pay_1"
    assert clock.sleeps == [0.5]


def test_response_lost_without_key_is_not_resent(server: ScriptServer, clock: FakeClock) -> None:
    effects: list[bytes] = []
    server.on("POST", "/v1/payments", idempotent_store(effects))  # type: ignore[arg-type]
    with pytest.raises(APIConnectionError) as caught:
        make_client(server.url, clock).request(
            RequestOptions("POST", "/v1/payments", json={"amount": 50})
        )
    assert not isinstance(caught.value, APITimeoutError)
    assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)
    assert len(effects) == 1 and len(server.requests) == 1 and clock.sleeps == []


def test_429_retry_after_is_waited_exactly(server: ScriptServer, clock: FakeClock) -> None:
    server.on(
        "GET",
        "/v1/items",
        Reply(
            429, json=problem(429, "rate-limited"), headers={**PROBLEM_HEADERS, "Retry-After": "3"}
        ),
        Reply(
            429,
            json=problem(429, "rate-limited"),
            headers={**PROBLEM_HEADERS, "Retry-After": formatdate(clock.now + 3 + 20, usegmt=True)},
        ),
        Reply(200, json=[]),
    )
    result = make_client(server.url, clock).request(RequestOptions("GET", "/v1/items"))
    assert result.status_code == 200
    assert clock.sleeps == [3.0, 20.0]


def test_retry_after_ms_wins(server: ScriptServer, clock: FakeClock) -> None:
    server.on(
        "GET",
        "/v1/items",
        unavailable(**{"retry-after-ms": "250", "Retry-After": "9"}),
        Reply(200, json=[]),
    )
    make_client(server.url, clock).request(RequestOptions("GET", "/v1/items"))
    assert clock.sleeps == [0.25]


def test_server_delay_above_the_cap_raises_instead_of_sleeping(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "GET",
        "/v1/items",
        Reply(
            429,
            json=problem(429, "rate-limited"),
            headers={**PROBLEM_HEADERS, "Retry-After": "3600"},
        ),
    )
    with pytest.raises(RateLimited) as caught:
        make_client(server.url, clock).request(RequestOptions("GET", "/v1/items"))
    assert caught.value.retry_after == 3600.0
    assert len(server.requests) == 1 and clock.sleeps == []
    # a raised cap lets the same wait through
    server.requests.clear()
    server.on("GET", "/v1/items", Reply(429, headers={"Retry-After": "3600"}), Reply(200, json=[]))
    make_client(server.url, clock, max_retry_delay=7200).request(RequestOptions("GET", "/v1/items"))
    assert clock.sleeps == [3600.0]


def test_x_should_retry(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/a", unavailable(**{"x-should-retry": "false"}))
    server.on(
        "GET",
        "/b",
        Reply(400, json=problem(400, "bad"), headers={"x-should-retry": "true"}),
        Reply(200, json={}),
    )
    client = make_client(server.url, clock)
    with pytest.raises(ServerError):
        client.request(RequestOptions("GET", "/a"))
    assert client.request(RequestOptions("GET", "/b")).retries_taken == 1
    assert len(server.received(path="/a")) == 1 and len(server.received(path="/b")) == 2


def test_retries_are_bounded_by_client_and_call(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/down", unavailable())
    client = make_client(server.url, clock, max_retries=3)
    with pytest.raises(ServerError):
        client.request(RequestOptions("GET", "/down"))
    assert len(server.requests) == 4 and clock.sleeps == [0.5, 1.0, 2.0]
    with pytest.raises(ServerError):
        client.request(RequestOptions("GET", "/down", max_retries=0))
    assert len(server.requests) == 5


def test_409_in_progress_is_retried_and_422_conflict_is_not(
    server: ScriptServer, clock: FakeClock
) -> None:
    in_progress = Reply(
        409,
        json=problem(409, "idempotency-in-progress"),
        headers={**PROBLEM_HEADERS, "Retry-After": "1"},
    )
    server.on("POST", "/v1/payments", in_progress, Reply(201, json={}))
    server.on(
        "POST",
        "/v1/refunds",
        Reply(422, json=problem(422, "idempotency-conflict"), headers=PROBLEM_HEADERS),
    )
    client = make_client(server.url, clock)
    client.request(
        RequestOptions("POST", "/v1/payments", json={}, idempotency_header="Idempotency-Key")
    )
    assert clock.sleeps == [1.0]
    with pytest.raises(IdempotencyConflict):
        client.request(
            RequestOptions("POST", "/v1/refunds", json={}, idempotency_header="Idempotency-Key")
        )
    assert len(server.received(path="/v1/refunds")) == 1


def test_timeouts_are_wrapped_and_retried(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/slow", Reply(200, json={}, delay=0.6))
    client = make_client(server.url, clock, timeout=0.15, max_retries=1)
    with pytest.raises(APITimeoutError) as caught:
        client.request(RequestOptions("GET", "/slow"))
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    assert caught.value.request is not None and caught.value.request.url.path == "/slow"
    assert len(server.requests) == 2 and clock.sleeps == [0.5]
    # a per-call timeout overrides the client's
    server.on("GET", "/slowish", Reply(200, json={}, delay=0.3))
    assert client.request(RequestOptions("GET", "/slowish", timeout=5.0)).status_code == 200


def test_refused_connection_is_retried_even_for_post(clock: FakeClock) -> None:
    # Nothing listens: the request never left, so sending it again cannot double an effect.
    client = make_client(f"http://127.0.0.1:{free_port()}", clock)
    with pytest.raises(APIConnectionError) as caught:
        client.request(RequestOptions("POST", "/v1/emails", json={}))
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert clock.sleeps == [0.5, 1.0]


def test_304_is_returned_only_for_if_none_match(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/v1/users/1", Reply(304, headers={"ETag": '"v1"'}))
    client = make_client(server.url, clock)
    cached = client.request(RequestOptions("GET", "/v1/users/1", headers={"If-None-Match": '"v1"'}))
    assert cached.not_modified and cached.etag == '"v1"' and cached.json() is None
    with pytest.raises(UnexpectedStatus):
        client.request(RequestOptions("GET", "/v1/users/1"))


def test_bodies_are_sent_intact_on_every_attempt(server: ScriptServer, clock: FakeClock) -> None:
    for path in ("/stream", "/file", "/multipart", "/model"):
        server.on("PUT", path, unavailable(), Reply(200, json={}))
    client = make_client(server.url, clock)

    def chunks() -> Iterator[bytes]:
        yield b"part-1;"
        yield b"part-2"

    client.request(
        RequestOptions(
            "PUT", "/stream", content=chunks(), headers={"Content-Type": "application/octet-stream"}
        )
    )
    client.request(RequestOptions("PUT", "/file", content=io.BytesIO(b"\x00\x01file-bytes")))
    client.request(
        RequestOptions(
            "PUT",
            "/multipart",
            files={"upload": ("a.bin", io.BytesIO(b"PAYLOAD-123"), "application/octet-stream")},
            data={"note": "hi"},
        )
    )
    client.request(
        RequestOptions(
            "PUT", "/model", json={"items": [Payment(id="p", amount=1, customerId="c")], "n": None}
        )
    )

    bodies = {
        p: [r.body for r in server.received(path=p)]
        for p in ("/stream", "/file", "/multipart", "/model")
    }
    assert bodies["/stream"] == [b"part-1;part-2"] * 2
    assert bodies["/file"] == [b"\x00\x01file-bytes"] * 2
    assert all(b"PAYLOAD-123" in body and b'name="note"' in body for body in bodies["/multipart"])
    assert len(bodies["/multipart"]) == 2
    # JSON is serialised once: by alias, unset fields left out, byte-identical on retry
    assert bodies["/model"][0] == bodies["/model"][1]
    assert json.loads(bodies["/model"][0]) == {
        "items": [{"id": "p", "amount": 1, "customerId": "c"}],
        "n": None,
    }
    assert server.received(path="/model")[0].headers["content-type"] == "application/json"


def test_wait_on_rate_limit_holds_the_next_call_until_reset(
    server: ScriptServer, clock: FakeClock
) -> None:
    exhausted = {"RateLimit": '"p";r=0;t=7', "RateLimit-Policy": '"p";q=10;w=60'}
    server.on(
        "GET",
        "/v1/items",
        Reply(200, json=[], headers=exhausted),
        Reply(200, json=[], headers={"RateLimit": '"p";r=9;t=60'}),
    )
    polite = make_client(server.url, clock, wait_on_rate_limit=True)
    polite.request(RequestOptions("GET", "/v1/items"))
    assert polite.last_rate_limit == RateLimit(10, 0, clock.now + 7)
    assert clock.sleeps == []
    polite.request(RequestOptions("GET", "/v1/items"))
    assert clock.sleeps == [7.0]
    polite.request(RequestOptions("GET", "/v1/items"))  # remaining is 9 again: no wait
    assert clock.sleeps == [7.0]

    server.on("GET", "/v1/items", Reply(200, json=[], headers=exhausted))
    default = make_client(server.url, clock)
    default.request(RequestOptions("GET", "/v1/items"))
    default.request(RequestOptions("GET", "/v1/items"))
    assert clock.sleeps == [7.0]  # off by default


def test_wire_level_request_through_an_injected_client(clock: FakeClock) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    http_client = httpx.Client(transport=httpx.MockTransport(handler))
    client = SyncAPIClient(
        "https://api.example.com/base/",
        http_client=http_client,
        schemes=[
            Scheme("key", "apiKey", argument="key", location="header", parameter="X-API-Key"),
            Scheme("sig", "apiKey", argument="sig", location="query", parameter="sig"),
        ],
        credentials={"key": "s3cret", "sig": "q"},
        sleep=clock.sleep,
        clock=clock,
    )
    both = Security(({"key": (), "sig": ()},))
    with client:
        result = client.request(
            RequestOptions(
                "DELETE",
                "users/u%2F1",
                headers={"If-Match": '"v3"', "X-Opt": None},
                security=both,
            )
        )
        absolute = client.request(
            RequestOptions("GET", "https://other.example.com/jobs/1?x=1", security=both)
        )
        same_host = client.request(
            RequestOptions("GET", "https://api.example.com/jobs/2", security=both)
        )
    assert result.status_code == 204 and result.parse(type(None)) is None
    assert str(seen[0].url) == "https://api.example.com/base/users/u%2F1?sig=q"
    assert seen[0].headers["if-match"] == '"v3"'
    assert "x-opt" not in seen[0].headers
    assert seen[0].headers["x-api-key"] == "s3cret"
    assert seen[0].headers["x-retry-count"] == "0"
    assert str(seen[1].url) == "https://other.example.com/jobs/1?x=1"
    assert "x-api-key" not in seen[1].headers  # credentials stay with the API's origin
    assert absolute.status_code == 204
    assert same_host.status_code == 204 and seen[2].headers["x-api-key"] == "s3cret"
    assert str(seen[2].url) == "https://api.example.com/jobs/2?sig=q"
    assert not http_client.is_closed  # not ours to close
    http_client.close()


def test_close_closes_only_what_it_created() -> None:
    with SyncAPIClient("http://127.0.0.1:1") as client:
        inner = client._client
    assert inner.is_closed
    with pytest.raises(ValueError, match="not both"):
        SyncAPIClient(
            "http://x",
            http_client=httpx.Client(),
            transport=httpx.MockTransport(lambda r: httpx.Response(200)),
        )


def test_reserved_attribute_names_cover_the_public_surface() -> None:
    assert {
        "request",
        "close",
        "aclose",
        "last_rate_limit",
        "base_url",
        "max_retries",
        "timeout",
    } <= RESERVED_ATTRIBUTES


def test_extra_query_and_extra_body_are_sent_beside_the_declared(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/payments", Reply(201, json={}))
    server.on("POST", "/v1/forms", Reply(201, json={}))
    client = make_client(server.url, clock)
    client.request(
        RequestOptions(
            "POST",
            "/v1/payments",
            params={"a": 1},
            json=Payment(id="p", amount=1),
            extra_query={"beta": "on"},
            extra_body={"amount": 2, "note": "n"},
        )
    )
    client.request(RequestOptions("POST", "/v1/forms", data={"q": "x"}, extra_body={"flag": True}))
    first, second = server.requests
    assert first.path == "/v1/payments?a=1&beta=on"
    assert json.loads(first.body) == {"id": "p", "amount": 2, "note": "n"}
    assert second.body == b"q=x&flag=true"


def test_a_callers_key_goes_in_the_header_the_spec_names(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on("POST", "/v1/things", unavailable(), Reply(201, json={}))
    make_client(server.url, clock).request(
        RequestOptions("POST", "/v1/things", json={}, idempotency_key="k2", key_header="X-Req-Key")
    )
    assert [r.headers.get("x-req-key") for r in server.requests] == ["k2", "k2"]
    assert "idempotency-key" not in server.requests[0].headers
