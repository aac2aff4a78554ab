"""Fast validation (jsonschema-rs + our semantic checks) reports what openapi-spec-validator
reported, located; the models-names cache never serves another module's names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.errors import ApiforgeError
from generator.models import build as models
from generator.spec import check_root
from generator.spec.load import load_document
from generator.spec.refs import Resolver
from generator.spec.sourcemap import escape
from generator.spec.validate import SpecError, collect_errors, validate


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(cache))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    return cache


def _resolver(tmp_path: Path, text: str, name: str = "spec.yaml") -> Resolver:
    path = tmp_path / name
    path.write_text(text)
    root = load_document(str(path))
    check_root(root)
    return Resolver(root)


def _errors(tmp_path: Path, text: str) -> list[SpecError]:
    return collect_errors(_resolver(tmp_path, text))


def _old(tmp_path: Path, name: str = "spec.yaml") -> list[tuple[str, str]]:
    """openapi-spec-validator's (pointer, message) for the same file (pure-Python backend)."""
    os.environ["OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND"] = "jsonschema"
    try:
        from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

        root = load_document(str(tmp_path / name))
        cls = (
            OpenAPIV30SpecValidator
            if str(root.data["openapi"]).startswith("3.0")
            else OpenAPIV31SpecValidator
        )
        return [
            ("".join("/" + escape(str(t)) for t in e.path), e.message)
            for e in cls(root.data, base_uri=(tmp_path / name).as_uri()).iter_errors()
        ]
    finally:
        del os.environ["OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND"]


STRUCTURAL_31 = """openapi: 3.1.0
info:
  title: T
paths:
  /a:
    get:
      responses:
        '200':
          description: 5
"""

STRUCTURAL_30 = """openapi: 3.0.3
info:
  title: T
  version: '1'
paths:
  /a:
    get:
      parameters:
        - name: q
          in: nowhere
          schema: {type: string}
      responses:
        '200': {description: ok}
components:
  schemas:
    A:
      type: object
      properties:
        n: {type: integer, minimum: zero}
"""


def test_structural_errors_31_located_and_worded_as_before(tmp_path: Path) -> None:
    errors = _errors(tmp_path, STRUCTURAL_31)
    got = [(e.where.pointer, e.message) for e in errors]
    assert got == [
        ("/info", "'version' is a required property"),
        ("/paths/~1a/get/responses/200/description", "5 is not of type 'string'"),
    ]
    assert sorted(got) == sorted(_old(tmp_path))


def test_structural_errors_30_same_pointers_as_openapi_spec_validator(tmp_path: Path) -> None:
    errors = _errors(tmp_path, STRUCTURAL_30)
    pointers = {e.where.pointer for e in errors if e.kind == "structural"}
    assert "/paths/~1a/get/parameters/0" in pointers
    assert "/components/schemas/A" in pointers  # `minimum: zero`: no Schema nor Reference
    # openapi-spec-validator adds the meta-schema error at a pointer relative to the schema
    assert {p for p, _ in _old(tmp_path)} == pointers | {"/properties/n/minimum"}
    meta = [e for e in errors if e.kind == "schema"]
    assert [(e.where.pointer, e.legacy) for e in meta] == [
        ("/components/schemas/A/properties/n/minimum", "/properties/n/minimum")
    ]


def test_validate_reports_at_most_50_and_counts_the_rest(tmp_path: Path) -> None:
    paths = "".join(
        f"  /p{i}:\n    get:\n      responses:\n        '200': {{description: {i}}}\n"
        for i in range(60)
    )
    resolver = _resolver(
        tmp_path, "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n" + paths
    )
    with pytest.raises(ApiforgeError) as caught:
        validate(resolver)
    assert len(caught.value.problems) == 50
    assert caught.value.hint.startswith("10 more not shown")
    first = caught.value.problems[0]
    assert first.pointer == "/paths/~1p0/get/responses/200/description" and first.line == 7


