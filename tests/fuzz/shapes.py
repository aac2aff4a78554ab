"""A table of the spec shapes real specs have that break generated code: what they do to
parameter lists, patterns, component and property names, enums, defaults, formats,
constraints and operationIds. Each `SHAPES` entry builds one small spec (a dict); a spec is a
group of related shapes, so one generation covers many.

`tests/fuzz/test_generated_imports.py` generates each group and imports what it gives;
`bench/import_fuzz.py` also mixes random shapes from these lists into bigger specs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Spec = dict[str, Any]

# patterns each engine treats differently (tests/generate/test_import_safety.py names why)
PATTERNS = [
    r"^\w{1,1000}$^\w{1,1000}$^\w{1,1000}$",
    r"\p{InBasicLatin}+",
    r"\p{L}+",
    r"^(?!x)[a-z]+$",
    r"(?<=a)b",
    r"(a)\1",
    r"\101",
    r"[\uD800-\uDBFF]",
    r"a\Z",
    r"a{,3}",
    r"(?P<n>a)(?P=n)",
    r"[\b]",
    r"(?x) a # comment",
    r"[[:alpha:]]+",
    r"^[a-z]+$",
    "",
]
NAMES = [
    "class", "from", "None", "True", "self", "request", "body", "_request", "ctx", "async",
    "match", "type", "print", "a-b", "a_b", "a.b", "a b", "$filter", "filter[name]", "ünï",
    "日本", "123", "1st", "__dunder__", "model_config", "model_dump", "schema", "copy", "json",
    "root", "Config", "@type", "$ref",
]  # fmt: skip
HEADERS = [
    "X_Under_Score", "x-under-score", "Content-Type", "Accept", "Authorization",
    "Idempotency-Key", "If-Match", "Host", "Cookie", "X-Request-Id", "user-agent",
]  # fmt: skip
ENUMS: list[list[Any]] = [
    [1, "1", True, None, 2.5],
    ["a-b", "a_b", "A B", "", " ", "a-b"],
    ["class", "None", "True", "mro", "name", "value", "_missing_", "123", "日本"],
    [1, 2, 1],
    [None],
    [""],
]
FORMATS = [
    ("string", "date-time"), ("string", "date"), ("string", "time"), ("string", "duration"),
    ("string", "uuid"), ("string", "uri"), ("string", "email"), ("string", "idn-email"),
    ("string", "binary"), ("string", "byte"), ("string", "ipv4"), ("string", "ipv6"),
    ("string", "hostname"), ("string", "password"), ("string", "weird"), ("integer", "int64"),
    ("integer", "unix-time"), ("number", "decimal"), ("number", "float"),
]  # fmt: skip
BOUNDS: list[dict[str, Any]] = [
    {"type": "number", "multipleOf": 0},
    {"type": "integer", "minimum": 1.5, "maximum": 1e400},
    {"type": "integer", "exclusiveMinimum": True, "minimum": 0},
    {"type": "string", "minLength": 10, "maxLength": 2},
    {"type": "string", "maxLength": -3},
    {"type": "array", "items": {"type": "string"}, "minItems": -1},
    {"type": "integer", "minimum": 5, "maximum": 1},
]
OPERATION_IDS = ["get-thing", "get_thing", "getThing", "GetThing", "class", "123", "", "日本"]


def _param(name: str, where: str = "query", schema: dict[str, Any] | None = None) -> Spec:
    return {"name": name, "in": where, "schema": schema or {"type": "string"}}


def _spec(title: str, paths: Spec, schemas: Spec | None = None, openapi: str = "3.1.0") -> Spec:
    spec: Spec = {"openapi": openapi, "info": {"title": title, "version": "1"}, "paths": paths}
    if schemas:
        spec["components"] = {"schemas": schemas}
    return spec


def _get(operation_id: str, parameters: list[Spec]) -> Spec:
    return {
        "get": {
            "operationId": operation_id,
            "parameters": parameters,
            "responses": {"200": {"description": "ok"}},
        }
    }


def _round_trip(operation_id: str, name: str) -> Spec:
    ref = {"$ref": f"#/components/schemas/{name}"}
    return {
        "post": {
            "operationId": operation_id,
            "requestBody": {"content": {"application/json": {"schema": ref}}},
            "responses": {
                "200": {"description": "ok", "content": {"application/json": {"schema": ref}}}
            },
        }
    }


def parameters() -> Spec:
    """Parameter lists: duplicate names across `in`, keywords and non-identifiers, headers
    the server or the client sets itself, hundreds of parameters, path templates whose
    variables other parameters name, patterns and constraints on parameters."""
    paths: Spec = {
        "/dup": _get("dupAcross", [_param("id", w) for w in ("query", "header", "cookie")]),
        "/names": _get("names", [_param(n) for n in NAMES]),
        "/headers": _get("headers", [_param(h, "header") for h in HEADERS]),
        "/many": _get("many", [_param(f"p{i}", schema={"type": "integer"}) for i in range(300)]),
        "/patterns": _get(
            "patterns",
            [
                _param(f"p{i}", schema={"type": "string", "pattern": p})
                for i, p in enumerate(PATTERNS)
            ],
        ),
        "/bounds": _get("bounds", [_param(f"b{i}", schema=s) for i, s in enumerate(BOUNDS)]),
        "/enums": _get("enums", [_param(f"e{i}", schema={"enum": e}) for i, e in enumerate(ENUMS)]),
        "/formats": _get(
            "formats",
            [_param(f"f{i}", schema={"type": t, "format": f}) for i, (t, f) in enumerate(FORMATS)],
        ),
        "/path/{class}/{from}/{a-b}": _get(
            "pathNames",
            [{**_param(n, "path"), "required": True} for n in ("class", "from", "a-b")],
        ),
        "/missing/{a}/{b}": _get(
            "pathMissing",
            [{**_param("a", "path"), "required": True}, {**_param("c", "path"), "required": True}],
        ),
        "/clash/{id}/{Id}": _get("pathClash", [_param("id"), _param("Id", "header")]),
    }
    return _spec("Parameters", paths)


def models(openapi: str = "3.1.0") -> Spec:
    """Component schemas: patterns in every place the library writes one, enums, formats,
    constraints, property names, consts and type lists, discriminators, recursion."""
    schemas: Spec = {
        "Patterns": {
            "type": "object",
            "properties": {
                f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(PATTERNS)
            },
        },
        "PatternShapes": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"type": "string", "pattern": r"\p{Foo}"}},
                "map": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "pattern": r"(a)\1"},
                },
                "keys": {"type": "object", "patternProperties": {r"^\p{Xx}": {"type": "string"}}},
                "either": {
                    "anyOf": [{"type": "string", "pattern": r"\p{Foo}"}, {"type": "integer"}]
                },
            },
        },
        "Root": {"type": "string", "pattern": r"\p{InBasicLatin}"},
        "Bounds": {"type": "object", "properties": {f"b{i}": s for i, s in enumerate(BOUNDS)}},
        "Enums": {
            "type": "object",
            "properties": {f"e{i}": {"enum": e} for i, e in enumerate(ENUMS)},
        },
        "Formats": {
            "type": "object",
            "properties": {f"f{i}": {"type": t, "format": f} for i, (t, f) in enumerate(FORMATS)},
        },
        "Props": {
            "type": "object",
            "properties": {n: {"type": "string"} for n in NAMES},
            "required": ["class", "not-a-property"],
        },
        "Types": {
            "type": "object",
            "properties": {
                "any": {},
                "nothing": {"not": {}},
                "tuple": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "integer"}],
                },
                "null": {"type": "null"},
                "const": {"const": "x"},
            },
        },
        "Defaults": {
            "type": "object",
            "properties": {
                "wrong": {"type": "integer", "default": "abc"},
                "when": {
                    "type": "string",
                    "format": "date-time",
                    "default": "2020-01-01T00:00:00Z",
                },
                "never": {"type": "string", "format": "date-time", "default": "yesterday"},
                "id": {"type": "string", "format": "uuid", "default": "not-a-uuid"},
                "site": {"type": "string", "format": "uri", "default": "https://example.com"},
                "day": {"type": "string", "format": "date", "default": "2023-02-30"},
                "pet": {"$ref": "#/components/schemas/Cat", "default": {"kind": "x"}},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "green"},
                "whole": {"type": "integer", "default": 1.0},
                "list": {"type": "array", "items": {"type": "integer"}, "default": "x"},
                "object": {"const": {"a": 1}},
            },
        },
        "Cat": {"type": "object", "properties": {"kind": {"type": "string"}}},
        "Dog": {
            "type": "object",
            "properties": {"kind": {"type": "integer"}},
            "required": ["kind"],
        },
        "Pet": {
            "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
            "discriminator": {"propertyName": "kind", "mapping": {"x": "#/components/schemas/Cat"}},
        },
        "Tree": {
            "type": "object",
            "properties": {
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}},
                "parent": {"$ref": "#/components/schemas/Tree"},
            },
        },
        "Rejected": {"type": "object", "required": "x", "properties": {"x": {"type": "string"}}},
    }
    if openapi.startswith("3.0"):
        schemas["Types"]["properties"]["null"] = {"type": "string", "nullable": True}
    paths = {f"/m/{i}": _round_trip(f"op{name}", name) for i, name in enumerate(schemas)}
    return _spec(f"Models {openapi}", paths, schemas, openapi)


def names() -> Spec:
    """Component names that are not identifiers, and operationIds colliding after sanitizing."""
    component_names = [
        "404", "1st-place", "class", "None", "Warning", "BaseModel", "Field", "Any", "my-thing",
        "my_thing", "MyThing", "Ünïcödé", "日本", "a.b", "a b", "_", "str", "Model", "Model2",
    ]  # fmt: skip
    schemas = {
        n: {"type": "object", "properties": {"v": {"type": "string"}}} for n in component_names
    }
    paths: Spec = {}
    for i, name in enumerate(component_names):
        paths[f"/c/{i}"] = _round_trip(f"use{i}", name)
    for i, operation_id in enumerate(OPERATION_IDS):
        paths[f"/o/{i}"] = _get(operation_id, [])
    return _spec("Names", paths, schemas)


GROUPS: dict[str, Callable[[], Spec]] = {
    "parameters": parameters,
    "models31": models,
    "models30": lambda: models("3.0.3"),
    "names": names,
}
