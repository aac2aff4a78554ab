"""The Jinja environment every generator renders with, and the render caches.

Templates live in the repository's `templates/` (a checkout or an editable install) or, in an
installed wheel, in `generator/templates/` (pyproject force-includes them there).
Undefined variables are errors (StrictUndefined), and spec values reach the output only through
the filters below, never raw: a template that writes `{{ op.description }}` without a filter is
a bug (the `raw` filter does not exist on purpose).

Filters:

- `ident`: any text → a safe identifier (as is, cleaned); `snake` / `pascal`: case-converted;
- `pystr`: a Python string literal; `pyliteral`: a literal for JSON-like data;
- `docstring(indent)`: text safe inside `\"\"\"…\"\"\"`; `comment`: `# ` lines; `one_line`: folded text;
- `toml`: a TOML basic string.

Caches (all under `generator.spec.load.cache_dir()`, so `APIFORGE_NO_CACHE` turns them off, and
all content-addressed: a key is the SHA-256 of everything the cached value depends on, so a
changed input is a different key and a stale value can never be served):

- compiled templates (`jinja1/`): Jinja's bytecode, keyed by the template's name, file name and
  source, the environment's options, and the versions of Python, Jinja and apiforge's code;
- whole files: `render_key(...)` is the key of one rendered file — `render_identity(subdir)`
  (apiforge's code, every file of `templates/<subdir>/`, Jinja's and Python's versions, the
  environment's options) plus the template's name and a `fingerprint` of the exact context it
  is rendered with. The writer keeps each file's final bytes under it;
- macro calls (`fragments1/`): inside `render_fragments`, a call of a macro whose compiled code
  reads nothing but its arguments (and context variables, whose values go into the key too) is
  answered from the previous render's results when its arguments' fingerprint is the same.
  Which macros qualify is decided from the template's compiled Python (`jinjamacros1/`). A big
  template (the client's one module for every operation) then re-renders only what changed.

The digests those keys are made of (`fingerprint`, `code_digest`) are `fingerprint.py`'s.
"""

from __future__ import annotations

import ast
import collections
import functools
import hashlib
import os
import sys
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.render.escape import (
    comment,
    docstring_text,
    one_line,
    py_literal,
    py_string,
    toml_string,
)
from generator.render.fingerprint import MISSING, Fingerprinter, code_digest, tree_digest
from generator.render.names import pascal_case, safe_identifier, snake_case

if TYPE_CHECKING:
    import jinja2

    from generator.render.writer import GeneratedFile

# Everything besides the filters that decides what a template compiles and renders to.
_ENV_OPTIONS: dict[str, bool] = {
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}
_IDENTITY_VERSION = "apiforge-render-1"
_BYTECODE_KIND = "jinja1"
_MACROS_KIND = "jinjamacros1"
_FRAGMENTS_KIND = "fragments1"


def templates_root() -> Path:
    """The `templates/` directory: next to the package in a checkout, inside it in a wheel."""
    package = Path(__file__).resolve().parent.parent  # generator/
    for candidate in (package / "templates", package.parent / "templates"):
        if (candidate / "client").is_dir() or (candidate / "server").is_dir():
            return candidate
    raise FileNotFoundError(f"apiforge's templates are missing (looked in {package})")


# --- identities ---------------------------------------------------------------------------


def _jinja_version() -> str:
    from generator.installed import installed_version

    return installed_version("jinja2", "jinja2")


def render_identity(subdir: str) -> str:
    """SHA-256 of everything a render of `templates/<subdir>/` depends on besides the template's
    name and its context (see the module docstring)."""
    material = "\0".join(
        (
            _IDENTITY_VERSION,
            sys.version,
            _jinja_version(),
            code_digest(),
            repr(sorted(_ENV_OPTIONS.items())),
            subdir,
            tree_digest(templates_root() / subdir),
        )
    )
    return hashlib.sha256(material.encode()).hexdigest()


def render_key(identity: str, template: str, context_fingerprint: str) -> str:
    """The key of one rendered file: `render_identity`, the template, and its context."""
    material = f"{identity}\0{template}\0{context_fingerprint}"
    return hashlib.sha256(material.encode()).hexdigest()