SEMANTIC = """openapi: 3.0.3
info: {title: T, version: '1'}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: other, in: path, required: true, schema: {type: string}}
      responses:
        '200': {description: ok}
  /things:
    get:
      operationId: getItem
      parameters:
        - {name: q, in: query, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        '200': {description: ok}
components:
  schemas:
    Pet:
      type: object
      properties:
        size: {type: string, enum: [s, m], default: xl}
        count: {type: integer, default: 'one'}
    Both:
      allOf:
        - $ref: '#/components/schemas/Pet'
      required: [size, colour]
"""


def test_semantic_checks_located_at_the_node_they_are_about(tmp_path: Path) -> None:
    errors = [e for e in _errors(tmp_path, SEMANTIC) if e.kind != "structural"]
    got = {(e.kind, e.where.pointer) for e in errors}
    assert got == {
        ("path-parameter", "/paths/~1items~1{id}/get"),
        ("path-parameter", "/paths/~1items~1{id}/get/parameters"),
        ("duplicate-operation-id", "/paths/~1things/get/operationId"),
        ("duplicate-parameter", "/paths/~1things/get/parameters/1"),
        ("default", "/components/schemas/Pet/properties/size/default"),
        ("default", "/components/schemas/Pet/properties/count/default"),
        ("required-undefined", "/components/schemas/Both/required"),
    }
    messages = {e.message for e in errors}
    assert "Operation ID 'getItem' for 'get' in '/things' is not unique" in messages
    assert "Path parameter 'id' for 'get' operation in '/items/{id}' was not resolved" in messages
    assert "Duplicate parameter 'q'" in messages
    assert "Required list has not defined properties: ['colour']" in messages
    # the same errors openapi-spec-validator finds (it gives them no location)
    old = [m for _, m in _old(tmp_path)]
    assert sorted(e.message for e in errors if e.kind not in ("default",)) == sorted(
        m for m in old if not m.startswith(("'xl'", "'one'")) and "non-unique" not in m
    )
    assert sum(m.startswith(("'xl'", "'one'")) for m in old) == 2


def test_meta_schema_checks_31_pattern_and_dialect(tmp_path: Path) -> None:
    text = """openapi: 3.1.0
info: {title: T, version: '1'}
paths: {}
components:
  schemas:
    Bad:
      type: string
      pattern: '(unclosed'
    Odd:
      $schema: 'https://example.com/unknown-dialect'
      type: string
    Fine:
      type: [string, 'null']
      pattern: '^[a-z]+$'
"""
    errors = _errors(tmp_path, text)
    assert {(e.kind, e.where.pointer) for e in errors} == {
        ("schema", "/components/schemas/Bad/pattern"),
        ("schema", "/components/schemas/Odd"),
    }
    assert len(_old(tmp_path)) == 2


def test_valid_spec_is_cached_and_yaml_dates_do_not_crash(tmp_path: Path) -> None:
    text = (
        "openapi: 3.0.3\ninfo: {title: T, version: 2020-01-01}\npaths: {}\n"
        "components:\n  schemas:\n    D: {type: string, format: date, example: 2020-01-01}\n"
    )
    errors = _errors(tmp_path, text)
    # YAML 1.2 has no dates: an unquoted date is the string OpenAPI asks for
    assert errors == []
    ok = _resolver(tmp_path, text.replace("2020-01-01}", "'1'}"), "ok.yaml")
    validate(ok)  # valid: no error, and cached
    from generator.spec.load import cache_get

    assert cache_get("valid3", ok.root.digest) is True


def test_model_names_cache_never_serves_stale_names(private_cache: Path) -> None:
    models.clear_memo()
    first = "class A(BaseModel):\n    x: int\n\nB = A\n"
    second = "class A(BaseModel):\n    x: int\n\nclass C(BaseModel):\n    y: int\n"
    assert models.defined_names(first) == {"A", "B"}
    assert models.defined_names(second) == {"A", "C"}
    models.clear_memo()  # from disk now
    assert models.defined_names(first) == {"A", "B"}
    assert models.defined_names(second) == {"A", "C"}
    assert models.defined_names(second + "\nD: int = 1\n") == {"A", "C", "D"}
