"""The server answers in its spec's words: job resources in the spec's schema, request errors
in the declared status (400 where the spec lists 400 and not 422), and mock mode — every
operation without a handler answers its declared example or a value of its schema, with
the patterns still applied. Against a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path

import httpx
import pytest

from generator.server.mock_values import shortest_match, value_of
from tests.server.conftest import generate, serve

SPEC = """
openapi: 3.1.0
info: {title: Conformance, version: "1.0"}
paths:
  /widgets:
    get:
      operationId: listWidgets
      parameters:
        - {name: limit, in: query, schema: {type: integer, maximum: 100}}
        - {name: offset, in: query, schema: {type: integer, format: int32}}
        - name: since
          in: query
          schema: {anyOf: [{type: string, format: date-time}, {type: string, format: date}]}
        - {name: owner, in: query, schema: {type: string, format: uuid}}
        - {name: ids, in: query, explode: false, schema: {type: array, items: {type: integer}}}
        - {name: flag, in: query, schema: {type: [boolean, "null"]}}
        - {name: level, in: query, schema: {type: integer, enum: [1, 2]}}
        - {name: site, in: query, schema: {type: string, format: uri}}
      responses:
        "200":
          description: ok
          headers:
            X-Total-Count: {schema: {type: integer, minimum: 7}}
          content:
            application/json:
              schema: {type: array, items: {$ref: '#/components/schemas/Widget'}}
              example: [{id: w_abcd, name: first, color: red}]
        "400":
          description: bad request, declared as plain JSON
          content: {application/json: {schema: {type: object}}}
    post:
      operationId: createWidget
      parameters:
        - {name: Idempotency-Key, in: header, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: '#/components/schemas/Widget'}}
          text/json: {schema: {$ref: '#/components/schemas/Widget'}}
      responses:
        "201":
          description: created
          content: {application/json: {schema: {$ref: '#/components/schemas/Widget'}}}
        "422": {description: invalid}
  /widgets/{widgetId}:
    get:
      operationId: getWidget
      parameters:
        - {name: widgetId, in: path, required: true, schema: {type: string, maxLength: 16}}
      responses:
        "200":
          description: ok
          headers:
            ETag: {schema: {type: string}}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Widget'}
              examples:
                wrong: {value: {id: nope}}
        "404": {description: not found}
  /exports:
    post:
      operationId: startExport
      responses:
        "202":
          description: accepted
          headers:
            Location: {schema: {type: string}}
          content: {application/json: {schema: {$ref: '#/components/schemas/ExportJob'}}}
  /exports/{jobId}:
    get:
      operationId: getExport
      parameters:
        - {name: jobId, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/ExportJob'}}}
  /analyses:
    post:
      operationId: analyse
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema: &analysis
              type: object
              required: [text, level]
              properties:
                text: {type: string}
                level: {type: integer, maximum: 5}
                tags: {type: array, items: {type: string}}
                doc: {type: string, format: binary}
          multipart/form-data:
            schema: *analysis
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object}}}
        "422": {description: invalid}
  /uploads:
    put:
      operationId: upload
      requestBody:
        required: true
        content: {application/zip: {schema: {type: string, format: binary}}}
      responses:
        "204": {description: stored}
        "422": {description: invalid}
  /metrics:
    get:
      operationId: getMetrics
      responses:
        "200":
          description: the API's own metrics (the server's move aside)
          content: {text/plain: {schema: {type: string}, example: "widgets 3"}}
  /notes:
    post:
      operationId: addNote
      requestBody:
        content: {application/json: {schema: {type: object, properties: {text: {type: string}}}}}
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object}}}
    put:
      operationId: replaceNote
      requestBody:
        content:
          application/json:
            schema: {type: [object, "null"], properties: {text: {type: string}}}
      responses:
        "204": {description: replaced}
    patch:
      operationId: patchNote
      requestBody:
        content: {application/json: {schema: {properties: {text: {type: string}}}}}
      responses:
        "204": {description: patched}
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}
      responses:
        "204": {description: added}
  /bags:
    post:
      operationId: addBag
      requestBody:
        content: {application/json: {schema: {type: object}}}
      responses:
        "204": {description: added}
  /go:
    get:
      operationId: goElsewhere
      responses:
        "301":
          description: only a redirect
          headers:
            Location: {schema: {type: string, format: uri}}
