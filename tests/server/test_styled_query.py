"""Objects and arrays of objects in the query string (`style: deepObject`), end to end: the
generated client writes them (`filter[status]=…`, `created[gte]=…`, `lines[0][amount]=…`),
the generated server, under uvicorn, reads them back into the handler's typed arguments."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import httpx
import pytest

from generator.client.plan import write_client
from generator.render.names import NameAllocator
from generator.render.pytypes import TypeMapper, query_shape
from generator.server.plan import _Planner
from generator.spec import load_spec
from tests.server.conftest import generate, serve, write_handler

SPEC = """\
openapi: 3.1.0
info: {title: Styled, version: "1"}
paths:
  /orders:
    get:
      operationId: listOrders
      tags: [orders]
      parameters:
        - name: filter
          in: query
          style: deepObject
          explode: true
          schema:
            type: object
            properties:
              status: {type: string, enum: [open, paid]}
              customer: {type: string}
        - name: created
          in: query
          style: deepObject
          explode: true
          schema:
            anyOf:
              - type: object
                properties:
                  gte: {type: integer}
                  lte: {type: integer}
              - type: integer
        - name: lines
          in: query
          style: deepObject
          explode: true
          schema:
            type: array
            items:
              type: object
              required: [type]
              properties:
                amount: {type: integer}
                type: {type: string, enum: [custom, invoice]}
                tax_rates:
                  type: array
                  items: {type: string}
        - name: limit
          in: query
          schema: {type: integer, default: 10}
      responses:
        "200":
          description: what the server received
          content:
            application/json:
              schema: {type: object, additionalProperties: true}
"""

HANDLER = """
from typing import Any

from ..interfaces import OrdersBase
from ..runtime.context import RequestContext


class OrdersHandler(OrdersBase):
    async def list_orders(
        self,
        ctx: RequestContext,
        *,
        filter_: dict[str, Any] | None = None,
        created: dict[str, int] | int | None = None,
        lines: list[dict[str, Any]] | None = None,
        limit: int = 10,
    ) -> Any:
        return {"filter": filter_, "created": created, "lines": lines, "limit": limit}
