"""Errors in the spec's own words: an operation that declares its own error object (`{code,
message}`, `{error: {...}}`, Spring's `{timestamp, status, error, message, path}`) gets its
problems in that object, each answer valid against the declared schema; problem-shaped
schemas and operations without one keep RFC 9457 problems. Against a real uvicorn (mock mode:
no handler written) on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from generator.server.error_views import plan_error_views
from generator.spec import load_spec
from tests.server.conftest import generate, serve

SPEC = """
openapi: 3.1.0
info: {title: Errors, version: "1.0"}
paths:
  /flat:
    get:
      operationId: getFlat
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 10}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
        "400":
          description: bad request
          content: {application/json: {schema: {$ref: '#/components/schemas/Flat'}}}
  /wrapped/{id}:
    get:
      operationId: getWrapped
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, pattern: '^w_[a-z]+$'}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
        default:
          description: any error
          content: {application/json: {schema: {$ref: '#/components/schemas/Wrapped'}}}
  /spring:
    post:
      operationId: postSpring
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: '#/components/schemas/Named'}}
      responses:
        "201": {description: ok, content: {application/json: {schema: {type: object}}}}
        "422":
          description: invalid
          content: {application/json: {schema: {$ref: '#/components/schemas/Spring'}}}
  /fastapi:
    get:
      operationId: getFastapi
      parameters:
        - {name: limit, in: query, required: true, schema: {type: integer, maximum: 10}}
        - name: ids
          in: query
          schema: {type: array, items: {type: integer}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
        "422":
          description: FastAPI's own validation error
          content:
            application/json: {schema: {$ref: '#/components/schemas/HTTPValidationError'}}
  /problem:
    get:
      operationId: getProblem
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 10}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
        "422":
          description: a problem
          content:
            application/problem+json: {schema: {$ref: '#/components/schemas/Problem'}}
components:
  schemas:
    Flat:
      type: object
      additionalProperties: false
      required: [code, message, category]
      properties:
        code: {type: string}
        message: {type: string}
        category: {type: string, enum: [client, server]}
        errors: {type: array, items: {type: string}}
    Wrapped:
      type: object
      additionalProperties: false
      required: [error]
      properties:
        error:
          type: object
          additionalProperties: false
          required: [code, message]
          properties:
            code: {type: integer}
            message: {type: string}
            request_id: {type: string}
    Named:
      type: object
      required: [name]
      properties: {name: {type: string}}
    Spring:
      type: object
      additionalProperties: false
      required: [timestamp, status, error, message, path]
      properties:
        timestamp: {type: string, format: date-time}
        status: {type: integer}
        error: {type: string}
        message: {type: string}
        path: {type: string}
    HTTPValidationError:
      type: object
      properties:
        detail: {type: array, items: {$ref: '#/components/schemas/ValidationError'}}
    ValidationError:
      type: object
      required: [loc, msg, type]
      properties:
        loc: {type: array, items: {type: string}}
        msg: {type: string}
        type: {type: string}
    Problem:
      type: object
      properties:
        type: {type: string}
        title: {type: string}
        status: {type: integer}
        detail: {type: string}