components:
  schemas:
    Widget:
      type: object
      required: [id, name]
      properties:
        id: {type: string, pattern: '^w_[a-z0-9]{4}$'}
        name: {type: string, minLength: 3}
        color: {type: string, enum: [red, blue]}
        createdAt: {type: string, format: date-time}
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        nickname: {type: string}
        age: {type: [integer, "null"]}
        color: {type: string, enum: [red, null]}
        owner:
          type: object
          properties:
            email: {type: string}
            phone: {type: string, nullable: true}
        tags: {type: array, items: {type: string}}
        parent: {$ref: '#/components/schemas/Pet'}
        either: {oneOf: [{type: string}, {type: integer}]}
        maybe: {anyOf: [{type: string}, {type: "null"}]}
        loose: {description: no type, so anything}
        kind: {allOf: [{$ref: '#/components/schemas/Kind'}]}
    Kind: {type: string, enum: [cat, dog]}
    ExportJob:
      type: object
      required: [jobId, state]
      properties:
        jobId: {type: string}
        state: {type: string, enum: [queued, running, succeeded, failed]}
        output:
          type: object
          required: [url]
          properties: {url: {type: string, format: uri}}
        submitted_at: {type: string, format: date-time}
"""

PACKAGE = "conformance_srv"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conformance")
    spec = root / "conformance.yaml"
    spec.write_text(SPEC)
    generate(spec, root / "project", PACKAGE)
    return root / "project"


@pytest.fixture(scope="module")
def mock_base(project: Path, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[misc]
    state = tmp_path_factory.mktemp("conformance-state")
    with serve(project, PACKAGE, state, env={"APIFORGE_MOCK": "1"}) as base:
        yield base


def test_job_view_maps_states_and_fields(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    jobs = (project / PACKAGE / "jobs.py").read_text()
    assert '"id": "jobId"' in jobs and '"status": "state"' in jobs
    assert '"result": "output"' in jobs and '"createdAt": "submitted_at"' in jobs
    assert '"completed": "succeeded"' in jobs
    # the enumeration has no cancelled: shown as failed (the warning: the next test)
    assert '"cancelled": "failed"' in jobs


def test_job_view_warns_where_no_state_fits(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.replace("[queued, running, succeeded, failed]", "[waiting, done]"))
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        generate(spec, tmp_path / "out", "s_srv")
    text = caplog.text
    assert "s.yaml#/components/schemas/ExportJob/properties/state" in text
    # running → waiting (nearest), failed and cancelled have none: named, not silently wrong
    assert "no value for a failed job" in text and "no value for a cancelled job" in text
    assert "no value for a running job: it is shown as `waiting`" in text


def test_the_job_result_is_typed_by_the_mapped_property(tmp_path: Path) -> None:
    """The job's result shows in `output` here: the handler returns its model, not `Any`."""
    spec = tmp_path / "s.yaml"
    inline = "output:\n          type: object\n          required: [url]"
    assert inline in SPEC
    text = SPEC.replace(inline, "output:\n          $ref: '#/components/schemas/ExportOutput'")
    text += (
        "    ExportOutput:\n      type: object\n      required: [url]\n"
        "      properties: {url: {type: string, format: uri}}\n"
    )
    spec.write_text(text)
    generate(spec, tmp_path / "out", "s_srv")
    interfaces = (tmp_path / "out" / "s_srv" / "interfaces.py").read_text()
    assert ") -> models.ExportOutput | dict[str, Any]:" in interfaces


def test_mock_answers_the_declared_example_with_headers(mock_base: str) -> None:
    reply = httpx.get(f"{mock_base}/widgets", timeout=10)
    assert reply.status_code == 200
    assert reply.json() == [{"id": "w_abcd", "name": "first", "color": "red"}]
    assert reply.headers["X-Total-Count"] == "7"


def test_mock_replaces_an_example_its_schema_refuses(mock_base: str) -> None:
    reply = httpx.get(f"{mock_base}/widgets/w_zzzz", timeout=10)
    assert reply.status_code == 200
    body = reply.json()
    assert re.fullmatch(r"w_[a-z0-9]{4}", body["id"]) and len(body["name"]) >= 3
    etag = reply.headers["ETag"]
    again = httpx.get(f"{mock_base}/widgets/w_zzzz", headers={"If-None-Match": etag}, timeout=10)
    assert again.status_code == 304


