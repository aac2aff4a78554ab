"""Constraint values pydantic refuses at import, and the schema nodes of component schemas.

pydantic-core checks a constraint's value when it builds a validator — at the import of the
generated models module or router: `multipleOf: 0` ("must be a finite number greater than 0"),
`minimum: 1.5` on an integer ("must be coercible to an integer"), `maxLength: -1` or `5.0`.
A spec that says so cannot be enforced as written, so the constraint is left out (of the
models: `models.schema_subset`; of a route: `server._constraints`) and named in a warning.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
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


def _is_integer_type(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return "integer" in kinds and "number" not in kinds


def schema_nodes(schemas: Mapping[str, Schema]) -> Iterator[tuple[Mapping[str, Any], Where]]:
    """Every mapping inside the component `schemas` (each schema, its properties, items, ...)
    and where it is written, instance data (`default`, `enum`, ...) excepted."""

    def walk(node: Any, at: Where, depth: int) -> Iterator[tuple[Mapping[str, Any], Where]]:
        if depth > 64:
            return
        if isinstance(node, Mapping):
            yield node, at
            for key, value in node.items():
                if not isinstance(key, str) or key in _DATA:
                    continue
                if key in _SCHEMA_MAPS and isinstance(value, Mapping):  # names → schemas
                    for name, sub in value.items():
                        if isinstance(name, str):
                            yield from walk(sub, at.child(key, name), depth + 1)
                else:
                    yield from walk(value, at.child(key), depth + 1)
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from walk(value, at.child(index), depth + 1)

    for schema in schemas.values():
        yield from walk(schema.data, schema.where, 0)


__all__ = ["CONSTRAINT_KEYS", "constraint_problem", "schema_nodes"]
