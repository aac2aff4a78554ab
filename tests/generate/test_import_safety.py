"""The spec defects that made `apiforge generate` exit 0 with a project that does not
import. Each is a minimal spec: generation names the defect with file:line, the server and
client import (the server serves `/openapi.json` and `/docs` under uvicorn), and what can
still be enforced is."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from generator.models import build as models
from generator.models.class_names import model_class_names
from generator.models.regex_engines import drop_unrunnable_patterns, python_error, rust_error
from tests.generate.importable import generate_project, import_all, located, served

BIG = r"^\w{1,1000}$^\w{1,1000}$^\w{1,1000}$"  # over the Rust engine's compiled size limit

PATTERNS = r"""openapi: 3.1.0
info: {title: Patterns, version: "1"}
paths:
  /items:
    post:
      operationId: createItem
      parameters:
        - {name: big, in: query, schema: {type: string, pattern: '^\w{1,1000}$^\w{1,1000}$^\w{1,1000}$'}}
        - {name: block, in: query, schema: {type: string, pattern: '\p{InBasicLatin}+'}}
        - {name: ahead, in: query, schema: {type: string, pattern: '^(?!x)[a-z]+$'}}
        - {name: code, in: query, schema: {type: string, pattern: '^[a-z]+$'}}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Item'}
      responses:
        "201":
          description: created
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Item'}
components:
  schemas:
    Item:
      type: object
      properties:
        look: {type: string, pattern: '^(?!x)[a-z]+$'}
        letters: {type: string, pattern: '\p{L}+'}
        name: {type: string, pattern: '^[a-z]+$'}
        tag: {$ref: '#/components/schemas/Tag'}
    Tag:
      type: object
      properties:
        big: {type: string, pattern: '^\w{1,1000}$^\w{1,1000}$^\w{1,1000}$'}
        surrogate: {type: string, pattern: '[\uD800-\uDBFF]'}
        slug: {type: string, pattern: '^[a-z]+$'}
"""


@pytest.mark.parametrize(
    ("pattern", "rust", "python"),
    [
        (BIG, "exceeds size limit", None),
        (r"\p{InBasicLatin}+", "Unicode property not found", "bad escape"),
        (r"\p{L}+", None, "bad escape"),
        (r"^(?!x)[a-z]+$", "look-around", None),
        (r"(a)\1", "backreferences are not supported", None),
        (r"\101", "backreferences are not supported", None),
        (r"[\uD800-\uDBFF]", "not a Unicode scalar value", None),
        (r"a\Z", "unrecognized escape sequence", None),
        (r"a{,3}", "repetition quantifier expects a valid decimal", None),
        (r"(?P<n>a)(?P=n)", "unrecognized flag", None),
        (r"[\b]", "invalid escape sequence found in character class", None),
    ],
)
def test_the_engines_decide_which_patterns_run(
    pattern: str, rust: str | None, python: str | None
) -> None:
    """Each class of pattern pydantic-core's Rust engine rejects although Python's `re` takes it
    (and the reverse), as the engines themselves say."""
    rust_says, python_says = rust_error(pattern), python_error(pattern)
    assert (rust_says is None) == (rust is None) and (rust is None or rust in rust_says), rust_says
    assert (python_says is None) == (python is None), python_says
    assert python is None or python in (python_says or "")


def test_a_model_keeps_the_patterns_its_engine_runs() -> None:
    text = (
        "class A(BaseModel):\n"
        "    model_config = ConfigDict(\n"
        '        regex_engine="python-re",\n'
        "    )\n"
        "    x: Annotated[str | None, Field(pattern='^(?!x)a$')] = None\n"
        "    y: Annotated[str | None, Field(pattern='\\\\p{L}', max_length=3)] = None\n"
        "\n"
        "\n"
        "class B(BaseModel):\n"
        "    y: Annotated[str | None, Field(max_length=3, pattern='\\\\p{L}')] = None\n"
        "    z: Annotated[str, Field(pattern='(?!a)')]\n"
    )
    fixed, dropped = drop_unrunnable_patterns(text)
    assert "Field(pattern='^(?!x)a$')" in fixed  # Python's re runs the look-ahead in A
    assert "Field(max_length=3)] = None\n\n\nclass B" in fixed  # \p{L}: not in Python's re
    assert "y: Annotated[str | None, Field(max_length=3, pattern='\\\\p{L}')]" in fixed  # B: Rust
    assert "z: Annotated[str, Field()]" in fixed
    assert [(d.pattern, d.engine, d.partly) for d in dropped] == [
        ("\\p{L}", "python-re", True),
        ("(?!a)", "rust", False),
    ]


def test_what_to_cut_is_cached_by_the_module_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regeneration's models module seen before: its cuts come from the cache, no engine
    runs (nor is pydantic-core imported); another text is checked by the engines again."""
    from generator.models import regex_engines

    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    text = "class A(BaseModel):\n    z: Annotated[str, Field(pattern='(?!a{N})')]\n"
    first = drop_unrunnable_patterns(text.replace("{N}", "1"))
    assert first[0].endswith("Field()]\n") and [d.pattern for d in first[1]] == ["(?!a1)"]
    asked: list[str] = []

    def engine(pattern: str, engine: str | None) -> str | None:
        asked.append(pattern)
        return "refused"

    monkeypatch.setattr(regex_engines, "_engine_error", engine)
    rust_error.cache_clear()
    python_error.cache_clear()
    try:
        assert drop_unrunnable_patterns(text.replace("{N}", "1")) == first
        assert asked == []
        drop_unrunnable_patterns(text.replace("{N}", "2"))
        assert asked == ["(?!a2)"]
    finally:  # the engines' memory holds the fake answer
        rust_error.cache_clear()
        python_error.cache_clear()


