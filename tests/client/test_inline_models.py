"""An operation's inline object schemas become named models (see
`generator/models/inline.py`): the client's methods take and return them, against the
generated server under uvicorn on 127.0.0.1, sync and async; the client is `mypy --strict`
clean; a component's name is never taken; adding an operation renames no existing model; a
change of an inline schema is never served stale from the models cache; and an inline schema
the models library cannot take is left out with a warning at its place in the spec."""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from generator.client.plan import write_client
from generator.models import build as models_step
from generator.pipeline.generate import generate
from generator.spec import blocks, load, load_spec
from tests.generate.importable import located, mypy_strict
from tests.server.conftest import serve

PREFIX = "inline_e2e"
SPEC = """\
openapi: 3.1.0
info: {title: Inline Things, version: 1.0.0}
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200":
          description: every thing
          content:
            application/json:
              schema:
                type: array
                items:
                  type: object
                  required: [id]
                  properties:
                    id: {type: string}
                    name: {type: string}
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string}
                size: {type: integer, minimum: 0}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema:
                type: object
                required: [id, name]
                properties:
                  id: {type: string}
                  name: {type: string}
                  tag: {$ref: '#/components/schemas/Tag'}
        "404":
          description: no such shelf
          content:
            application/json:
              schema:
                type: object
                properties:
                  message: {type: string}
  /things/{thingId}/labels:
    put:
      operationId: setLabels
      parameters:
        - {name: thingId, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              additionalProperties: {type: string}
      responses:
        "204": {description: set}
components:
  schemas:
    CreateThingRequest:
      type: object
      properties:
        legacy: {type: boolean}
    Tag:
      type: string
      enum: [red, blue]
"""

HANDLER = """
from typing import Any

from starlette.responses import JSONResponse

from .. import models
from ..interfaces import ThingsBase
from ..runtime.context import RequestContext


class ThingsHandler(ThingsBase):
    async def list_things(self, ctx: RequestContext) -> Any:
        return [{"id": "t1", "name": "one"}, {"id": "t2"}]

    async def create_thing(self, ctx: RequestContext, *, body: models.CreateThingRequest2) -> Any:
        assert isinstance(body, models.CreateThingRequest2)  # the server reads the model too
        if body.name == "missing":
            return JSONResponse({"message": "no shelf for it"}, status_code=404)
        return {"id": f"t-{body.size}", "name": body.name, "tag": "red"}
"""

ADDED = {
    "/archive": {
        "post": {
            "operationId": "archiveThings",
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "before": {"type": "string"},
                                "reason": {
                                    "type": "object",
                                    "properties": {"x": {"type": "string"}},
                                },
                            },
                        }
                    }
                }
            },
            "responses": {
                "200": {
                    "description": "archived",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"count": {"type": "integer"}},
                            }
                        }
                    },
                }
            },
        }
    }
}
CLASSES = {
    "CreateThingRequest": "legacy",  # the component keeps its name
    "CreateThingRequest2": "size",  # the inline body, beside it
    "CreateThingResponse": "tag",
    "CreateThing404Response": "message",
    "ListThingsResponseItem": "name",
}


def _class_body(text: str, name: str) -> str:
    start = text.index(f"\nclass {name}(")
    end = text.find("\nclass ", start + 1)
    return text[start : end if end != -1 else None]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    base = tmp_path_factory.mktemp("inline")
    spec = base / "inline.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = base / "out"
    generate(str(spec), out, package_prefix=PREFIX, lint=False)
    handlers = out / "server" / f"{PREFIX}_server" / "handlers" / "things.py"
    handlers.write_text(HANDLER.lstrip(), encoding="utf-8")
    sys.path.insert(0, str(out / "client"))
    try:
        yield out, importlib.import_module(f"{PREFIX}_client")
    finally:
        sys.path.remove(str(out / "client"))


@pytest.fixture(scope="module")
def server(project: tuple[Path, ModuleType], tmp_path_factory: pytest.TempPathFactory) -> Any:
    out, _ = project
    with serve(out / "server", f"{PREFIX}_server", tmp_path_factory.mktemp("state")) as base:
        yield base


