"""The server plan without running anything: which pattern each operation gets, the README's
settings, and the generated code's types."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.render.pytypes import TypeMapper
from generator.server.params import constraints as _constraints
from generator.server.plan import _Planner
from generator.server.settings import EXTRA_SETTINGS, settings_rows
from generator.spec import load_spec
from tests.golden import GOLDEN
from tests.server.conftest import SPECS, generate

SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "T", "version": "1"},
    "x-rate-limit": True,
    "paths": {
        "/a": {
            "get": {
                "operationId": "getA",
                "responses": {
                    "200": {
                        "description": "ok",
                        "headers": {"RateLimit": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/b/{id}": {
            "put": {
                "operationId": "putB",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "If-Match", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}, "204": {"description": "none"}},
            }
        },
    },
}


def _planner(tmp_path: Path, spec: dict[str, object]) -> _Planner:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return _Planner(load_spec(str(path)).api, TypeMapper({}, {}))


def test_api_wide_rate_limit_applies_to_every_operation(tmp_path: Path) -> None:
    ops = {o.op.id: o for tag in _planner(tmp_path, SPEC).tags() for o in tag.operations}
    assert ops["getA"].rate_limit == "ietf"  # declared on the operation
    assert ops["putB"].rate_limit == "ietf"  # the API's family
    assert ops["putB"].if_match and not ops["putB"].if_match_required
    assert (ops["putB"].status, ops["putB"].statuses, ops["putB"].empty) == (
        200,
        (200, 204),
        (200, 204),
    )
    # `id` is a builtin: the handler's argument is renamed, the route reads it by its alias
    assert ops["putB"].route_path == "/b/{id}"
    assert "Path(alias='id')" in ops["putB"].params[0].annotation
    no_extension = {k: v for k, v in SPEC.items() if k != "x-rate-limit"}
    tags = _planner(tmp_path, no_extension).tags()  # untagged: `a` and `b`, from the paths
    assert [o.rate_limit for tag in tags for o in tag.operations] == ["ietf", None]


def test_readme_documents_every_setting() -> None:
    readme = (GOLDEN / "acme" / "server" / "README.md").read_text()
    rows = settings_rows()
    assert len(rows) >= len(EXTRA_SETTINGS) + 10
    for variable, _default, description in rows:
        assert f"| `{variable}` |" in readme
        assert description


def test_generated_server_is_mypy_strict_clean(tmp_path: Path) -> None:
    project = tmp_path / "project"
    generate(SPECS / "acme.yaml", project, None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--ignore-missing-imports",
            "--cache-dir",
            str(tmp_path / "cache"),
            "acme_payments_api_server",
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout


def test_a_pattern_the_server_cannot_run_is_named_in_a_warning_not_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """FastAPI validates `pattern` with pydantic-core's Rust regex (no look-around): writing
    such a pattern would stop the generated app at import, so it is left out and named."""
    from generator.server.params import constraints as _constraints

    lookahead = r"^[a-z0-9](([a-z0-9]|-(?!-))*[a-z0-9])?$"
    with caplog.at_level("WARNING", logger="apiforge"):
        kwargs = _constraints({"pattern": lookahead, "maxLength": 63}, "str", "query 'alias'")
    assert kwargs == ["max_length=63"]
    assert "query 'alias'" in caplog.text and "not enforced" in caplog.text
    # ECMA-262 unicode classes are fine for the Rust engine, so they are kept and enforced
    assert _constraints({"pattern": r"[\p{L}]+"}, "str", "x") == ["pattern='[\\\\p{L}]+'"]


def test_a_query_object_is_typed_by_the_one_type_its_properties_share() -> None:
    """Stripe's `created[gte]` ranges: all integers, so `dict[str, int]`; properties of two
    types (however deep the second one's schema) give `dict[str, Any]`."""
    mapper = TypeMapper(
        {"Range": {"$ref": "#/components/schemas/Int"}, "Int": {"type": "integer"}}, {}
    )
    ints = {"type": "object", "properties": {"gt": {"type": "integer"}, "lt": {"type": "integer"}}}
    assert mapper.type_of(ints, mode="param") == "dict[str, int]"
    by_ref = {"type": "object", "properties": {"gt": {"$ref": "#/components/schemas/Range"}}}
    assert mapper.type_of(by_ref, mode="param") == "dict[str, int]"
    nested = {"type": "object", "properties": {"a": {"type": "string"}, "b": ints}}
    mixed = {"type": "object", "properties": {"gt": {"type": "integer"}, "x": nested}}
    assert mapper.type_of(mixed, mode="param") == "dict[str, Any]"
    assert mapper.type_of(nested, mode="param") == "dict[str, Any]"
    assert mapper.type_of(ints) == "dict[str, Any]"  # a model's field: not narrowed


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"format": "int32"}, ["ge=-2147483648", "le=2147483647"]),
        # OpenAPI 3.0's flag without its bound: the range still holds, inclusive
        ({"format": "int32", "exclusiveMinimum": True}, ["ge=-2147483648", "le=2147483647"]),
        ({"format": "int32", "minimum": 0, "exclusiveMinimum": True}, ["gt=0", "le=2147483647"]),
        # OpenAPI 3.1's numeric exclusive bound replaces the range's end
        ({"format": "int64", "exclusiveMaximum": 10}, ["ge=-9223372036854775808", "lt=10"]),
    ],
)
def test_integer_formats_bound_a_parameter(schema: dict[str, object], expected: list[str]) -> None:
    assert sorted(_constraints(schema, "int", "query 'n'")) == sorted(expected)
