"""The client's shape: one method per operation, raw access through `with_raw_response` (typed
with `ParamSpec`), one module per resource, and resources derived from paths where the spec has
no tags (nested resources as attributes)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.render.resources import group_operations
from generator.spec import load_spec
from tests.client.conftest import Generated, generate
from tests.runtime.client.fakes import Reply, ScriptServer, serving

UNTAGGED = """
openapi: 3.1.0
info: {title: Shop, version: 1.0.0}
paths:
  /v1/customers:
    get:
      operationId: listCustomers
      responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {type: string}}}}}}
  /v1/customers/{customer}/sources:
    parameters: [{name: customer, in: path, required: true, schema: {type: string}}]
    get:
      operationId: listSources
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Source'}}}}}
    post:
      operationId: createSource
      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/Source'}}}}
      responses: {'201': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Source'}}}}}
  /v2/charges/{charge}/capture:
    post:
      operationId: captureCharge
      parameters: [{name: charge, in: path, required: true, schema: {type: string}}]
      responses: {'204': {description: ok}}
  /v1/close:
    post:
      operationId: closeAll
      responses: {'204': {description: ok}}
  /:
    get:
      operationId: root
      responses: {'204': {description: ok}}
components:
  schemas:
    Source:
      type: object
      properties: {id: {type: string}}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Generated, Any]]:
    base = tmp_path_factory.mktemp("shop")
    spec = base / "shop.yaml"
    spec.write_text(UNTAGGED)
    generated = generate(spec, base / "out")
    sys.path.insert(0, str(generated.out))
    try:
        yield generated, __import__(generated.package)
    finally:
        sys.path.remove(str(generated.out))


def _grouping(text: str, tmp_path: Path, **kwargs: Any) -> dict[str, list[str]]:
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    api = load_spec(str(spec)).api
    return {
        ".".join(r.path): [op.id for op in r.operations] for r in group_operations(api, **kwargs)
    }


def test_untagged_operations_are_grouped_by_their_paths(tmp_path: Path) -> None:
    grouping = _grouping(UNTAGGED, tmp_path, reserved={"close"})
    assert grouping == {
        "charges": ["captureCharge"],  # a POST-only action after a parameter: not a resource
        "close_": ["closeAll"],  # a reserved name gets a trailing `_`
        "customers": ["listCustomers"],
        "customers.sources": ["listSources", "createSource"],
        "default": ["root"],  # no literal segment
    }


def test_tags_win_and_colliding_tags_get_numbered_names(tmp_path: Path) -> None:
    text = UNTAGGED.replace(
        "operationId: listCustomers", "operationId: listCustomers\n      tags: [Pet Store]"
    ).replace("operationId: closeAll", "operationId: closeAll\n      tags: [pet-store]")
    grouping = _grouping(text, tmp_path)
    assert grouping["pet_store"] == ["listCustomers"]  # "Pet Store" sorts before "pet-store"
    assert grouping["pet_store_2"] == ["closeAll"]
    # `customers` has no operation left but still holds its nested resource
    assert grouping["customers"] == [] and grouping["customers.sources"]


def test_the_generated_shape(shop: tuple[Generated, Any]) -> None:
    generated, _ = shop
    package = generated.out / generated.package
    modules = sorted(p.name for p in (package / "resources").glob("*.py"))
    assert modules == [
        "__init__.py",
        "charges.py",
        "close_.py",  # `client.close_`: `close` is the client's own
        "customers.py",
        "customers_sources.py",
        "default.py",
    ]
    sources = (package / "resources" / "customers_sources.py").read_text()
    # one method per operation per class: no `*_raw` twins
    assert sources.count("def list(") == 2  # sync and async
    assert "def list_raw" not in sources and "def create_raw" not in sources