def test_patterns_the_engines_reject_are_named_and_the_rest_enforced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec, out, warnings = generate_project(PATTERNS, tmp_path, "pat", caplog)
    params = "/paths/~1items/post/parameters"
    located(warnings, spec, f"{params}/0/schema/pattern", "size limit")
    located(warnings, spec, f"{params}/1/schema/pattern", "Unicode property not found")
    located(warnings, spec, f"{params}/2/schema/pattern", "look-around")
    item, tag = "/components/schemas/Item/properties", "/components/schemas/Tag/properties"
    located(warnings, spec, f"{item}/letters/pattern", "Python's re rejects it (bad escape")
    located(warnings, spec, f"{tag}/big/pattern", "size limit")
    located(warnings, spec, f"{tag}/surrogate/pattern", "not a Unicode scalar value")
    assert not any(f"{params}/3/" in w or "/name/" in w or "/slug/" in w for w in warnings)
    body = {"look": "abc", "letters": "ü", "name": "abc", "tag": {"slug": "abc", "big": "!"}}
    with served(out, "pat", tmp_path / "state") as base:
        ok = httpx.post(f"{base}/items", params={"code": "abc", "big": "!!"}, json=body)
        assert ok.status_code == 501, ok.text  # valid: it reaches the (missing) handler
        for params_, json in [
            ({"code": "ABC"}, body),  # the query pattern still enforced
            ({"code": "abc"}, {**body, "name": "ABC"}),  # the model's in a python-re model
            ({"code": "abc"}, {**body, "look": "xyz"}),  # the look-ahead, by Python's re
            ({"code": "abc"}, {**body, "tag": {"slug": "ABC"}}),  # the Rust model's
        ]:
            response = httpx.post(f"{base}/items", params=params_, json=json)
            assert response.status_code in (400, 422), (params_, json, response.text)


PATH_CLASH = """openapi: 3.1.0
info: {title: Clash, version: "1"}
paths:
  /items/{item_id}:
    get:
      operationId: getItem
      parameters:
        - {name: item_id, in: query, required: true, schema: {type: integer}}
      responses: {"200": {description: ok}}
  /users/{user}/keys:
    get:
      operationId: getKeys
      parameters:
        - {name: user, in: header, schema: {type: string}}
        - {name: page, in: query, schema: {type: integer, minimum: 1}}
      responses: {"200": {description: ok}}
  /orders/{order}:
    get:
      operationId: getOrder
      parameters:
        - {name: order, in: cookie, schema: {type: string}}
      responses: {"200": {description: ok}}
"""


def test_a_parameter_named_like_an_undeclared_path_variable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """FastAPI refuses a route whose path variable is also a query/header/cookie parameter
    (`Cannot use Query for path param`, or 'Path parameters cannot have default values')."""
    spec, out, warnings = generate_project(PATH_CLASH, tmp_path, "clash", caplog)
    for pointer, where in [
        ("/paths/~1items~1{item_id}/get/parameters/0", "in: query"),
        ("/paths/~1users~1{user}~1keys/get/parameters/0", "in: header"),
        ("/paths/~1orders~1{order}/get/parameters/0", "in: cookie"),
    ]:
        located(warnings, spec, pointer, f"is declared `{where}`, but its name is a variable")
    with served(out, "clash", tmp_path / "state") as base:
        assert httpx.get(f"{base}/items/x", params={"item_id": "7"}).status_code == 501
        missing = httpx.get(f"{base}/items/x")  # the query parameter is still required
        assert missing.status_code in (400, 422), missing.text
        assert httpx.get(f"{base}/users/u/keys", params={"page": "0"}).status_code in (400, 422)
        assert httpx.get(f"{base}/orders/o").status_code == 501


