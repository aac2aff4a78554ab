"""The generated client against the generated server (uvicorn, 127.0.0.1), one test per
production pattern: idempotent creates, 429 + Retry-After, a list across its pages, ETag / 304 /
412 and the read-modify-write helper, 202 jobs, typed problem errors, signed webhooks."""

from __future__ import annotations

import asyncio
import json
import uuid
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.conftest import THROTTLED_TOKEN, WEBHOOK_SECRET, MakeClient, Server
from tests.e2e.harness import Receiver, Waits, Wire, payment_body

PROBLEMS = "https://api.acme.example.com/problems/"
REPORT = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}


def test_idempotent_create_is_replayed_for_a_retried_call(
    acme: ModuleType, server: Server, make_client: MakeClient
) -> None:
    wire, waits = Wire(), Waits()
    client = make_client(wire, waits)
    key = str(uuid.uuid4())
    body = acme.models.PaymentCreate.model_validate(payment_body(amount=4200))
    first = client.payments.with_raw_response.create(body=body, idempotency_key=key)
    assert (first.status_code, first.replayed, first.retries_taken) == (201, False, 0)
    assert isinstance(first.parsed, acme.models.Payment)
    assert first.parsed.amount == 4200
    assert first.headers["location"] == f"/v1/payments/{first.parsed.id}"

    # the caller retries the logical call with the same key: the stored response, not a rerun
    again = client.payments.with_raw_response.create(body=body, idempotency_key=key)
    assert (again.status_code, again.replayed) == (201, True)
    assert again.parsed == first.parsed
    assert again.response.http_response.content == first.response.http_response.content
    assert server.ledger.executions([key]) == {key: 1}

    # the same key with another body is a client bug: a typed 422, not retried, no effect
    with pytest.raises(acme.IdempotencyConflict) as conflict:
        client.payments.create(body=payment_body(amount=1), idempotency_key=key)
    assert conflict.value.status_code == 422
    assert conflict.value.problem.type == PROBLEMS + "idempotency-conflict"
    assert server.ledger.executions([key]) == {key: 1}

    # without a caller's key the client makes one (a UUID) and sends it
    generated = client.payments.with_raw_response.create(body=body)
    assert uuid.UUID(generated.idempotency_key)
    assert server.ledger.executions([generated.idempotency_key]) == {generated.idempotency_key: 1}
    sent = [e.idempotency_key for e in wire.exchanges]
    assert sent == [key, key, key, generated.idempotency_key]
    assert waits.slept == []


def test_429_is_honoured_waiting_exactly_retry_after(
    acme: ModuleType, make_client: MakeClient
) -> None:
    # tier "tiny" allows 2 requests per second; the server measures the wait, so sleep for real
    wire, waits = Wire(), Waits(real=True)
    client = make_client(wire, waits, bearer_auth=THROTTLED_TOKEN)

    limited = None
    for _ in range(10):  # exhaust the quota: a typed error carrying Retry-After
        try:
            client.payments.list(max_retries=0)
        except acme.RateLimited as exc:
            limited = exc
            break
    assert limited is not None, wire.statuses()
    assert limited.status_code == 429
    assert limited.retry_after == float(limited.headers["retry-after"]) >= 1
    assert limited.problem.type == PROBLEMS + "rate-limited"
    assert waits.slept == []

    honoured = None
    for _ in range(5):  # the same call with retries: waits what the server said, then succeeds
        start = len(wire.exchanges)
        raw = client.payments.with_raw_response.list(max_retries=3)
        if raw.retries_taken:
            honoured = wire.exchanges[start:]
            break
    assert honoured is not None, wire.statuses()
    assert [e.status for e in honoured] == [429] * raw.retries_taken + [200]
    asked = [float(e.headers["retry-after"]) for e in honoured if e.status == 429]
    assert waits.slept[-len(asked) :] == asked
    assert raw.rate_limit is not None and raw.rate_limit.limit == 2
    assert isinstance(raw.parsed.body, acme.models.PaymentList)