def test_mock_keeps_idempotency(mock_base: str) -> None:
    body = {"id": "w_0001", "name": "new one"}
    headers = {"Idempotency-Key": "widget-key-0001-abcdef"}
    first = httpx.post(f"{mock_base}/widgets", json=body, headers=headers, timeout=10)
    second = httpx.post(f"{mock_base}/widgets", json=body, headers=headers, timeout=10)
    assert first.status_code == second.status_code == 201
    assert first.content == second.content
    assert second.headers.get("Idempotent-Replayed") == "true"
    other = httpx.post(
        f"{mock_base}/widgets", json={**body, "name": "changed"}, headers=headers, timeout=10
    )
    assert other.status_code == 422  # the key reused with another body (declared: 422)


def test_request_errors_take_the_declared_status(mock_base: str) -> None:
    # listWidgets declares 400 and not 422; createWidget declares 422 and not 400
    bad_query = httpx.get(f"{mock_base}/widgets", params={"limit": "lots"}, timeout=10)
    assert bad_query.status_code == 400
    assert bad_query.json()["type"].endswith("/validation-error")
    # ... in the media type the spec declares for it (plain JSON, not problem+json)
    assert bad_query.headers["content-type"] == "application/json"
    # an int32 parameter holds int32 values even without minimum/maximum
    too_big = httpx.get(f"{mock_base}/widgets", params={"offset": 2**31}, timeout=10)
    assert too_big.status_code == 400
    assert httpx.get(f"{mock_base}/widgets", params={"offset": 2**31 - 1}, timeout=10).is_success
    bad_body = httpx.post(
        f"{mock_base}/widgets",
        json={"id": 3},
        headers={"Idempotency-Key": "widget-key-0002-abcdef"},
        timeout=10,
    )
    assert bad_body.status_code == 422


def test_a_json_body_under_a_text_json_media_type_is_read_as_json(mock_base: str) -> None:
    """`text/json` (declared beside application/json, as .NET specs do) is JSON too: FastAPI
    alone reads only `application/` bodies as JSON and refused every such request."""
    sent = {"Content-Type": "text/json", "Idempotency-Key": "widget-key-text-json-1"}
    body = json.dumps({"id": "w_0002", "name": "as text/json"})
    good = httpx.post(f"{mock_base}/widgets", content=body, headers=sent, timeout=10)
    assert good.status_code == 201, good.text
    bad = httpx.post(
        f"{mock_base}/widgets",
        content=json.dumps({"id": "w_0003", "name": 3}),
        headers={**sent, "Idempotency-Key": "widget-key-text-json-2"},
        timeout=10,
    )
    assert bad.status_code == 422
    assert [e["location"] for e in bad.json()["errors"]] == [["body", "name"]]


def test_an_optional_body_is_not_null_unless_its_schema_says_so(mock_base: str) -> None:
    """FastAPI reads a JSON `null` body as no body: an optional body took `null` although its
    schema (an object) refuses it."""
    url = f"{mock_base}/notes"
    as_json = {"Content-Type": "application/json"}
    assert httpx.post(url, timeout=10).status_code == 200  # no body: optional
    assert httpx.post(url, json={"text": "hi"}, timeout=10).status_code == 200
    refused = httpx.post(url, content=b" null", headers=as_json, timeout=10)
    assert refused.status_code == 422
    assert [e["location"] for e in refused.json()["errors"]] == [["body"]]
    bag = f"{mock_base}/bags"  # an object with no members: nothing else to check
    assert httpx.post(bag, content=b"null", headers=as_json, timeout=10).status_code == 422
    assert httpx.post(bag, json={"any": None}, timeout=10).status_code == 204
    # a schema that admits null takes it: by its type, or by having none (Adyen's, ably's)
    assert httpx.put(url, content=b"null", headers=as_json, timeout=10).status_code == 204
    assert httpx.patch(url, content=b"null", headers=as_json, timeout=10).status_code == 204


