"""The generated acme server under uvicorn: problem details, rate limits, ETags, idempotency
and 202 jobs, checked by status code, headers and body (handlers: acme_handlers.py)."""

from __future__ import annotations

import uuid

import httpx

from tests.server.conftest import TINY_KEY, Receiver, authed, poll, problem

CUSTOMER = {"email": "alice@example.com", "name": "Alice Martin"}
PAYMENT = {
    "amount": 5000,
    "currency": "usd",
    "customerId": "cus_01HTZ3A7B8C9D0E1F2G3H4J5K6",
    "paymentMethod": {"type": "card", "token": "tok_visa_4242"},
}
RL_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


def key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def own_bucket() -> dict[str, str]:
    """A credential of its own, so a test's rate-limit counts start from zero."""
    return {"Authorization": f"Bearer {uuid.uuid4().hex}"}


# --- problem details ------------------------------------------------------------------------


def test_validation_error_is_a_422_problem_with_field_errors(acme_url: str) -> None:
    r = authed.post(
        acme_url + "/v1/customers", json={"email": 42}, headers={**key(), **own_bucket()}
    )
    body = problem(r, 422, "validation-error")
    assert body["title"] == "Validation failed"
    assert body["detail"] == "The request has 2 invalid fields."
    by_location = {tuple(e["location"]): e for e in body["errors"]}
    assert set(by_location) == {("body", "email"), ("body", "name")}
    assert by_location[("body", "name")]["type"] == "missing"
    assert set(by_location[("body", "email")]) == {"location", "message", "type"}
    # the operation's rate-limit headers are on errors too
    assert r.headers["x-ratelimit-limit"] == "10000"
    assert r.headers["x-ratelimit-remaining"] == "9999"


def test_query_parameters_are_typed_and_constrained(acme_url: str) -> None:
    # listPayments declares 400 (and not 422): its request errors answer 400
    r = authed.get(acme_url + "/v1/payments", params={"limit": "1000"})
    body = problem(r, 400, "validation-error")
    assert body["errors"] == [
        {
            "location": ["query", "limit"],
            "message": "Input should be less than or equal to 100",
            "type": "less_than_equal",
        }
    ]
    r = authed.get(acme_url + "/v1/payments", params={"status": "lost"})
    assert problem(r, 400, "validation-error")["errors"][0]["location"] == ["query", "status"]


def test_unknown_path_is_a_404_problem(acme_url: str) -> None:
    r = authed.get(acme_url + "/v1/nothing/here?secret=1")
    body = problem(r, 404, "not-found")
    assert body["detail"] == "No resource at /v1/nothing/here."


