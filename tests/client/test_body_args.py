"""A request body's members as keyword arguments: the bytes they send, `omit` against `None`,
`body=` beside them, and a typo as a `mypy --strict` error in the caller's code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client.conftest import Generated
from tests.client.test_requests import CUSTOMER, PAYMENT, Recorder, make_client

CARD = {"type": "card", "token": "tok_1"}

# The caller's code: each line marked `# error` must be a mypy error (a call's first line),
# and only those.
USER_CODE = """
from acme_payments_api_client import AsyncClient, Client, models
from acme_payments_api_client.params import AddressParam
from media_api_client import Client as MediaClient
from pathlib import Path

client = Client(base_url="http://127.0.0.1:9")
client.payments.create(amount=1, currency="eur", customer_id="c", payment_method={"type": "card"})
client.payments.create(body={"amount": 1})
client.payments.create(  # error
    amount=1, currency="eur", customer_id="c", payment_method={"type": "card", "tokn": "t"}
)
client.payments.create(amount=1, currency="eur", customr_id="c", payment_method={"type": "card"})  # error
client.payments.create(amount=1, currency="eur", payment_method={"type": "card"})  # error
client.payments.create(amount="1", currency="eur", customer_id="c", payment_method={"type": "card"})  # error
client.payments.create(
    amount=1, currency="eur", customer_id="c", payment_method={"type": "card"}, description=None
)
client.payments.create(  # error
    amount=1, currency="eur", customer_id="c", payment_method={"type": "card"}, metadata=None
)
client.payments.create(body={"amount": 1}, amount=2)  # error
client.payments.with_raw_response.create(amont=1)  # error
client.payments.with_raw_response.create(body={"amount": 1})
client.customers.update(customer_id="c", if_match='"v1"', name="Bob")
client.customers.update(customer_id="c", if_match='"v1"', body={"name": "Bob"})
client.customers.update(customer_id="c", if_match='"v1"', body={}, name="Bob")  # error
client.customers.with_raw_response.update(customer_id="c", if_match='"v1"', body={}, tags=[])  # error
client.customers.update(  # a nested object takes its model too
    customer_id="c", if_match='"v1"', address=models.Address(line1="1", city="P", postal_code="1", country="FR")
)


def send_back(customer: models.Customer) -> None:
    if customer.address is not None:
        client.customers.update(customer_id="c", if_match='"v1"', address=customer.address)
    client.customers.update(customer_id="c", if_match='"v1"', address=customer)  # error


address: AddressParam = {"line1": "1 rue X", "city": "Paris", "postalCode": "75001", "country": "FR"}
wrong: AddressParam = {"line1": "1 rue X", "city": "Paris", "postal_code": "75001", "country": "FR"}  # error


def upload(media: MediaClient, path: Path) -> None:
    media.files.create(name="a.txt", content=path, kind="document")
    media.files.create(name="a.txt", content=("a.txt", b"x", "text/plain"))
    media.files.create(name="a.txt", content="not a file")  # error


async def main() -> None:
    async with AsyncClient(base_url="http://127.0.0.1:9") as aclient:
        await aclient.payments.create(amount=1, curency="eur")  # error
