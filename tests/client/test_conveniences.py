"""What SDK users expect beside the operations, on the generated acme client: credentials and
base URL from the environment, `with_options`, `extra_query` / `extra_body`, models that dump
as the API writes them and carry their request id, and an import that loads no resource or
model module before it is used."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import Generated, generate
from .test_requests import PAYMENT, Recorder


def test_credentials_and_base_url_from_the_environment(
    acme: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_PAYMENTS_API_CLIENT_BASE_URL", "http://env.test/api")
    monkeypatch.setenv("ACME_PAYMENTS_API_CLIENT_BEARER_AUTH", "from-env")
    rec = Recorder(httpx.Response(200, json=PAYMENT, headers={"x-request-id": "req_1"}))
    with acme.Client(transport=httpx.MockTransport(rec)) as client:
        payment = client.payments.get(payment_id="pay_1")
    (sent,) = rec.requests
    assert str(sent.url) == "http://env.test/api/v1/payments/pay_1"
    assert sent.headers["authorization"] == "Bearer from-env"
    assert payment._request_id == "req_1"
    assert payment.to_dict()["customerId"] == "cus_1"
    assert json.loads(payment.to_json()) == payment.to_dict()


def test_with_options_makes_a_changed_copy(acme: Any) -> None:
    rec = Recorder(httpx.Response(500, json={}), httpx.Response(200, json=PAYMENT))
    with acme.Client(
        base_url="http://t", bearer_auth="t", transport=httpx.MockTransport(rec), max_retries=3
    ) as client:
        quiet = client.with_options(max_retries=0, timeout=5.0)
        assert isinstance(quiet, acme.Client) and quiet is not client
        assert (quiet.max_retries, quiet.timeout, client.max_retries) == (0, 5.0, 3)
        with pytest.raises(acme.ServerError):
            quiet.payments.get(payment_id="pay_1")
    assert len(rec.requests) == 1  # no retry on the copy


def test_extra_query_and_extra_body_per_call(acme: Any) -> None:
    rec = Recorder(httpx.Response(201, json=PAYMENT))
    with acme.Client(
        base_url="http://t", bearer_auth="t", transport=httpx.MockTransport(rec)
    ) as client:
        client.payments.create(
            body={"amount": 5000, "currency": "usd", "customerId": "cus_1"},
            extra_query={"beta": "1"},
            extra_body={"statement_descriptor": "ACME"},
        )
    (sent,) = rec.requests
    assert sent.url.params["beta"] == "1"
    assert json.loads(sent.content)["statement_descriptor"] == "ACME"


def test_import_loads_resources_and_models_on_first_use(generated: dict[str, Generated]) -> None:
    acme = generated["acme"]
    script = f"""
import sys
import {acme.package} as pkg
loaded = lambda: sorted(m for m in sys.modules if m.startswith("{acme.package}.") and
                        (".resources" in m or m.endswith(".models")))
assert loaded() == [], loaded()
client = pkg.Client(base_url="http://t")
assert loaded() == [], loaded()
client.payments
assert "{acme.package}.resources.payments" in sys.modules
assert "{acme.package}.resources.refunds" not in sys.modules
assert pkg.models.Payment.__name__ == "Payment"
"""
    subprocess.run([sys.executable, "-c", script], cwd=acme.out, check=True, timeout=60)


IDEM_SPEC = """openapi: 3.1.0
info: {title: Idem, version: 1.0.0}
x-apiforge-idempotency-header: X-Req-Key
servers: [{url: 'http://localhost'}]
paths:
  /things:
    post:
      operationId: createThing
      responses:
        '201': {description: ok}
"""


def test_a_post_is_retried_with_a_callers_key_in_the_header_the_spec_names(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "idem.yaml"
    spec.write_text(IDEM_SPEC)
    made = generate(spec, tmp_path / "out")
    sys.path.insert(0, str(made.out))
    try:
        idem = importlib.import_module(made.package)
        rec = Recorder(httpx.Response(503), httpx.Response(201), httpx.Response(503))
        with idem.Client(transport=httpx.MockTransport(rec), sleep=lambda s: None) as client:
            client.things.create(idempotency_key="k1")
            with pytest.raises(idem.ServerError):
                client.things.create()  # no key: sent once
    finally:
        sys.path.remove(str(made.out))
    assert [r.headers.get("x-req-key") for r in rec.requests] == ["k1", "k1", None]


def test_default_query_is_sent_under_the_calls_own_parameters(acme: Any) -> None:
    page = {"data": [], "nextCursor": None}
    rec = Recorder(*(httpx.Response(200, json=page) for _ in range(3)))
    with acme.Client(
        base_url="http://t",
        bearer_auth="t",
        transport=httpx.MockTransport(rec),
        default_query={"tenant": "t1", "status": "failed", "beta": "0"},
    ) as client:
        client.payments.list()
        client.payments.list(status="pending", extra_query={"beta": "1"})
        client.with_options(default_query={"tenant": "t2"}).payments.list()
    first, second, third = (sent.url.query.decode() for sent in rec.requests)
    assert first == "tenant=t1&status=failed&beta=0"
    assert second == "tenant=t1&status=pending&beta=1"  # declared and extra_query win
    assert third == "tenant=t2"