def test_wrong_method_is_a_405_problem_with_allow(acme_url: str) -> None:
    r = authed.put(acme_url + "/v1/customers", json=CUSTOMER)
    body = problem(r, 405, "method-not-allowed")
    assert set(r.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    assert body["detail"].startswith("PUT is not allowed on /v1/customers.")


def test_oversized_body_is_a_413_problem(acme_url: str) -> None:
    big = {**CUSTOMER, "name": "x" * 5000}
    r = authed.post(acme_url + "/v1/customers", json=big, headers=key())
    body = problem(r, 413, "content-too-large")
    assert body["detail"] == "The request body exceeds the limit of 4096 bytes."
    # streamed without Content-Length: counted as it arrives
    chunks = iter([b'{"name": "', b"x" * 5000, b'"}'])
    r = authed.post(
        acme_url + "/v1/customers",
        content=chunks,
        headers={**key(), "Content-Type": "application/json"},
    )
    problem(r, 413, "content-too-large")


def test_wrong_content_type_is_a_415_problem(acme_url: str) -> None:
    r = authed.post(
        acme_url + "/v1/customers",
        content=b"email=a@b.c",
        headers={**key(), "Content-Type": "application/x-www-form-urlencoded"},
    )
    body = problem(r, 415, "unsupported-media-type")
    assert "application/json" in body["detail"]


def test_unimplemented_operation_is_a_501_problem(acme_url: str) -> None:
    r = authed.get(acme_url + "/v1/refunds")
    body = problem(r, 501, "not-implemented")
    assert body["detail"] == (
        "Operation 'listRefunds' (GET /v1/refunds) has no handler implementation yet."
    )
    assert "x-ratelimit-limit" in r.headers


def test_handler_crash_is_a_500_problem_that_leaks_nothing(acme_url: str) -> None:
    r = authed.get(acme_url + "/v1/payments/pay_01HTZ4K5M8N9P0Q1R2S3T4V5W6")
    body = problem(r, 500, "internal-error")
    assert body == {
        "type": "https://api.acme.example.com/problems/internal-error",
        "title": "Internal server error",
        "status": 500,
        "detail": "The server failed to handle the request.",
        "instance": "/v1/payments/pay_01HTZ4K5M8N9P0Q1R2S3T4V5W6",
        "requestId": r.headers["x-request-id"],  # ties it to the server's log lines
    }
    assert "hunter2" not in r.text and "Traceback" not in r.text


# --- rate limits ----------------------------------------------------------------------------


def test_rate_limit_headers_and_429_with_integer_retry_after(acme_url: str) -> None:
    tiny = {"X-API-Key": TINY_KEY}
    remaining = []
    for _ in range(3):
        r = httpx.get(acme_url + "/v1/payments", headers=tiny)
        assert r.status_code == 200, r.text
        assert r.headers["x-ratelimit-limit"] == "3"
        assert int(r.headers["x-ratelimit-reset"]) > 1_700_000_000
        remaining.append(r.headers["x-ratelimit-remaining"])
    assert remaining == ["2", "1", "0"]
    r = httpx.get(acme_url + "/v1/payments", headers=tiny)
    body = problem(r, 429, "rate-limited")
    assert body["detail"].startswith("Rate limit of 3 per 1 minute exceeded.")
    assert r.headers["retry-after"].isdigit() and 1 <= int(r.headers["retry-after"]) <= 60
    assert r.headers["x-ratelimit-remaining"] == "0"
    # the quota is per principal: another caller is unaffected
    assert authed.get(acme_url + "/v1/payments", headers=own_bucket()).status_code == 200


# --- optimistic concurrency -----------------------------------------------------------------


def test_etag_304_412_428(acme_url: str) -> None:
    r = authed.post(acme_url + "/v1/customers", json=CUSTOMER, headers=key())
    assert r.status_code == 201, r.text
    assert r.headers["etag"] == '"v1"'
    url = f"{acme_url}/v1/customers/{r.json()['id']}"

    r = authed.get(url)
    assert (r.status_code, r.headers["etag"]) == (200, '"v1"')
    assert r.json()["email"] == "alice@example.com"
    assert all(h in r.headers for h in RL_HEADERS)

    r = authed.get(url, headers={"If-None-Match": '"v1"'})
    assert r.status_code == 304
    assert r.content == b""
    assert r.headers["etag"] == '"v1"'
    assert all(h in r.headers for h in RL_HEADERS)
    assert authed.get(url, headers={"If-None-Match": '"v0"'}).status_code == 200

    change = {"name": "Alice B. Martin"}
    r = authed.patch(url, json=change, headers=key())
    problem(r, 428, "precondition-required")
    # an empty or malformed If-Match gets the operation's own vocabulary (it declares 428,
    # not 400), and only once the body is known to be valid (RFC 9110 §13.2.1)
    for odd in ("", "v1", '"v1", garbage'):
        r = authed.patch(url, json=change, headers={**key(), "If-Match": odd})
        problem(r, 428, "precondition-required")
    r = authed.patch(url, json={"name": ""}, headers={**key(), "If-Match": ""})
    problem(r, 422, "validation-error")
    r = authed.patch(url, json=change, headers={**key(), "If-Match": '"v7"'})
    problem(r, 412, "precondition-failed")
    r = authed.patch(url, json=change, headers={**key(), "If-Match": '"v1"'})
    assert (r.status_code, r.headers["etag"]) == (200, '"v2"')
    assert r.json()["name"] == "Alice B. Martin"
    r = authed.patch(url, json={"name": "Late"}, headers={**key(), "If-Match": '"v1"'})
    problem(r, 412, "precondition-failed")

    problem(authed.delete(url), 428, "precondition-required")
    problem(authed.delete(url, headers={"If-Match": '"v1"'}), 412, "precondition-failed")
    r = authed.delete(url, headers={"If-Match": '"v2"'})
    assert (r.status_code, r.content) == (204, b"")
    problem(authed.get(url), 404, "not-found")


# --- idempotency ------------------------------------------------------------------------------


def test_idempotent_replay_is_byte_for_byte(acme_url: str, receiver: Receiver) -> None:
    headers = {**key(), **own_bucket()}
    first = authed.post(acme_url + "/v1/payments", json=PAYMENT, headers=headers)
    assert first.status_code == 201, first.text
    assert "idempotent-replayed" not in first.headers
    assert first.headers["location"] == f"/v1/payments/{first.json()['id']}"
    again = authed.post(acme_url + "/v1/payments", json=PAYMENT, headers=headers)
    assert again.status_code == 201
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    for name in ("location", "content-type", "content-length"):
        assert again.headers[name] == first.headers[name]
    # the handler ran once: one payment stored
    listed = authed.get(acme_url + "/v1/payments", params={"limit": 100}).json()["data"]
    assert [p["id"] for p in listed].count(first.json()["id"]) == 1

    # the handler's event went through the outbox: delivered once, signed
    event = receiver.wait_for(lambda e: e["data"].get("id") == first.json()["id"])
    assert event["type"] == "payment.succeeded"
    assert event["data"] == first.json()

    other = authed.post(acme_url + "/v1/payments", json={**PAYMENT, "amount": 1}, headers=headers)
    problem(other, 422, "idempotency-conflict")
    missing = authed.post(acme_url + "/v1/payments", json=PAYMENT)
    problem(missing, 400, "idempotency-key-missing")
    quoted = {**headers, "Idempotency-Key": f'"{headers["Idempotency-Key"]}"'}
    assert authed.post(acme_url + "/v1/payments", json=PAYMENT, headers=quoted).content == (
        first.content
    )


def test_validation_failures_store_nothing(acme_url: str) -> None:
    headers = key()
    bad = authed.post(acme_url + "/v1/payments", json={"amount": 0}, headers=headers)
    problem(bad, 422, "validation-error")
    good = authed.post(acme_url + "/v1/payments", json=PAYMENT, headers=headers)
    assert good.status_code == 201 and "idempotent-replayed" not in good.headers


# --- 202 jobs ---------------------------------------------------------------------------------


def test_job_is_accepted_polled_to_completion_and_replayed(acme_url: str) -> None:
    request = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    headers = key()
    r = authed.post(acme_url + "/v1/reports", json=request, headers=headers)
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["status"] == "queued"
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    assert r.headers["retry-after"] == "5"
    replay = authed.post(acme_url + "/v1/reports", json=request, headers=headers)
    assert replay.content == r.content and replay.headers["idempotent-replayed"] == "true"

    done = poll(
        lambda: authed.get(acme_url + r.headers["location"]),
        lambda resp: resp.json().get("status") in ("completed", "failed"),
    )
    assert done.status_code == 200
    body = done.json()
    assert body["status"] == "completed", body
    assert body["result"] == {"reportUrl": "https://cdn.example.com/sales.csv", "expiresAt": None}
    assert "retry-after" not in done.headers
    assert all(h in done.headers for h in RL_HEADERS)
    # a finished job cannot be cancelled
    problem(authed.delete(acme_url + r.headers["location"]), 409, "job-not-cancellable")


def test_failed_job_embeds_its_problem(acme_url: str) -> None:
    request = {"type": "refunds", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    r = authed.post(acme_url + "/v1/reports", json=request, headers=key())
    assert r.status_code == 202
    done = poll(
        lambda: authed.get(acme_url + r.headers["location"]),
        lambda resp: resp.json().get("status") in ("completed", "failed"),
    )
    body = done.json()
    assert body["status"] == "failed"
    assert body["error"] == {
        "type": "https://api.acme.example.com/problems/report-too-large",
        "title": "Report too large",
        "status": 422,
        "detail": "Narrow the range (requested by acme-tests).",  # the job's ctx.principal
        "instance": r.headers["location"],
        "requestId": r.headers["x-request-id"],  # the submitting request's
    }


def test_unknown_job_is_a_404_problem(acme_url: str) -> None:
    r = authed.get(acme_url + "/v1/jobs/job_00000000000000000000000000")
    problem(r, 404, "job-not-found")


# --- who calls: the verified principal keys every pattern ----------------------------------


def test_requests_without_valid_credentials_never_reach_a_pattern(acme_url: str) -> None:
    payment = {"Idempotency-Key": str(uuid.uuid4())}
    r = httpx.post(acme_url + "/v1/payments", json=PAYMENT, headers=payment)
    problem(r, 401, "unauthorized")
    assert "x-ratelimit-limit" not in r.headers  # not counted against any bucket
    # invented tokens are rejected, each of them: none buys a fresh rate-limit bucket
    invented = [
        httpx.get(acme_url + "/v1/payments", headers={"Authorization": f"Bearer bad-{i}"})
        for i in range(8)
    ]
    assert [r.status_code for r in invented] == [401] * 8
    assert all('error="invalid_token"' in r.headers["www-authenticate"] for r in invented)


def test_idempotency_keys_are_scoped_by_principal(acme_url: str) -> None:
    same_key = str(uuid.uuid4())
    alice = {"Idempotency-Key": same_key, "Authorization": "Bearer alice"}
    bob = {"Idempotency-Key": same_key, "Authorization": "Bearer bob"}
    first = httpx.post(acme_url + "/v1/payments", json=PAYMENT, headers=alice)
    assert first.status_code == 201, first.text
    # bob sends alice's key and body: his own payment, not alice's replayed
    other = httpx.post(acme_url + "/v1/payments", json=PAYMENT, headers=bob)
    assert other.status_code == 201 and "idempotent-replayed" not in other.headers
    assert other.json()["id"] != first.json()["id"]
    again = httpx.post(acme_url + "/v1/payments", json=PAYMENT, headers=alice)
    assert again.headers["idempotent-replayed"] == "true" and again.content == first.content


def test_a_job_is_invisible_to_other_principals(acme_url: str) -> None:
    request = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    owner = {"Authorization": "Bearer job-owner"}
    r = httpx.post(acme_url + "/v1/reports", json=request, headers={**owner, **key()})
    assert r.status_code == 202, r.text
    location = acme_url + r.headers["location"]
    stranger = {"Authorization": "Bearer job-stranger"}
    unknown = problem(httpx.get(acme_url + "/v1/jobs/job_0000"), 401, "unauthorized")
    assert unknown["status"] == 401
    seen = problem(httpx.get(location, headers=stranger), 404, "job-not-found")
    never = problem(
        httpx.get(acme_url + "/v1/jobs/job_0000", headers=stranger), 404, "job-not-found"
    )
    assert seen["title"] == never["title"]  # the same answer as for an id that does not exist
    problem(httpx.delete(location, headers=stranger), 404, "job-not-found")
    problem(httpx.get(location), 401, "unauthorized")
    assert httpx.get(location, headers=owner).status_code == 200


def test_a_callback_url_that_would_reach_inside_is_refused_at_submit(
    acme_url: str, receiver: Receiver
) -> None:
    """Static checks at submit (no DNS, nothing sent): the job is not created. The test
    server allows http and 127.0.0.1 only (base_env). Every URL here stays on this host even
    if a check failed (private, link-local and metadata addresses are refused by the runtime's
    tests, through an injected resolver and connector that never open such a socket)."""
    report = {"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
    refused = [
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://localhost/hook",
        "https://user:secret@127.0.0.1/x",
        "ftp://127.0.0.1/x",
    ]
    for url in refused:
        r = authed.post(
            acme_url + "/v1/reports", json={**report, "callbackUrl": url}, headers=key()
        )
        body = problem(r, 422, "validation-error")
        (error,) = body["errors"]
        assert error["location"] == ["body", "callbackUrl"], url
        assert error["message"].startswith("destination refused: "), url
        assert "secret" not in r.text
    hooked = authed.post(
        acme_url + "/v1/reports",
        json={**report, "callbackUrl": receiver.url + "?refused-by-hook"},
        headers=key(),
    )
    (error,) = problem(hooked, 422, "validation-error")["errors"]
    assert error["message"] == "destination refused: the server does not deliver to this URL"
    ok = authed.post(
        acme_url + "/v1/reports",
        json={**report, "callbackUrl": receiver.url},  # allow-listed: 127.0.0.1
        headers=key(),
    )
    assert ok.status_code == 202, ok.text
