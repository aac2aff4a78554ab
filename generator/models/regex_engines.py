"""Which `pattern`s the generated code can run, and models without the ones it cannot.

Pydantic compiles every `pattern` when a model class (or a FastAPI route) is built, with one of
two engines: pydantic-core's Rust `regex` crate by default, Python's `re` where the model's
config says `regex_engine="python-re"` (datamodel-code-generator sets it on a model with a
look-around) or the pattern is a compiled `re.Pattern`. Each rejects patterns the other takes
(Rust: look-around, backreferences and octal escapes, `\\Z`, `(?P=name)`, atomic groups,
surrogate escapes, unknown `\\p{...}` classes, a compiled size over 10 MB such as
`\\w{1,5000}`; Python: every `\\p{...}`, `\\x{...}`, `\\z`), and one rejected pattern stops the
whole generated module at import. The product rule (as for a look-around in a parameter):
generate, say where, and do not enforce what cannot be enforced — so a pattern the engine that
will compile it rejects is left out, and named in a warning.

The engines themselves decide (`rust_error`, `python_error`): the same pydantic-core the
generated code runs with, not a guess at its grammar.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from generator.ir import Schema, Where

# a `pattern=` keyword's value as the library writes it: a string, or `compile(<string>)`
_PATTERN_LITERAL = re.compile(
    r"""\bpattern=(?:compile\()?(r?(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))"""
)


@functools.lru_cache(maxsize=4096)
def rust_error(pattern: str) -> str | None:
    """Why pydantic-core's default (Rust) engine rejects `pattern`; None when it compiles."""
    return _engine_error(pattern, None)


@functools.lru_cache(maxsize=4096)
def python_error(pattern: str) -> str | None:
    """Why pydantic's `python-re` engine rejects `pattern`; None when it compiles."""
    return _engine_error(pattern, "python-re")


def _engine_error(pattern: str, engine: str | None) -> str | None:
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    config = core_schema.CoreConfig(regex_engine="python-re") if engine else None
    try:
        with warnings.catch_warnings():  # Python's re on `[[`: "Possible nested set"
            warnings.simplefilter("ignore")
            SchemaValidator(core_schema.str_schema(pattern=pattern), config)
    except SchemaError as exc:
        return _reason(str(exc))
    except (RecursionError, OverflowError, MemoryError, ValueError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    return None


def _reason(message: str) -> str:
    """The engine's own words, without pydantic-core's nesting: `look-around, ... is not
    supported`, `Compiled regex exceeds size limit of 10485760 bytes.`, ..."""
    found = re.search(r"error: (.+)", message)
    if found:
        return found.group(1).strip()[:200]
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    last = lines[-1] if lines else message
    return re.sub(r"^(SchemaError: )+", "", last)[:200]


ENGINE_NAMES = {"rust": "pydantic-core's Rust regex engine", "python-re": "Python's re"}


@dataclass(frozen=True)
class Dropped:
    """A pattern left out of the models module: by which engine, why, and whether models that
    compile it with the other engine kept it (`partly`)."""

    pattern: str
    engine: str  # "rust" or "python-re"
    reason: str
    partly: bool = False

    def message(self) -> str:
        kept = (
            "; the models that compile it with the other engine enforce it" if self.partly else ""
        )
        return (
            f"the pattern {self.pattern[:200]!r} is not enforced by the models: "
            f"{ENGINE_NAMES[self.engine]} rejects it ({self.reason}){kept}"
        )


_PATTERNS_KIND = "patterns1"


def drop_unrunnable_patterns(text: str) -> tuple[str, tuple[Dropped, ...]]:
    """`text` (a models module) without each `pattern=` its engine would reject, and what was
    dropped (each pattern once, in order). A module whose patterns all compile in both engines
    is given back as it is without being parsed.

    What to cut is cached by the module's text (with apiforge's code, Python's and
    pydantic-core's versions: the engines decide): a regeneration with the same models
    neither imports pydantic-core nor compiles a pattern."""
    from generator.spec.load import cache_dir, cache_get, cache_put

    key = None
    if cache_dir() is not None:
        from generator.installed import installed_version
        from generator.render.fingerprint import code_digest

        engines = f"{sys.version}\0{installed_version('pydantic_core', 'pydantic-core')}"
        h = hashlib.sha256(f"{_PATTERNS_KIND}\0{code_digest()}\0{engines}\0".encode())
        h.update(text.encode("utf-8", "surrogatepass"))
        key = h.hexdigest()
        hit = cache_get(_PATTERNS_KIND, key)
        if isinstance(hit, tuple) and len(hit) == 2:
            cuts, found = hit
            return (_cut(text, cuts) if cuts else text), found
    cuts, found = _unrunnable(text)
    if key is not None:
        cache_put(_PATTERNS_KIND, key, (cuts, found))
    return (_cut(text, cuts) if cuts else text), found


def _unrunnable(text: str) -> tuple[list[tuple[int, int, int, int]], tuple[Dropped, ...]]:
    """The spans of `text` to cut (see `_cut`) and what they drop."""
    candidates = {
        value
        for match in _PATTERN_LITERAL.finditer(text)
        if isinstance(value := _literal(match.group(1)), str)
        and (rust_error(value) or python_error(value))
    }
    if not candidates:
        return [], ()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return [], ()
    cuts: list[tuple[int, int, int, int]] = []  # (line, column, end line, end column), 0-based
    dropped: dict[str, Dropped] = {}
    kept: set[str] = set()
    for statement in tree.body:
        engines = _engines(statement)
        for call, index, value in _pattern_keywords(statement):
            for engine in engines if not value.compiled else ("python-re",):
                reason = (
                    python_error(value.text) if engine == "python-re" else rust_error(value.text)
                )
                if reason:
                    dropped.setdefault(value.text, Dropped(value.text, engine, reason))
                    cuts.append(_keyword_span(call, index))
                    break
            else:
                kept.add(value.text)
    found = tuple(
        Dropped(d.pattern, d.engine, d.reason, partly=d.pattern in kept) for d in dropped.values()
    )
    return cuts, found


@dataclass(frozen=True)
class _Value:
    text: str
    compiled: bool  # `compile(...)`: Python's `re` compiles it, whatever the config says


def _literal(source: str) -> Any:
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return None


def _engines(statement: ast.stmt) -> tuple[str, ...]:
    """The engines a top-level statement's patterns are compiled with: a model class's own;
    both for anything else (a type alias is compiled by each model that uses it)."""
    if not isinstance(statement, ast.ClassDef):
        return ("rust", "python-re")
    for member in statement.body:
        if (
            isinstance(member, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "model_config" for t in member.targets)
            and isinstance(member.value, ast.Call)
        ):
            for keyword in member.value.keywords:
                if keyword.arg == "regex_engine" and _literal_of(keyword.value) == "python-re":
                    return ("python-re",)
    return ("rust",)


def _literal_of(node: ast.expr) -> Any:
    return node.value if isinstance(node, ast.Constant) else None


def _pattern_keywords(statement: ast.stmt) -> Iterator[tuple[ast.Call, int, _Value]]:
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        for index, keyword in enumerate(node.keywords):
            if keyword.arg != "pattern":
                continue
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield node, index, _Value(value.value, compiled=False)
            elif (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "compile"
                and value.args
                and isinstance(value.args[0], ast.Constant)
                and isinstance(value.args[0].value, str)
            ):
                yield node, index, _Value(value.args[0].value, compiled=True)


def _keyword_span(call: ast.Call, index: int) -> tuple[int, int, int, int]:
    """The text to cut to remove keyword `index` of `call`: with the comma before it, or
    (the first argument) with the comma after it."""
    keyword = call.keywords[index]
    assert keyword.end_lineno is not None and keyword.end_col_offset is not None
    arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    arguments.sort(key=lambda n: (n.lineno, n.col_offset))
    position = arguments.index(keyword)
    if position > 0:
        before = arguments[position - 1]
        assert before.end_lineno is not None and before.end_col_offset is not None
        return (
            before.end_lineno - 1,
            before.end_col_offset,
            keyword.end_lineno - 1,
            keyword.end_col_offset,
        )
    if position + 1 < len(arguments):
        after = arguments[position + 1]
        return keyword.lineno - 1, keyword.col_offset, after.lineno - 1, after.col_offset
    return keyword.lineno - 1, keyword.col_offset, keyword.end_lineno - 1, keyword.end_col_offset


def _cut(text: str, cuts: list[tuple[int, int, int, int]]) -> str:
    """`text` without the spans (ast positions: lines, UTF-8 byte columns)."""
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    for line, column, end_line, end_column in sorted(set(cuts), reverse=True):
        head = lines[line][:column]
        tail = lines[end_line][end_column:]
        lines[line : end_line + 1] = [head + tail]
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def pattern_locations(schemas: Mapping[str, Schema]) -> dict[str, list[Where]]:
    """Where each `pattern` (and `patternProperties` key) of the component `schemas` is
    written."""
    from generator.models.constraints import schema_nodes

    found: dict[str, list[Where]] = {}
    for node, at, path in schema_nodes(schemas):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            found.setdefault(pattern, []).append(at.child(*path, "pattern"))
        keyed = node.get("patternProperties")
        for name in keyed if isinstance(keyed, Mapping) else ():
            if isinstance(name, str):
                found.setdefault(name, []).append(at.child(*path, "patternProperties", name))
    return found


__all__ = [
    "ENGINE_NAMES",
    "Dropped",
    "drop_unrunnable_patterns",
    "pattern_locations",
    "python_error",
    "rust_error",
]