def test_a_list_is_iterated_across_its_pages_sync_and_async(
    acme: ModuleType, server: Server, make_client: MakeClient
) -> None:
    customer = "cus_" + uuid.uuid4().hex[:26].upper()
    client = make_client(Wire(), Waits())
    made = {client.payments.create(body=payment_body(customer=customer)).id for _ in range(7)}
    page = client.payments.list(customer_id=customer, limit=3)
    assert isinstance(page, acme.SyncPage) and len(page.items) == 3 and page.has_next_page()
    assert [len(p.items) for p in page.iter_pages()] == [3, 3, 1]
    assert {p.id for p in page} == made  # every item of every page, each fetched once more

    async def main() -> tuple[set[str], int]:
        async with acme.AsyncClient(base_url=server.url, bearer_auth="e2e-async") as aclient:
            seen = {p.id async for p in aclient.payments.list(customer_id=customer, limit=3)}
            first = await aclient.payments.list(customer_id=customer, limit=3)
            return seen, len(first.items)

    seen, first_size = asyncio.run(main())
    assert seen == made and first_size == 3


def test_etag_get_304_update_412_and_read_modify_write(
    acme: ModuleType, make_client: MakeClient
) -> None:
    wire, waits = Wire(), Waits()
    client = make_client(wire, waits)
    created = client.customers.with_raw_response.create(
        body={"email": "alice@example.com", "name": "Alice Martin"}
    )
    cid, v1 = created.parsed.id, created.etag
    assert v1 == '"v1"' and created.parsed.version == 1

    read = client.customers.with_raw_response.get(customer_id=cid)
    assert (read.etag, read.parsed.name) == ('"v1"', "Alice Martin")
    assert client.customers.get(customer_id=cid, if_none_match=v1) is None
    assert wire.exchanges[-1].status == 304

    updated = client.customers.with_raw_response.update(
        customer_id=cid, body={"name": "Alice M."}, if_match=v1
    )
    assert (updated.etag, updated.parsed.name, updated.parsed.version) == ('"v2"', "Alice M.", 2)
    assert client.customers.with_raw_response.get(customer_id=cid, if_none_match=v1).etag == '"v2"'

    before = len(wire.exchanges)
    with pytest.raises(acme.PreconditionFailed) as stale:
        client.customers.update(customer_id=cid, body={"name": "Lost"}, if_match=v1)
    assert stale.value.problem.type == PROBLEMS + "precondition-failed"
    assert len(wire.exchanges) == before + 1  # a 412 is not retried: it needs a fresh read

    # read-modify-write from a stale copy: the 412 makes it read again and write once more
    cached = [(read.parsed, v1)]

    def fetch() -> tuple[Any, str | None]:
        if cached:
            return cached.pop()
        fresh = client.customers.with_raw_response.get(customer_id=cid)
        return fresh.parsed, fresh.etag

    before = len(wire.exchanges)
    result = acme.read_modify_write(
        fetch,
        lambda customer: {"tags": [*customer.tags, "vip"]},
        lambda change, etag: client.customers.with_raw_response.update(
            customer_id=cid, body=change, if_match=etag
        ),
    )
    steps = [(e.method, e.status) for e in wire.exchanges[before:]]
    assert steps == [("PATCH", 412), ("GET", 200), ("PATCH", 200)]
    assert (result.etag, result.parsed.tags, result.parsed.name) == ('"v3"', ["vip"], "Alice M.")

    assert client.customers.delete(customer_id=cid, if_match=result.etag) is None
    with pytest.raises(acme.NotFound):
        client.customers.get(customer_id=cid)


def test_202_job_is_awaited_to_its_typed_result_or_typed_failure(
    acme: ModuleType, make_client: MakeClient
) -> None:
    wire, waits = Wire(), Waits(real=True)
    client = make_client(wire, waits)
    handle = client.reports.create(body=REPORT)
    assert isinstance(handle, acme.JobHandle)
    assert handle.status == "queued" and handle.id is not None
    assert handle.location.endswith(f"/v1/jobs/{handle.id}")
    result = handle.wait(timeout=30)
    assert isinstance(result, acme.models.ReportResult)
    assert str(result.report_url) == "https://cdn.example.com/sales.csv"
    assert handle.status == "completed"
    assert waits.slept and set(waits.slept) == {1.0}  # Retry-After of the 202 and each poll

    failing = client.reports.create(body={**REPORT, "type": "refunds"})
    with pytest.raises(acme.JobFailed) as failed:
        failing.wait(timeout=30)
    problem = failed.value.problem
    assert (problem.status, problem.type) == (422, PROBLEMS + "report-too-large")
    assert problem.detail == "Narrow the date range."
    assert failing.status == "failed"


