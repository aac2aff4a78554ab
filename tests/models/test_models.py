"""The models module: naming regressions from real specs, the description placeholders of the
models cache, and the library's run (garbage collector)."""

from __future__ import annotations

import copy
import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.models import build as models
from generator.models import subset as model_subset
from generator.models.build import (
    generate_models,
    models_cache_key,
    preloaded,
)
from generator.models.class_names import model_class_names
from generator.models.subset import restore_descriptions, schema_subset


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(cache))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    models.clear_memo()
    yield cache
    models.clear_memo()


def _spec(schemas: dict[str, Any], openapi: str = "3.0.3") -> dict[str, Any]:
    return {
        "openapi": openapi,
        "info": {"title": "t", "version": "1"},
        "paths": {},
        "components": {"schemas": schemas},
    }


def _models(data: dict[str, Any]) -> str:
    names = model_class_names(data["components"]["schemas"])
    with preloaded("spec.yaml", data):
        return generate_models("spec.yaml", class_names=names, header="# h")


def _fresh(data: dict[str, Any]) -> str:
    """What the library writes for `data` with the real description texts, no cache."""
    names = model_class_names(data["components"]["schemas"])
    job = models._job(data, names, "# h", placeholders=False)
    assert job is not None and not job.descriptions
    return models._run(job.subset, job.options)


def _key(data: dict[str, Any]) -> str:
    names = model_class_names(data["components"]["schemas"])
    job = models._job(data, names, "# h")
    assert job is not None
    return job.key


def _obj(*props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string"} for p in props}}


# --- models made inside a component (apisguru: just-eat, peertube, influxdata, apple) -------
#
# Root cause: the library matches a `model_name_map` key by a model's generated name and also
# by the name it was derived from. Models made inside component `Req` (its oneOf members, the
# union model of an allOf) are derived from the name the schema sits under in the subset; when
# that was the class name `Req` itself, every one of them matched the `Req` → `ReqInline` key
# (meant for an inline model that would take the component's name, Stripe-style), and the
# second failed the run: "maps '#/components/schemas/Req#-...-#/1#...' to 'ReqInline', but that
# model name is already used". Without those keys the Stripe-style clash failed instead
# ("maps '#/components/schemas/Links' to 'Links' ... already used"): the whole generation
# failed either way.

ONE_OF_OBJECTS = {  # just-eat's PromotedPlacementCancelPlacementRequest
    "Req": {"oneOf": [_obj("a"), _obj("b")]},
}
ONE_OF_STRINGS_AND_REF = {  # apple's DateComponents
    "DateComponents": {
        "oneOf": [
            {"type": "string", "pattern": "[0-9]{4}"},
            {"type": "string", "pattern": "[0-9]{4}-[0-9]{2}"},
            {"type": "string", "format": "date"},
            {"$ref": "#/components/schemas/Explicit"},
        ]
    },
    "Explicit": _obj("year"),
}
ALL_OF_ONE_OF = {  # peertube's VideoCreateImport
    "VideoCreateImport": {
        "allOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "oneOf": [
                    {"properties": {"url": {"type": "string"}}, "required": ["url"]},
                    {"properties": {"magnet": {"type": "string"}}, "required": ["magnet"]},
                ],
            },
            {"$ref": "#/components/schemas/Common"},
        ],
        "required": ["name"],
    },
    "Common": _obj("name"),
}
ALL_OF_DISCRIMINATED = {  # influxdata's Check (and a Stripe-style clash on `links`)
    "Check": {"allOf": [{"$ref": "#/components/schemas/CheckDiscriminator"}]},
    "CheckDiscriminator": {
        "oneOf": [
            {"$ref": "#/components/schemas/Deadman"},
            {"$ref": "#/components/schemas/Custom"},
        ],
        "discriminator": {
            "propertyName": "type",
            "mapping": {"deadman": "#/components/schemas/Deadman", "custom": "Custom"},
        },
    },
    "Deadman": {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "enum": ["deadman"]}, "links": _obj("self")},
    },
    "Custom": {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "enum": ["custom"]}, "links": _obj("self")},
    },
    "Links": _obj("next"),
}