def test_nested_resources_and_raw_access_against_a_real_server(
    shop: tuple[Generated, Any],
) -> None:
    _, module = shop
    script = ScriptServer()
    script.on("GET", "/v1/customers/c%2F1/sources", Reply(200, json={"id": "src_1"}))
    script.on(
        "POST",
        "/v1/customers/c1/sources",
        Reply(201, json={"id": "src_2"}, headers={"ETag": '"e1"'}),
    )
    script.on("POST", "/v2/charges/ch_1/capture", Reply(204))
    with serving(script) as server:
        with module.Client(base_url=server.url) as client:
            assert client.customers.sources.list(customer="c/1").id == "src_1"
            raw = client.customers.sources.with_raw_response.create(
                customer="c1", body={"id": "src_2"}
            )
            assert isinstance(raw, module.Raw)
            assert (raw.status_code, raw.etag, raw.parsed.id) == (201, '"e1"', "src_2")
            assert client.charges.with_raw_response.capture(charge="ch_1").parsed is None

        async def run() -> tuple[str, int, str]:
            async with module.AsyncClient(base_url=server.url) as client:
                plain = await client.customers.sources.list(customer="c/1")
                raw = await client.customers.sources.with_raw_response.create(
                    customer="c1", body={"id": "src_2"}
                )
                return plain.id, raw.status_code, raw.parsed.id

        assert asyncio.run(run()) == ("src_1", 201, "src_2")
    assert [r.method + " " + r.path for r in script.requests] == [
        "GET /v1/customers/c%2F1/sources",
        "POST /v1/customers/c1/sources",
        "POST /v2/charges/ch_1/capture",
        "GET /v1/customers/c%2F1/sources",
        "POST /v1/customers/c1/sources",
    ]


def test_concurrent_raw_calls_each_get_their_own_response(shop: tuple[Generated, Any]) -> None:
    """The response reaches the wrapper through a context variable: tasks running at the same
    time must not see each other's."""
    _, module = shop
    script = ScriptServer()
    for n in range(6):
        script.on(
            "GET",
            f"/v1/customers/c{n}/sources",
            Reply(200, json={"id": f"src_{n}"}, headers={"ETag": f'"e{n}"'}, delay=0.05 * (6 - n)),
        )
    with serving(script) as server:

        async def run() -> list[tuple[str | None, str]]:
            async with module.AsyncClient(base_url=server.url) as client:
                raws = await asyncio.gather(
                    *(
                        client.customers.sources.with_raw_response.list(customer=f"c{n}")
                        for n in range(6)
                    )
                )
                return [(raw.etag, raw.parsed.id) for raw in raws]

        assert asyncio.run(run()) == [(f'"e{n}"', f"src_{n}") for n in range(6)]


TYPED = """
from {package} import AsyncClient, Client, Raw, models, SyncPage


def sync(client: Client) -> None:
    raw: Raw[models.Payment] = client.payments.with_raw_response.get(payment_id="p")
    page: Raw[SyncPage[models.Payment, models.PaymentList]] = (
        client.payments.with_raw_response.list(limit=1)
    )
    print(raw.parsed.id, page.parsed.has_next_page())
    client.payments.with_raw_response.get(paymentid="p")  # ERROR: unknown keyword
    with client.payments.with_streaming_response.get(payment_id="p") as streamed:
        reveal_type(streamed.parse())


async def asynchronous(client: AsyncClient) -> None:
    raw = await client.payments.with_raw_response.get(payment_id="p")
    reveal_type(raw)
    first = await client.payments.with_raw_response.list()
    reveal_type(first)
"""


def test_raw_access_keeps_the_signature_for_mypy(
    generated: dict[str, Generated], tmp_path: Path
) -> None:
    acme = generated["acme"]
    (tmp_path / "use.py").write_text(TYPED.format(package=acme.package))
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "use.py"],
        cwd=tmp_path,
        env={"MYPYPATH": str(acme.out), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in checked.stdout.splitlines() if ": " in line]
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and 'Unexpected keyword argument "paymentid"' in errors[0], lines
    revealed = [line.split("Revealed type is ", 1)[1] for line in lines if "Revealed type" in line]
    assert revealed == [
        f'"{acme.package}.models.payment.Payment"',
        f'"{acme.package}._runtime._raw.Raw[{acme.package}.models.payment.Payment]"',
        f'"{acme.package}._runtime._raw.Raw[{acme.package}._runtime._pagination.AsyncPage['
        f"{acme.package}.models.payment.Payment, "
        f'{acme.package}.models.payment_list.PaymentList]]"',
    ]