class TemplateFiles:
    """The generated files one plan renders from `templates/<subdir>/` with one context.

    Each file gets its content as `Deferred` (rendered only when the writer needs the text)
    and, when caching is on, its `render_key` (so the writer can answer it from the cache
    without rendering). Renders go through `render_fragments` (scope: `scope`)."""

    def __init__(self, subdir: str, context: Mapping[str, object], *, scope: str) -> None:
        from generator.spec.load import cache_dir

        self.subdir = subdir
        self.context = dict(context)
        self.scope = scope
        self.cached = cache_dir() is not None
        self._identity: str | None = None
        self._base: str | None = None
        self.fingerprints = Fingerprinter()

    def key(self, template: str, extra: Mapping[str, object]) -> str | None:
        """The file's `render_key`, or None (caching off, or a context no fingerprint covers)."""
        if not self.cached:
            return None
        try:
            if self._identity is None or self._base is None:
                self._identity = render_identity(self.subdir)
                self._base = self.fingerprints.digest(sorted(self.context.items()))
            material = self._base + "\0" + self.fingerprints.digest(sorted(extra.items()))
        except (TypeError, RecursionError):  # a value no fingerprint covers: never cached
            return None
        return render_key(self._identity, template, hashlib.sha256(material.encode()).hexdigest())

    def file(
        self,
        path: str,
        template: str,
        *,
        format: bool = False,
        create_once: bool = False,
        extra: Mapping[str, object] | None = None,
    ) -> GeneratedFile:
        """`templates/<subdir>/<template>` rendered with the plan's context plus `extra`."""
        from generator.render.writer import Deferred, GeneratedFile

        extra = extra or {}
        context = {**self.context, **extra}
        subdir, scope, fingerprints = self.subdir, self.scope, self.fingerprints

        def make() -> str:
            return render_fragments(
                subdir, template, scope=scope, fingerprints=fingerprints, **context
            )

        return GeneratedFile(
            path,
            Deferred(make),
            format=format,
            create_once=create_once,
            key=self.key(template, extra),
        )


# --- filters ------------------------------------------------------------------------------


def _memoised(function: Callable[..., str]) -> Callable[..., str]:
    """`function` (a pure filter) remembered for `str` values (typed: `1`, `True` and `1.0`
    are different arguments): the client renders each description several times."""
    cached = functools.lru_cache(maxsize=65536, typed=True)(function)

    @functools.wraps(function)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> str:
        if type(value) is str:
            try:
                return cached(value, *args, **kwargs)
            except TypeError:  # an unhashable argument (or the filter's own error: again)
                pass
        return function(value, *args, **kwargs)

    return wrapper


def _filters() -> dict[str, Callable[..., str]]:
    return {
        "ident": lambda v: safe_identifier(str(v)),
        "snake": lambda v: snake_case(str(v)),
        "pascal": lambda v: pascal_case(str(v)),
        "pystr": _memoised(py_string),
        "pyliteral": py_literal,
        "docstring": _memoised(docstring_text),
        "toml": toml_string,
        "comment": _memoised(comment),
        "one_line": _memoised(one_line),
    }


