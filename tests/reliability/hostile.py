"""Hostile specs: one per class of hostile input, built as data (written as JSON, so NUL and
every other character survive).

`build(cls)` puts the class's `names` everywhere a name reaches generated code — operationIds,
tags, query/header/path parameter names, property names, component schema names (those the
OpenAPI schema allows as keys), enum values — and its `text` everywhere text does: title,
descriptions, summaries, examples, defaults, enum values, response headers. The canary payload
`__import__('os').system('touch CANARY')` appears in names and texts of every class; anything
from the spec that ran would leave a CANARY file in the working directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

CANARY = "__import__('os').system('touch CANARY')"
_KEY = re.compile(r"[A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Hostile:
    name: str
    names: tuple[str, ...]
    text: str
    schema_names: tuple[str, ...] = ()
    extra_schemas: tuple[tuple[str, Any], ...] = ()


CLASSES: tuple[Hostile, ...] = (
    Hostile(
        "triple_double_quotes",
        ('a"""b', '"""', f'x"""; {CANARY}; """'),
        f'doc """ {CANARY} """ ends with """',
    ),
    Hostile(
        "triple_single_quotes",
        ("a'''b", "'''", f"x'''; {CANARY}; '''"),
        f"doc ''' {CANARY} ''' ends with '''",
    ),
    Hostile(
        "backslashes",
        ("a\\b", "\\", "end\\", "\\N{BULLET}"),
        "ends with a backslash \\ and \\x00 \\u0041 \\N{BULLET} \\'\\\"\\",
    ),
    Hostile(
        "jinja_expressions",
        ("{{ x }}", "{{ config }}", "{{"),
        "{{ 7*7 }} {{ self.__init__.__globals__ }} "
        "{{ cycler.__init__.__globals__.os.system('touch CANARY') }} }}",
    ),
    Hostile(
        "jinja_statements",
        ("{% raw %}", "{% endraw %}", "{#"),
        "{% for x in range(3) %}{{ x }}{% endfor %} {% raw %} {% import 'os' as os %} "
        "{% set x = cycler.__init__.__globals__.os.system('touch CANARY') %} {# comment",
    ),
    Hostile(
        "newlines",
        ("a\nb", "line\r\nbreak", "tab\there"),
        f'first\nsecond\r\n"""\n# comment\n    indented\n{CANARY}\n\u2028sep\u2029\n\\',
    ),
    Hostile("nul", ("a\x00b", "\x00"), f"nul \x00 byte {CANARY} \x00"),
    Hostile(
        "python_code",
        (CANARY, "exec('import os')", "eval('1')"),
        f'{CANARY}\n"""; {CANARY}; """\n\'); {CANARY}; (\'',
    ),
    Hostile(
        "keywords_and_builtins",
        (
            "class",
            "def",
            "import",
            "None",
            "True",
            "self",
            "print",
            "list",
            "type",
            "id",
            "async",
            "await",
            "match",
            "case",
            "_",
            "__init__",
            "__class__",
            "ctx",
            "body",
            "request",
            "response",
            "Any",
            "models",
            "BaseModel",
            "Field",
            "cls",
            "return",
        ),
        "None",
        schema_names=(
            "Field",
            "BaseModel",
            "list",
            "str",
            "Any",
            "Optional",
            "date",
            "datetime",
            "class",
            "None",
            "RootModel",
            "Enum",
            "Annotated",
            "Reply",
        ),
    ),
    Hostile(
        "snake_case_collisions",
        ("userId", "user_id", "UserId", "user-id", "USER_ID", "user id", "user.id", "user__id"),
        "collide",
        schema_names=("User", "user", "USER", "user_", "User_", "user-", "u.ser"),
    ),
    Hostile(
        "unicode",
        ("ünïcödé", "名前", "🎉", "Ωmega", "\u210c", "İ", "a\u200bb", "\u202eevil"),
        "日本語 — emoji 🎉 RTL \u202e gnp.exe \ud7ff combining e\u0301",
        schema_names=("Ünïcödé", "名前"),
    ),
    Hostile(
        "long_names",
        ("a" * 10_000, "B" * 9_999 + "x", "c_" * 5_000),
        "x" * 10_000,
        schema_names=("S" * 10_000, "t" * 10_000),
    ),
    Hostile(
        "recursive_schemas",
        ("node", "tree"),
        "recursion",
        extra_schemas=(),  # filled by build()
    ),
)


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for i in range(levels):
        node = {"type": "object", "properties": {f"level{i}": node}}
    return node


