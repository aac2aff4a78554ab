"""Validation (generator.spec.validate): real specs' YAML does not crash it, `pattern`s are
ECMA-262 regexes, and without `strict` its errors are located warnings instead of an error."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.errors import ApiforgeError
from generator.spec import check_root
from generator.spec.load import load_document
from generator.spec.refs import Resolver
from generator.spec.validate import MAX_WARNED, SpecError, collect_errors, validate


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(cache))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    return cache


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """The lines logged on the "apiforge" logger (where the CLI prints warnings from)."""
    handler = _Lines()
    log = logging.getLogger("apiforge")
    log.addHandler(handler)
    try:
        yield handler.lines
    finally:
        log.removeHandler(handler)


def _resolver(tmp_path: Path, text: str, name: str = "spec.yaml") -> Resolver:
    path = tmp_path / name
    path.write_text(text)
    root = load_document(str(path))
    check_root(root)
    return Resolver(root)


def _errors(tmp_path: Path, text: str) -> list[SpecError]:
    return collect_errors(_resolver(tmp_path, text))


# --- YAML that JSON has not (openapi-spec-validator crashed on these corpus specs) -----------

# apicurio registry: `x-codegen-contextRoot` among the paths (KeyError in the old validator)
EXTENSIONS = """openapi: 3.0.3
info: {title: T, version: '1', x-logo: {url: 'https://example.com/logo.png'}}
paths:
  /a:
    x-handler: {module: a}
    get:
      responses:
        '200': {description: ok}
        x-note: responses may carry extensions too
        x-cached:
          content:
            application/json:
              schema: {type: string, pattern: '[a-'}
  x-codegen-contextRoot: /apis/registry/v2
  x-internal:
    get:
      operationId: not-an-operation
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, default: 5}}
"""


def test_extension_keys_among_paths_and_responses_are_not_paths(tmp_path: Path) -> None:
    assert _errors(tmp_path, EXTENSIONS) == []
    validate(_resolver(tmp_path, EXTENSIONS, "again.yaml"))  # no error


# asana, billingo: unquoted dates (`example: 2019-09-15`) are datetime.date values, which
# jsonschema-rs does not take ("Unsupported type: 'date'")
DATES = """openapi: 3.0.3
info: {title: T, version: '1'}
paths:
  /a:
    get:
      parameters:
        - {name: since, in: query, schema: {type: string, format: date}, example: 2019-09-15}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Day'}
              example: {day: 2019-09-15}
components:
  schemas:
    Day:
      type: object
      properties:
        day: {type: string, format: date, example: 2019-09-15}
        first: {type: string, format: date, default: 2020-01-01}
        raw: {type: string, default: !!binary aGk=}
        ref: {allOf: [{$ref: '#/components/schemas/Name'}], default: x}
      example: {day: 2019-09-15, stamps: [2019-09-15 10:00:00]}
    Name: {type: string, enum: [x, y], example: 2020-02-02}
"""


def test_yaml_dates_are_strings_and_other_yaml_values_not_a_crash(tmp_path: Path) -> None:
    errors = _errors(tmp_path, DATES)
    # YAML 1.2 has no dates: `default: 2020-01-01` is a string's valid default. A YAML value
    # JSON has not (`!!binary`) as a string's default is refused, worded as Python's
    # `jsonschema` words it (not as the `{"$yaml": ...}` stand-in jsonschema-rs was given)
    assert [(e.kind, e.where.pointer, e.message) for e in errors] == [
        (
            "default",
            "/components/schemas/Day/properties/raw/default",
            "default: b'hi' is not of type 'string'",
        )
    ]


# fec.gov: a property named `no` (YAML 1.1: the boolean false) and other non-string keys
# ("Dict key must be str or str enum. Got 'bool'")
BOOL_KEYS = """openapi: 3.0.3
info: {title: T, version: '1'}
paths:
  /a:
    get:
      responses:
        200:
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  no: {type: string}
                  yes: {type: integer, default: 1}
                  on: {$ref: '#/components/schemas/Flag'}
                example: {no: 1986-42, true: [1], 3: three}
components:
  schemas:
    Flag: {type: boolean, default: true}
"""


def test_non_string_keys_are_keys_not_a_crash(tmp_path: Path) -> None:
    assert _errors(tmp_path, BOOL_KEYS) == []
    validate(_resolver(tmp_path, BOOL_KEYS, "again.yaml"))


# --- `pattern`: ECMA-262 ------------------------------------------------------------------

PATTERN = """openapi: {version}
info: {{title: T, version: '1'}}
paths:
  /a:
    get:
      parameters:
        - name: q
          in: query
          schema: {{type: string, pattern: '{pattern}'}}
      responses:
        '200': {{description: ok}}
components:
  schemas:
    Name: {{type: string, pattern: '{pattern}'}}