"""

PACKAGE = "error_views_srv"


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("error_views") / "errors.yaml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def base(spec_path: Path, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[misc]
    project = spec_path.parent / "project"
    generate(spec_path, project, PACKAGE)
    with serve(project, PACKAGE, spec_path.parent / "state", env={"APIFORGE_MOCK": "1"}) as url:
        yield url


def declared(name: str) -> dict[str, Any]:
    """The component schema `name`, with its references resolvable by jsonschema."""
    import yaml

    schemas = yaml.safe_load(SPEC)["components"]["schemas"]
    return {**schemas[name], "components": {"schemas": schemas}}


def test_plan_maps_members_by_name_and_type(spec_path: Path) -> None:
    api = load_spec(str(spec_path)).api
    plan = plan_error_views(api.operations, api.schemas)
    views = {
        op: plan["views"][name] for op, keys in plan["operations"].items() for name in keys.values()
    }
    assert set(plan["operations"]) == {"getFlat", "getWrapped", "postSpring", "getFastapi"}
    assert views["getFlat"] == {
        "fields": {"code": "kind", "errors": "messages", "message": "detail"},
        "constants": {"category": "client"},
        "wrap": "",
    }
    # code is an integer here: the status fills it; one level of nesting
    assert views["getWrapped"] == {
        "fields": {"code": "status", "message": "detail", "request_id": "request_id"},
        "constants": {},
        "wrap": "error",
    }
    assert views["postSpring"]["fields"] == {
        "error": "kind",
        "message": "detail",
        "path": "instance",
        "status": "status",
        "timestamp": "timestamp",
    }
    assert set(plan["operations"]["getWrapped"]) == {"default"}


def test_a_required_property_nothing_fills_is_named(
    spec_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    api = load_spec(str(spec_path)).api
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        plan_error_views(api.operations, api.schemas)
    assert "errors.yaml#/components/schemas/Flat" in caplog.text
    assert "requires `category`, which nothing the server's errors say fills" in caplog.text


def test_validation_error_in_the_flat_object(base: str) -> None:
    reply = httpx.get(f"{base}/flat", params={"limit": 99}, timeout=10)
    assert reply.status_code == 400
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    jsonschema.validate(body, declared("Flat"))
    assert body["code"] == "validation-error" and body["category"] == "client"
    assert body["message"] and any("limit" in m or "10" in m for m in body["errors"])
    assert reply.headers["x-request-id"]


def test_default_error_object_wraps_the_members(base: str) -> None:
    reply = httpx.get(f"{base}/wrapped/NOT-VALID", timeout=10)
    assert reply.status_code == 422
    body = reply.json()
    jsonschema.validate(body, declared("Wrapped"))
    assert body["error"]["code"] == 422
    assert body["error"]["request_id"] == reply.headers["x-request-id"]
    # a 404 for a path no operation has: no operation, so a problem
    missing = httpx.get(f"{base}/nowhere", timeout=10)
    assert missing.status_code == 404 and "title" in missing.json()


def test_spring_style_error(base: str) -> None:
    reply = httpx.post(f"{base}/spring", json={"nom": "x"}, timeout=10)
    assert reply.status_code == 422
    body = reply.json()
    jsonschema.validate(body, declared("Spring"))
    assert body["status"] == 422 and body["path"] == "/spring"
    assert body["error"] == "validation-error"
    assert datetime.fromisoformat(body["timestamp"]).tzinfo is not None


def test_fastapi_validation_errors_item_by_item(base: str) -> None:
    reply = httpx.get(f"{base}/fastapi", params={"limit": 99}, timeout=10)
    assert reply.status_code == 422
    body = reply.json()
    jsonschema.validate(body, declared("HTTPValidationError"))
    [error] = body["detail"]
    assert error["loc"] == ["query", "limit"] and error["msg"] and error["type"]
    assert set(error) == {"loc", "msg", "type"}
    # an item of an array parameter: its index as a string, as the declared `loc` holds
    reply = httpx.get(f"{base}/fastapi", params={"limit": 1, "ids": ["1", "x"]}, timeout=10)
    assert reply.status_code == 422
    jsonschema.validate(reply.json(), declared("HTTPValidationError"))
    assert reply.json()["detail"][0]["loc"] == ["query", "ids", "1"]


def test_problem_shaped_schemas_keep_the_problem(base: str) -> None:
    reply = httpx.get(f"{base}/problem", params={"limit": 99}, timeout=10)
    assert reply.status_code == 422
    assert reply.headers["content-type"].startswith("application/problem+json")
    body = reply.json()
    assert body["type"].endswith("/validation-error") and body["status"] == 422
    assert json.loads(reply.content)["errors"]