_RECURSIVE: dict[str, Any] = {
    "Node": {
        "type": "object",
        "required": ["value"],
        "properties": {
            "value": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            "parent": {"$ref": "#/components/schemas/Node"},
        },
    },
    "Even": {
        "type": "object",
        "properties": {"next": {"$ref": "#/components/schemas/Odd"}, "n": {"type": "integer"}},
    },
    "Odd": {
        "type": "object",
        "properties": {"next": {"$ref": "#/components/schemas/Even"}},
    },
    "Expr": {
        "oneOf": [
            {"type": "integer"},
            {
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": ["+", "-"]},
                    "args": {"type": "array", "items": {"$ref": "#/components/schemas/Expr"}},
                },
            },
        ]
    },
    "Loop": {
        "allOf": [{"$ref": "#/components/schemas/Node"}, {"$ref": "#/components/schemas/Even"}]
    },
    # FastAPI derives /openapi.json through pydantic, which recurses past Python's limit
    # between 30 and 45 nested levels: operations use `Deep`, the 60 levels stay a component
    # (models.py must still compile, import and type-check).
    "Deep": _deep(30),
    "Deeper": _deep(60),
}


def _text_schema(text: str, names: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "string",
        "description": text,
        "example": text,
        "default": text,
        "enum": [text, *names],
    }


def build(cls: Hostile) -> dict[str, Any]:
    text, names = cls.text, cls.names
    schema_names = [n for n in (*cls.schema_names, *names) if _KEY.fullmatch(n)]
    schemas: dict[str, Any] = {}
    properties: dict[str, Any] = {n: _text_schema(text, names) for n in names}
    properties["plain"] = {"type": "integer", "description": text, "example": 1, "default": 2}
    record = {
        "type": "object",
        "description": text,
        "properties": properties,
        "example": {"plain": 1},
    }
    for i, key in enumerate(dict.fromkeys(schema_names)):
        schemas[key] = record if i == 0 else {"$ref": "#/components/schemas/Record"}
    schemas["Record"] = record
    schemas["Choice"] = {
        "type": "string",
        "enum": list(dict.fromkeys([*names, text])),
        "description": text,
    }
    recursive = cls.name == "recursive_schemas"
    if recursive:
        schemas.update(_RECURSIVE)
    body_ref = {"$ref": f"#/components/schemas/{'Node' if recursive else 'Record'}"}
    paths: dict[str, Any] = {}
    for i, name in enumerate(names):
        path_param = name if re.fullmatch(r"[^{}/?#\x00-\x1f]+", name) else f"p{i}"
        params: list[dict[str, Any]] = [
            {"name": path_param, "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": name, "in": "query", "description": text, "schema": _text_schema(text, names)},
            {
                "name": f"X-{i}-{name}" if i % 2 else name,
                "in": "header",
                "description": text,
                "schema": {"type": "string", "example": text},
            },
        ]
        responses = {
            "200": {
                "description": text,
                "headers": {"X-Trace": {"description": text, "schema": {"type": "string"}}},
                "content": {"application/json": {"schema": body_ref, "example": {"plain": 1}}},
            },
            "default": {
                "description": text,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Choice"}}
                },
            },
        }
        paths[f"/r{i}/{{{path_param}}}"] = {
            "summary": text,
            "get": {
                "operationId": name,
                "tags": [name],
                "summary": text,
                "description": text,
                "parameters": params,
                "responses": responses,
            },
            "post": {
                "operationId": f"{name}_post" if i % 2 else f"{name}{name}",
                "tags": [names[(i + 1) % len(names)]],
                "description": text,
                "parameters": params[:1],
                "requestBody": {
                    "description": text,
                    "required": True,
                    "content": {"application/json": {"schema": body_ref}},
                },
                "responses": responses,
            },
        }
    if recursive:
        for i, key in enumerate(("Even", "Expr", "Loop", "Deep")):
            paths[f"/recursive{i}"] = {
                "put": {
                    "operationId": f"put{key}",
                    "requestBody": {
                        "content": {
                            "application/json": {"schema": {"$ref": f"#/components/schemas/{key}"}}
                        }
                    },
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": f"#/components/schemas/{key}"}
                                }
                            },
                        }
                    },
                }
            }
    return {
        "openapi": "3.1.0",
        "info": {"title": f"Hostile {text}", "version": "1.0", "description": text},
        "servers": [{"url": "https://api.example.com"}],
        "tags": [{"name": n, "description": text} for n in names],
        "paths": paths,
        "components": {"schemas": schemas},
    }