def test_inline_schemas_are_named_models_beside_the_components(
    project: tuple[Path, ModuleType],
) -> None:
    out, _ = project
    package = out / "client" / f"{PREFIX}_client" / "models"
    text = "\n".join(p.read_text() for p in sorted(package.glob("*.py")))
    for name, member in CLASSES.items():
        assert f"    {member}:" in _class_body(text, name), name
    resource = (out / "client" / f"{PREFIX}_client" / "resources" / "things.py").read_text()
    assert "body: models.CreateThingRequest2 | dict[str, Any]" in resource
    assert ") -> models.CreateThingResponse:" in resource
    # (the class has a `list` method, so the builtin is spelled `builtins.list`)
    assert ") -> builtins.list[models.ListThingsResponseItem]:" in resource
    assert '{"404": models.CreateThing404Response}' in resource
    # a free-form object stays a mapping
    labels = (out / "client" / f"{PREFIX}_client" / "resources" / "things_labels.py").read_text()
    assert "body: dict[str, str] | None = None" in labels
    assert (
        "ListThingsResponseItem"
        in (out / "server" / f"{PREFIX}_server" / "interfaces.py").read_text()
    )


def test_the_sync_client_sends_and_receives_models(
    project: tuple[Path, ModuleType], server: str
) -> None:
    _, acme = project
    with acme.Client(base_url=server) as client:
        made = client.things.create(body=acme.models.CreateThingRequest2(name="cup", size=3))
        listed = client.things.list()
        with pytest.raises(acme.APIStatusError) as caught:
            client.things.create(body={"name": "missing"})
    assert isinstance(made, acme.models.CreateThingResponse)
    assert (made.id, made.name, made.tag) == ("t-3", "cup", "red")
    assert [type(t) for t in listed] == [acme.models.ListThingsResponseItem] * 2
    assert [(t.id, t.name) for t in listed] == [("t1", "one"), ("t2", None)]
    error = caught.value
    assert error.status_code == 404
    assert isinstance(error.parsed, acme.models.CreateThing404Response)
    assert error.parsed.message == "no shelf for it"


def test_the_async_client_sends_and_receives_models(
    project: tuple[Path, ModuleType], server: str
) -> None:
    _, acme = project

    async def main() -> tuple[Any, Any]:
        async with acme.AsyncClient(base_url=server) as client:
            made = await client.things.create(body=acme.models.CreateThingRequest2(name="bowl"))
            return made, await client.things.list()

    made, listed = asyncio.run(main())
    assert isinstance(made, acme.models.CreateThingResponse) and made.name == "bowl"
    assert all(isinstance(t, acme.models.ListThingsResponseItem) for t in listed)


def test_the_server_refuses_a_body_its_inline_model_refuses(server: str) -> None:
    import httpx

    answer = httpx.post(f"{server}/things", json={"name": "cup", "size": -1}, timeout=30)
    assert answer.status_code in (400, 422)


def test_the_client_with_inline_models_type_checks(project: tuple[Path, ModuleType]) -> None:
    out, _ = project
    mypy_strict(out / "client", f"{PREFIX}_client")


def test_apiforge_client_alone_writes_the_same_models(
    project: tuple[Path, ModuleType], tmp_path: Path
) -> None:
    """`apiforge client` (no preloaded document) lifts the same schemas as `generate`."""
    out, _ = project
    spec = tmp_path / "inline.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    loaded = load_spec(str(spec))
    write_client(
        loaded.api,
        tmp_path / "alone",
        spec_source=loaded.source,
        spec_name="inline.yaml",
        package=f"{PREFIX}_client",
    )

    def models(root: Path) -> dict[str, str]:
        package = root / f"{PREFIX}_client" / "models"
        return {p.name: p.read_text() for p in sorted(package.glob("*.py"))}

    alone = models(tmp_path / "alone")
    assert alone and alone == models(out / "client")


def _models_after(spec_text: str, tmp_path: Path, name: str) -> str:
    spec = tmp_path / "inline.yaml"  # the same file, as a user edits it
    spec.write_text(spec_text, encoding="utf-8")
    out = tmp_path / name
    generate(str(spec), out, package_prefix=PREFIX, lint=False)
    package = out / "client" / f"{PREFIX}_client" / "models"
    return "\n".join(p.read_text() for p in sorted(package.glob("*.py")))


def test_adding_an_operation_renames_no_inline_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    before = _models_after(SPEC, tmp_path, "before")
    data = yaml.safe_load(SPEC)
    data["paths"] = {**ADDED, **data["paths"]}  # first in the document and in path order
    after = _models_after(yaml.safe_dump(data, sort_keys=False), tmp_path, "after")
    for name in CLASSES:
        assert _class_body(after, name) == _class_body(before, name), name
    assert "    before:" in _class_body(after, "ArchiveThingsRequest")
    assert "    count:" in _class_body(after, "ArchiveThingsResponse")


