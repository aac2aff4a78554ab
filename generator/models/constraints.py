"""Constraint values pydantic refuses at import, and the schema nodes of component schemas.

pydantic-core checks a constraint's value when it builds a validator — at the import of the
generated models module or router: `multipleOf: 0` ("must be a finite number greater than 0"),
`minimum: 1.5` on an integer ("must be coercible to an integer"), `maxLength: -1` or `5.0`.
A spec that says so cannot be enforced as written, so the constraint is left out (of the
models: `subset.schema_subset`; of a route: `server.plan._constraints`) and named in a warning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from generator.ir import Schema, Where

_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_LENGTHS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
CONSTRAINT_KEYS = frozenset({"multipleOf", *_BOUNDS, *_LENGTHS})
_MAX_LENGTH = 2**63  # lengths are unsigned 64-bit integers in pydantic-core
# instance data: a key inside it is a value, not a keyword
_DATA = frozenset({"default", "example", "examples", "enum", "const"})
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def constraint_problem(schema: Mapping[str, Any], key: str) -> str | None:
    """Why pydantic would refuse `schema[key]` as the constraint it stands for; None when it
    takes it (or `key` is not such a constraint, or the value is not used as one)."""
    if key not in CONSTRAINT_KEYS or key not in schema:
        return None
    value = schema[key]
    if isinstance(value, Mapping | list):  # a property of that name, not a keyword
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        # (OpenAPI 3.0's `exclusiveMinimum: true` is a flag: not a bound)
        return None if key in _BOUNDS and isinstance(value, bool) else "it is not a number"
    integer = _is_integer_type(schema)
    if key == "multipleOf":
        if not math.isfinite(value) or value <= 0:
            return "it must be a finite number greater than 0"
        if integer and not float(value).is_integer():
            return "on an integer it must be a whole number"
        return None
    if key in _BOUNDS:
        if integer and not (math.isfinite(value) and float(value).is_integer()):
            return "on an integer it must be a whole number"
        return None
    if not isinstance(value, int) or not 0 <= value < _MAX_LENGTH:
        return "it must be a whole number from 0 up"
    return None


def default_problem(
    schema: Mapping[str, Any], resolve: Callable[[str], Mapping[str, Any] | None]
) -> str | None:
    """Why the schema's `default` cannot stand as written in a model (None: it can): a value of
    another type or outside its `enum`/`const` (`count: {type: integer, default: "abc"}`,
    a `$ref` to an enum beside a default it does not list). The models library writes it as
    it is: a default that does not type-check (`mypy --strict`), that every instance built
    without the field carries, and beside a `$ref` one pydantic validates — so every such
    instance fails. `resolve` gives the schema a `$ref` names. A `null` default is left to
    `fixes.default_none_admits_none`."""
    if "default" not in schema or schema["default"] is None:
        return None
    if _fits(schema["default"], schema, resolve, 0):
        return None
    return "it is not a value of its own schema"


def _fits(
    value: Any, schema: Any, resolve: Callable[[str], Mapping[str, Any] | None], depth: int
) -> bool:
    if depth > 8 or not isinstance(schema, Mapping):
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and not _fits(value, resolve(ref), resolve, depth + 1):
        return False
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(_same(value, e) for e in enum):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if kinds and not any(_is_a(value, k) for k in kinds):
        return False
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if (
            isinstance(members, list)
            and members
            and not any(_fits(value, m, resolve, depth + 1) for m in members)
        ):
            return False
    members = schema.get("allOf")
    return not isinstance(members, list) or all(
        _fits(value, m, resolve, depth + 1) for m in members
    )


def _same(value: Any, other: Any) -> bool:
    """JSON equality: `true` is not `1`."""
    return (type(value) is bool) == (type(other) is bool) and value == other


def _is_a(value: Any, kind: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, Mapping)
    return kind != "null" or value is None


def _is_integer_type(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "integer" in kinds and "number" not in kinds


Path = tuple[str | int, ...]


def schema_nodes(schemas: Mapping[str, Schema]) -> Iterator[tuple[Mapping[str, Any], Where, Path]]:
    """Every mapping inside the component `schemas` (each schema, its properties, items, ...),
    instance data (`default`, `enum`, ...) excepted: the node, and where it is written as its
    component's `Where` and the tokens below it (`where.child(*tokens)`, made only by a
    caller that names the node). Parsed JSON is dicts and lists, which are checked as such:
    an ABC check per key was most of the walk (Stripe: 6,800 nodes in ~50 ms)."""
    for schema in schemas.values():
        stack: list[tuple[Any, Path, int]] = [(schema.data, (), 0)]
        while stack:
            node, path, depth = stack.pop()
            if depth > 64:
                continue
            if isinstance(node, list):
                stack.extend(
                    (value, (*path, index), depth + 1)
                    for index, value in reversed(list(enumerate(node)))
                    if isinstance(value, dict | list)
                )
                continue
            if not isinstance(node, dict):
                continue
            yield node, schema.where, path
            children: list[tuple[Any, Path, int]] = []
            for key, value in node.items():
                if key in _DATA or not isinstance(key, str):
                    continue
                if not isinstance(value, dict | list):
                    continue  # (scalars hold no schema)
                if key in _SCHEMA_MAPS and isinstance(value, dict):  # names → schemas
                    children.extend(
                        (sub, (*path, key, name), depth + 1)
                        for name, sub in value.items()
                        if isinstance(name, str) and isinstance(sub, dict | list)
                    )
                else:
                    children.append((value, (*path, key), depth + 1))
            stack.extend(reversed(children))


__all__ = ["CONSTRAINT_KEYS", "constraint_problem", "default_problem", "schema_nodes"]