"""


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize(
    "pattern",
    [
        r"[\p{L}\p{M}\p{Z}\p{S}\p{N}\p{P}]*",  # amazonaws iam, redshift, sagemaker
        r"^\p{Lu}[\p{Ll}\s]*$",
        r"^(?<year>\d{4})-\k<year>$",  # ECMA named groups
        r"^(?P<year>\d{4})$",  # Python's, as openapi-schema-validator accepted it
        r"^(?!-)[a-z0-9-]+\Z",
    ],
)
def test_ecma_262_and_python_patterns_are_valid(tmp_path: Path, version: str, pattern: str) -> None:
    assert _errors(tmp_path, PATTERN.format(version=version, pattern=pattern)) == []


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize("pattern", ["[a-", "(unclosed", "a{2,1}"])
def test_broken_patterns_are_still_reported(tmp_path: Path, version: str, pattern: str) -> None:
    errors = _errors(tmp_path, PATTERN.format(version=version, pattern=pattern))
    assert {(e.kind, e.where.pointer) for e in errors} == {
        ("schema", "/paths/~1a/get/parameters/0/schema/pattern"),
        ("schema", "/components/schemas/Name/pattern"),
    }
    assert all(f"{pattern!r} is not a 'regex'" in e.message for e in errors)


# --- strict or not --------------------------------------------------------------------------


def _invalid(count: int) -> str:
    paths = "".join(
        f"  /p{i}:\n    get:\n      responses:\n        '200': {{description: {i}}}\n"
        for i in range(count)
    )
    return "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:" + (
        f"\n{paths}" if paths else " {}\n"
    )


def test_not_strict_warns_each_error_with_its_location(tmp_path: Path, warnings: list[str]) -> None:
    assert validate(_resolver(tmp_path, _invalid(2)), strict=False) == 2
    spec = tmp_path / "spec.yaml"
    assert warnings == [
        f"warning: {spec}:7:17 (#/paths/~1p0/get/responses/200/description): "
        "0 is not of type 'string'",
        f"warning: {spec}:11:17 (#/paths/~1p1/get/responses/200/description): "
        "1 is not of type 'string'",
        f"warning: {spec} is not valid OpenAPI 3.x (2 errors); generating anyway — "
        "pass --strict to make this an error",
    ]


def test_not_strict_warns_at_most_20_then_counts_the_rest(
    tmp_path: Path, warnings: list[str]
) -> None:
    assert validate(_resolver(tmp_path, _invalid(57)), strict=False) == 57
    assert len(warnings) == MAX_WARNED + 2 == 22
    assert all("is not of type 'string'" in line for line in warnings[:20])
    assert warnings[20] == "warning: … and 37 more"
    assert warnings[21].endswith(
        "is not valid OpenAPI 3.x (57 errors); generating anyway — "
        "pass --strict to make this an error"
    )


def test_strict_raises_every_error_as_before(tmp_path: Path, warnings: list[str]) -> None:
    with pytest.raises(ApiforgeError) as caught:
        validate(_resolver(tmp_path, _invalid(57)))
    assert len(caught.value.problems) == 50
    assert caught.value.hint.startswith("7 more not shown")
    assert warnings == []


def test_a_valid_spec_warns_nothing(tmp_path: Path, warnings: list[str]) -> None:
    assert validate(_resolver(tmp_path, _invalid(0)), strict=False) == 0
    assert warnings == []


def test_errors_of_the_same_content_come_from_the_cache_under_its_new_name(
    tmp_path: Path, warnings: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert validate(_resolver(tmp_path, _invalid(3), "first.yaml"), strict=False) == 3
    first = list(warnings)
    warnings.clear()

    def boom(resolver: Resolver) -> list[SpecError]:
        raise AssertionError("validated again")

    monkeypatch.setattr("generator.spec.validate.collect_errors", boom)
    assert validate(_resolver(tmp_path, _invalid(3), "second.yaml"), strict=False) == 3
    assert warnings == [line.replace("first.yaml", "second.yaml") for line in first]
    with pytest.raises(ApiforgeError) as caught:
        validate(_resolver(tmp_path, _invalid(3), "third.yaml"))
    assert [p.file for p in caught.value.problems] == [str(tmp_path / "third.yaml")] * 3


def test_what_is_not_a_validation_error_stays_an_error(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("type: [object\n")
    text = _invalid(1) + "components:\n  schemas:\n    A: {$ref: broken.yaml}\n"
    with pytest.raises(ApiforgeError) as caught:
        validate(_resolver(tmp_path, text), strict=False)
    assert "broken.yaml" in caught.value.render()


def test_a_dangling_ref_is_a_validation_error(tmp_path: Path, warnings: list[str]) -> None:
    text = _invalid(1) + "components:\n  schemas:\n    A: {$ref: '#/components/schemas/Nope'}\n"
    assert validate(_resolver(tmp_path, text), strict=False) == 2
    assert warnings[1] == (
        f"warning: {tmp_path / 'spec.yaml'}:10:9 (#/components/schemas/A/$ref): "
        "$ref '#/components/schemas/Nope' cannot be resolved: "
        f"#/components/schemas/Nope does not exist in {tmp_path / 'spec.yaml'}"
    )