@pytest.mark.parametrize(
    "schemas",
    [ONE_OF_OBJECTS, ONE_OF_STRINGS_AND_REF, ALL_OF_ONE_OF, ALL_OF_DISCRIMINATED],
    ids=["oneOf-objects", "oneOf-strings-and-ref", "allOf-oneOf", "allOf-discriminated"],
)
def test_models_made_inside_a_component_do_not_fail_the_run(schemas: dict[str, Any]) -> None:
    text = _models(_spec(schemas))
    defined = models.defined_names(text)
    for name, cls in model_class_names(schemas).items():
        assert cls in defined, (name, cls)
    compile(text, "models.py", "exec")


def test_class_names_kept_between_runs_follow_the_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    first = model_class_names(["pet", "Pet", "None"])
    assert model_class_names(["pet", "Pet", "None"]) == first  # served from the cache
    assert first == {"None": "NoneModel", "Pet": "Pet", "pet": "Pet2"}
    assert model_class_names(["pet", "None"]) == {"None": "NoneModel", "pet": "Pet"}
    assert model_class_names(["pet"], reserved={"Pet"}) == {"pet": "Pet2"}


def test_members_of_a_component_are_numbered_by_the_library() -> None:
    text = _models(_spec(ONE_OF_OBJECTS))
    assert "class Req1(BaseModel)" in text and "class Req2(BaseModel)" in text
    assert "class Req(RootModel[Req1 | Req2])" in text
    assert "ReqInline" not in text


def test_discriminator_mappings_follow_the_renamed_schemas() -> None:
    # schemas sit in the subset under another name than in the document: mapping values
    # (references and bare schema names) must follow, or the union loses its discriminator
    data = _spec(ALL_OF_DISCRIMINATED)
    names = model_class_names(data["components"]["schemas"])
    subset = schema_subset(data, names)
    assert subset is not None
    mapping = subset["components"]["schemas"]["checkDiscriminator"]["discriminator"]["mapping"]
    assert mapping == {"deadman": "#/components/schemas/deadman", "custom": "custom"}
    text = _models(data)
    assert "Field(discriminator=" in text
    assert "class Links(BaseModel)" in text and "LinksInline" in text


def _literals(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "Literal[" in line]


def test_instance_data_is_copied_as_written() -> None:
    # a `$ref` key inside an example or an enum value is data, not a reference to rewrite
    pointer = {"$ref": "#/components/schemas/Widget"}
    data = _spec(
        {
            "Widget": {"type": "object", "example": {"self": pointer}, "properties": {}},
            "Choice": {"enum": [pointer, "a"]},
        }
    )
    subset = schema_subset(data, model_class_names(data["components"]["schemas"]))
    assert subset is not None
    schemas = subset["components"]["schemas"]
    assert schemas["widget"]["example"] == {"self": pointer}
    assert schemas["choice"]["enum"] == [pointer, "a"]


@pytest.mark.parametrize(("dog", "cat"), [("Dog", "Cat"), ("dog_thing", "cat.thing")])
def test_a_subtype_left_out_of_the_mapping_is_told_by_its_schema_name(dog: str, cat: str) -> None:
    # OpenAPI: without a mapping entry, a subtype's discriminator value is its schema's name
    # in the document (not its class name, nor the name it has in the subset)
    members = {
        name: {
            "type": "object",
            "required": ["petType"],
            "properties": {"petType": {"type": "string"}, name[:3]: {"type": "boolean"}},
        }
        for name in (dog, cat)
    }
    one_of = {
        "Pet": {
            "oneOf": [
                {"$ref": f"#/components/schemas/{dog}"},
                {"$ref": f"#/components/schemas/{cat}"},
            ],
            "discriminator": {"propertyName": "petType"},
        },
        **members,
    }
    assert _literals(_models(_spec(one_of)))[:2] == [
        f"pet_type: Annotated[Literal['{dog}'], Field(alias='petType')]",
        f"pet_type: Annotated[Literal['{cat}'], Field(alias='petType')]",
    ]
    inherited = {
        "Pet": {
            "type": "object",
            "required": ["petType"],
            "properties": {"petType": {"type": "string"}},
            "discriminator": {"propertyName": "petType", "mapping": {"kitty": cat}},
        },
        dog: {"allOf": [{"$ref": "#/components/schemas/Pet"}, _obj("bark")]},
        cat: {"allOf": [{"$ref": "#/components/schemas/Pet"}, _obj("meow")]},
        "Owner": {"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"}}},
    }
    assert _literals(_models(_spec(inherited))) == [
        f"pet_type: Literal['{dog}'] = Field(..., alias='petType')",
        "pet_type: Literal['kitty'] = Field(..., alias='petType')",
    ]


