"""Small corrections of datamodel-code-generator's output (applied before it is cached).

`default_none_admits_none`: with `strict_nullable` (OpenAPI 3.0 documents, see
`models._options`), a member that is not `nullable` but has `default: null` — common in real
3.0 specs (just-eat: 123 of them) — comes out as `name: X = None`: a default its own type
refuses (mypy: "Incompatible types in assignment"). A default of null says null is a value of
the member, so its type gets `| None` (`Annotated[X | None, ...] = None`), as it had before
`strict_nullable`.

`parsed_defaults`: a string `format` (`date-time`, `uuid`, `uri`, ...) makes the member a type
pydantic parses strings into, and the library writes the spec's string default as it is:
`at: AwareDatetime | None = "2020-01-01T00:00:00Z"` — not a value of the type for
`mypy --strict`, and an instance built without the member holds the string. A default
pydantic parses becomes `Field(default=..., validate_default=True)` (instances hold the
parsed value); one it cannot parse (`"yesterday"`) is left out: `None`, which the type is
made to admit (as `default_none_admits_none` does). A model's default written as data (`{"kind": "x"}`, which the library already
has pydantic validate) becomes `Field(default=...)` too.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import ipaddress
import re
import uuid
from functools import cache
from typing import Any


def default_none_admits_none(text: str) -> str:
    """`text` with `| None` added to each model member whose default is None and whose type
    does not admit it."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int]] = []  # (line, byte column) to insert " | None" at
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for member in node.body:
            if (
                isinstance(member, ast.AnnAssign)
                and isinstance(member.value, ast.Constant)
                and member.value.value is None
            ):
                target = _type_of(member.annotation)
                if not _admits_none(target):
                    assert target.end_lineno is not None and target.end_col_offset is not None
                    edits.append((target.end_lineno - 1, target.end_col_offset))
    if not edits:
        return text
    for line, column in sorted(edits, reverse=True):
        lines[line] = lines[line][:column] + b" | None" + lines[line][column:]
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def _type_of(annotation: ast.expr) -> ast.expr:
    """The type in `Annotated[type, ...]`, or the annotation itself."""
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
        and annotation.slice.elts
    ):
        return annotation.slice.elts[0]
    return annotation


def _admits_none(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.Name) and node.id in ("Any", "None"):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _admits_none(node.left) or _admits_none(node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id == "Optional"
    return False


def parsed_defaults(text: str) -> str:
    """`text` with each string default of a parsed type (see the module docstring) given as
    a validated `Field` default, or left out when pydantic cannot parse it."""
    if _CANDIDATE.search(text) is None:  # (most modules: parsing Stripe's takes 1.3 s)
        return text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int, int, int, str]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for member in node.body:
            if not isinstance(member, ast.AnnAssign) or member.value is None:
                continue
            value = member.value
            if isinstance(value, ast.Dict | ast.List) and "validate_default=True" in (
                ast.get_source_segment(text, member.annotation) or ""
            ):  # a model's default as data: pydantic validates it into the model
                new = f"Field(default={ast.get_source_segment(text, value)}, validate_default=True)"
                assert value.end_lineno is not None and value.end_col_offset is not None
                edits.append(
                    (
                        value.lineno - 1,
                        value.col_offset,
                        value.end_lineno - 1,
                        value.end_col_offset,
                        new,
                    )
                )
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                continue
            parser = _parser_of(_type_of(member.annotation))
            if parser is None:
                continue
            if _parses(parser, value.value):
                source = ast.get_source_segment(text, value) or repr(value.value)
                new = f"Field(default={source}, validate_default=True)"
            else:  # left out: None, which the type is made to admit (3.0's strict types)
                new = "None"
                target = _type_of(member.annotation)
                if not _admits_none(target):
                    assert target.end_lineno is not None and target.end_col_offset is not None
                    end = (target.end_lineno - 1, target.end_col_offset)
                    edits.append((*end, *end, " | None"))
            assert value.end_lineno is not None and value.end_col_offset is not None
            edits.append(
                (
                    value.lineno - 1,
                    value.col_offset,
                    value.end_lineno - 1,
                    value.end_col_offset,
                    new,
                )
            )
    for line, column, end_line, end_column, new in sorted(edits, reverse=True):
        head, tail = lines[line][:column], lines[end_line][end_column:]
        lines[line : end_line + 1] = [head + new.encode("utf-8", "surrogatepass") + tail]
    if edits and not _imports_field(tree):
        first = next(
            (n.lineno - 1 for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import)), 0
        )
        if isinstance(tree.body[0], ast.ImportFrom) and tree.body[0].module == "__future__":
            first = tree.body[0].end_lineno or first
        lines.insert(first, b"from pydantic import Field")
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def _imports_field(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.ImportFrom)
        and n.module == "pydantic"
        and any(a.name == "Field" and a.asname is None for a in n.names)
        for n in tree.body
    )


# a member line this fix may change: a parsed type with a string default, or a default
# written as data beside `validate_default=True`
_CANDIDATE = re.compile(
    r"^ +\w+: .*\b(?:AwareDatetime|NaiveDatetime|datetime|date|time|timedelta|UUID|AnyUrl|"
    r"Decimal|IPv4Address|IPv6Address)\b.*\] = ['\"]|^ +\w+: [^\n]*\b(?:AwareDatetime|"
    r"NaiveDatetime|datetime|date|time|timedelta|UUID|AnyUrl|Decimal|IPv4Address|IPv6Address)"
    r"(?: \| None)? = ['\"]|validate_default=True\)\] = [{\[]",
    re.MULTILINE,
)


@cache
def _parsers() -> dict[str, Any]:
    """The types the library writes for string formats, by the name it writes them with."""
    import pydantic

    return {
        "AwareDatetime": pydantic.AwareDatetime,
        "NaiveDatetime": pydantic.NaiveDatetime,
        "datetime": datetime.datetime,
        "date": datetime.date,
        "time": datetime.time,
        "timedelta": datetime.timedelta,
        "UUID": uuid.UUID,
        "AnyUrl": pydantic.AnyUrl,
        "Decimal": decimal.Decimal,
        "IPv4Address": ipaddress.IPv4Address,
        "IPv6Address": ipaddress.IPv6Address,
    }


def _parser_of(node: ast.expr) -> Any:
    """The parsed type of `X` or `X | None` (None: another type)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.Constant) and node.right.value is None:
            node = node.left
        else:
            return None
    return _parsers().get(node.id) if isinstance(node, ast.Name) else None


def _parses(kind: Any, value: str) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(kind).validate_python(value)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


__all__ = ["default_none_admits_none", "parsed_defaults"]
