"""Forward-compatible responses (`_models` and `APIResponse.parse`): what a newer server may
send parses, what is still wrong raises `APIResponseValidationError`; requests stay strict."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal

import pydantic
import pytest
from pydantic import ConfigDict, Field, RootModel

from templates.client.runtime import (
    APIResponseValidationError,
    AsyncAPIClient,
    RequestOptions,
    SyncAPIClient,
)
from templates.client.runtime._models import (
    LENIENT,
    OPEN_UNION,
    AwareDatetime,
    BaseModel,
    Open,
    OpenInt,
)

from .fakes import FakeClock, Reply, ScriptServer


class Status(StrEnum):
    PENDING = "pending"
    PAID = "paid"


class Level(IntEnum):
    ONE = 1


class Card(BaseModel):
    type: Literal["card"]
    last4: str | None = None


class Bank(BaseModel):
    type: Literal["bank"]


class Method(RootModel[Card | Bank]):
    root: Annotated[Card | Bank, Field(discriminator="type"), OPEN_UNION]


class Payment(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    id: str
    status: Open[Status]
    history: list[Open[Status]] = Field(default_factory=list)
    level: OpenInt[Level] | None = None
    created_at: Annotated[AwareDatetime, Field(alias="createdAt")]
    method: Method | None = None
    inline: Annotated[Card | Bank | None, Field(discriminator="type"), OPEN_UNION] = None


NEWER = {
    "id": "pay_1",
    "status": "refunded",  # a value added after the client was generated
    "history": ["pending", "disputed"],
    "level": 7,
    "createdAt": "2026-01-01T10:00:00",  # no time zone
    "method": {"type": "crypto", "wallet": "0xabc"},  # an unknown oneOf member
    "inline": {"type": "card", "last4": "4242"},
    "riskScore": 12,  # a member the client does not know
}


def test_a_newer_servers_body_parses_leniently() -> None:
    payment = Payment.model_validate(NEWER, context=LENIENT)
    assert payment.status == "refunded" and type(payment.status) is str
    assert payment.history == [Status.PENDING, "disputed"]
    assert isinstance(payment.history[0], Status)
    assert payment.level == 7 and type(payment.level) is int
    assert payment.created_at == datetime(2026, 1, 1, 10, 0) and payment.created_at.tzinfo is None
    assert payment.method is not None and payment.method.root == NEWER["method"]
    assert isinstance(payment.inline, Card) and payment.inline.last4 == "4242"
    assert payment.model_extra == {"riskScore": 12}
    assert payment.riskScore == 12  # type: ignore[attr-defined]
    # and it writes back what it read, unknown parts included, without warnings
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dumped = payment.model_dump(mode="json", by_alias=True)
    assert dumped["status"] == "refunded" and dumped["method"] == NEWER["method"]
    assert dumped["riskScore"] == 12


def test_known_values_are_still_typed() -> None:
    payment = Payment.model_validate(
        {**NEWER, "status": "paid", "level": 1, "createdAt": "2026-01-01T10:00:00Z"},
        context=LENIENT,
    )
    assert payment.status is Status.PAID and payment.level is Level.ONE
    assert payment.created_at.tzinfo is not None


def test_without_the_lenient_context_every_check_is_strict() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        Payment.model_validate(NEWER)
    kinds = sorted(e["type"] for e in caught.value.errors())
    assert kinds == ["enum", "enum", "enum", "timezone_aware", "union_tag_invalid"]
    # a model built in code (a request body) refuses unknown values
    with pytest.raises(pydantic.ValidationError):
        Payment(id="p", status="refunded", created_at=datetime.now().astimezone())
    built = Payment(id="p", status="paid", created_at="2026-01-01T00:00:00Z")  # type: ignore[arg-type]
    assert built.status is Status.PAID


def test_what_is_still_wrong_is_not_forgiven() -> None:
    for broken in ({**NEWER, "id": 5}, {k: v for k, v in NEWER.items() if k != "status"}):
        with pytest.raises(pydantic.ValidationError):
            Payment.model_validate(broken, context=LENIENT)


# --- through APIResponse, against a real server -----------------------------------------------


def test_parse_is_lenient_and_reads_a_broken_2xx_for_what_it_holds(
    server: ScriptServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server.on("GET", "/p/new", Reply(json=NEWER))
    server.on("GET", "/p/broken", Reply(json={"id": "x", "status": 5, "extra": 1}))
    server.on(
        "GET", "/p/html", Reply(body=b"<html>oops</html>", headers={"Content-Type": "text/html"})
    )
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        assert client.request(RequestOptions("GET", "/p/new")).parse(Payment).status == "refunded"
        with caplog.at_level("WARNING"):
            broken = client.request(RequestOptions("GET", "/p/broken")).parse(Payment)
        with pytest.raises(APIResponseValidationError) as html:
            client.request(RequestOptions("GET", "/p/html")).parse(Payment)
        listed = client.request(RequestOptions("GET", "/p/broken")).parse_as(list[Payment])
    # what came is there, what was missing is not invented, what broke is kept as it came
    assert isinstance(broken, Payment) and broken.id == "x" and broken.status == 5
    assert broken.model_extra == {"extra": 1} and broken.model_fields_set == {"id", "status"}
    assert broken.history == [] and broken.level is None  # defaults, as a model has them
    assert listed == {"id": "x", "status": 5, "extra": 1}  # not a list: the data as it is
    record, _ = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "GET http://127.0.0.1" in record.getMessage() and "/p/broken" in record.getMessage()
    assert "does not match the declared type (2 errors;" in record.getMessage()
    assert "strict_response_validation=True raises" in record.getMessage()
    assert str(html.value) == "HTTP 200: the response body is not JSON"
    assert html.value.body == "<html>oops</html>"


def test_a_broken_2xx_raises_with_strict_validation(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/p/broken", Reply(json={"id": "x"}, headers={"x-request-id": "req_9"}))
    with (
        SyncAPIClient(
            server.url, sleep=clock.sleep, clock=clock, strict_response_validation=True
        ) as client,
        pytest.raises(APIResponseValidationError) as broken,
    ):
        client.request(RequestOptions("GET", "/p/broken")).parse(Payment)
    error = broken.value
    assert error.status_code == 200 and error.headers["x-request-id"] == "req_9"
    assert error.body == {"id": "x"} and error.content == b'{"id": "x"}'
    assert "does not match the declared type (2 errors; status: Field required)" in str(error)
    assert [e["loc"] for e in error.errors] == [("status",), ("createdAt",)]
    assert "input" not in error.errors[0]  # what the server sent stays out of the message


def test_strict_response_validation(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/p/new", Reply(json=NEWER))

    async def main() -> None:
        async with AsyncAPIClient(
            server.url, sleep=clock.async_sleep, clock=clock, strict_response_validation=True
        ) as client:
            response = await client.request(RequestOptions("GET", "/p/new"))
            with pytest.raises(APIResponseValidationError, match="5 errors"):
                response.parse(Payment)
            adapter: pydantic.TypeAdapter[list[Any]] = pydantic.TypeAdapter(list[Any])
            assert response.validate([1], adapter) == [1]

    asyncio.run(main())


def test_models_carry_their_request_id_and_dump_as_the_api_writes_them(
    server: ScriptServer, clock: FakeClock
) -> None:
    sent = {k: v for k, v in NEWER.items() if k != "level"}
    server.on("GET", "/p/new", Reply(json=sent, headers={"request-id": "req_7"}))
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        payment = client.request(RequestOptions("GET", "/p/new")).parse(Payment)
    assert payment._request_id == "req_7"
    assert payment.to_dict()["createdAt"] == NEWER["createdAt"]
    assert payment.to_dict()["riskScore"] == 12
    assert json.loads(payment.to_json()) == payment.to_dict()
    assert "level" not in payment.to_dict()  # what was not sent is not invented
    built = Payment.model_validate(NEWER, context=LENIENT)
    assert built._request_id is None


def test_models_from_two_responses_are_equal_when_their_members_are() -> None:
    one = Payment.model_validate(NEWER, context=LENIENT)
    two = Payment.model_validate(NEWER, context=LENIENT)
    one._request_id, two._request_id = "req_1", "req_2"
    assert one == two
    two.id = "other"
    assert one != two
