"""What the server checks of a parameter's (or form field's) text beyond its type: which
`*_FROM_TEXT` reading an enumeration needs, which string `format`s the runtime's
`query.text_format` checks, and which form fields are files (bytes, not text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def scalar_enum(schema: Mapping[str, Any] | None) -> str:
    """`bool` when `schema` enumerates (or is a `const` of) a boolean, `number` when it
    enumerates numbers only, else ``."""
    values = (schema.get("enum") if "const" not in schema else [schema["const"]]) if schema else []
    if not isinstance(values, list):
        return ""
    if any(isinstance(v, bool) for v in values):
        return "bool"
    return "number" if any(isinstance(v, int | float) for v in values) else ""


#: String formats a parameter's text is checked against (runtime `query.text_format`).
_TEXT_FORMATS = ("date-time", "date", "uuid", "uri", "url")


def text_formats(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The formats a string parameter's text must have one of (an `anyOf` / `oneOf` of
    formatted strings: any of theirs); () where any text will do."""
    variants = (schema.get("anyOf") or schema.get("oneOf") or [schema]) if schema else []
    formats: list[str] = []
    for variant in variants:
        if not isinstance(variant, Mapping) or variant.get("type") != "string":
            return ()
        if variant.get("format") not in _TEXT_FORMATS:
            return ()
        formats.append(variant["format"])
    return tuple(dict.fromkeys(formats))


def file_type(data: Mapping[str, Any]) -> str | None:
    """A form field that is a file (`format: binary`, or 3.1's `contentMediaType` without an
    encoding; or an array of them): the part's bytes, which need not be text."""

    def is_file(node: Any) -> bool:
        return isinstance(node, Mapping) and (
            node.get("format") == "binary"
            or ("contentMediaType" in node and "contentEncoding" not in node)
        )

    if is_file(data):
        return "bytes"
    if data.get("type") == "array" and is_file(data.get("items")):
        return "list[bytes]"
    return None