"""

SERVER = "styled_query_server"
CLIENT = "styled_query_client"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ModuleType, Path]]:
    """(the server's base URL, the generated client package, the server project)."""
    root = tmp_path_factory.mktemp("styled")
    spec = root / "styled.yaml"
    spec.write_text(SPEC)
    project = root / "server"
    generate(spec, project, SERVER)
    write_handler(project, SERVER, "orders", HANDLER)
    loaded = load_spec(str(spec))
    write_client(loaded.api, root / "client", spec_source=spec, spec_name=spec.name, package=CLIENT)
    sys.path.insert(0, str(root / "client"))
    try:
        client = importlib.import_module(CLIENT)
        with serve(project, SERVER, root / "state") as base:
            yield base, client, project
    finally:
        sys.path.remove(str(root / "client"))
        for name in [m for m in sys.modules if m == CLIENT or m.startswith(CLIENT + ".")]:
            del sys.modules[name]


def test_client_and_server_agree_on_deep_objects(running: tuple[str, ModuleType, Path]) -> None:
    base, package, _ = running
    lines: list[dict[str, Any]] = [
        {"amount": 100, "type": "custom", "tax_rates": ["txr_1", "txr_2"]},
        {"type": "invoice"},
    ]
    with package.Client(base_url=base) as client:
        got = client.orders.list(
            filter_={"status": "open", "customer": "cus_1"},
            created={"gte": 1700000000, "lte": 1800000000},
            lines=lines,
        )
        assert got == {
            "filter": {"status": "open", "customer": "cus_1"},
            "created": {"gte": 1700000000, "lte": 1800000000},  # validated as integers
            "lines": [  # no declared item type (dict[str, Any]): the values as sent
                {"amount": "100", "type": "custom", "tax_rates": ["txr_1", "txr_2"]},
                {"type": "invoice"},
            ],
            "limit": 10,
        }
        scalar = client.orders.list(created=1700000000, limit=5)
        assert scalar == {"filter": None, "created": 1700000000, "lines": None, "limit": 5}
        with pytest.raises(package.UnprocessableEntity) as caught:
            client.orders.list(created={"gte": "soon"})
    problem = caught.value.problem
    assert problem is not None and problem.type.endswith("/validation-error")


def test_other_spellings_on_the_wire(running: tuple[str, ModuleType, Path]) -> None:
    base, _, _ = running
    # Rails' appended arrays, and a bad value: the server's usual 422 problem
    query = "lines[][type]=custom&lines[][amount]=1&lines[][type]=invoice&created[gte]=7"
    response = httpx.get(f"{base}/orders?{query}")
    assert response.status_code == 200
    assert response.json()["lines"] == [{"type": "custom", "amount": "1"}, {"type": "invoice"}]
    assert response.json()["created"] == {"gte": 7}
    bad = httpx.get(f"{base}/orders?created[gte]=soon")
    assert bad.status_code == 422
    assert bad.headers["content-type"] == "application/problem+json"
    locations = [e["location"] for e in bad.json()["errors"]]
    assert ["query", "created", "dict[str,int]", "gte"] in locations


def test_the_router_reads_them_through_the_runtime(running: tuple[str, ModuleType, Path]) -> None:
    source = (running[2] / SERVER / "routers" / "orders.py").read_text()
    assert 'Depends(styled_query("lines", list[dict[str, Any]], style="deepObject"' in source
    assert 'Query(alias="limit"' in source  # scalars stay FastAPI's


# --- the plan: which parameters go through `styled_query`, with which options -------------


def _declared(name: str, schema: dict[str, Any], **serialisation: Any) -> Any:
    """A query parameter as an IR that carries `style` / `explode` gives it."""
    from generator.ir import Schema, Where

    fields = {"style": "", "explode": None, **serialisation}
    return SimpleNamespace(
        name=name,
        location="query",
        required=False,
        description="",
        deprecated=False,
        schema=Schema(None, schema, Where("s.yaml", "/x")),
        where=Where("s.yaml", "/x"),
        **fields,
    )


def test_query_shapes() -> None:
    assert query_shape("dict[str, int] | int") == "complex"
    assert query_shape("list[dict[str, Any]] | Literal['']") == "complex"
    assert query_shape("list[list[str]]") == "complex"
    assert query_shape("list[str] | Literal['']") == "array"
    assert query_shape("Literal['a | b'] | None") == "scalar"


def test_declared_styles_reach_the_router(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    api = load_spec(str(spec)).api
    planner = _Planner(api, TypeMapper({}, {}))
    query = ("created", "ids", "limit", "meta", "tags")

    def annotation(p: Any) -> str:
        plan = planner.param(p, NameAllocator(()), loose=False, query=query)
        return plan.annotation.replace("'", '"')  # as the formatter will write it

    range_ = {
        "anyOf": [
            {"type": "object", "properties": {"gte": {"type": "integer"}}},
            {"type": "object", "properties": {"lt": {"type": "integer"}}},
            {"type": "integer"},
        ]
    }
    # form (the default) exploded: the object's declared properties are keys of their own
    assert annotation(_declared("created", range_)) == (
        "Annotated[dict[str, int] | int | None, Depends(styled_query("
        '"created", dict[str, int] | int, style="form", explode=True, '
        'properties=("gte", "lt")))]'
    )
    # a free-form object: every key the other parameters leave
    free = {"type": "object", "additionalProperties": {"type": "string"}}
    assert 'exclude=("created", "ids", "limit", "tags")' in annotation(_declared("meta", free))
    flat = annotation(_declared("meta", free, explode=False))
    assert 'style="form", explode=False)' in flat and "exclude" not in flat
    strings = {"type": "array", "items": {"type": "string"}}
    piped = annotation(_declared("tags", strings, style="pipeDelimited"))
    assert 'styled_query("tags", list[str], style="pipeDelimited", explode=False)' in piped
    # lists of scalars as repeated keys stay FastAPI's, whatever else is declared
    assert "Query(" in annotation(_declared("ids", strings))
    assert "Query(" in annotation(_declared("ids", strings, style="simple"))
    deep = annotation(_declared("tags", strings, style="deepObject", explode=True))
    assert 'style="deepObject", explode=True' in deep


def test_declared_styles_reach_the_client(tmp_path: Path) -> None:
    from generator.client.plan import _Planner as ClientPlanner

    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    api = load_spec(str(spec)).api
    planner = ClientPlanner(api, TypeMapper({}, {}))
    (op,) = api.operations
    free = {"type": "object", "additionalProperties": {"type": "string"}}
    plan = planner.param(op, _declared("meta", free, explode=False), NameAllocator(()))
    assert (plan.type, plan.style, plan.explode) == ("dict[str, str]", "form", False)
    strings = {"type": "array", "items": {"type": "string"}}
    plan = planner.param(op, _declared("ids", strings), NameAllocator(()))
    assert (plan.type, plan.style) == ("list[str]", "")