# --- description placeholders --------------------------------------------------------------

WIDGETS: dict[str, Any] = {
    "widget": {
        "type": "object",
        "description": "A widget.",
        "required": ["id"],
        "properties": {
            "id": {"type": "string", "maxLength": 10, "description": "The id."},
            "size": {"type": "integer", "default": 3, "description": "How big."},
            "kind": {"$ref": "#/components/schemas/kind"},
            # a property *named* description is a property, not a description
            "description": {"type": "string", "description": "Free text."},
            "note": {
                "type": "string",
                "default": "a default",
                "example": "an example",
                "enum": ["a default", "other"],
            },
        },
    },
    "kind": {"type": "string", "enum": ["a", "b"], "description": "The kind."},
    "price": {"type": "number", "minimum": 0, "description": "A price, in cents."},
}


def _changed(path: str, value: Any) -> dict[str, Any]:
    data = _spec(copy.deepcopy(WIDGETS))
    node: Any = data["components"]["schemas"]
    *parents, last = path.split("/")
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return data


_DELETE = object()


def test_descriptions_are_placeholders_in_the_subset_and_the_key() -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    names = model_class_names(data["components"]["schemas"])
    job = models._job(data, names, "# h")
    assert job is not None
    text = json.dumps(job.subset)
    for real in ("A widget.", "The id.", "How big.", "Free text.", "The kind."):
        assert real not in text
    assert set(job.descriptions) == {
        "A widget.",
        "The id.",
        "How big.",
        "Free text.",
        "The kind.",
        "A price, in cents.",
    }
    widget = job.subset["components"]["schemas"]["widget"]
    assert "description" in widget["properties"]  # the property named so is kept
    assert widget["properties"]["note"]["default"] == "a default"


@pytest.mark.parametrize(
    "path",
    [
        "widget/description",  # of a model (not in the output)
        "widget/properties/id/description",  # of a field: Field(description=...)
        "price/description",  # of a root model's field
        "widget/properties/description/description",  # of the property named description
    ],
)
def test_a_description_change_is_a_cache_hit_with_the_new_text(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _spec(copy.deepcopy(WIDGETS))
    first = _models(before)
    assert "Free text." in first and "How big." in first  # descriptions do reach the output
    after = _changed(path, "New text: \"quoted\", \\ back, 'single', ü, \u2028 and\nnewline.")
    assert _key(after) == _key(before)
    runs: list[object] = []
    real_run = models._run
    monkeypatch.setattr(models, "_run", lambda *a: runs.append(a) or real_run(*a))
    models.clear_memo()  # from the disk cache
    second = _models(after)
    assert runs == []  # the library did not run again
    monkeypatch.undo()
    assert second == _fresh(after)  # byte for byte what a fresh run gives
    if path == "widget/description":
        assert second == first  # a model's own description is not in the output
    else:
        assert second != first and "New text" in second


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("widget/properties/id/maxLength", 11),  # a constraint
        ("widget/properties/size/type", "number"),  # a type
        ("kind/enum", ["a", "b", "c"]),  # an enum value
        ("widget/properties/size/default", 4),  # a default
        ("widget/required", ["id", "size"]),  # the required list
        ("widget/properties/note/default", "other"),  # a string default is data
        ("widget/properties/note/enum", ["a default", "other", "A widget."]),
        ("widget/properties/note/example", "The id."),  # an example is data
        ("widget/properties/description/type", "integer"),  # the property named description
        ("price/description", ""),  # an empty description is kept as it is
        ("price/description", _DELETE),  # so is its absence
        ("widget/properties/id/description", "How big."),  # equal texts stay equal
    ],
)
def test_other_changes_change_the_key(path: str, value: Any) -> None:
    before = _spec(copy.deepcopy(WIDGETS))
    after = _changed(path, value)
    assert _key(after) != _key(before)
    assert _models(after) == _fresh(after)
    assert _models(before) == _fresh(before)


