"""The one home for schema questions (generator/schemas.py): references, members, type tests
and media types, answered alike for every product."""

from __future__ import annotations

from typing import Any

from generator.ir import MediaType, Response, Schema, Where
from generator.schemas import (
    REF_HOPS,
    component_name,
    essence,
    first_json,
    is_inline_key,
    is_json,
    json_media,
    may_be_type,
    required_properties,
    resolved,
    resolved_data,
    schema_properties,
)

HERE = Where("spec.yaml", "/components/schemas/X")


def _schemas(**data: Any) -> dict[str, Schema]:
    return {name: Schema(name, node, HERE) for name, node in data.items()}


def test_a_component_reference_names_its_component_unescaped() -> None:
    assert component_name("#/components/schemas/Pet") == "Pet"
    assert component_name("#/components/schemas/a~1b~0c") == "a/b~c"
    assert component_name("#/components/schemas/Pet/properties/id") == "Pet/properties/id"
    assert component_name("#/paths/~1pets") is None
    assert component_name("other.yaml#/Pet") is None
    assert component_name(None) is None


def test_references_are_followed_to_components_and_a_loop_resolves_to_nothing() -> None:
    schemas = _schemas(
        Pet={"$ref": "#/components/schemas/Animal"},
        Animal={"type": "object"},
        Loop={"$ref": "#/components/schemas/Loop"},
    )
    assert resolved_data({"$ref": "#/components/schemas/Pet"}, schemas) == {"type": "object"}
    assert resolved_data({"$ref": "#/components/schemas/Loop"}, schemas) == {}
    assert resolved_data({"$ref": "#/components/schemas/Missing"}, schemas) == {}
    elsewhere = {"$ref": "#/paths/~1pets"}
    assert resolved_data(elsewhere, schemas) is elsewhere  # not a component: as it is
    assert resolved_data([1], schemas) == {}
    assert resolved(schemas["Pet"], schemas) == {"type": "object"}
    assert resolved(None, schemas) is None
    # an unknown component: the last node reached
    missing = Schema(None, {"$ref": "#/components/schemas/Missing"}, HERE)
    assert resolved(missing, schemas) == {"$ref": "#/components/schemas/Missing"}
    assert REF_HOPS >= 2


def test_members_and_required_names_include_all_of() -> None:
    schemas = _schemas(Base={"properties": {"id": {"type": "string"}}, "required": ["id"]})
    data = {
        "allOf": [{"$ref": "#/components/schemas/Base"}],
        "properties": {"name": {"type": "string"}},
        "required": ["name", 7],
    }
    assert list(schema_properties(data, schemas)) == ["id", "name"]
    assert required_properties(data, schemas) == ["name", "id"]


def test_may_be_type_reads_one_type_a_list_of_types_or_none() -> None:
    strings = frozenset({"string"})
    assert may_be_type({"type": "string"}, strings)
    assert may_be_type({"type": ["integer", "string"]}, strings)
    assert may_be_type({}, strings)
    assert not may_be_type({"type": "integer"}, strings)


def test_json_media_types() -> None:
    assert essence("Application/JSON; charset=utf-8") == "application/json"
    assert is_json("application/problem+json")
    assert is_json("*/*") and not is_json("*/*", any_type=False)
    assert not is_json("text/csv")
    csv = MediaType("text/csv", None, HERE)
    json = MediaType("application/vnd.api+json", None, HERE)
    assert first_json([csv, json]) is json
    assert first_json([csv]) is None
    response = Response("200", "ok", (), (csv, json), HERE)
    assert json_media(response) is json
    assert json_media(None) is None


def test_inline_keys_are_pointers_component_names_are_not() -> None:
    assert is_inline_key("#/paths/~1pets/post/requestBody/content/application~1json/schema")
    assert not is_inline_key("Pet")