def test_an_optional_member_is_not_null_unless_its_schema_says_so(mock_base: str) -> None:
    """The models type an optional member `X | None = None`, so a `null` its schema refuses
    reached the handler (Adyen, nebl, ably: 18 in the corpus sweep). Refused where the schema
    says so — nested objects, array items, a recursive schema, through `allOf` — and taken
    where it admits null or is in doubt."""
    url = f"{mock_base}/pets"
    taken = [
        {"name": "rex"},
        {"name": "rex", "age": None, "color": None, "loose": None},
        {"name": "rex", "owner": {"phone": None}, "parent": {"name": "max", "age": None}},
        {"name": "rex", "maybe": None, "nickname": "null", "tags": ["null"]},
    ]
    for body in taken:
        answer = httpx.post(url, json=body, timeout=10)
        assert answer.status_code == 204, (body, answer.text)
    refused = [
        ({"name": "rex", "nickname": None}, [["body", "nickname"]]),
        ({"name": "rex", "owner": {"email": None}}, [["body", "owner", "email"]]),
        ({"name": "rex", "tags": ["a", None]}, [["body", "tags", 1]]),
        (
            {"name": "rex", "parent": {"name": "max", "parent": {"name": "x", "kind": None}}},
            [["body", "parent", "parent", "kind"]],
        ),
        ({"name": "rex", "owner": None, "tags": None}, [["body", "owner"], ["body", "tags"]]),
        ({"name": "rex", "either": None}, [["body", "either"]]),  # no branch takes null
    ]
    for body, where in refused:
        answer = httpx.post(url, json=body, timeout=10)
        assert answer.status_code == 422, (body, answer.text)
        assert [e["location"] for e in answer.json()["errors"]] == where, body


def test_a_refused_path_parameter_is_located_by_its_wire_name(mock_base: str) -> None:
    """The route reads `widgetId` by its alias: the error names the parameter as the spec and
    the caller do, not by the handler's Python name (`widget_id`)."""
    refused = httpx.get(f"{mock_base}/widgets/{'w' * 17}", timeout=10)
    assert refused.status_code == 422, refused.text
    assert [e["location"] for e in refused.json()["errors"]] == [["path", "widgetId"]]
    assert httpx.get(f"{mock_base}/widgets/{'w' * 16}", timeout=10).status_code == 200


def test_formatted_text_parameters_are_checked(mock_base: str) -> None:
    """A `date-time` / `date` / `uuid` / `uri` parameter took any text (`null`, the empty string);
    the handler still gets the text, as the spec's `type: string` says."""
    url = f"{mock_base}/widgets"
    good = [
        {"since": "2024-02-29"},
        {"since": "2024-02-29T10:00:00Z"},
        {"since": "2024-02-29T10:00:00.5+02:00"},
        {"owner": "0b9c5a52-1d1f-4f5e-9a43-3c4f1d0e8f21"},
        {"site": "https://example.com/a?b=c"},
    ]
    for params in good:
        assert httpx.get(url, params=params, timeout=10).status_code == 200, params
    bad = [{"since": "null"}, {"since": ""}, {"since": "2024-02-30"}, {"owner": "12345"}]
    bad += [{"site": "no scheme"}, {"site": "\u00dd\u00e0F"}]
    for params in bad:
        refused = httpx.get(url, params=params, timeout=10)
        assert refused.status_code == 400, params  # listWidgets declares 400
        assert refused.json()["errors"][0]["location"] == ["query", next(iter(params))]


def test_an_empty_delimited_array_is_the_empty_array(mock_base: str) -> None:
    """`ids=` (form style, not exploded) is the empty array, as OpenAPI's style examples
    spell it; it was read as one empty item, which an integer array refused."""
    url = f"{mock_base}/widgets"
    assert httpx.get(f"{url}?ids=", timeout=10).status_code == 200
    assert httpx.get(f"{url}?ids=1,2", timeout=10).status_code == 200
    assert httpx.get(f"{url}?ids=1,", timeout=10).status_code == 400


def test_a_nullable_boolean_parameter_takes_null(mock_base: str) -> None:
    """`flag=null` for a parameter whose schema admits null (keyserv's `keep`, nullable
    boolean): it was refused as not a boolean."""
    url = f"{mock_base}/widgets"
    assert httpx.get(url, params={"flag": "null"}, timeout=10).status_code == 200
    assert httpx.get(url, params={"flag": "true"}, timeout=10).status_code == 200
    assert httpx.get(url, params={"flag": "maybe"}, timeout=10).status_code == 400


