"""What the server checks of a parameter's (or form field's) text beyond its type: its
bounds, lengths and pattern as FastAPI keyword arguments (`constraints`), its default
(`default_literal`), which `*_FROM_TEXT` reading an enumeration needs, which string
`format`s the runtime's `query.text_format` checks, and which form fields are files (bytes,
not text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.ir import Where
from generator.log import logger
from generator.models.constraints import constraint_problem
from generator.models.regex_engines import ENGINE_NAMES, rust_error
from generator.render.escape import py_literal, py_string
from generator.spec.located import warn_at


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_INT_BOUNDS = {"minimum": 0, "maximum": 1}


def constraints(
    schema: Mapping[str, Any], type_expr: str, what: str, where: Where | None = None
) -> list[str]:
    """FastAPI `Path/Query/Header/Cookie` keyword arguments for a primitive schema (`what`
    names the parameter, `where` its schema, in the warning about a pattern the server cannot
    enforce)."""
    base = type_expr.replace(" | None", "")
    out: list[str] = []

    def refused(key: str) -> bool:
        reason = constraint_problem(schema, key)
        if reason and where is not None:
            warn_at(
                where.child(key),
                f"`{key}` of {what} is not enforced by the server: pydantic refuses "
                f"{schema[key]!r} ({reason})",
            )
        return reason is not None

    if base in ("int", "float"):
        # OpenAPI 3.0 says an exclusive bound with a flag: `minimum: 0, exclusiveMinimum: true`
        lower = "gt" if schema.get("exclusiveMinimum") is True else "ge"
        upper = "lt" if schema.get("exclusiveMaximum") is True else "le"
        for key, kw in (
            ("minimum", lower),
            ("maximum", upper),
            ("exclusiveMinimum", "gt"),
            ("exclusiveMaximum", "lt"),
        ):
            if _number(schema.get(key)) and not refused(key):
                out.append(f"{kw}={schema[key]!r}")
            elif base == "int" and key in _INT_BOUNDS and schema.get("format") in _INT_RANGES:
                # int32/int64 say the range (inclusive) even where no minimum/maximum does,
                # unless a 3.1 exclusive bound stands in for it (a 3.0 flag alone bounds nothing)
                exclusive = "exclusive" + key[0].upper() + key[1:]
                if not _number(schema.get(exclusive)):
                    bound = _INT_RANGES[schema["format"]][_INT_BOUNDS[key]]
                    out.append(f"{'ge' if key == 'minimum' else 'le'}={bound!r}")
    if base == "str":
        for key, kw in (("minLength", "min_length"), ("maxLength", "max_length")):
            value = schema.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and not refused(key):
                out.append(f"{kw}={value!r}")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            # FastAPI compiles a parameter's pattern with pydantic-core's Rust engine, at
            # import: one it rejects would stop the generated app
            reason = rust_error(pattern)
            if reason is None:
                out.append(f"pattern={py_string(pattern)}")
            else:
                message = (
                    f"the pattern of {what} is not enforced by the server: "
                    f"{ENGINE_NAMES['rust']} rejects {pattern[:200]!r} ({reason})"
                )
                if where is not None:
                    warn_at(where.child("pattern"), message)
                else:
                    logger().warning("warning: %s", message)
    return out


def default_literal(schema: Mapping[str, Any] | None, type_expr: str) -> str | None:
    """The schema's default as a Python literal, when it is a value of `type_expr`."""
    if schema is None or "default" not in schema:
        return None
    value = schema["default"]
    if type_expr == "int" and isinstance(value, int) and not isinstance(value, bool):
        return py_literal(value)
    if type_expr == "float" and _number(value):
        return py_literal(float(value))
    if type_expr == "bool" and isinstance(value, bool):
        return py_literal(value)
    if type_expr == "str" and isinstance(value, str):
        return py_literal(value)
    if type_expr.startswith("Literal[") and isinstance(value, str | int):
        literal = py_literal(value)
        if literal in type_expr:
            return literal
    return None


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