# --- the environment ----------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def environment(subdir: str) -> jinja2.Environment:
    """The environment for `templates/<subdir>/` (e.g. "client", "server")."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_root() / subdir)),
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
        autoescape=_ENV_OPTIONS["autoescape"],
        keep_trailing_newline=_ENV_OPTIONS["keep_trailing_newline"],
        trim_blocks=_ENV_OPTIONS["trim_blocks"],
        lstrip_blocks=_ENV_OPTIONS["lstrip_blocks"],
    )
    env.context_class = _memo_context_class()
    env.filters.update(_filters())
    return env


def render(subdir: str, template: str, **context: object) -> str:
    """Render `templates/<subdir>/<template>` with `context`."""
    return environment(subdir).get_template(template).render(**context)


@functools.cache
def _bytecode_cache() -> jinja2.BytecodeCache:
    import jinja2
    from jinja2.bccache import Bucket

    class ContentAddressedBytecodeCache(jinja2.BytecodeCache):
        """Jinja's compiled templates under `cache_dir()/jinja1/`, keyed by the template's
        name, file name and source, the environment's options, and the versions of Python,
        Jinja and apiforge's code (its filters are constant-folded into the code)."""

        def get_bucket(
            self, environment: jinja2.Environment, name: str, filename: str | None, source: str
        ) -> Bucket:
            material = "\0".join(
                (
                    _IDENTITY_VERSION,
                    sys.version,
                    _jinja_version(),
                    code_digest(),
                    repr(sorted(_ENV_OPTIONS.items())),
                    name,
                    filename or "",
                    source,
                )
            )
            key = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
            bucket = Bucket(environment, key, key)
            self.load_bytecode(bucket)
            return bucket

        def load_bytecode(self, bucket: Bucket) -> None:
            from generator.spec.load import cache_dir, mark_used

            root = cache_dir()
            if root is None:
                return
            path = root / _BYTECODE_KIND / f"{bucket.key}.bc"
            try:
                with open(path, "rb") as fh:
                    bucket.load_bytecode(fh)
            except (OSError, EOFError, ValueError, TypeError):
                bucket.reset()
                return
            mark_used(path)

        def dump_bytecode(self, bucket: Bucket) -> None:
            from generator.spec.load import cache_dir

            root = cache_dir()
            if root is None:
                return
            folder = root / _BYTECODE_KIND
            try:
                folder.mkdir(parents=True, exist_ok=True)
                tmp = folder / f".{bucket.key}.{os.getpid()}.{threading.get_ident()}.tmp"
                with open(tmp, "wb") as fh:
                    bucket.write_bytecode(fh)
                os.replace(tmp, folder / f"{bucket.key}.bc")
            except OSError:
                pass  # a cache that cannot be written is only slower

    return ContentAddressedBytecodeCache()


# --- macro calls from the previous render -------------------------------------------------

# Names a macro's compiled code may read from the template function around it: the
# machinery every compiled template has (filters and tests are `t_<n>`). A template-level
# variable (`l_0_…`: another macro, a `{% set %}`) makes the macro not memoisable.
_MACHINERY = frozenset(
    {"resolve", "undefined", "cond_expr_undefined", "environment", "missing", "concat", "context"}
)
_CONTEXT_ATTRIBUTES = frozenset({"call", "eval_ctx"})
# Jinja's filters that take the context, and use it only for the environment's tests and
# filters (which are all pure here): a macro may hand them the context.
_CONTEXT_FILTERS = frozenset({"select", "reject", "selectattr", "rejectattr", "map"})


def memoisable_macros(source_code: str) -> dict[str, tuple[str, ...]]:
    """For the Python a template compiles to: each top-level macro whose output is a function
    of its arguments and of the context variables it resolves (name → those variables).

    A macro qualifies when its function reads, from outside itself, only the compiled
    template's machinery (`resolve('<constant>')`, `context.call`, `context.eval_ctx`,
    `environment`, filters and tests) — no template-level variable, no other macro, no
    caller, no `*varargs`/`**kwargs` — and its name is defined once."""
    import symtable

    tree = ast.parse(source_code)
    root_def = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "root"), None
    )
    table = symtable.symtable(source_code, "<template>", "exec")
    root_table = next((t for t in table.get_children() if t.get_name() == "root"), None)
    if root_def is None or root_table is None:
        return {}
    defs: list[ast.FunctionDef] = []  # `def macro` directly in root
    creations: list[ast.Call] = []  # `Macro(environment, macro, 'name', …)` directly in root

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                if child.name == "macro":
                    defs.append(child)
            elif isinstance(child, ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            else:
                if (
                    isinstance(child, ast.Call)
                    and isinstance(child.func, ast.Name)
                    and child.func.id == "Macro"
                ):
                    creations.append(child)
                visit(child)

    visit(root_def)
    filters: dict[str, str] = {}  # t_<n> → the filter it is (`t_4 = environment.filters['x']`)
    for node in ast.walk(root_def):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Attribute)
            and node.value.value.attr == "filters"
            and isinstance(node.value.slice, ast.Constant)
        ):
            filters[node.targets[0].id] = str(node.value.slice.value)
    tables = {t.get_lineno(): t for t in root_table.get_children() if t.get_name() == "macro"}
    found: dict[str, list[tuple[ast.FunctionDef, bool]]] = {}
    for call in creations:
        # Macro(environment, macro, 'name', (arguments), catch_kwargs, catch_varargs, caller, …)
        before = [d for d in defs if d.lineno < call.lineno]
        if len(call.args) < 7 or not before or not isinstance(call.args[2], ast.Constant):
            return {}  # not the shape this analysis knows: remember nothing
        func = max(before, key=lambda d: d.lineno)
        plain = all(isinstance(a, ast.Constant) and a.value is False for a in call.args[4:7])
        found.setdefault(str(call.args[2].value), []).append((func, plain))
    result: dict[str, tuple[str, ...]] = {}
    for name, entries in found.items():
        if len(entries) != 1:
            continue  # defined twice: which one a call meets depends on the order
        func, plain = entries[0]
        table_of = tables.get(func.lineno)
        if not plain or not isinstance(table_of, symtable.Function):
            continue
        resolved = _macro_reads(func, set(table_of.get_frees()), filters)
        if resolved is not None:
            result[name] = resolved
    return result


