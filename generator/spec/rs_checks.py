"""jsonschema-rs as validation uses it (`validate`, `defaults`): its errors for the values
YAML gives (`rs_errors`, `plain`), worded as Python's `jsonschema` words them (`worded`:
what openapi-spec-validator said), and the format assertions openapi-schema-validator makes
(`valid_regex`; every other format an annotation)."""

from __future__ import annotations

import functools
from typing import Any


def rs_errors(validator: Any, value: Any) -> list[Any]:
    """jsonschema-rs's errors for `value`; YAML gives values JSON has not (binary,
    sets, non-string keys), which jsonschema-rs cannot take: see `plain`."""
    try:
        return list(validator.iter_errors(value))
    except ValueError:
        return list(validator.iter_errors(plain(value)))


def plain(value: Any) -> Any:
    """`value` as JSON data. A non-string key becomes its str (as JSON would write it); any
    other non-JSON value (a YAML binary, set, ...) becomes the object
    `{"$yaml": "<repr>"}`, which — like the original in Python's `jsonschema` — is refused
    wherever a string, number or boolean is required and accepted where anything goes."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return {"$yaml": repr(value)}


class _Shown(str):
    """A YAML value `plain` wrapped, shown as Python shows the original (`{'a', 'b'}`)."""

    def __repr__(self) -> str:
        return str(self)


def _unplain(value: Any) -> Any:
    """`value` from jsonschema-rs with `plain`'s `{"$yaml": "<repr>"}` shown as the original."""
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("$yaml"), str):
            return _Shown(value["$yaml"])
        return {k: _unplain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unplain(v) for v in value]
    return value


def worded(error: Any) -> str:
    """The error in the words of Python's `jsonschema` (what openapi-spec-validator said)."""
    kind = error.kind
    name = getattr(kind, "name", "")
    instance = _unplain(error.instance)
    if name == "required":
        return f"{kind.property!r} is a required property"
    if name == "type":
        return f"{instance!r} is not of type {', '.join(repr(t) for t in kind.types)}"
    if name == "enum":
        return f"{instance!r} is not one of {kind.options!r}"
    if name == "const":
        return f"{kind.expected_value!r} was expected"
    if name in ("anyOf", "oneOf") and type(kind).__name__ != "OneOfMultipleValid":
        return f"{instance!r} is not valid under any of the given schemas"
    if name == "format":
        return f"{instance!r} is not a {kind.format!r}"
    if name == "pattern":
        return f"{instance!r} does not match {kind.pattern!r}"
    return str(error.message)


def valid_regex(value: Any) -> bool:
    """The `regex` format: an ECMA-262 regular expression, as JSON Schema and OpenAPI say
    (`[\\p{L}\\p{N}]*`, `(?<name>...)`: jsonschema-rs's own check of the format), or one
    Python's `re` compiles (`(?P<name>...)`, `\\Z`), which openapi-schema-validator accepts
    without its optional ECMA engine. Only a pattern neither reads (`[a-`) is invalid."""
    import re

    if not isinstance(value, str):
        return True
    try:
        re.compile(value)
    except re.error:
        return bool(_ecma_regex().is_valid(value))
    return True


@functools.cache
def _ecma_regex() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for({"format": "regex"}, validate_formats=True)


def any_value(value: Any) -> bool:
    return True


# openapi-schema-validator's format checkers assert only `regex` (and OAS number/byte formats
# no meta-schema uses): every format jsonschema-rs knows is accepted as is, `regex` checked.
ANNOTATION_FORMATS = (
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uuid",
)