def test_a_number_enum_parameter_is_not_a_boolean(mock_base: str) -> None:
    """`level=true` for an enum of 1 and 2: pydantic takes True for the Literal 1, so the
    text `true` was level 1 (bhagavadgita's `/chapters/true`)."""
    url = f"{mock_base}/widgets"
    assert httpx.get(url, params={"level": "2"}, timeout=10).status_code == 200
    assert httpx.get(url, params={"level": "true"}, timeout=10).status_code == 400
    assert httpx.get(url, params={"level": "3"}, timeout=10).status_code == 400


def test_mock_job_speaks_the_spec_vocabulary(mock_base: str) -> None:
    accepted = httpx.post(f"{mock_base}/exports", timeout=10)
    assert accepted.status_code == 202
    job = accepted.json()
    assert set(job) <= {"jobId", "state", "output", "submitted_at"}
    assert job["state"] == "queued"
    location = accepted.headers["Location"]
    deadline = time.monotonic() + 20
    while job["state"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.1)
        job = httpx.get(mock_base + location, timeout=10).json()
    assert job["state"] == "succeeded"
    assert job["output"]["url"].startswith("https://")


@pytest.mark.parametrize(
    "pattern",
    [r"^w_[a-z0-9]{4}$", r"^\d{3}-\d{2}$", r"^(foo|ba)+$", r"[^a-z]x", r"^[A-Z]{2}\.\w+$"],
)
def test_shortest_match_matches(pattern: str) -> None:
    text = shortest_match(pattern)
    assert text is not None and re.search(pattern, text)


def test_value_of_stops_at_recursion_and_honours_bounds() -> None:
    schemas = {
        "Node": {
            "type": "object",
            "required": ["value"],
            "properties": {
                "value": {"type": "integer", "minimum": 5, "multipleOf": 4},
                "child": {"$ref": "#/components/schemas/Node"},
            },
        }
    }
    assert value_of({"$ref": "#/components/schemas/Node"}, schemas) == {"value": 8}


def test_the_specs_own_paths_win_over_the_servers(mock_base: str) -> None:
    own = httpx.get(f"{mock_base}/metrics", timeout=10)
    assert own.status_code == 200 and own.text == "widgets 3"
    assert own.headers["content-type"].startswith("text/plain")
    moved = httpx.get(f"{mock_base}/_apiforge/metrics", timeout=10)
    assert moved.status_code == 200 and "apiforge_" in moved.text


def test_an_operation_that_only_redirects_answers_its_redirect(mock_base: str) -> None:
    reply = httpx.get(f"{mock_base}/go", timeout=10, follow_redirects=False)
    assert reply.status_code == 301
    assert reply.headers["location"] == "https://example.com/"


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "integer", "example": "C958-not-a-number"}, 0),  # the wrong example is dropped
        ({"type": "string", "format": "decimal"}, "1.5"),
        ({"type": "array", "items": {"type": "boolean"}, "minItems": 2}, [True, True]),
        ({"oneOf": [{"type": "null"}, {"type": "string", "enum": ["a", "b"]}]}, "a"),
        # whatsapp: a default outside the enum (6 for "6") is not the value
        ({"enum": ["6", "12"], "default": 6}, "6"),
        ({"enum": ["6", "12"], "default": "12"}, "12"),
    ],
)
def test_value_of_makes_valid_values(schema: dict[str, object], expected: object) -> None:
    assert value_of(schema, {}) == expected


def test_form_bodies_are_checked_against_their_schema(mock_base: str) -> None:
    url = f"{mock_base}/analyses"
    good = httpx.post(url, data={"text": "hi", "level": "3", "tags": ["a", "b"]}, timeout=10)
    assert good.status_code == 200, good.text
    one_tag = httpx.post(url, data={"text": "hi", "level": "3", "tags": "a"}, timeout=10)
    assert one_tag.status_code == 200, one_tag.text  # an array field sent once is a list
    missing = httpx.post(url, data={"level": "3"}, timeout=10)
    assert missing.status_code == 422
    assert [e["location"] for e in missing.json()["errors"]] == [["body", "text"]]
    wrong = httpx.post(url, data={"text": "hi", "level": "9"}, timeout=10)
    assert wrong.status_code == 422 and wrong.json()["errors"][0]["location"] == ["body", "level"]
    assert httpx.post(url, timeout=10).status_code == 422  # no body at all


