"""Swagger 2.0 input: converted to OpenAPI 3.0 in memory, every message at the 2.0 file's line.

One minimal 2.0 document per construct (what it becomes in 3.0, and what it cannot become is a
located warning); locations of lint findings, validation errors and warnings; and a handful of
the corpus's 2.0 specs through `generate`, the server and client imported, every operation and
definition present or named in a warning (bench/corpus_sweep.py sweeps all 43).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from generator.errors import ApiforgeError
from generator.spec import load_spec
from generator.spec.load import parse_document
from generator.spec.swagger2 import ConvertedDocument, convert
from tests.support import models_text

ROOT = Path(__file__).resolve().parents[2]
SWAGGER2 = ROOT.parent / "shared" / "corpus" / "swagger2"

HEAD = """\
swagger: "2.0"
info: {title: Pets, version: "1.0"}
"""


def converted(body: str, head: str = HEAD) -> ConvertedDocument:
    text = head + textwrap.dedent(body)
    return convert(parse_document("pets.yaml", None, text.encode()))


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of `text` containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_definitions_become_component_schemas_and_refs_follow() -> None:
    doc = converted("""
        paths:
          /pets:
            get:
              responses:
                200:
                  description: ok
                  schema: {type: array, items: {$ref: "#/definitions/Pet"}}
        definitions:
          Pet:
            type: object
            discriminator: kind
            required: [kind]
            properties:
              kind: {type: string}
              tag: {type: string, x-nullable: true}
              owner: {$ref: "#/definitions/Owner", x-nullable: true}
              photo: {type: file}
          Owner: {type: object, x-internal: true}
        """)
    data = doc.data
    assert data["openapi"] == "3.0.3"
    pet = data["components"]["schemas"]["Pet"]
    assert pet["discriminator"] == {"propertyName": "kind"}
    assert pet["properties"]["tag"] == {"type": "string", "nullable": True}
    assert pet["properties"]["owner"] == {
        "allOf": [{"$ref": "#/components/schemas/Owner"}],
        "nullable": True,
    }
    assert pet["properties"]["photo"] == {"type": "string", "format": "binary"}
    assert data["components"]["schemas"]["Owner"]["x-internal"] is True  # extensions kept
    response = data["paths"]["/pets"]["get"]["responses"]["200"]
    assert response["content"]["application/json"]["schema"] == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/Pet"},
    }
    assert doc.notes == []


def test_body_and_produces_consumes_per_operation_and_global() -> None:
    doc = converted("""
        consumes: [application/json, application/xml]
        produces: [application/json]
        paths:
          /pets:
            post:
              produces: [application/xml]
              parameters:
                - {name: pet, in: body, required: true, description: the pet, schema: {$ref: "#/definitions/Pet"}}
              responses:
                201: {description: made, schema: {$ref: "#/definitions/Pet"}}
            put:
              consumes: [text/plain]
              parameters:
                - {name: note, in: body, schema: {type: string}}
              responses:
                204: {description: done}
        definitions:
          Pet: {type: object}
        """)
    post = doc.data["paths"]["/pets"]["post"]
    ref = {"$ref": "#/components/schemas/Pet"}
    assert post["requestBody"] == {
        "description": "the pet",
        "content": {"application/json": {"schema": ref}, "application/xml": {"schema": ref}},
        "required": True,
        "x-codegen-request-body-name": "pet",
    }
    assert "parameters" not in post
    assert list(post["responses"]["201"]["content"]) == ["application/xml"]
    put = doc.data["paths"]["/pets"]["put"]
    assert put["requestBody"]["content"] == {"text/plain": {"schema": {"type": "string"}}}
    assert "required" not in put["requestBody"]
    assert put["responses"]["204"] == {"description": "done"}


def test_form_data_becomes_multipart_or_urlencoded() -> None:
    doc = converted("""
        paths:
          /upload:
            post:
              consumes: [multipart/form-data]
              parameters:
                - {name: file, in: formData, type: file, required: true}
                - {name: tags, in: formData, type: array, items: {type: string}, collectionFormat: multi}
              responses: {200: {description: ok}}
          /login:
            post:
              parameters:
                - {name: user, in: formData, type: string, required: true, description: who}
                - {name: pin, in: formData, type: integer, maximum: 9999}
              responses: {200: {description: ok}}
        """)
    upload = doc.data["paths"]["/upload"]["post"]["requestBody"]
    media = upload["content"]["multipart/form-data"]
    assert media["schema"] == {
        "type": "object",
        "properties": {
            "file": {"type": "string", "format": "binary"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["file"],
    }
    assert media["encoding"] == {"tags": {"style": "form", "explode": True}}
    assert upload["required"] is True
    login = doc.data["paths"]["/login"]["post"]["requestBody"]
    assert list(login["content"]) == ["application/x-www-form-urlencoded"]
    assert login["content"]["application/x-www-form-urlencoded"]["schema"]["properties"] == {
        "user": {"type": "string", "description": "who"},
        "pin": {"type": "integer", "maximum": 9999},
    }


def test_security_definitions_become_security_schemes() -> None:
    doc = converted("""
        securityDefinitions:
          basic: {type: basic, description: who you are}
          key: {type: apiKey, name: X-Key, in: header, x-vendor: 1}
          implicit: {type: oauth2, flow: implicit, authorizationUrl: "https://a/auth", scopes: {read: r}}
          password: {type: oauth2, flow: password, tokenUrl: "https://a/token", scopes: {}}
          app: {type: oauth2, flow: application, tokenUrl: "https://a/token", scopes: {w: w}}
          code: {type: oauth2, flow: accessCode, authorizationUrl: "https://a/auth", tokenUrl: "https://a/token", scopes: {}}
        security: [{key: []}]
        paths: {}
        """)
    schemes = doc.data["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": "who you are"}
    assert schemes["key"] == {"type": "apiKey", "name": "X-Key", "in": "header", "x-vendor": 1}
    assert schemes["implicit"]["flows"] == {
        "implicit": {"authorizationUrl": "https://a/auth", "scopes": {"read": "r"}}
    }
    assert schemes["password"]["flows"] == {
        "password": {"tokenUrl": "https://a/token", "scopes": {}}
    }
    assert schemes["app"]["flows"] == {
        "clientCredentials": {"tokenUrl": "https://a/token", "scopes": {"w": "w"}}
    }
    assert schemes["code"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": "https://a/auth",
            "tokenUrl": "https://a/token",
            "scopes": {},
        }
    }
    assert doc.data["security"] == [{"key": []}]


@pytest.mark.parametrize(
    ("head", "servers"),
    [
        (
            "host: api.x.com\nbasePath: /v1/\nschemes: [http, https]\n",
            ["http://api.x.com/v1", "https://api.x.com/v1"],
        ),
        ("host: api.x.com\n", ["https://api.x.com"]),
        ("basePath: /v2\n", ["/v2"]),
        ("", None),
    ],
)
def test_host_base_path_and_schemes_become_servers(head: str, servers: list[str] | None) -> None:
    doc = converted("paths: {}\n", HEAD + head)
    found = doc.data.get("servers")
    assert (None if found is None else [s["url"] for s in found]) == servers


def test_parameters_responses_headers_and_collection_formats() -> None:
    doc = converted("""
        parameters:
          Limit: {name: limit, in: query, type: integer, default: 10, x-nullable: true}
        responses:
          NotFound: {description: missing}
        paths:
          /pets/{id}:
            parameters:
              - {name: id, in: path, required: true, type: string, format: uuid}
            get:
              parameters:
                - $ref: "#/parameters/Limit"
                - {name: ids, in: query, type: array, items: {type: integer}}
                - {name: s, in: query, type: array, items: {type: string}, collectionFormat: ssv}
                - {name: p, in: query, type: array, items: {type: string}, collectionFormat: pipes}
                - {name: m, in: query, type: array, items: {type: string}, collectionFormat: multi}
                - {name: X-Trace, in: header, type: array, items: {type: string}}
                - {name: e, in: query, type: string, allowEmptyValue: true, x-ms-client-name: E}
              responses:
                200:
                  description: ok
                  headers:
                    X-Rate-Limit-Remaining: {type: integer, description: left}
                  schema: {type: object}
                  examples: {application/json: {a: 1}}
                404: {$ref: "#/responses/NotFound"}
        """)
    components = doc.data["components"]
    assert components["parameters"]["Limit"] == {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "default": 10, "nullable": True},
    }
    assert components["responses"]["NotFound"] == {"description": "missing"}
    item = doc.data["paths"]["/pets/{id}"]
    assert item["parameters"] == [
        {
            "name": "id",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "format": "uuid"},
        }
    ]
    params = {p.get("name", p.get("$ref")): p for p in item["get"]["parameters"]}
    assert params["#/components/parameters/Limit"] == {"$ref": "#/components/parameters/Limit"}
    assert (params["ids"]["style"], params["ids"]["explode"]) == ("form", False)  # 2.0's csv
    assert (params["s"]["style"], params["s"]["explode"]) == ("spaceDelimited", False)
    assert (params["p"]["style"], params["p"]["explode"]) == ("pipeDelimited", False)
    assert (params["m"]["style"], params["m"]["explode"]) == ("form", True)
    assert "style" not in params["X-Trace"]  # a header's csv is 3.0's default, simple
    assert params["e"]["allowEmptyValue"] is True and params["e"]["x-ms-client-name"] == "E"
    responses = item["get"]["responses"]
    assert responses["200"]["headers"] == {
        "X-Rate-Limit-Remaining": {"description": "left", "schema": {"type": "integer"}}
    }
    assert responses["200"]["content"]["application/json"] == {
        "schema": {"type": "object"},
        "example": {"a": 1},
    }
    assert responses["404"] == {"$ref": "#/components/responses/NotFound"}
    assert doc.notes == []


def test_what_cannot_be_carried_over_is_one_located_warning_each(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    text = HEAD + textwrap.dedent("""\
        paths:
          /pets:
            get:
              parameters:
                - {name: t, in: query, type: array, items: {type: string}, collectionFormat: tsv}
                - {name: h, in: header, type: string, allowEmptyValue: true}
                - {name: f, in: query, type: file}
              responses:
                200: {description: ok, examples: {text/csv: "a,b"}}
        """)
    spec = tmp_path / "pets.yaml"
    spec.write_text(text)
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        loaded = load_spec(str(spec))
    warnings = [r.getMessage() for r in caplog.records]
    expected = [
        (line_of(text, "collectionFormat: tsv"), "`collectionFormat: tsv` in query"),
        (line_of(text, "allowEmptyValue"), "`allowEmptyValue` on a parameter in header"),
        (line_of(text, "type: file"), "a `type: file` parameter in query"),
        (line_of(text, "text/csv"), "an example for text/csv"),
    ]
    assert len(warnings) == len(expected), warnings
    for (line, needle), warning in zip(expected, warnings, strict=True):
        assert warning.startswith(f"warning: {spec}:{line}:"), warning
        assert needle in warning
    # the rest is read: the three parameters are there, the file one as a binary string
    operation = loaded.api.operations[0]
    assert [p.name for p in operation.parameters] == ["t", "h", "f"]


def test_lint_findings_and_validation_errors_name_the_2_0_line(tmp_path: Path) -> None:
    from generator.lint.engine import lint_path

    text = HEAD + textwrap.dedent("""\
        paths:
          /pets/{id}:
            post:
              parameters:
                - {name: idx, in: path, required: true, type: string}
                - {name: body, in: body, schema: {$ref: "#/definitions/Pet"}}
              responses:
                201:
                  description: made
                  schema: {$ref: "#/definitions/Pet"}
        definitions:
          Pet:
            type: object
            properties:
              name: {type: string, default: 3}
        """)
    spec = tmp_path / "pets.yaml"
    spec.write_text(text)
    with pytest.raises(ApiforgeError) as raised:
        load_spec(str(spec), validate=True)
    rendered = {p.message: (p.line, p.pointer) for p in raised.value.problems}
    default = next(m for m in rendered if m.startswith("default:"))
    assert rendered[default] == (
        line_of(text, "default: 3"),
        "/definitions/Pet/properties/name/default",
    )
    unresolved = next(m for m in rendered if "'idx'" in m)
    assert rendered[unresolved][0] == line_of(text, "parameters:")
    result = lint_path(str(spec))
    by_rule = {f.rule: f for f in result.findings}
    idempotency = by_rule["idempotency-key-missing"]
    assert idempotency.line == line_of(text, "post:")
    headers = by_rule["rate-limit-headers-missing"]
    assert headers.line == line_of(text, "201:")


def test_invalid_2_0_is_reported_against_the_2_0_schema_where_written(tmp_path: Path) -> None:
    text = HEAD + textwrap.dedent("""\
        paths:
          /pets:
            get:
              parameters:
                - {name: q, in: nowhere, type: string}
              responses:
                200: {description: ok}
        """)
    spec = tmp_path / "pets.yaml"
    spec.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "inspect", "--validate", str(spec)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "APIFORGE_NO_CACHE": "1"},
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    line = line_of(text, "in: nowhere")
    assert f"error: {spec}:{line}:" in proc.stderr
    assert "#/paths/~1pets/get/parameters/0" in proc.stderr


def test_swagger_1_2_and_lint_fix_on_2_0_are_clear_errors(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    old.write_text("swagger: '1.2'\ninfo: {title: T, version: '1'}\npaths: {}\n")
    with pytest.raises(ApiforgeError, match=r"Swagger 1\.2"):
        load_spec(str(old))
    from generator.lint.fix import fix_spec

    spec = tmp_path / "pets.yaml"
    spec.write_text(HEAD + "paths:\n  /a:\n    post:\n      responses: {200: {description: ok}}\n")
    with pytest.raises(ApiforgeError, match=r"Swagger 2\.0"):
        fix_spec(str(spec), write=False)


# --- real specs ------------------------------------------------------------------------

# small ones of several shapes, and one big (2.2 MB; Kubernetes and web-WebApps are left to
# `bench/corpus_sweep.py --only swagger2/`, which takes every one of the 43)
CORPUS_HANDFUL = [
    "whapi.com__numbers__2.0.yaml",
    "funtranslations.com__braile__2.3.yaml",
    "mastercard.com__MATCH__1.0.0.yaml",
    "azure.com__sql-capabilities__2018-06-01-preview.yaml",
]


@pytest.mark.skipif(not SWAGGER2.is_dir(), reason="the shared corpus is not on this machine")
@pytest.mark.parametrize("name", CORPUS_HANDFUL)
def test_corpus_2_0_specs_generate_import_and_drop_nothing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench/corpus_sweep.py`'s check of one spec: generate, compile, import the server (its
    routes and /openapi.json) and the client, and find every operation and definition in
    them or named in a warning."""
    sys.path.insert(0, str(ROOT))
    try:
        from bench.corpus_sweep import sweep_one
    finally:
        sys.path.remove(str(ROOT))
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    result = sweep_one(f"swagger2/{name}", str(SWAGGER2.parent), 600, None)
    assert result.status == "ok", (result.reason, result.missing)
    assert result.operations > 0


