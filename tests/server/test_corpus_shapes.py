"""Shapes real specs have that broke generation once (found by the corpus sweep and the
generation benchmark): each is generated, served and called here."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.server.conftest import generate, serve, write_handler

SHAPES = """\
openapi: 3.1.0
info: {title: Repeats, version: "1"}
paths:
  /accounts/{account_id}/maps/{map_id}/accounts/{account_id}:
    get:
      operationId: getMapAccount
      tags: [maps]
      parameters:
        - {name: account_id, in: path, required: true, schema: {type: string}}
        - {name: map_id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties: {account: {type: string}, map: {type: string}}
components:
  schemas:
    Account:
      oneOf:
        - {type: object, properties: {a: {type: string}}}
        - {type: object, properties: {b: {type: string}}}
    Holder:
      type: object
      properties:
        account:
          anyOf:
            - {type: string}
            - $ref: "#/components/schemas/Account"
        other:
          anyOf:
            - {type: integer}
            - {type: object, title: Account, properties: {c: {type: string}}}
"""

HANDLER = """
from typing import Any

from ..interfaces import MapsBase
from ..runtime.context import RequestContext


class MapsHandler(MapsBase):
    async def get_map_account(self, ctx: RequestContext, *, account_id: str, map_id: str) -> Any:
        return {"account": account_id, "map": map_id}
"""


def test_repeated_path_variable_and_colliding_inline_models(tmp_path: Path) -> None:
    spec = tmp_path / "repeats.yaml"
    spec.write_text(SHAPES)
    project = tmp_path / "srv"
    plan, _, _ = generate(spec, project, "repeats_server")
    (op,) = [o for t in plan.tags for o in t.operations]
    assert op.route_path == "/accounts/{account_id}/maps/{map_id}/accounts/{account_id_2}"
    # two inline models both wanting `AccountInline`: the library numbers them itself
    models = (project / "repeats_server" / "models.py").read_text()
    assert "class Account(" in models and "class Holder(" in models
    write_handler(project, "repeats_server", "maps", HANDLER)
    with serve(project, "repeats_server", tmp_path / "state") as base:
        response = httpx.get(f"{base}/accounts/acc_1/maps/m_9/accounts/acc_1")
    assert response.status_code == 200
    assert response.json() == {"account": "acc_1", "map": "m_9"}