def test_async_client_awaits_a_job(acme: ModuleType, server: Server) -> None:
    waits = Waits(real=True)

    async def main() -> Any:
        async with acme.AsyncClient(
            base_url=server.url, bearer_auth="e2e-async", sleep=waits.asleep, clock=waits.clock
        ) as client:
            handle = await client.reports.create(body={**REPORT, "type": "payments"})
            assert isinstance(handle, acme.AsyncJobHandle)
            return await handle.wait(timeout=30)

    result = asyncio.run(main())
    assert str(result.report_url) == "https://cdn.example.com/payments.csv"


def test_problem_details_become_typed_errors(acme: ModuleType, make_client: MakeClient) -> None:
    wire, waits = Wire(), Waits()
    client = make_client(wire, waits)
    with pytest.raises(acme.NotFound) as missing:
        client.payments.get(payment_id="pay_" + "0" * 26)
    problem = missing.value.problem
    assert (problem.status, problem.type) == (404, PROBLEMS + "not-found")
    assert problem.detail == f"No payment pay_{'0' * 26}."
    assert problem.instance == f"/v1/payments/pay_{'0' * 26}"

    with pytest.raises(acme.UnprocessableEntity) as invalid:
        client.customers.create(body={"email": 42})
    assert not isinstance(invalid.value, acme.IdempotencyConflict)
    problem = invalid.value.problem
    assert (problem.status, problem.type) == (422, PROBLEMS + "validation-error")
    locations = sorted(tuple(e["location"]) for e in problem.get("errors"))
    assert locations == [("body", "email"), ("body", "name")]

    # listPayments declares 400 and not 422: its validation errors answer 400
    with pytest.raises(acme.BadRequest) as query:
        client.payments.list(limit=1000)
    assert query.value.problem.get("errors")[0]["location"] == ["query", "limit"]
    # none of these is worth a retry
    assert wire.statuses() == [404, 422, 400] and waits.slept == []


def test_a_delivered_webhook_verifies_to_its_typed_event(
    acme: ModuleType, make_client: MakeClient, receiver: Receiver
) -> None:
    client = make_client(Wire(), Waits())
    payment = client.payments.create(body=payment_body(amount=777))

    def is_ours(body: bytes) -> bool:
        event = json.loads(body)
        return bool(event["type"] == "payment.succeeded" and event["data"]["id"] == payment.id)

    headers, body = receiver.wait_for(is_ours)
    event = acme.webhooks.verify_payment_succeeded(body, headers, WEBHOOK_SECRET)
    assert isinstance(event, acme.models.PaymentEvent)
    assert (event.data.id, event.data.amount) == (payment.id, 777)
    assert headers["webhook-id"] == event.id

    now = float(headers["webhook-timestamp"])
    for bad_body, bad_headers, secret, at in [
        (body.replace(b"777", b"778"), headers, WEBHOOK_SECRET, now),  # tampered body
        (body, headers, "whsec_" + "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==", now),  # wrong secret
        (body, headers, WEBHOOK_SECRET, now + 301),  # too old
        (body, headers, WEBHOOK_SECRET, now - 301),  # from the future
        (body, {**headers, "webhook-id": "msg_other"}, WEBHOOK_SECRET, now),  # another id
    ]:
        with pytest.raises(acme.WebhookVerificationError):
            acme.webhooks.verify_payment_succeeded(bad_body, bad_headers, secret, now=at)
    # several secrets (a rotation): any one that matches verifies
    rotated = ["whsec_" + "bmV3LXNlY3JldC1uZXctc2VjcmV0", WEBHOOK_SECRET]
    assert acme.webhooks.verify_payment_succeeded(body, headers, rotated).id == event.id


def test_a_job_callback_verifies_to_its_typed_event(
    acme: ModuleType, make_client: MakeClient, receiver: Receiver
) -> None:
    client = make_client(Wire(), Waits(real=True))
    handle = client.reports.create(body={**REPORT, "callbackUrl": receiver.url})
    handle.wait(timeout=30)
    headers, body = receiver.wait_for(lambda b: json.loads(b)["data"].get("id") == handle.id)
    event = acme.webhooks.verify_job_finished(body, headers, WEBHOOK_SECRET)
    assert isinstance(event, acme.models.JobEvent)
    assert (event.type.value, event.data.id, event.data.status.value) == (
        "job.finished",
        handle.id,
        "completed",
    )
    assert str(event.data.result.report_url) == "https://cdn.example.com/sales.csv"