def test_an_example_without_a_schema_and_operation_schemes() -> None:
    doc = converted(
        """
        host: api.x.com
        produces: [application/xml]
        paths:
          /lines:
            get:
              schemes: [http]
              responses:
                200: {description: ok, examples: {application/xml: "<a/>"}}
          /k8s:
            get:
              schemes: [https]
              responses: {200: {description: ok}}
          /none:
            get:
              produces: []  # clears the document's
              responses: {200: {description: ok, schema: {type: string}}}
        """
    )
    assert "content" not in doc.data["paths"]["/none"]["get"]["responses"]["200"]
    response = doc.data["paths"]["/lines"]["get"]["responses"]["200"]
    assert response["content"] == {"application/xml": {"example": "<a/>"}}
    # `https` is what the document's servers say already (no `schemes`: https)
    assert [(n.kind, n.pointer) for n in doc.notes] == [
        ("operation-schemes", "/paths/~1lines/get/schemes")
    ]


def test_lint_of_a_directory_finds_2_0_documents(tmp_path: Path) -> None:
    from generator.lint.run import is_root_document

    (tmp_path / "a.yaml").write_text(HEAD + "paths: {}\n")
    (tmp_path / "b.json").write_text('{"swagger": "2.0", "info": {}, "paths": {}}')
    (tmp_path / "fragment.yaml").write_text("definitions: {}\n")
    found = sorted(p.name for p in tmp_path.iterdir() if is_root_document(p))
    assert found == ["a.yaml", "b.json"]