def test_a_spec_that_spells_a_placeholder_gets_the_real_texts() -> None:
    # (a default of `id`: one outside `note`'s enum would be left out of the models)
    data = _changed("widget/properties/id/default", "@apiforge-description-0@")
    names = model_class_names(data["components"]["schemas"])
    job = models._job(data, names, "# h")
    assert job is not None and job.descriptions == ()
    assert "The id." in json.dumps(job.subset)
    assert _models(data) == _fresh(data)
    # a description that spells one
    data = _changed("widget/properties/id/description", "'@apiforge-description-1@'")
    assert _models(data) == _fresh(data)


def test_a_ref_that_may_point_at_a_description_gets_the_real_texts() -> None:
    data = _changed("price/properties", {"p": {"$ref": "#/components/schemas/widget/description"}})
    names = model_class_names(data["components"]["schemas"])
    job = models._job(data, names, "# h")
    assert job is not None and job.descriptions == ()


def test_restore_descriptions() -> None:
    texts = ("plain", 'it\'s "quoted"\n')
    text = "a = Field(description='@apiforge-description-1@')\nb = '@apiforge-description-0@'\n"
    assert restore_descriptions(text, texts) == (
        "a = Field(description='it\\'s \"quoted\"\\n')\nb = 'plain'\n"
    )
    assert restore_descriptions(text, ()) == text
    # a placeholder that is not a whole literal: the caller runs the library again
    assert restore_descriptions("x = 'see @apiforge-description-0@'\n", texts) is None
    assert restore_descriptions("x = '@apiforge-description-7@'\n", texts) is None


def test_a_placeholder_the_library_did_not_write_whole_means_a_real_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    real_run = models._run
    calls: list[bool] = []

    def run(subset: Any, options: Any) -> str:
        placeholders = "@apiforge-description-" in json.dumps(subset)
        calls.append(placeholders)
        text = real_run(subset, options)
        return text.replace("'@apiforge-description-", "'x @apiforge-description-")

    monkeypatch.setattr(models, "_run", run)
    text = _models(data)
    assert calls == [True, False]
    assert "The id." in text


def test_models_cache_key_is_the_same_for_the_same_input() -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    names = model_class_names(data["components"]["schemas"])
    a = schema_subset(data, names)
    b = schema_subset(copy.deepcopy(data), names)
    assert a is not None and b is not None
    options = models._options({v: v for v in names.values()}, "# h")
    assert models_cache_key(a, options) == models_cache_key(b, options)


def test_the_prefetch_and_the_request_after_it_share_one_subset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    names = model_class_names(data["components"]["schemas"])
    built: list[object] = []
    real = models.schema_subset
    monkeypatch.setattr(models, "schema_subset", lambda *a, **k: built.append(a) or real(*a, **k))
    with preloaded("spec.yaml", data):
        prefetch = models.prefetch_models("spec.yaml", class_names=names, header="# h")
        if prefetch is not None:
            prefetch.join()
        text = generate_models("spec.yaml", class_names=names, header="# h")
        assert generate_models("spec.yaml", class_names=names, header="# h") == text
    assert len(built) == 1
    models.clear_memo()
    assert text == _models(data)  # and it is the module a plain request gives


def test_the_restored_module_is_cached_so_a_repeat_needs_no_literal_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    first = _models(data)
    assert "Free text." in first
    models.clear_memo()  # from the disk cache now

    def no_writer() -> None:
        raise AssertionError("the literal writer was asked for")

    monkeypatch.setattr(model_subset, "_literal_writer", no_writer)
    assert _models(data) == first
    changed = _changed("widget/properties/id/description", "Another text.")
    with pytest.raises(AssertionError, match="literal writer"):
        _models(changed)  # new texts: restored again, with the writer


