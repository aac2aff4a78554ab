"""Shapes real specs have that broke generation once (found by the corpus sweep and the
generation benchmark): each is generated, served and called here."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from generator.errors import ApiforgeError
from generator.spec import load_spec
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


NO_SLASH = """\
openapi: 3.1.0
info: {title: NoSlash, version: "1"}
paths:
  widgets/{widget_id}:
    get:
      operationId: getWidget
      tags: [widgets]
      parameters:
        - {name: widget_id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {id: {type: string}}}
"""

NO_SLASH_HANDLER = """
from typing import Any

from ..interfaces import WidgetsBase
from ..runtime.context import RequestContext


class WidgetsHandler(WidgetsBase):
    async def get_widget(self, ctx: RequestContext, *, widget_id: str) -> Any:
        return {"id": widget_id}
"""


def test_a_path_key_without_its_leading_slash_is_routed_with_it(tmp_path: Path) -> None:
    """An invalid key (validation warns) once made a server that stopped at import."""
    spec = tmp_path / "noslash.yaml"
    spec.write_text(NO_SLASH)
    project = tmp_path / "srv"
    plan, _, _ = generate(spec, project, "noslash_server")
    (op,) = [o for t in plan.tags for o in t.operations]
    assert op.route_path == "/widgets/{widget_id}"
    write_handler(project, "noslash_server", "widgets", NO_SLASH_HANDLER)
    with serve(project, "noslash_server", tmp_path / "state") as base:
        response = httpx.get(f"{base}/widgets/w_1")
    assert response.status_code == 200
    assert response.json() == {"id": "w_1"}


def test_a_path_key_with_and_without_its_slash_is_a_clear_error(tmp_path: Path) -> None:
    spec = tmp_path / "both.yaml"
    spec.write_text(
        NO_SLASH
        + "  /widgets/{widget_id}:\n    delete:\n      responses: {'204': {description: ok}}\n"
    )
    with pytest.raises(ApiforgeError) as caught:
        load_spec(str(spec))
    text = caught.value.render()
    assert (
        "both.yaml:4:3" in text
        and "'widgets/{widget_id}' and '/widgets/{widget_id}' are the same path" in text
    )


EMPTY_FLOW_URLS = """\
openapi: 3.1.0
info: {title: EmptyUrls, version: "1"}
paths:
  /airports:
    get:
      operationId: listAirports
      tags: [airports]
      security: [{google_id_token: []}, {robots: [read]}]
      responses:
        "200": {description: ok}
components:
  securitySchemes:
    google_id_token:
      type: oauth2
      flows: {implicit: {authorizationUrl: "", scopes: {}}}
    robots:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: "", scopes: {read: reads}}}
"""


def test_oauth_flows_with_empty_urls_still_describe_themselves(tmp_path: Path) -> None:
    """Swagger 2.0 specs write `authorizationUrl: ""`; leaving it out made the server's
    `/openapi.json` fail (OpenAPI's model requires the URL of each flow)."""
    spec = tmp_path / "empty.yaml"
    spec.write_text(EMPTY_FLOW_URLS)
    project = tmp_path / "srv"
    generate(spec, project, "empty_server")
    with serve(project, "empty_server", tmp_path / "state") as base:
        response = httpx.get(f"{base}/openapi.json")
    assert response.status_code == 200
    schemes = response.json()["components"]["securitySchemes"]
    assert schemes["google_id_token"]["flows"]["implicit"]["authorizationUrl"] == ""
    assert schemes["robots"]["flows"]["clientCredentials"]["tokenUrl"] == ""
