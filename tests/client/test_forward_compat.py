"""The generated client against a newer server (a real one on 127.0.0.1): new enum values,
new members, an unknown oneOf member and a naive date-time parse; a malformed 200 gives a
logged warning and the model with what came (`strict_response_validation=True` raises
`APIResponseValidationError`); request models stay strict; OpenAPI 3.0 `nullable` on a required member admits null, client and server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

from generator.client.models import transform
from tests.client.conftest import Generated
from tests.runtime.client.fakes import Reply, ScriptServer, serving

NEWER_PAYMENT = {
    "id": "pay_1",
    "amount": 5000,
    "currency": "usd",
    "customerId": "cus_1",
    "status": "partially_refunded",
    "amountRefunded": 100,
    "paymentMethod": {"type": "crypto", "wallet": "0xabc"},
    "createdAt": "2026-01-01T10:00:00",
    "riskScore": 12,
}


@pytest.fixture
def newer() -> Iterator[ScriptServer]:
    with serving(ScriptServer()) as script:
        script.on("GET", "/v1/payments/pay_1", Reply(json=NEWER_PAYMENT))
        script.on(
            "GET",
            "/v1/payments",
            Reply(json={"data": [NEWER_PAYMENT], "nextCursor": None, "total": 1}),
        )
        script.on(
            "GET",
            "/v1/payments/pay_bad",
            Reply(json={"id": "pay_bad", "amount": "lots"}, headers={"X-Request-Id": "req_42"}),
        )
        yield script


def test_a_newer_servers_payment_parses(acme: Any, newer: ScriptServer) -> None:
    with acme.Client(base_url=newer.url, bearer_auth="t") as client:
        payment = client.payments.get(payment_id="pay_1")
        page = client.payments.list()
    assert payment.status == "partially_refunded"
    assert payment.payment_method == NEWER_PAYMENT["paymentMethod"]  # no wrapper to unwrap
    assert payment.created_at.isoformat() == "2026-01-01T10:00:00"
    assert payment.model_extra == {"riskScore": 12}
    (item,) = list(page)
    assert item.status == "partially_refunded" and page.body.model_extra == {"total": 1}


def test_a_malformed_200_returns_what_came_and_strict_raises(
    acme: Any, newer: ScriptServer, caplog: pytest.LogCaptureFixture
) -> None:
    with acme.Client(base_url=newer.url, bearer_auth="t") as client, caplog.at_level("WARNING"):
        payment = client.payments.get(payment_id="pay_bad")
    assert isinstance(payment, acme.models.Payment)
    assert payment.id == "pay_bad" and payment.amount == "lots"
    assert any("pay_bad" in r.getMessage() and "amount" in r.getMessage() for r in caplog.records)
    with (
        acme.Client(base_url=newer.url, bearer_auth="t", strict_response_validation=True) as client,
        pytest.raises(acme.APIResponseValidationError) as caught,
    ):
        client.payments.get(payment_id="pay_bad")
    error = caught.value
    assert isinstance(error, acme.APIError) and error.status_code == 200
    assert error.body == {"id": "pay_bad", "amount": "lots"}
    assert error.headers["x-request-id"] == "req_42"
    assert error.errors[0]["loc"] == ("amount",)


def test_strict_response_validation_refuses_what_it_does_not_know(
    acme: Any, newer: ScriptServer
) -> None:
    async def main() -> None:
        async with acme.AsyncClient(
            base_url=newer.url, bearer_auth="t", strict_response_validation=True
        ) as client:
            with pytest.raises(acme.APIResponseValidationError, match="3 errors"):
                await client.payments.get(payment_id="pay_1")

    asyncio.run(main())


def test_request_models_stay_strict(acme: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        acme.models.RefundCreate(payment_id="pay_1", reason="because")
    ok = acme.models.RefundCreate(payment_id="pay_1", reason="duplicate")
    assert ok.reason is acme.models.RefundReason.DUPLICATE


def test_a_webhook_event_from_a_newer_server_verifies(acme: Any) -> None:
    from importlib import import_module

    runtime = import_module(acme.__name__ + "._runtime")
    secret = "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQ="
    body = json.dumps(
        {
            "id": "evt_1",
            "type": "payment.succeeded",
            "createdAt": "2026-01-01T00:00:00Z",
            "data": NEWER_PAYMENT,
        }
    ).encode()
    headers = {
        "webhook-id": "msg_1",
        "webhook-timestamp": "1700000000",
        "webhook-signature": runtime.sign_standard_webhook("msg_1", 1700000000, body, secret),
    }
    event = acme.webhooks.verify_payment_succeeded(body, headers, secret, now=1700000010)
    assert event.data.status == "partially_refunded"


@pytest.fixture(scope="module")
def legacy(generated: dict[str, Generated]) -> Iterator[Any]:
    out = generated["legacy30"]
    sys.path.insert(0, str(out.out))
    try:
        yield __import__(out.package)
    finally:
        sys.path.remove(str(out.out))


def test_openapi_30_nullable_on_a_required_member(legacy: Any, tmp_path: Path) -> None:
    order = {"id": "o", "status": "placed", "lines": [], "createdAt": "2026-01-01T00:00:00Z"}
    parsed = legacy.models.Order.model_validate({**order, "shippedAt": None})
    assert parsed.shipped_at is None
    with pytest.raises(pydantic.ValidationError):  # required: present, even when null
        legacy.models.Order.model_validate(order)
    # the server's models are the same module before the client's transformation
    from generator.server.plan import write_server
    from generator.spec import load_spec

    spec = Path(__file__).resolve().parents[2] / "specs" / "legacy30.yaml"
    loaded = load_spec(str(spec))
    plan, _, _ = write_server(loaded.api, tmp_path, spec_source=spec, spec_name="legacy30.yaml")
    text = (tmp_path / plan.package / "models.py").read_text()
    assert "AwareDatetime | None," in text.split("shipped_at")[1].split("]")[0]


# --- the transformation itself -----------------------------------------------------------------

MODULE = '''\
from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel


class Open(BaseModel):
    """A schema named "Open": the wrapper gets another name."""

    model_config = ConfigDict(extra="forbid")
    kind: Kind = Kind.A


class Kind(StrEnum):
    A = "a"


class Size(IntEnum):
    ONE = 1


class KindList(RootModel[list[Kind]]):
    root: list[Kind]


class Holder(BaseModel):
    sizes: dict[str, Size] | None = None
    note: Annotated[str, Field(description="Kind \u00e9 Size: not a type")] = "Kind"
    when: AwareDatetime
    union: Annotated[Open | KindList, Field(discriminator="kind")]
'''


def test_the_transformation_of_a_models_module() -> None:
    out = transform(MODULE, keep={"Open", "Kind", "Size", "KindList", "Holder"})
    assert "from pydantic import ConfigDict, Field, RootModel\n" in out
    assert (
        "from ._runtime._models import OPEN_UNION, AwareDatetime, BaseModel, "
        "Open as _ApiforgeOpen, OpenInt" in out
    )
    assert 'model_config = ConfigDict(extra="allow")' in out
    assert "kind: _ApiforgeOpen[Kind] = Kind.A" in out  # the default keeps the member
    assert "class KindList(RootModel[list[_ApiforgeOpen[Kind]]]):" in out
    assert "root: list[_ApiforgeOpen[Kind]]" in out
    assert "sizes: dict[str, OpenInt[Size]] | None = None" in out
    assert 'Field(description="Kind \u00e9 Size: not a type")] = "Kind"' in out
    assert 'Field(discriminator="kind"), OPEN_UNION]' in out
    # a RootModel on an attribute is written as what it holds; a kept one stays defined
    assert "union: Annotated[Open | list[_ApiforgeOpen[Kind]], Field(" in out
    assert "class KindList(RootModel" not in transform(MODULE)  # a wrapper nobody names
    assert "class Kind(StrEnum):" in out and "class Open(BaseModel):" in out
    compile(out, "models.py", "exec")
    assert transform("not python (") == "not python ("
    assert transform('"""No schemas."""\n') == '"""No schemas."""\n'


def test_a_default_of_null_admits_null() -> None:
    from generator.models.fixes import default_none_admits_none

    module = (
        "class A(BaseModel):\n"
        "    a: str = None\n"
        '    b: Annotated[list[int], Field(description="\u00e9")] = None\n'
        "    c: str | None = None\n"
        "    d: Annotated[Any, Field()] = None\n"
        "    e: str\n"
        '    f: str = "x"\n'
    )
    assert default_none_admits_none(module) == (
        "class A(BaseModel):\n"
        "    a: str | None = None\n"
        '    b: Annotated[list[int] | None, Field(description="\u00e9")] = None\n'
        "    c: str | None = None\n"
        "    d: Annotated[Any, Field()] = None\n"
        "    e: str\n"
        '    f: str = "x"\n'
    )
    assert default_none_admits_none("not python (") == "not python ("