def _macro_reads(
    func: ast.FunctionDef, frees: set[str], filters: Mapping[str, str]
) -> tuple[str, ...] | None:
    """The context variables `func` resolves, or None when it reads anything else from outside
    (`frees`: the names it takes from the template function, its inner functions' included;
    `filters`: which filter each `t_<n>` is)."""
    for name in frees:
        if name not in _MACHINERY and not (name.startswith("t_") and name[2:].isdigit()):
            return None  # a template-level variable, a loop variable, another macro
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    resolved: set[str] = set()
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Macro"
        ):
            return None  # a call block inside: it has a caller
        if not isinstance(node, ast.Name) or node.id not in frees:
            continue
        parent = parents.get(id(node))
        if node.id == "resolve":
            if not (
                isinstance(parent, ast.Call)
                and parent.func is node
                and len(parent.args) == 1
                and not parent.keywords
                and isinstance(parent.args[0], ast.Constant)
                and isinstance(parent.args[0].value, str)
            ):
                return None
            resolved.add(parent.args[0].value)
        elif node.id == "context" and not (
            (
                isinstance(parent, ast.Attribute)
                and parent.value is node
                and parent.attr in _CONTEXT_ATTRIBUTES
            )
            or (
                isinstance(parent, ast.Call)
                and node in parent.args
                and isinstance(parent.func, ast.Name)
                and filters.get(parent.func.id) in _CONTEXT_FILTERS
            )
        ):
            return None
    return tuple(sorted(resolved))


