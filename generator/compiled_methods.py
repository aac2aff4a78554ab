"""Dataclass methods compiled once and kept between runs, as Python keeps module bytecode.

`dataclasses` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__` and `__delattr__` as source text and compiles it whenever the class is created:
about 1.3 ms for a frozen class, so ~0.1 s of a regeneration's start (apiforge defines some
80 dataclasses) and ~0.03 s of a cold lint. `install()` gives the `dataclasses` module an
`exec` of its own that looks the text up in a table before compiling it. The text is the key
and the value is the code `compile` made of it, so what runs is exactly what `dataclasses`
would have compiled; only apiforge's own classes are kept (`dataclasses` passes the class's
module globals).

Each entry is stored as its code's own marshal bytes, loaded when a class asks for it: a
command makes only some of the classes (`lint` about half), and loading every code object of
the table was ~7 ms of each start.

The table is one file per interpreter beside the package's bytecode
(`generator/__pycache__/dataclass-methods.cpython-311.marshal`), written when a class was
missing from it, under the same rules as bytecode: not when Python writes none
(`PYTHONDONTWRITEBYTECODE`, `-B`), not where the folder cannot be written. An unreadable or
foreign file is ignored and replaced.

Worth its weight, measured: paired runs (each run with the table beside one with
`install()` left out, in turn, on a shared and busy 2-core machine) gave a median CPU-time
ratio of 0.92 both for a Stripe regeneration after one new operation (8 pairs, ~0.13 s
saved of ~1.5 s) and for a cold `apiforge lint` of Stripe (12 pairs, ~0.05 s of ~0.5 s),
beyond the ~5% the machine's noise moves such medians.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

_FORMAT = 2
_LIMIT = 1500  # entries (apiforge's classes need ~470)
_codes: dict[str, Any] = {}  # source text → code object, or its marshal bytes until used
_used: set[str] = set()
_path: Path | None = None
_changed = False


def default_path() -> Path | None:
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    return Path(__file__).resolve().parent / "__pycache__" / f"dataclass-methods.{tag}.marshal"


def install(path: Path | None = None) -> None:
    """Route `dataclasses`' compiling through the table at `path` (default: beside the
    bytecode); classes made before this call are not affected."""
    global _path, _changed
    _path = path if path is not None else default_path()
    _codes.clear()
    _used.clear()
    _changed = False
    if _path is not None:
        _codes.update(_read(_path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # read before builtins.exec


def _read(path: Path) -> dict[str, Any]:
    try:
        stored = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == _FORMAT):
        return {}
    table = stored[1]
    return table if isinstance(table, dict) else {}


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    global _changed
    name = globals.get("__name__", "") if isinstance(globals, dict) else ""
    if not isinstance(source, str) or not (name == "generator" or name.startswith("generator.")):
        builtins.exec(source, globals, locals)
        return
    code = _codes.get(source)
    if code.__class__ is bytes:
        try:
            code = _codes[source] = marshal.loads(code)
        except (EOFError, ValueError, TypeError):
            code = None
    if code.__class__ is not CodeType:  # not in the table, or a damaged entry
        code = compile(source, "<string>", "exec")  # what `exec(source)` compiles
        _codes[source] = code
        _changed = True
    _used.add(source)
    builtins.exec(code, globals, locals)


def save() -> None:
    """Write the table if a class was compiled that it lacked. Entries no class of this
    process used are kept (`lint` makes half the classes `generate` does) until the table
    passes `_LIMIT` entries, which only edits of apiforge's code make it do."""
    global _changed
    if not _changed or _path is None or sys.dont_write_bytecode:
        return
    _changed = False
    kept = _used if len(_codes) > _LIMIT else _codes
    table = {
        source: code if code.__class__ is bytes else marshal.dumps(code)
        for source, code in _codes.items()
        if source in kept
    }
    tmp = _path.with_name(f"{_path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        _path.parent.mkdir(exist_ok=True)
        tmp.write_bytes(marshal.dumps((_FORMAT, table)))
        os.replace(tmp, _path)  # readers see the old table or the new one, never half
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)