def test_a_required_raw_body_must_be_there(mock_base: str) -> None:
    url = f"{mock_base}/uploads"
    zipped = {"Content-Type": "application/zip"}
    assert httpx.put(url, content=b"PK\x03\x04", headers=zipped, timeout=10).status_code == 204
    empty = httpx.put(url, headers=zipped, timeout=10)
    assert empty.status_code == 422
    assert empty.json()["errors"][0]["location"] == ["body"]


def test_multipart_forms_are_checked_too(mock_base: str) -> None:
    url = f"{mock_base}/analyses"
    # a file part is bytes, not text: a PNG header is not UTF-8
    doc = {"doc": ("a.png", b"\x89PNG\r\n\x1a\n\x00\xff", "image/png")}
    good = httpx.post(url, data={"text": "hi", "level": "2"}, files=doc, timeout=10)
    assert good.status_code == 200, good.text
    wrong = httpx.post(url, data={"text": "hi", "level": "x"}, files=doc, timeout=10)
    assert wrong.status_code == 422 and wrong.json()["errors"][0]["location"] == ["body", "level"]


def test_openapi_30_exclusive_bounds_are_flags(tmp_path: Path) -> None:
    """3.0's `minimum: 0, exclusiveMinimum: true` is 0 < x: a page of 0 is refused (it was
    let through as 0 <= x), on parameters as in body models."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: Ex, version: '1'}\npaths:\n  /things:\n    post:\n"
        "      operationId: makeThing\n      parameters:\n        - name: page\n"
        "          in: query\n          schema: {type: integer, minimum: 0, exclusiveMinimum: "
        "true, maximum: 10, exclusiveMaximum: true}\n      requestBody:\n        content:\n"
        "          application/json:\n            schema:\n              type: object\n"
        "              properties: {size: {$ref: '#/components/schemas/Size'}}\n"
        "      responses:\n        '200': {description: ok}\ncomponents:\n  schemas:\n"
        "    Size: {type: number, minimum: 0, exclusiveMinimum: true}\n"
    )
    generate(spec, tmp_path / "out", "ex_srv")
    with serve(tmp_path / "out", "ex_srv", tmp_path / "state", env={"APIFORGE_MOCK": "1"}) as url:
        answers = {
            page: httpx.post(f"{url}/things", params={"page": page}, json={}, timeout=10)
            for page in (0, 1, 9, 10)
        }
    assert {p: r.status_code for p, r in answers.items()} == {0: 422, 1: 200, 9: 200, 10: 422}
    models = (tmp_path / "out" / "ex_srv" / "models.py").read_text()
    assert "gt=0" in models


def test_mock_follows_a_ref_into_another_operation(tmp_path: Path) -> None:
    """A `$ref` to another operation's schema (`#/paths/...`, as Stoplight exports write
    them): the mock walked it as an unknown schema, made a string where the model wants an
    object, and the route's response check answered 500."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: Refs, version: '1'}\npaths:\n  /returns:\n    get:\n"
        "      operationId: listReturns\n      responses:\n        '200':\n"
        "          description: ok\n          content:\n            application/json:\n"
        "              schema:\n                type: object\n                required: [by]\n"
        "                properties:\n                  by:\n                    type: object\n"
        "                    required: [id]\n                    properties: {id: {type: integer}}\n"
        "  /returns/latest:\n    get:\n      operationId: latestReturn\n      responses:\n"
        "        '200':\n          description: ok\n          content:\n"
        "            application/json:\n              schema:\n                type: object\n"
        "                required: [by]\n                properties:\n                  by:\n"
        "                    $ref: '#/paths/~1returns/get/responses/200/content/"
        "application~1json/schema/properties/by'\n"
    )
    generate(spec, tmp_path / "out", "refs_srv")
    env = {"APIFORGE_MOCK": "1"}
    with serve(tmp_path / "out", "refs_srv", tmp_path / "state", env=env) as url:
        reply = httpx.get(f"{url}/returns/latest", timeout=10)
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"by": {"id": 0}}
