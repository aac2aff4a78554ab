"""Values made from a JSON schema, for mock mode: deterministic, small, and valid.

`value_of(schema)` walks the schema the way a validator reads it (`$ref`, `allOf`, the first
`oneOf`/`anyOf` branch, `const`, `enum`, `type`, formats, bounds, `pattern`) and returns the
simplest value it accepts: the schema's own `example`/`examples`/`default` first, every
property of an object (required ones at least, bounded in depth: schemas recurse), one item
of an array. A `pattern` gets the shortest string its regular expression matches.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from re import _parser as sre_parse  # type: ignore[attr-defined]  # Python's own (3.11+)
from typing import Any

from generator.schemas import component_name

_MAX_DEPTH = 6

#: A valid value per string `format` (what pydantic checks for the formats it knows).
FORMAT_VALUES: dict[str, str] = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00Z",
    "duration": "PT1S",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "byte": "AA==",
    "binary": "",
    "password": "secret",
    "int32": "0",
    "int64": "0",
    "decimal": "1.5",
    "double": "1.5",
    "float": "1.5",
    "uuid1": "00000000-0000-1000-8000-000000000000",
    "uuid3": "00000000-0000-3000-8000-000000000000",
    "uuid4": "00000000-0000-4000-8000-000000000000",
    "uuid5": "00000000-0000-5000-8000-000000000000",
}


class _Walker:
    def __init__(
        self, schemas: Mapping[str, Mapping[str, Any]], examples: bool, reads: set[str] | None
    ) -> None:
        self.schemas = schemas
        self.examples = examples
        self.reads = reads

    def deref(self, schema: Any) -> tuple[Mapping[str, Any], str | None]:
        name = None
        for _ in range(16):
            if not isinstance(schema, Mapping):
                return {}, name
            ref = schema.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#/"):
                return schema, name
            # a component by its name; anything else in the document by its pointer (which
            # `schemas` may know: the server's mock answers look into operations)
            name = component_name(ref) or ref
            if self.reads is not None:
                self.reads.add(name)
            schema = self.schemas.get(name, {})
        return {}, name

    def value(self, schema: Any, depth: int, seen: frozenset[str]) -> Any:
        data, name = self.deref(schema)
        if name is not None:
            if name in seen:
                return None  # a recursive schema: the cycle ends here
            seen = seen | {name}
        kind = _type_of(data) if "type" in data else None
        given = [data[k] for k in ("example", "default") if k in data and self.examples]
        if isinstance(data.get("examples"), list) and self.examples:
            given += data["examples"]
        enum = data.get("enum")
        for value in given:  # the schema's own, where it has the schema's type (and is listed)
            if (kind is None or _is_a(value, kind)) and (
                not isinstance(enum, list) or any(_same(value, v) for v in enum)
            ):
                return value
        if "const" in data:
            return data["const"]
        if isinstance(enum, list) and enum:
            return next((v for v in enum if v is not None), enum[0])
        if isinstance(data.get("allOf"), list):
            return self.all_of(data, depth, seen)
        for key in ("oneOf", "anyOf"):
            branches = data.get(key)
            if isinstance(branches, list) and branches:
                branch = next((b for b in branches if self.deref(b)[0].get("type") != "null"), None)
                return self.value(branch if branch is not None else branches[0], depth, seen)
        return self.typed(data, _type_of(data), depth, seen)

    def all_of(self, data: Mapping[str, Any], depth: int, seen: frozenset[str]) -> Any:
        merged: dict[str, Any] = {}
        other: Any = None
        for part in [*data["allOf"], {k: v for k, v in data.items() if k != "allOf"}]:
            value = self.value(part, depth, seen)
            if isinstance(value, dict):
                merged.update(value)
            elif value is not None:
                other = value
        return merged if merged or other is None else other

    def typed(self, data: Mapping[str, Any], kind: str, depth: int, seen: frozenset[str]) -> Any:
        if kind == "object":
            return self.object(data, depth, seen)
        if kind == "array":
            items = data.get("items")
            least = data.get("minItems")
            count = least if isinstance(least, int) else 0
            if depth >= _MAX_DEPTH or items is None:
                return []
            item = self.value(items, depth + 1, seen)
            return [item] * max(1, min(count, 3)) if item is not None or count else []
        if kind == "integer":
            return int(_number(data, 0))
        if kind == "number":
            return _number(data, 0.5)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return _string(data)

    def object(self, data: Mapping[str, Any], depth: int, seen: frozenset[str]) -> Any:
        declared = data.get("properties")
        properties: Mapping[str, Any] = declared if isinstance(declared, Mapping) else {}
        listed = data.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if depth >= _MAX_DEPTH and name not in required:
                continue
            value = self.value(sub, depth + 1, seen)
            if value is None and name not in required and not _nullable(self.deref(sub)[0]):
                continue
            out[str(name)] = value
        return out


def _type_of(data: Mapping[str, Any]) -> str:
    kind = data.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    if "properties" in data or "additionalProperties" in data:
        return "object"
    if "items" in data:
        return "array"
    return "string"


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _is_a(value: Any, kind: str) -> bool:
    """Whether `value` is of JSON type `kind` (a boolean is not a number here)."""
    if kind == "null":
        return value is None
    if isinstance(value, bool) and kind != "boolean":
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(kind, (object,)))


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `6` is not `"6"`, and `True` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _nullable(data: Mapping[str, Any]) -> bool:
    kind = data.get("type")
    return data.get("nullable") is True or (isinstance(kind, list) and "null" in kind)


def _number(data: Mapping[str, Any], fallback: float) -> float:
    low = data.get("minimum")
    high = data.get("maximum")
    value = fallback
    if isinstance(low, int | float) and not isinstance(low, bool):
        value = low
    if isinstance(data.get("exclusiveMinimum"), int | float):
        value = data["exclusiveMinimum"] + 1
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        value = high
    multiple = data.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0 and value % multiple:
        value = multiple * -(-value // multiple)
    return value


def _string(data: Mapping[str, Any]) -> str:
    fmt = data.get("format")
    text = FORMAT_VALUES.get(fmt, "string") if isinstance(fmt, str) else "string"
    pattern = data.get("pattern")
    if isinstance(pattern, str):
        matched = shortest_match(pattern)
        if matched is not None:
            text = matched
    low = data.get("minLength")
    high = data.get("maxLength")
    if isinstance(low, int) and len(text) < low:
        text = text + "x" * (low - len(text))
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    return text


def shortest_match(pattern: str) -> str | None:
    """The shortest string `pattern` matches (searched, as JSON Schema does), or None when
    the pattern is beyond this small walker (look-around, back references) or wrong."""
    with warnings.catch_warnings():  # Python's re on `[[`: "Possible nested set"
        warnings.simplefilter("ignore", FutureWarning)
        try:
            parsed = sre_parse.parse(pattern)
            text = _emit(list(parsed))
        except (re.error, ValueError, TypeError, RecursionError):
            return None
        if any("\ud800" <= c <= "\udfff" for c in text):
            return None  # a lone surrogate is no text a response can carry
        try:
            return text if re.search(pattern, text) else None
        except re.error:
            return None


_CATEGORY = {"CATEGORY_DIGIT": "0", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " "}
_NOT_CATEGORY = {"CATEGORY_NOT_DIGIT": "a", "CATEGORY_NOT_WORD": "-", "CATEGORY_NOT_SPACE": "a"}


def _emit(items: list[tuple[Any, Any]]) -> str:
    out = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_class_member(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _, body = arg
            out.append(_emit(list(body)) * low)
        elif name == "SUBPATTERN":
            out.append(_emit(list(arg[-1])))
        elif name == "ATOMIC_GROUP":
            out.append(_emit(list(arg)))
        elif name == "BRANCH":
            out.append(min((_emit(list(b)) for b in arg[1]), key=len))
        elif name in ("AT", "NEGATE"):
            continue
        else:  # look-around, back references, conditionals: beyond a shortest string
            raise ValueError(name)
    return "".join(out)


def _class_member(items: list[tuple[Any, Any]]) -> str:
    if items and str(items[0][0]) == "NEGATE":
        for candidate in "a0-_ xZ":
            if not any(_in_class(candidate, op, arg) for op, arg in items[1:]):
                return candidate
        raise ValueError("negated class")
    op, arg = items[0]
    name = str(op)
    if name == "LITERAL":
        return chr(arg)
    if name == "RANGE":
        return chr(arg[0])
    if name == "CATEGORY":
        return _CATEGORY.get(str(arg)) or _NOT_CATEGORY.get(str(arg), "a")
    raise ValueError(name)


def _in_class(char: str, op: Any, arg: Any) -> bool:
    name = str(op)
    if name == "LITERAL":
        return char == chr(arg)
    if name == "RANGE":
        return bool(arg[0] <= ord(char) <= arg[1])
    if name == "CATEGORY":
        return re.fullmatch(f"[{_CATEGORY_RE.get(str(arg), '.')}]", char) is not None
    return True


_CATEGORY_RE = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
}


def value_of(
    schema: Any,
    schemas: Mapping[str, Mapping[str, Any]],
    *,
    examples: bool = True,
    reads: set[str] | None = None,
) -> Any:
    """A value `schema` accepts (see the module docstring); `schemas`: the components.
    `examples=False` ignores the schemas' own examples and defaults (specs get them wrong).
    `reads` gets the name of every component looked up: the value depends on `schema` and
    on those entries of `schemas` only (what a cache of it must check)."""
    return _Walker(schemas, examples, reads).value(schema, 0, frozenset())
