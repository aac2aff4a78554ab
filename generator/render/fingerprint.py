"""Digests that say whether two renders may share a result: of values (`fingerprint`,
`Fingerprinter`), of a tree of files (`tree_digest`) and of apiforge's own code
(`code_digest`), and `OperationView`, what templates may read of an operation.

A `fingerprint` is the SHA-256 of an unambiguous, typed encoding of the value, refusing every
type besides plain data, sets, apiforge's own dataclasses and functions: two values with the
same fingerprint are equal (see `Fingerprinter`). The render caches (`env.py`), the plan cache
and the models step build their keys from these.

A leaf: it imports nothing of apiforge's but the package's version.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import operator
import os
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SKIPPED_DIRS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})


def tree_digest(root: Path, suffix: str | None = None) -> str:
    """SHA-256 of every file under `root` (relative path and bytes), caches left out."""
    h = hashlib.sha256()
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            if suffix is not None and not name.endswith(suffix):
                continue
            path = Path(folder) / name
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@functools.cache
def code_digest() -> str:
    """SHA-256 of apiforge's own code (every module of the `generator` package): part of every
    render key, so a changed filter, plan or escaping rule can never meet an old entry."""
    from generator import __version__

    package = Path(__file__).resolve().parent.parent
    return hashlib.sha256(f"{__version__}\0{tree_digest(package, '.py')}".encode()).hexdigest()


class _Missing:
    """Stands for a context variable that is not set, in a macro call's key."""


MISSING = _Missing()


class Fingerprinter:
    """SHA-256 digests of values: plain data (None, bool, int, float, str, bytes, tuples,
    lists, dicts), apiforge's dataclasses (their class and every attribute) and apiforge's
    functions (by qualified name: their code is in `code_digest()`).

    The value is turned into plain data that `marshal` (format 2: no references, no
    interning, so how objects are shared cannot change the bytes) writes unambiguously: each
    dataclass instance stands as a one-element frozenset of its own digest (or, when all its
    attributes are plain, of its class name, attribute names and values), a set as a
    one-element frozenset of its type and its items' encodings in sorted order — frozensets
    appear nowhere else, so nothing can look like one. Equal digests mean equal values;
    anything else (another library's object) is a TypeError rather than a guess.

    An instance is digested once per Fingerprinter (plans share them between files and macro
    calls); it is kept so its id stays its own."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, bytes]] = {}

    def digest(self, value: object) -> str:
        return hashlib.sha256(marshal.dumps(self._plain(value), 2)).hexdigest()

    def object_digest(self, value: object) -> bytes:
        """The digest that stands for an apiforge dataclass instance inside other values."""
        return self._object(value)

    def remember(self, value: object, digest: bytes) -> None:
        """Take `digest` as `value`'s `object_digest` — one an earlier run made of an equal
        value (the plan cache keeps them with the plans, keyed by everything they are made
        from): its attributes are then not walked again."""
        self._known[id(value)] = (value, digest)

    def _plain(self, value: Any) -> Any:
        kind = type(value)
        if kind in _ATOMS:
            return value
        if kind is tuple or kind is list:
            items = [v if type(v) in _ATOMS else self._plain(v) for v in value]
            return tuple(items) if kind is tuple else items
        if kind is dict:
            return {self._plain(k): self._plain(v) for k, v in value.items()}
        if kind is set or kind is frozenset:  # in a stable order: each item's encoding, sorted
            items = sorted(marshal.dumps(self._plain(v), 2) for v in value)
            return frozenset(((kind.__name__, tuple(items)),))
        if value is MISSING:
            return frozenset()
        shape = _shape(kind)
        if shape is not None:
            names, values = shape[1](value)
            if all(type(v) in _ATOMS for v in values):  # small: inline, not digested
                return frozenset(((shape[0], names, values),))
        return frozenset((self._object(value),))

    def _object(self, value: Any) -> bytes:
        known = self._known.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        kind: Any = type(value)
        shape = _shape(kind)
        if shape is not None:
            names, values = shape[1](value)
            plain: Any = (
                shape[0],
                names,
                tuple([v if type(v) in _ATOMS else self._plain(v) for v in values]),
            )
        elif kind is types.FunctionType and value.__module__.startswith("generator."):
            # by qualified name: its code is part of code_digest()
            plain = ("function", f"{value.__module__}.{value.__qualname__}")
        else:
            raise TypeError(f"cannot fingerprint a {kind.__module__}.{kind.__qualname__}")
        digest = hashlib.sha256(marshal.dumps(plain, 2)).digest()
        self._known[id(value)] = (value, digest)
        return digest


_ATOMS = frozenset({type(None), bool, int, float, str, bytes})
_Attributes = Callable[[Any], tuple[tuple[str, ...], tuple[Any, ...]]]
_SHAPES: dict[Any, tuple[str, _Attributes] | None] = {}


def _shape(kind: Any) -> tuple[str, _Attributes] | None:
    """(qualified name, a function giving an instance's attribute names and values) of an
    apiforge dataclass; None for anything else."""
    try:
        return _SHAPES[kind]
    except KeyError:
        pass
    shape: tuple[str, _Attributes] | None = None
    if kind.__module__.startswith("generator.") and hasattr(kind, "__dataclass_fields__"):
        name = f"{kind.__module__}.{kind.__qualname__}"
        slots: list[str] = []
        for klass in reversed(kind.__mro__):
            declared = klass.__dict__.get("__slots__", ())
            slots.extend([declared] if isinstance(declared, str) else declared)
        if "__dict__" in slots or not all("__slots__" in k.__dict__ for k in kind.__mro__[:-1]):
            shape = (name, _dict_attributes)
        else:
            names = tuple(n for n in dict.fromkeys(slots) if n != "__weakref__")
            get = operator.attrgetter(*names) if len(names) > 1 else None

            def attributes(value: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
                if get is not None:
                    return names, get(value)
                return names, tuple(getattr(value, n) for n in names)

            shape = (name, attributes)
    _SHAPES[kind] = shape
    return shape


def _dict_attributes(value: Any) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    items = vars(value)
    return tuple(items), tuple(items.values())


def fingerprint(value: object) -> str:
    """SHA-256 of `value` (see `Fingerprinter`); equal fingerprints mean equal values.
    TypeError for a value it does not cover."""
    return Fingerprinter().digest(value)


@dataclass(frozen=True, slots=True)
class OperationView:
    """What templates may read of an `ir.Operation` (`op.op.id` …): plans hand templates this
    instead of the operation, so a context's fingerprint covers all a template can see of it
    without hashing every schema the operation holds. A template that reads anything else
    fails (StrictUndefined) rather than render from data its key does not cover."""

    id: str
    label: str
    deprecated: bool


def operation_view(op: Any) -> OperationView:
    return OperationView(id=op.id, label=op.label, deprecated=op.deprecated)