class _FragmentMemo:
    """One render's macro results: the previous render's, and this one's."""

    def __init__(
        self,
        filename: str,
        macros: Mapping[str, tuple[str, ...]],
        salt: str,
        previous: Mapping[str, str],
        fingerprints: Fingerprinter | None = None,
    ) -> None:
        self.filename = filename
        self.macros = macros
        self.salt = salt
        self.previous = previous
        self.used: dict[str, str] = {}
        self.fingerprints = fingerprints or Fingerprinter()
        self._digests: dict[int, tuple[Any, str]] = {}
        self.hits = 0
        self.misses = 0

    def key(
        self, context: Any, macro: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> str | None:
        """The call's key, or None when it is not one to remember."""
        if macro.name not in self.macros or macro._func.__code__.co_filename != self.filename:
            return None
        if context.eval_ctx.autoescape or context.eval_ctx.volatile:
            return None
        parts = [self.salt, macro.name, str(len(args))]
        try:
            for a in args:
                parts.append(self._fingerprint(a))
            if len(kwargs) > 1 or (kwargs and "_loop_vars" not in kwargs):
                for name, value in sorted(kwargs.items()):
                    if name == "caller":
                        return None
                    if name not in ("_loop_vars", "_block_vars"):
                        parts += [name, self._fingerprint(value)]
            for name in self.macros[macro.name]:  # the context variables it resolves
                value = context.resolve_or_missing(name)
                parts += [name, self._fingerprint(MISSING if value is _jinja_missing() else value)]
        except (TypeError, AttributeError, RecursionError):
            return None
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _fingerprint(self, value: Any) -> str:
        kind = type(value)
        if value is None or kind is bool or kind is int:
            return f"{kind.__name__}:{value!r}"  # never 64 hex digits: no digest looks like it
        known = self._digests.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        digest = self.fingerprints.digest(value)
        self._digests[id(value)] = (value, digest)
        return digest


_active_memo: ContextVar[_FragmentMemo | None] = ContextVar("apiforge_fragments", default=None)


@functools.cache
def _jinja_missing() -> Any:
    from jinja2.utils import missing

    return missing


@functools.cache
def _memo_context_class() -> type:
    from jinja2.runtime import Context, Macro

    class MemoContext(Context):
        """Answers calls of memoisable macros from `_FragmentMemo` during `render_fragments`."""

        def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            memo = _active_memo.get()
            if memo is None or type(__obj) is not Macro:
                return Context.call(__self, __obj, *args, **kwargs)
            key = memo.key(__self, __obj, args, kwargs)
            if key is None:
                return Context.call(__self, __obj, *args, **kwargs)
            hit = memo.used.get(key)
            if hit is None:
                hit = memo.previous.get(key)
            if hit is not None:
                memo.hits += 1
                memo.used[key] = hit
                return hit
            result = Context.call(__self, __obj, *args, **kwargs)
            if type(result) is str:
                memo.misses += 1
                memo.used[key] = result
            return result

    return MemoContext


def _macros_of(env: jinja2.Environment, template: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """(the template's file name, its memoisable macros), the analysis cached by source."""
    from generator.spec.load import cache_get, cache_put

    assert env.loader is not None
    source, filename, _ = env.loader.get_source(env, template)
    key = hashlib.sha256(
        "\0".join(
            (
                _IDENTITY_VERSION,
                sys.version,
                _jinja_version(),
                code_digest(),
                repr(sorted(_ENV_OPTIONS.items())),
                template,
                source,
            )
        ).encode("utf-8", "surrogatepass")
    ).hexdigest()
    hit = cache_get(_MACROS_KIND, key)
    if isinstance(hit, dict):
        return filename or template, hit
    macros = memoisable_macros(env.compile(source, template, filename, raw=True))
    cache_put(_MACROS_KIND, key, macros)
    return filename or template, macros


def render_fragments(
    subdir: str,
    template: str,
    *,
    scope: str,
    fingerprints: Fingerprinter | None = None,
    **context: object,
) -> str:
    """`render(subdir, template, **context)`, with the calls of memoisable macros answered
    from the previous render's results where their inputs are the same (see the module
    docstring). `scope` names the store (e.g. the spec and package): renders of other specs
    keep their own. The same text as `render`, whatever the cache holds."""
    from generator.spec.load import cache_dir, cache_get, cache_put

    env = environment(subdir)
    if cache_dir() is None:
        return render(subdir, template, **context)
    filename, macros = _macros_of(env, template)
    if not macros:
        return render(subdir, template, **context)
    identity = render_identity(subdir)
    salt = hashlib.sha256(f"{identity}\0{template}".encode()).hexdigest()
    store = hashlib.sha256(f"{salt}\0{scope}".encode()).hexdigest()
    previous = cache_get(_FRAGMENTS_KIND, store)
    memo = _FragmentMemo(
        filename, macros, salt, previous if isinstance(previous, dict) else {}, fingerprints
    )
    token = _active_memo.set(memo)
    try:
        text = env.get_template(template).render(**context)
    finally:
        _active_memo.reset(token)
    fragment_stats.append((template, memo.hits, memo.misses))
    if memo.misses or len(memo.used) != len(memo.previous):
        cache_put(_FRAGMENTS_KIND, store, memo.used)  # this render's calls only: no growth
    return text


#: (template, hits, misses) of the latest `render_fragments` calls (for tests and profiling).
fragment_stats: collections.deque[tuple[str, int, int]] = collections.deque(maxlen=32)
