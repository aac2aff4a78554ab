"""The YAML 1.2 core schema: what a plain (unquoted) scalar means.

OpenAPI recommends YAML 1.2, where `no`, `yes`, `on`, `off` are strings, there is no
timestamp type (`2023-02-30` is a string, not an error), an integer is decimal, `0o` octal or
`0x` hex (`0777` is 777, `1_000` and `1:20` are strings) and null and booleans are spelt
only `null`/`Null`/`NULL`/`~`/nothing and `true`/`True`/`TRUE`/`false`/.... One home for
those rules: the PyYAML loader (`load.py`) resolves tags with `IMPLICIT` and constructs
numbers with `construct_int`/`construct_float`; the rapidyaml reader (`fast_yaml.py`) calls
`resolve_plain`. The one addition to the core schema is the merge key `<<`, which PyYAML
and ruamel.yaml both keep in 1.2 mode.
"""

from __future__ import annotations

import re
from typing import Any

NULL = r"~|null|Null|NULL|"
BOOL = r"true|True|TRUE|false|False|FALSE"
INT = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
FLOAT = (
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)

# (tag, pattern, the first characters a match can start with: "" for the empty scalar), in
# the order they are tried
IMPLICIT: list[tuple[str, re.Pattern[str], list[str]]] = [
    ("tag:yaml.org,2002:null", re.compile(rf"(?:{NULL})\Z"), [*"~nN", ""]),
    ("tag:yaml.org,2002:bool", re.compile(rf"(?:{BOOL})\Z"), list("tTfF")),
    ("tag:yaml.org,2002:int", re.compile(rf"(?:{INT})\Z"), list("-+0123456789")),
    ("tag:yaml.org,2002:float", re.compile(rf"(?:{FLOAT})\Z"), list("-+.0123456789")),
    ("tag:yaml.org,2002:merge", re.compile(r"<<\Z"), ["<"]),
]

# every character a plain scalar that is not a str can hold (the patterns above): a scalar
# with any other one is a str, whatever it starts with (`fast_yaml` resolves only the others;
# tests/spec/test_yaml12.py checks this set against the patterns)
NOT_STR_CHARS = frozenset("~nulNULtrueTRUEfalsFALSE0123456789+-.eExoabcdefABCDEFiInN")

_INT = re.compile(rf"(?:{INT})\Z")
_FLOAT = re.compile(rf"(?:{FLOAT})\Z")
NOT_STR_PATTERN = rf"{NULL}|{BOOL}|{INT}|{FLOAT}"  # every plain scalar that is not a str
_NOT_STR = re.compile(rf"(?:{NOT_STR_PATTERN})\Z")
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False}
_BOOLS["FALSE"] = False
_NULLS = frozenset(("~", "null", "Null", "NULL", ""))


def construct_int(text: str) -> int:
    """The value of a core-schema integer (ValueError for anything else)."""
    if not _INT.match(text):
        raise ValueError(f"not a YAML 1.2 integer: {text!r}")
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def construct_float(text: str) -> float:
    """The value of a core-schema float (ValueError for anything else)."""
    if not _FLOAT.match(text):
        raise ValueError(f"not a YAML 1.2 float: {text!r}")
    lowered = text.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(text)


def may_not_be_str(text: str) -> bool:
    """Whether a plain scalar `text` means something other than the string itself."""
    return _NOT_STR.match(text) is not None


def resolve_plain(text: str) -> Any:
    """What a plain scalar means: None, a bool, an int, a float or the string itself."""
    if not _NOT_STR.match(text):
        return text
    if text in _NULLS:
        return None
    found = _BOOLS.get(text)
    if found is not None:
        return found
    if _INT.match(text):
        return construct_int(text)
    return construct_float(text)
