"""Spec text → safe Python source fragments: string literals, docstrings, comments.

Spec text is hostile until it has been through one of these: descriptions may contain `\"\"\"`,
backslashes, Jinja syntax, newlines or Python code, and none of it may change what the
generated code does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def py_literal(value: Any) -> str:
    """A Python literal for JSON-like data (str, int, float, bool, None, lists, dicts).

    `repr` of these types is a valid, inert Python expression; anything else is rejected so no
    object's own `__repr__` reaches generated code.
    """
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return f"float({str(value)!r})"
        return repr(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(py_literal(v) for v in value)
        return f"[{inner}]"
    if isinstance(value, dict):
        inner = ", ".join(f"{py_literal(str(k))}: {py_literal(v)}" for k, v in value.items())
        return "{" + inner + "}"
    raise TypeError(f"not JSON-like data: {type(value).__name__}")


def py_tuple(items: Sequence[str]) -> str:
    """A tuple expression of already-rendered `items` (no trailing comma the formatter would
    spread out, except the one a 1-tuple needs)."""
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


def py_string(value: Any) -> str:
    """A Python string literal holding `str(value)`."""
    return repr(_clean(str(value)))


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def docstring_text(value: Any, indent: int = 0) -> str:
    """Text safe inside a `\"\"\"…\"\"\"` docstring: no backslashes (escapes), no run of
    three quotes, and no quote at the end (which would merge with the closing quotes).

    Trailing whitespace on lines and surrounding blank lines are removed; lines after the
    first are indented by `indent` spaces (blank lines stay empty).
    """
    text = _clean(str(value)).replace("\\", "\\\\")
    text = text.replace('"""', '\\"\\"\\"')
    # ruff may join the closing quotes to the last line: a final `"` would make `""""`.
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if lines and lines[-1].endswith('"'):
        before = lines[-1][:-1]
        if (len(before) - len(before.rstrip("\\"))) % 2 == 0:  # an unescaped final quote
            lines[-1] = before + '\\"'
    pad = " " * indent
    return (
        "\n".join([lines[0], *((pad + line) if line else "" for line in lines[1:])])
        if lines
        else ""
    )


def docstring(value: Any, *, indent: str = "    ") -> str:
    """A complete docstring statement (with quotes) for `value`, indented for a body."""
    body = docstring_text(value, len(indent))
    if not body:
        return ""
    if "\n" in body:
        return f'"""{body}\n{indent}"""'
    return f'"""{body}"""'


def comment(value: Any, *, prefix: str = "# ") -> str:
    """`value` as one or more `#` comment lines (each line of the text gets the prefix)."""
    lines = _clean(str(value)).split("\n")
    return "\n".join((prefix + line).rstrip() for line in lines)


def one_line(value: Any, *, limit: int = 0) -> str:
    """The text folded onto one line (whitespace collapsed), optionally truncated."""
    text = " ".join(_clean(str(value)).split())
    if limit and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def toml_string(value: Any) -> str:
    """A TOML basic string, ASCII only: JSON's escapes are TOML's up to U+FFFF, but a
    character beyond it is one `\\UXXXXXXXX` escape in TOML (JSON's surrogate pair is
    invalid there), and a lone surrogate, which no TOML string may hold, becomes U+FFFD."""
    text = _SURROGATE.sub("\ufffd", _clean(str(value)))
    quoted = json.dumps(text, ensure_ascii=False)
    return _NON_ASCII.sub(_toml_escape, quoted)


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _toml_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