def test_a_2_0_spec_of_several_files_generates_from_anywhere(tmp_path: Path) -> None:
    """The models step reads the 3.0 reading as text: the files it names are still found
    next to the spec, whatever the working directory."""
    folder = tmp_path / "api"
    folder.mkdir()
    (folder / "spec.yaml").write_text(
        HEAD
        + textwrap.dedent("""\
            paths:
              /a:
                get:
                  responses:
                    200: {description: ok, schema: {$ref: "#/definitions/A"}}
            definitions:
              A:
                type: object
                properties:
                  b: {$ref: "./common.yaml#/definitions/B"}
            """)
    )
    (folder / "common.yaml").write_text("definitions:\n  B: {type: object, x-nullable: true}\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator.cli",
            "generate",
            str(folder / "spec.yaml"),
            "-o",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "APIFORGE_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for side in ("server", "client"):
        models = models_text(out / side)
        assert "class A(BaseModel):" in models and "class B(BaseModel):" in models


def test_lint_findings_name_the_2_0_pointer(tmp_path: Path) -> None:
    from generator.lint.engine import lint_path

    text = HEAD + textwrap.dedent("""\
        responses:
          TooMany:
            description: slow down
            headers: {Retry-After: {type: integer}}
            schema: {type: object}
        paths:
          /pets:
            get:
              responses:
                200: {description: ok}
                429: {$ref: "#/responses/TooMany"}
        """)
    spec = tmp_path / "pets.yaml"
    spec.write_text(text)
    finding = next(f for f in lint_path(str(spec)).findings if f.rule == "problem-details-missing")
    assert (finding.line, finding.pointer) == (line_of(text, "TooMany:"), "/responses/TooMany")


OTHER_SPEC = """\
swagger: "2.0"
info: {title: Things, version: "1.0"}
paths:
  /things/{id}:
    put:
      parameters:
        - $ref: "../common/types.yaml#/parameters/ApiVersion"
        - $ref: "../common/types.yaml#/parameters/ThingBody"
        - {name: id, in: path, required: true, type: string}
      responses:
        200: {description: ok, schema: {$ref: "#/definitions/Thing"}}
        404: {$ref: "../common/types.yaml#/responses/NotFound"}
definitions:
  Thing:
    type: object
    properties:
      error: {$ref: "../common/types.yaml#/definitions/Error"}
  Error:
    type: object
    properties: {local: {type: string}}
"""
OTHER_TYPES = """\
swagger: "2.0"
info: {title: common, version: "1"}
paths: {}
parameters:
  ApiVersion: {name: api-version, in: query, required: true, type: string, enum: ["2024-01-01"]}
  ThingBody: {name: thing, in: body, required: true, schema: {$ref: "#/definitions/Error"}}
responses:
  NotFound: {description: not found, schema: {$ref: "#/definitions/Error"}}
definitions:
  Error:
    type: object
    properties:
      code: {type: string, x-nullable: true}
      inner: {$ref: "#/definitions/Inner"}
  Inner:
    type: object
    discriminator: kind
    required: [kind]
    properties: {kind: {type: string}}
"""


def other_files(tmp_path: Path, types: str = OTHER_TYPES) -> Path:
    (tmp_path / "api").mkdir(exist_ok=True)
    (tmp_path / "common").mkdir(exist_ok=True)
    (tmp_path / "common" / "types.yaml").write_text(types)
    spec = tmp_path / "api" / "spec.yaml"
    spec.write_text(OTHER_SPEC)
    return spec


def refs_in(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in refs_in(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs_in(v)]
    return []


def test_other_2_0_files_are_converted_and_brought_into_the_document(tmp_path: Path) -> None:
    from generator.spec.load import load_document

    spec = other_files(tmp_path)
    doc = convert(load_document(str(spec)), load=lambda path: load_document(str(path)))
    data = doc.data
    # one document: every $ref is local, into the converted components
    assert refs_in(data) and all(r.startswith("#/components/schemas/") for r in refs_in(data))
    schemas = data["components"]["schemas"]
    assert list(schemas) == ["Thing", "Error", "Error2", "Inner"]  # the document keeps `Error`
    assert schemas["Error"] == {"type": "object", "properties": {"local": {"type": "string"}}}
    assert schemas["Thing"]["properties"]["error"] == {"$ref": "#/components/schemas/Error2"}
    # brought in as 2.0 is read: x-nullable, a string discriminator, local refs of that file
    assert schemas["Error2"]["properties"]["code"] == {"type": "string", "nullable": True}
    assert schemas["Error2"]["properties"]["inner"] == {"$ref": "#/components/schemas/Inner"}
    assert schemas["Inner"]["discriminator"] == {"propertyName": "kind"}
    put = data["paths"]["/things/{id}"]["put"]
    assert put["parameters"][0] == {
        "name": "api-version",
        "in": "query",
        "required": True,
        "schema": {"type": "string", "enum": ["2024-01-01"]},
    }
    body = put["requestBody"]
    assert body["required"] is True
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error2"}
    not_found = put["responses"]["404"]
    assert not_found["description"] == "not found"
    assert not_found["content"]["application/json"]["schema"]["$ref"].endswith("/Error2")
    # what was brought in is located at the $ref that first brought it (paths are read
    # first: the body parameter's, whose schema is the other file's `Error`)
    assert doc.locate("/components/schemas/Error2/properties/code")[0] == line_of(
        OTHER_SPEC, "types.yaml#/parameters/ThingBody"
    )
    assert doc.locate("/paths/~1things~1{id}/put/parameters/0/schema")[0] == line_of(
        OTHER_SPEC, "types.yaml#/parameters/ApiVersion"
    )
    # the other file is part of what the document is: a change there is a new digest
    assert [d.name for d in doc.included] == [str(tmp_path / "common" / "types.yaml")]
    other_files(tmp_path, OTHER_TYPES.replace("x-nullable: true", "x-nullable: false"))
    again = convert(load_document(str(spec)), load=lambda path: load_document(str(path)))
    assert again.digest != doc.digest
    assert again.data["components"]["schemas"]["Error2"]["properties"]["code"] == {"type": "string"}


def test_a_missing_other_file_of_a_2_0_document_is_a_located_error(tmp_path: Path) -> None:
    spec = other_files(tmp_path)
    (tmp_path / "common" / "types.yaml").unlink()
    with pytest.raises(ApiforgeError) as caught:
        load_spec(str(spec))
    message = str(caught.value)
    assert f"{spec}:" in message and "no such file" in message and "types.yaml" in message


def test_a_2_0_spec_with_common_types_generates_typed_code(tmp_path: Path) -> None:
    spec = other_files(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", str(spec), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "APIFORGE_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    models = models_text(out / "client")
    assert "class Error2(BaseModel):" in models and "code: str | None" in models
    client = "".join(p.read_text() for p in sorted((out / "client").glob("*/resources/*.py")))
    assert (
        "api_version: Literal['2024-01-01']" in client
        or 'api_version: Literal["2024-01-01"]' in client
    )
    assert "body: models.Error2" in client