"""


def test_a_typo_in_a_keyword_argument_is_a_mypy_error(
    generated: dict[str, Generated], tmp_path: Path
) -> None:
    acme, media = generated["acme"], generated["media"]
    user = tmp_path / "user_code.py"
    user.write_text(USER_CODE.lstrip())
    expected = {
        n for n, line in enumerate(user.read_text().splitlines(), 1) if line.endswith("# error")
    }
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir"]
    mypy += [os.devnull, "--no-error-summary", "--hide-error-context", str(user)]
    proc = subprocess.run(
        mypy,
        capture_output=True,
        text=True,
        cwd=acme.out,
        env={**os.environ, "MYPYPATH": os.pathsep.join((str(acme.out), str(media.out)))},
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith(str(user)) for line in errors), "\n".join(errors)
    found = {int(m.group(1)) for m in (re.search(r":(\d+): error", e) for e in errors) if m}
    assert found == expected, proc.stdout


def test_keywords_send_their_wire_names_and_leave_out_what_was_not_given(acme: Any) -> None:
    rec = Recorder(*(httpx.Response(201, json=PAYMENT) for _ in range(3)))
    with make_client(acme, rec) as client:
        client.payments.create(
            amount=5000,
            currency="usd",
            customer_id="cus_1",
            payment_method={"type": "bank_transfer", "bankAccount": {"iban": "FR76", "bic": None}},
            receipt_email=None,  # given as None: sent as null
        )
        client.payments.create(  # the whole body, as before
            body={"amount": 1, "currency": "usd", "customerId": "c", "paymentMethod": CARD}
        )
        with pytest.raises(TypeError, match="either body= or its members"):
            client.payments.create(body={"amount": 1}, amount=2)  # type: ignore[call-overload]
        client.payments.create(  # with extra_body: the caller's members merged in
            amount=1, currency="usd", customer_id="c", payment_method=CARD, extra_body={"x": 1}
        )
    bodies = [r.content for r in rec.requests]
    assert bodies[0] == (
        b'{"amount":5000,"currency":"usd","customerId":"cus_1","paymentMethod":'
        b'{"type":"bank_transfer","bankAccount":{"iban":"FR76","bic":null}},"receiptEmail":null}'
    )
    assert json.loads(bodies[1]) == {
        "amount": 1,
        "currency": "usd",
        "customerId": "c",
        "paymentMethod": CARD,
    }
    assert json.loads(bodies[2]) == {
        "amount": 1,
        "currency": "usd",
        "customerId": "c",
        "paymentMethod": CARD,
        "x": 1,
    }
    assert len(rec.requests) == 3  # the call with both was refused before sending


def test_an_optional_body_is_sent_only_with_a_member(acme: Any) -> None:
    rec = Recorder(*(httpx.Response(200, json=CUSTOMER) for _ in range(2)))
    with make_client(acme, rec) as client:
        method = client.customers.update
        method(customer_id="cus_1", if_match='"v1"', name="Bob")
        method(customer_id="cus_1", if_match='"v1"', tags=[], phone=None)
        with pytest.raises(TypeError, match=r"not both \(name\)"):  # a mypy error too
            method(customer_id="cus_1", if_match='"v1"', body={}, name="B")  # type: ignore[call-overload]
    assert [json.loads(r.content) for r in rec.requests] == [
        {"name": "Bob"},
        {"tags": [], "phone": None},
    ]


def test_a_nested_object_takes_its_model_sent_by_wire_names(acme: Any) -> None:
    rec = Recorder(httpx.Response(200, json=CUSTOMER))
    read = acme.models.Address.model_validate(
        {"line1": "1 rue X", "city": "Paris", "postalCode": "75001", "country": "FR"}
    )
    with make_client(acme, rec) as client:
        client.customers.update(customer_id="cus_1", if_match='"v1"', address=read)
    # by alias, and what the model was not given (`line2`) left out
    assert rec.requests[0].content == (
        b'{"address":{"line1":"1 rue X","city":"Paris","postalCode":"75001","country":"FR"}}'
    )


SHARED_SHAPES = """
openapi: 3.1.0
info: {title: Shapes, version: "1"}
paths:
  /a:
    post:
      operationId: createA
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                address: {type: object, title: address_param, description: one,
                          properties: {city: {type: string}}}
                owner: {$ref: "#/components/schemas/Owner"}
                odd: {type: object, properties: {"a-b": {type: string}, "from": {type: integer}}}
                other: {type: object, title: address_param,
                        properties: {city: {type: string}, description: {type: string}}}
      responses: {"204": {description: done}}
  /b:
    post:
      operationId: createB
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [shipping]
              properties:
                shipping:
                  type: object
                  required: [address]
                  properties:
                    address: {type: object, description: two, properties: {city: {type: string}}}
                owners: {type: array, items: {$ref: "#/components/schemas/Owner"}}
                trial_end:
                  anyOf: [{type: string, enum: [now]}, {type: integer}, {type: string, enum: [""]}]
      responses: {"204": {description: done}}
components:
  schemas:
    Owner:
      type: object
      required: [name]
      properties: {name: {type: string}, owner: {$ref: "#/components/schemas/Owner"}}
"""


def test_typed_dicts_once_per_schema_named_after_it(tmp_path: Path) -> None:
    from generator.client.body_args import BodyArgs, _natural
    from generator.render.pytypes import TypeMapper
    from generator.spec import load_spec

    spec = tmp_path / "shapes.yaml"
    spec.write_text(SHARED_SHAPES)
    api = load_spec(str(spec), validate=False).api
    bodies = BodyArgs(api, TypeMapper({}, {}))
    a = {m.wire: m for m in bodies.by_operation["createA"]}
    b = {m.wire: m for m in bodies.by_operation["createB"]}
    # one TypedDict per shape (descriptions aside), named after its title, else where it is
    assert a["address"].type == "params.AddressParam"
    assert a["other"].type == "params.AddressParam2"  # a member named `description` counts
    assert b["shipping"].type == "params.CreateBShippingParam" and b["shipping"].required
    shipping = bodies.typed_dicts["CreateBShippingParam"].fields
    assert [(f.wire, f.local_type, f.required) for f in shipping] == [
        ("address", "AddressParam", True)
    ]
    # a component's, once, recursive
    assert a["owner"].type == "params.OwnerParam"
    assert b["owners"].type == "list[params.OwnerParam]"
    owner = {f.wire: f for f in bodies.typed_dicts["OwnerParam"].fields}
    assert owner["owner"].local_type == "OwnerParam" and owner["name"].required
    # the literals of a union are one (as linters ask)
    assert b["trial_end"].type == "Literal['now', ''] | int"
    # keys that are no identifiers: the functional form
    forms = {t.name: t.functional for t in bodies.planned().typed_dict_list()}
    assert forms == {
        "AddressParam": False,
        "AddressParam2": False,
        "CreateAOddParam": True,
        "CreateBShippingParam": False,
        "OwnerParam": False,
    }
    # in `__all__`'s order as linters sort it: numbers by value
    assert sorted(["XParam10", "XParam2", "XParam"], key=_natural) == [
        "XParam",
        "XParam2",
        "XParam10",
    ]