def test_a_changed_inline_schema_is_never_served_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only `paths` changes: the `components` text is the same, but the models are not."""
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(blocks, "BLOCK_SPLIT_BYTES", 0)  # `components` known by its text
    monkeypatch.setattr(load, "CACHE_MIN_BYTES", 0)
    models_step.clear_memo()
    before = _models_after(SPEC, tmp_path, "before")
    assert "colour" not in before
    edited = SPEC.replace(
        "                size: {type: integer, minimum: 0}\n",
        "                size: {type: integer, minimum: 0}\n                colour: {type: string}\n",
    )
    assert edited != SPEC
    after = _models_after(edited, tmp_path, "after")
    assert "    colour:" in _class_body(after, "CreateThingRequest2")
    assert _models_after(SPEC, tmp_path, "again") == before  # and back


UNTAKEABLE = """\
openapi: 3.0.3
info: {title: Odd, version: "1"}
paths:
  /a:
    post:
      operationId: postA
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: name
              properties: {name: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties: {n: {type: integer}}
"""


def test_an_inline_schema_the_library_cannot_take_is_left_out_where_it_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    models_step.clear_memo()
    spec = tmp_path / "odd.yaml"
    spec.write_text(UNTAKEABLE, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        generate(str(spec), tmp_path / "out", package_prefix="odd", lint=False)
    warnings = [r.getMessage() for r in caplog.records]
    pointer = "/paths/~1a/post/requestBody/content/application~1json/schema"
    for used_in in ("routers", "client methods"):
        located(
            warnings,
            spec,
            pointer,
            "the inline schema of model PostARequest is left out of models.py: "
            "datamodel-code-generator could not take it (SchemaParseError: ValidationError"
            f": 1 validation error for JsonSchemaObject); it is typed Any in the {used_in}",
        )
    resources = tmp_path / "out" / "client" / "odd_client" / "resources"
    text = "".join(p.read_text() for p in sorted(resources.glob("*.py")))
    assert "body: dict[str, Any] | Omit = omit" in text  # typed as before, not a missing class
    assert "name: str | Omit = omit" in text  # its members as keyword arguments all the same
    assert ") -> models.PostAResponse:" in text  # the rest is modelled


def test_a_new_operation_without_inline_schemas_needs_no_models_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The regeneration speed path: `components` and the lifted schemas are as before, so the
    models module comes from the cache without building the schema subset."""
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(blocks, "BLOCK_SPLIT_BYTES", 0)  # `components` known by its text
    monkeypatch.setattr(load, "CACHE_MIN_BYTES", 0)
    models_step.clear_memo()
    before = _models_after(SPEC, tmp_path, "before")
    models_step.clear_memo()  # a new process: only the disk cache

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the models step ran")

    monkeypatch.setattr(models_step, "schema_subset", refused)
    monkeypatch.setattr(models_step, "_library_run", refused)
    ping = (
        '  /ping:\n    get:\n      operationId: ping\n      responses:\n        "200":\n'
        "          description: pong\n          content:\n            application/json:\n"
        "              schema: {type: string}\n"
    )
    added = SPEC.replace("components:\n", ping + "components:\n")  # the same `components` text
    assert _models_after(added, tmp_path, "after") == before


FORMS = """\
openapi: 3.1.0
info: {title: Forms, version: "1"}
paths:
  /photos:
    post:
      operationId: uploadPhoto
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                caption: {type: string}
                tags: {type: array, items: {type: string}}
                photo: {type: string, format: binary}
      responses:
        "204": {description: stored}
  /customers:
    post:
      operationId: createCustomer
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                name: {type: string}
                address:
                  type: object
                  properties: {city: {type: string}}
      responses:
        "204": {description: created}
"""


def test_a_form_body_is_a_model_only_when_its_fields_are_flat(tmp_path: Path) -> None:
    """A nested field is sent as JSON text, not as `address[city]=...`: no model promises it."""
    from generator.models.inline import model_schemas

    spec = tmp_path / "forms.yaml"
    spec.write_text(FORMS, encoding="utf-8")
    lifted = model_schemas(load_spec(str(spec)).api)
    assert sorted(lifted.class_names[k] for k in lifted.inline) == ["UploadPhotoRequest"]