def _counting_subsets(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    built: list[object] = []
    real = models.schema_subset
    monkeypatch.setattr(models, "schema_subset", lambda *a, **k: built.append(a) or real(*a, **k))
    return built


def _models_of(data: dict[str, Any], **identity: str) -> str:
    names = model_class_names(data["components"]["schemas"])
    models.clear_memo()  # a new process: only the disk cache remembers
    with preloaded("spec.yaml", data, **identity):
        return generate_models("spec.yaml", class_names=names, header="# h")


def test_a_document_seen_before_needs_no_subset(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _spec(copy.deepcopy(WIDGETS))
    built = _counting_subsets(monkeypatch)
    first = _models_of(data, digest="doc-1")
    assert len(built) == 1
    assert _models_of(data, digest="doc-1") == first
    assert len(built) == 1  # recognised by its digest: no subset, no library
    changed = _changed("widget/properties/id/maxLength", 11)
    assert _models_of(changed, digest="doc-2") != first  # another text: built again
    assert len(built) == 2
    plain = _spec({"Thing": _obj("a", "b")})  # no descriptions: the module is found as it is
    assert _models_of(plain, digest="doc-3") == _models_of(plain, digest="doc-3")
    assert len(built) == 3


def test_a_components_entry_seen_before_needs_no_subset_unless_it_points_outside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = _counting_subsets(monkeypatch)
    data = _spec(copy.deepcopy(WIDGETS))
    first = _models_of(data, digest="doc-1", components_digest="components-1")
    assert _models_of(data, digest="doc-2", components_digest="components-1") == first
    assert len(built) == 1  # a path changed, not the components: recognised
    # a schema taking part of `paths`: the components' text alone does not decide the subset
    outside = _spec({"Hook": {"$ref": "#/paths/~1hooks/post/requestBody/content/x/schema"}})
    outside["paths"] = {
        "/hooks": {
            "post": {
                "requestBody": {
                    "content": {
                        "x": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
                    }
                }
            }
        }
    }
    one = _models_of(outside, digest="doc-3", components_digest="components-2")
    outside["paths"]["/hooks"]["post"]["requestBody"]["content"]["x"]["schema"]["properties"] = {
        "b": {"type": "integer"}
    }
    two = _models_of(outside, digest="doc-4", components_digest="components-2")
    assert len(built) == 3 and one != two and "b: int" in two


# --- the library's run ------------------------------------------------------------------------


def test_the_collector_is_paused_during_a_run_and_back_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import datamodel_code_generator as dcg

    seen: list[bool] = []
    real = dcg.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(dcg, "generate", generate)
    assert gc.isenabled()
    _models(_spec(copy.deepcopy(WIDGETS)))
    assert seen == [False] and gc.isenabled()

    def failing(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        raise ValueError("no")

    monkeypatch.setattr(dcg, "generate", failing)
    models.clear_memo()
    with pytest.raises(models.ApiforgeError):
        _models(_spec({"other": _obj("x")}))
    assert gc.isenabled()


def test_yaml_timestamps_reach_the_library_as_the_strings_json_would_hold() -> None:
    """YAML 1.2 has no dates, so the loader gives the strings JSON would hold. (As dates,
    the library wrote `datetime.date(...)` defaults without importing datetime and enum
    members like `2010-04-01` that do not compile: linode, telnyx, xero.)"""
    from generator.spec.load import load_yaml

    data = load_yaml(
        "openapi: 3.0.3\ncomponents:\n  schemas:\n"
        "    Version: {type: string, enum: [2010-04-01], default: 2010-04-01}\n"
        "    Holiday: {type: object, properties: {on: {example: 2010-04-01}}}\n"
    )[0]
    subset = schema_subset(data, model_class_names(data["components"]["schemas"]))
    assert subset is not None
    text = repr(subset)
    assert "datetime" not in text and "'2010-04-01'" in text