NAMES = """openapi: 3.1.0
info: {title: Names, version: "1"}
paths:
  /things:
    post:
      operationId: postThing
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/404'}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/1st-place'}
components:
  schemas:
    "404": {type: object, required: [code], properties: {code: {type: integer}}}
    "1st-place": {type: object, properties: {who: {$ref: '#/components/schemas/class'}}}
    "class": {type: object, properties: {name: {type: string}}}
    "None": {type: string, enum: [a, b]}
    "Warning": {type: object, properties: {text: {type: string}}}
    "BaseModel": {type: object, properties: {x: {$ref: '#/components/schemas/None'}}}
    "Field": {type: object, properties: {y: {$ref: '#/components/schemas/BaseModel'}}}
    "my-thing": {type: object, properties: {a: {type: string}}}
    "my_thing": {type: object, properties: {b: {type: string}}}
    "MyThing": {type: object, properties: {c: {type: string}}}
    "Ünïcödé": {type: object, properties: {d: {type: string}}}
    "日本": {type: object, properties: {e: {type: string}}}
    "a.b": {type: integer}
"""


def test_component_names_that_are_not_identifiers_all_get_classes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, out, warnings = generate_project(NAMES, tmp_path, "names", caplog)
    assert not [w for w in warnings if "models.py" in w], warnings
    names = {"404", "1st-place", "class", "None", "Warning", "BaseModel", "Field", "日本"}
    classes = model_class_names(names | {"my-thing", "my_thing", "MyThing"})
    text = (out / "server" / "names_server" / "models.py").read_text()
    for cls in classes.values():
        assert f"class {cls}(" in text, cls
    assert classes["404"] == "Model404" and classes["BaseModel"] == "BaseModelModel"
    with served(out, "names", tmp_path / "state") as base:
        bad = httpx.post(f"{base}/things", json={"code": "not a number"})
        assert bad.status_code in (400, 422)  # the `404` model validates the body
        assert httpx.post(f"{base}/things", json={"code": 1}).status_code == 501


DEEP_LEVELS = 60


def _deep_spec() -> str:
    node = "{type: string}"
    for level in range(DEEP_LEVELS):
        node = f"{{type: object, properties: {{l{level}: {node}}}}}"
    return f"""openapi: 3.1.0
info: {{title: Deep, version: "1"}}
paths:
  /deep:
    post:
      operationId: postDeep
      requestBody:
        content:
          application/json:
            schema: {{$ref: '#/components/schemas/Deep'}}
      responses: {{"200": {{description: ok}}}}
components:
  schemas:
    Deep: {node}
"""


