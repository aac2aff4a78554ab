"""The generated acme client against httpx.MockTransport: the exact requests it sends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

PAYMENT = {
    "id": "pay_1",
    "amount": 5000,
    "currency": "usd",
    "customerId": "cus_1",
    "status": "succeeded",
    "amountRefunded": 0,
    "paymentMethod": {"type": "card", "token": "tok"},
    "createdAt": "2026-01-01T00:00:00Z",
}
CUSTOMER = {
    "id": "cus_1",
    "email": "a@example.com",
    "name": "Alice",
    "tags": [],
    "version": 1,
    "createdAt": "2026-01-01T00:00:00Z",
    "updatedAt": "2026-01-01T00:00:00Z",
}


class Recorder:
    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return self.responses.pop(0)


def make_client(acme: Any, recorder: Recorder, sleeps: list[float] | None = None, **kw: Any) -> Any:
    return acme.Client(
        bearer_auth="secret-token",
        transport=httpx.MockTransport(recorder),
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
        jitter=lambda: 0.0,
        **kw,
    )


def test_create_payment_retries_with_one_idempotency_key(acme: Any) -> None:
    rec = Recorder(
        httpx.Response(503, headers={"Retry-After": "2"}),
        httpx.Response(500),
        httpx.Response(201, json=PAYMENT, headers={"Idempotent-Replayed": "true", "ETag": '"v1"'}),
    )
    sleeps: list[float] = []
    with make_client(acme, rec, sleeps) as client:
        raw = client.payments.with_raw_response.create(
            body=acme.models.PaymentCreate(
                amount=5000,
                currency="usd",
                customer_id="cus_1",
                payment_method=acme.models.CardPaymentMethod(type="card", token="tok"),
            )
        )
    assert isinstance(raw.parsed, acme.models.Payment)
    assert raw.parsed.customer_id == "cus_1"
    assert (raw.status_code, raw.replayed, raw.etag, raw.retries_taken) == (201, True, '"v1"', 2)
    assert sleeps == [2.0, 1.0]  # Retry-After, then backoff 0.5 * 2 (no jitter)
    keys = {r.headers["Idempotency-Key"] for r in rec.requests}
    assert len(rec.requests) == 3 and len(keys) == 1 and raw.idempotency_key in keys
    assert [r.headers["X-Retry-Count"] for r in rec.requests] == ["0", "1", "2"]
    for r in rec.requests:
        assert r.method == "POST"
        assert r.url == "https://api.acme.example.com/v1/payments"
        assert r.headers["Authorization"] == "Bearer secret-token"
        assert r.headers["Content-Type"] == "application/json"
        assert json.loads(r.content) == {
            "amount": 5000,
            "currency": "usd",
            "customerId": "cus_1",
            "paymentMethod": {"type": "card", "token": "tok"},
        }
    assert len({r.content for r in rec.requests}) == 1


def test_callers_idempotency_key_and_plain_dict_body(acme: Any) -> None:
    rec = Recorder(httpx.Response(201, json=PAYMENT))
    with make_client(acme, rec) as client:
        payment = client.payments.create(
            body={"amount": 1, "currency": "eur", "customerId": "c", "paymentMethod": {}},
            idempotency_key="my-key",
            extra_headers={"X-Trace": "1"},
        )
    assert payment.id == "pay_1"
    request = rec.requests[0]
    assert request.headers["Idempotency-Key"] == "my-key"
    assert request.headers["X-Trace"] == "1"
    assert json.loads(request.content)["currency"] == "eur"


def test_query_path_and_not_retrying_unsafe_post(acme: Any) -> None:
    rec = Recorder(
        httpx.Response(200, json={"data": [PAYMENT], "nextCursor": None}),
        httpx.Response(200, json=PAYMENT),
    )
    with make_client(acme, rec, base_url="http://testserver/api") as client:
        page = client.payments.list(limit=5, status="succeeded")
        one = client.payments.get(payment_id="pay/../1 x")
    assert page.items[0].id == "pay_1" and page.body.data[0].id == "pay_1"
    assert one.amount == 5000 and not page.has_next_page()
    first, second = rec.requests
    assert first.url.path == "/api/v1/payments"
    assert dict(first.url.params) == {"limit": "5", "status": "succeeded"}
    assert "startingAfter" not in first.url.params
    assert second.url.raw_path == b"/api/v1/payments/pay%2F..%2F1%20x"


def test_etag_if_match_and_if_none_match(acme: Any) -> None:
    rec = Recorder(
        httpx.Response(200, json=CUSTOMER, headers={"ETag": '"v1"'}),
        httpx.Response(304, headers={"ETag": '"v1"'}),
        httpx.Response(412, json={"type": "about:blank", "title": "stale", "status": 412}),
        httpx.Response(200, json=CUSTOMER, headers={"ETag": '"v2"'}),
        httpx.Response(200, json={**CUSTOMER, "name": "Bob"}, headers={"ETag": '"v3"'}),
        httpx.Response(204),
    )
    with make_client(acme, rec) as client:
        raw = client.customers.with_raw_response.get(customer_id="cus_1")
        assert raw.etag == '"v1"' and raw.parsed.name == "Alice"
        assert client.customers.get(customer_id="cus_1", if_none_match=raw.etag) is None
        assert rec.requests[1].headers["If-None-Match"] == '"v1"'

        def read() -> tuple[Any, str | None]:
            got = client.customers.with_raw_response.get(customer_id="cus_1")
            return got.parsed, got.etag

        with pytest.raises(acme.PreconditionFailed):
            client.customers.update(customer_id="cus_1", if_match='"v1"', body={"x": 1})
        updated = acme.read_modify_write(
            read,
            lambda c: {"name": "Bob"},
            lambda change, etag: client.customers.update(
                customer_id="cus_1", body=change, if_match=etag
            ),
        )
        assert updated.name == "Bob"
        assert client.customers.delete(customer_id="cus_1", if_match='"v3"') is None
    assert rec.requests[2].headers["If-Match"] == '"v1"'
    assert rec.requests[4].headers["If-Match"] == '"v2"'
    assert rec.requests[4].method == "PATCH"
    assert rec.requests[5].method == "DELETE" and rec.requests[5].headers["If-Match"] == '"v3"'


def test_202_returns_a_job_handle(acme: Any) -> None:
    job = {"id": "job_1", "status": "running", "createdAt": "2026-01-01T00:00:00Z"}
    done = {**job, "status": "completed", "result": {"reportUrl": "https://r.example/1"}}
    rec = Recorder(
        httpx.Response(202, json=job, headers={"Location": "/v1/jobs/job_1", "Retry-After": "3"}),
        httpx.Response(200, json=done),
    )
    sleeps: list[float] = []
    with make_client(acme, rec, sleeps, clock=lambda: 1000.0) as client:
        handle = client.reports.create(
            body={"type": "sales", "startDate": "2026-01-01", "endDate": "2026-01-31"}
        )
        assert isinstance(handle, acme.JobHandle)
        result = handle.wait(timeout=60)
    assert isinstance(result, acme.models.ReportResult)
    assert str(result.report_url) == "https://r.example/1"
    assert sleeps == [3.0]
    assert rec.requests[1].url == "https://api.acme.example.com/v1/jobs/job_1"


def test_errors_are_typed(acme: Any) -> None:
    problem = {"type": "https://x/problems/not-found", "title": "nope", "status": 404}
    rec = Recorder(
        httpx.Response(404, json=problem, headers={"Content-Type": "application/problem+json"})
    )
    with make_client(acme, rec) as client, pytest.raises(acme.NotFound) as info:
        client.payments.get(payment_id="x")
    assert info.value.problem.title == "nope"


def test_api_key_auth(acme: Any) -> None:
    rec = Recorder(httpx.Response(200, json=PAYMENT))
    with acme.Client(api_key_auth="k1", transport=httpx.MockTransport(rec)) as client:
        client.payments.get(payment_id="p")
    assert rec.requests[0].headers["X-API-Key"] == "k1"
    assert "Authorization" not in rec.requests[0].headers
    assert rec.requests[0].headers["User-Agent"].startswith("acme_payments_api_client/")


def test_async_client(acme: Any) -> None:
    seen: list[httpx.Request] = []
    replies = [httpx.Response(429, headers={"Retry-After": "1"}), httpx.Response(201, json=PAYMENT)]

    async def handler(request: httpx.Request) -> httpx.Response:
        await request.aread()
        seen.append(request)
        return replies.pop(0)

    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def main() -> Any:
        async with acme.AsyncClient(
            bearer_auth="t", transport=httpx.MockTransport(handler), sleep=sleep
        ) as client:
            return await client.payments.create(
                body={"amount": 1, "currency": "usd", "customerId": "c", "paymentMethod": {}}
            )

    payment = asyncio.run(main())
    assert payment.id == "pay_1" and slept == [1.0]
    assert seen[0].headers["Idempotency-Key"] == seen[1].headers["Idempotency-Key"]


def test_webhook_verification_returns_typed_event(acme: Any) -> None:
    from importlib import import_module

    runtime = import_module(acme.__name__ + "._runtime")
    body = json.dumps(
        {
            "id": "evt_1",
            "type": "payment.succeeded",
            "createdAt": "2026-01-01T00:00:00Z",
            "data": PAYMENT,
        }
    ).encode()
    secret = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQ="
    headers = {
        "webhook-id": "msg_1",
        "webhook-timestamp": "1700000000",
        "webhook-signature": runtime.sign_standard_webhook("msg_1", 1700000000, body, secret),
    }
    event = acme.webhooks.verify_payment_succeeded(body, headers, secret, now=1700000010)
    assert isinstance(event, acme.models.PaymentEvent) and event.data.id == "pay_1"
    with pytest.raises(acme.WebhookVerificationError):
        acme.webhooks.verify_payment_succeeded(body + b" ", headers, secret, now=1700000010)
    assert acme.webhooks.EVENTS["payment.succeeded"] is acme.webhooks.verify_payment_succeeded
