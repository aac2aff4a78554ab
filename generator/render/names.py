"""Spec names → safe Python identifiers, with stable collision resolution.

Every name that reaches generated code from the spec (operationIds, tags, parameter names,
schema names) goes through here. The result is always a valid identifier, never a keyword,
a soft keyword or a builtin, never dunder-shaped, and ASCII only, so no spec value can change
what generated code means.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
import unicodedata
from collections.abc import Iterable

RESERVED: frozenset[str] = frozenset(
    {*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"}
)

_WORD_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")
_UNDERSCORES = re.compile(r"_+")
# The conversions are pure functions of their arguments, and a big spec asks for the same
# names many times (every parameter `expand`, every plan): they are remembered.
_MEMO = 65536


def words(text: str) -> list[str]:
    """The words of `text`: camelCase, PascalCase, snake_case, kebab-case, spaces, dots."""
    return list(_words(str(text)))


@functools.lru_cache(maxsize=_MEMO)
def _words(text: str) -> tuple[str, ...]:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return tuple(w.lower() for w in _WORD_SPLIT.findall(ascii_text))


def snake_case(text: str, *, fallback: str = "value") -> str:
    """`createPayment` → `create_payment`; a safe identifier (see `safe_identifier`)."""
    return _snake_case(str(text), fallback)


@functools.lru_cache(maxsize=_MEMO)
def _snake_case(text: str, fallback: str) -> str:
    return safe_identifier("_".join(_words(text)), fallback=fallback)


def pascal_case(text: str, *, fallback: str = "Model") -> str:
    """`payment-event` → `PaymentEvent`; a safe identifier."""
    return _pascal_case(str(text), fallback)


@functools.lru_cache(maxsize=_MEMO)
def _pascal_case(text: str, fallback: str) -> str:
    return safe_identifier("".join(w.capitalize() for w in _words(text)), fallback=fallback)


def safe_identifier(text: str, *, fallback: str = "value", avoid: Iterable[str] = ()) -> str:
    """Make `text` a safe identifier: ASCII letters, digits and `_` only, not starting with a
    digit or `_`, not a keyword/builtin/`avoid`ed name (a trailing `_` is added)."""
    cleaned = _NOT_IDENTIFIER.sub("_", str(text))
    cleaned = _UNDERSCORES.sub("_", cleaned).strip("_")
    if not cleaned:
        cleaned = fallback
    if cleaned[0].isdigit():
        cleaned = f"{fallback}_{cleaned}"
    avoided = frozenset(avoid)
    while cleaned in RESERVED or cleaned in avoided:
        cleaned += "_"
    return cleaned


class NameAllocator:
    """Hands out unique identifiers within one namespace.

    Collisions are resolved by suffixing `_2`, `_3`, … (`separator` + n) in the order names are requested, so
    callers must request names in a stable (sorted or spec) order; the same key always gets
    the same name back.
    """

    def __init__(self, reserved: Iterable[str] = (), *, separator: str = "_") -> None:
        self._separator = separator
        self._taken: set[str] = set(reserved)
        self._by_key: dict[object, str] = {}

    def allocate(self, key: object, candidate: str) -> str:
        if key in self._by_key:
            return self._by_key[key]
        name, n = candidate, 1
        while name in self._taken:
            n += 1
            name = f"{candidate}{self._separator}{n}"
        self._taken.add(name)
        self._by_key[key] = name
        return name

    def __contains__(self, name: str) -> bool:
        return name in self._taken


def package_version(api_version: str) -> str:
    """A PEP 440 version for a generated package from the spec's `info.version`: as is when
    it is one (`1.2.3`), a date's numbers (`2023-09-12` → `2023.9.12`), else `0.1.0`."""
    if re.fullmatch(r"\d+(\.\d+){0,3}", api_version):
        return api_version
    digits = re.fullmatch(r"(\d+)[-.](\d+)[-.](\d+)", api_version)
    if digits:
        return ".".join(str(int(g)) for g in digits.groups())
    return "0.1.0"
