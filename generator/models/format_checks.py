"""String `format`s in the models: asserted in the server's request bodies, or not at all.

By default the common formats are types: `uuid` → `UUID`, `date` → `date`, `date-time` →
`AwareDatetime`, `uri` → `AnyUrl`, `ipv4`/`ipv6` → `IPv4Address`/`IPv6Address`, and `email`/
`idn-email` → `EmailStr`. The server's models take `EmailStr` from its runtime
(`runtime/formats.py`: a linear check of its own, not pydantic's, which needs the
`email-validator` package and rewrites the addresses it accepts); the client's read it as
`str` (`client_models`: a response is never refused for an address). So a request body that
breaks a format is a 422 like any other invalid body, before any precondition is looked at
(RFC 9110 §13.2.1).

`x-apiforge-format-checks: false` at the spec's top level makes every format below a plain
`str` in both products' models (JSON Schema's default: `format` as an annotation only).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

EXTENSION = "x-apiforge-format-checks"
# The formats the library types as something else than `str` (the email ones even when
# checks are on: `EmailStr` is then our own, see the module docstring).
_UNCHECKED = (
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "ipv4",
    "ipv6",
    "time",
    "uri",
    "uuid",
    "uuid1",
    "uuid2",
    "uuid3",
    "uuid4",
    "uuid5",
)
_SWITCH_OFF = re.compile(rf"""(?m)^["']?{EXTENSION}["']?\s*:\s*false\b""")
_CLASS_LINE = re.compile(r"(?m)^class ")


def format_checks(data: Any) -> bool:
    """Whether the parsed document asks for format checks (anything but `false`: yes; the
    spec's validation refuses a value that is not a boolean: `extension_problem`)."""
    return not (isinstance(data, Mapping) and data.get(EXTENSION) is False)


def extension_problem(data: Any) -> str | None:
    """What is wrong with the document's `x-apiforge-format-checks` (None: nothing)."""
    if isinstance(data, Mapping) and not isinstance(data.get(EXTENSION, True), bool):
        return f"{EXTENSION} must be true or false"
    return None


def format_checks_in_text(text: str) -> bool:
    """`format_checks` of a document the library reads itself, from its text."""
    return _SWITCH_OFF.search(text) is None


def type_mappings(checks: bool) -> list[str]:
    """The library's `type_mappings` option."""
    return [] if checks else [f"{name}=string" for name in _UNCHECKED]


def server_models(text: str) -> str:
    """The server's models module: the shared one with `EmailStr` from the runtime."""
    return import_from_runtime(text, ("EmailStr",), "formats")


def import_from_runtime(text: str, names: tuple[str, ...], module: str) -> str:
    """The models module `text` with those of `names` it imports from pydantic imported
    from `.runtime.<module>` instead (unchanged when it imports none)."""
    node = _pydantic_import(text) if any(name in text for name in names) else None
    moved = (
        [] if node is None else [a.name for a in node.names if a.name in names and a.asname is None]
    )
    if node is None or not moved:
        return text
    assert node.end_lineno is not None
    lines = text.split("\n")
    kept = ", ".join(
        f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names if a.name not in moved
    )
    statement = (f"from pydantic import {kept}\n" if kept else "") + (
        f"from .runtime.{module} import {', '.join(moved)}"
    )
    lines[node.lineno - 1 : node.end_lineno] = [statement]
    return "\n".join(lines)


def _pydantic_import(text: str) -> ast.ImportFrom | None:
    """The module's first top-level `from pydantic import`. Looked for first among the
    statements before the first class, parsed alone (the library writes its imports there;
    all of Stripe's module is ~0.4 s and ~70 MB to parse, on the path of every
    regeneration); in the whole module when that part holds none or is not Python on its
    own (a `class` line inside a string). A module that is not Python does not get here:
    the models step refuses it (`defined_names`)."""
    first_class = _CLASS_LINE.search(text)
    heads = [text[: first_class.start()]] if first_class is not None else []
    for part in (*heads, text):
        try:
            body = ast.parse(part).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.module == "pydantic":
                return node
    return None


__all__ = [
    "EXTENSION",
    "extension_problem",
    "format_checks",
    "format_checks_in_text",
    "import_from_runtime",
    "server_models",
    "type_mappings",
]