def test_a_server_builds_its_openapi_document_for_deeply_nested_models(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """pydantic recursed past Python's limit while FastAPI built /openapi.json (a 500, and no
    /docs) although the app imported and validated fine."""
    _, out, _ = generate_project(_deep_spec(), tmp_path, "deep", caplog)
    with served(out, "deep", tmp_path / "state") as base:
        document = httpx.get(f"{base}/openapi.json").json()
        assert "Deep" in document["components"]["schemas"]
        flat: dict[str, object] = {"l0": "x"}
        nested: dict[str, object] = flat
        for level in range(DEEP_LEVELS - 1, 0, -1):
            nested = {f"l{level}": nested}
        assert httpx.post(f"{base}/deep", json=nested).status_code == 501


CONSTRAINTS = """openapi: 3.1.0
info: {title: Bounds, version: "1"}
paths:
  /n:
    get:
      operationId: getN
      parameters:
        - {name: step, in: query, schema: {type: integer, minimum: 0.5, maximum: 10}}
        - {name: word, in: query, schema: {type: string, maxLength: -1, minLength: 2}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Amounts'}
components:
  schemas:
    Amounts:
      type: object
      properties:
        zero: {type: number, multipleOf: 0}
        half: {type: integer, minimum: 1.5, maximum: 9}
        count: {type: array, items: {type: string}, maxItems: -1}
"""


def test_constraint_values_pydantic_refuses_are_named_and_the_rest_enforced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec, out, warnings = generate_project(CONSTRAINTS, tmp_path, "bounds", caplog)
    params, props = "/paths/~1n/get/parameters", "/components/schemas/Amounts/properties"
    located(warnings, spec, f"{params}/0/schema/minimum", "whole number")
    located(warnings, spec, f"{params}/1/schema/maxLength", "from 0 up")
    located(warnings, spec, f"{props}/zero/multipleOf", "greater than 0")
    located(warnings, spec, f"{props}/half/minimum", "whole number")
    located(warnings, spec, f"{props}/count/maxItems", "from 0 up")
    text = _client_models(out, "bounds_client")
    assert "le=9" in text and "ge=1.5" not in text  # the bound pydantic takes is kept
    with served(out, "bounds", tmp_path / "state") as base:
        assert httpx.get(f"{base}/n", params={"step": "11"}).status_code in (400, 422)
        assert httpx.get(f"{base}/n", params={"word": "a"}).status_code in (400, 422)
        assert httpx.get(f"{base}/n", params={"step": "1", "word": "ab"}).status_code == 501


def _client_models(out: Path, package: str) -> str:
    """The text of the client's models package, its modules in name order."""
    modules = sorted((out / "client" / package / "models").glob("*.py"))
    return "".join(p.read_text() for p in modules)


ISOLATED = """openapi: 3.0.3
info: {title: Isolated, version: "1"}
paths:
  /a:
    post:
      operationId: postA
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Listed'}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Good'}
components:
  schemas:
    Good:
      type: object
      required: [n]
      properties:
        n: {type: integer}
        odd: {$ref: '#/components/schemas/Listed'}
        typed: {$ref: '#/components/schemas/Typed'}
    Listed:
      type: object
      required: name
      properties: {name: {type: string}}
    Typed:
      type: [object]
      properties: [{a: 1}]
"""


def test_the_models_step_leaves_out_the_schemas_the_library_cannot_take(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    models.clear_memo()
    spec, out, warnings = generate_project(ISOLATED, tmp_path, "iso", caplog)
    for name in ("Listed", "Typed"):
        for used_in in ("routers", "client methods"):
            located(
                warnings,
                spec,
                f"/components/schemas/{name}",
                f"schema '{name}' is left out of models.py: datamodel-code-generator could "
                f"not take it (SchemaParseError: ValidationError: 1 validation error for "
                f"JsonSchemaObject); it is typed Any in the {used_in}",
            )
    assert "class Good(" in _client_models(out, "iso_client")
    server = next((out / "server").glob("*/models.py")).read_text()
    assert "class Good(" in server and "# apiforge-left-out: listed:" in server
    client = "".join(
        p.read_text() for p in sorted((out / "client" / "iso_client" / "resources").glob("*.py"))
    )
    assert "body: dict[str, Any]" in client  # `Listed` is typed Any where it is used
    import_all(out / "client", "iso_client")
    with served(out, "iso", tmp_path / "state") as base:
        assert httpx.post(f"{base}/a", json={"anything": [1]}).status_code == 501


DEFAULTS = """openapi: 3.1.0
info: {title: Defaults, version: "1"}
paths: {}
components:
  schemas:
    Color: {type: string, enum: [red, blue]}
    Cat: {type: object, properties: {kind: {type: string}}}
    Settings:
      type: object
      properties:
        retries: {type: integer, default: "three"}
        color: {$ref: '#/components/schemas/Color', default: green}
        since: {type: string, format: date-time, default: "2020-01-01T00:00:00Z"}
        until: {type: string, format: date-time, default: "tomorrow"}
        pet: {$ref: '#/components/schemas/Cat', default: {kind: x}}
"""


def test_defaults_are_values_of_their_members(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A default of another type stayed in the model as written (`mypy --strict` refuses
    it; beside a `$ref`, pydantic validates it and every instance without it fails)."""
    spec, out, warnings = generate_project(DEFAULTS, tmp_path, "dflt", caplog)
    props = "/components/schemas/Settings/properties"
    located(warnings, spec, f"{props}/retries/default", "not a value of its own schema")
    located(warnings, spec, f"{props}/color/default", "not a value of its own schema")
    text = _client_models(out, "dflt_client")
    assert "retries: int | None = None" in text and "color: Open[Color] | None = None" in text
    assert 'Field(default="2020-01-01T00:00:00Z", validate_default=True)' in text
    assert "until: AwareDatetime | None = None" in text  # pydantic cannot parse "tomorrow"
    assert 'default={"kind": "x"}, validate_default=True' in text
    import_all(out / "client", "dflt_client")
    check = (
        "import datetime, sys; sys.path.insert(0, sys.argv[1]);"
        "from dflt_client.models import Settings; s = Settings();"
        "assert s.since == datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc), s;"
        "assert s.pet is not None and s.pet.kind == 'x', s"
    )
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", check, str(out / "client")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
