"""The null rules of JSON bodies (generator/server/nulls.py): where null is refused,
finite for recursive schemas, one rule per place whatever the member names."""

from __future__ import annotations

from typing import Any

from generator.ir import Schema, Where
from generator.server.nulls import NullRules

HERE = Where("spec.yaml", "#")


def rules_of(body: dict[str, Any], components: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    schemas = {name: Schema(name, data, HERE) for name, data in components.items()}
    rules = NullRules(schemas)
    return rules.body(Schema(None, body, HERE), "op.body"), rules.table()


def test_recursive_schemas_are_named_once() -> None:
    node = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "next": {"$ref": "#/components/schemas/Node"}},
    }
    root, table = rules_of({"$ref": "#/components/schemas/Node"}, {"Node": node})
    assert root == "Node"
    assert table == {"Node": {"label": [True, None], "next": [True, "Node"]}}


def test_members_named_like_paths_get_rules_of_their_own() -> None:
    body = {
        "type": "object",
        "properties": {
            "a.b": {"type": "object", "properties": {"x": {"type": "string"}}},
            "a": {
                "type": "object",
                "properties": {"b": {"type": "object", "properties": {"y": {"type": "integer"}}}},
            },
        },
    }
    assert rules_of(body, {}) == (
        "op.body",
        {
            "op.body": {"a.b": [True, "op.body.a.b"], "a": [True, "op.body.a"]},
            "op.body.a": {"b": [True, "op.body.a.b'"]},  # not the member "a.b"'s rule
            "op.body.a.b": {"x": [True, None]},
            "op.body.a.b'": {"y": [True, None]},
        },
    )


def test_null_is_taken_where_the_schema_admits_it_or_is_in_doubt() -> None:
    admits = [
        {"type": ["string", "null"]},
        {"type": "string", "nullable": True},
        {"type": "string", "default": None},
        {"enum": ["a", None]},
        {"const": None},
        {"description": "no type"},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"$ref": "#/components/schemas/Missing"},
    ]
    refuses = [
        {"type": "string"},
        {"enum": ["a"]},
        {"allOf": [{"type": "integer"}]},
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    ]
    rules = NullRules({})
    assert [rules.admits_null(s) for s in admits] == [True] * len(admits)
    assert [rules.admits_null(s) for s in refuses] == [False] * len(refuses)


def test_required_members_are_left_to_the_model() -> None:
    body = {
        "allOf": [{"required": ["id"]}],
        "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
    }
    assert rules_of(body, {}) == ("op.body", {"op.body": {"note": [True, None]}})
    assert rules_of(
        {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}, {}
    ) == (None, {})
