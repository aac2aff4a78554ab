"""The client's models as a package of modules, so that a resource loads only what it reaches.

One module per class the templates name (a component schema, an operation's inline schema):
`models/customer.py` holds `Customer` and the classes made inside it (its enums, its nested
objects); a class made inside several goes with the first of them in sorted order, and one
that none reaches goes to `models/_common.py`. The set of modules depends only on the names
the templates know, so it is planned before the models module is generated.

How a module names a class of another one:

- a model in a field's annotation, alone there (`address: Address | None`,
  `items: list[Item]`): the annotation gets the runtime's `LAZY` first in its `Annotated`
  and the module lists the model in `_LAZY_MODELS` (for the type checker, an import under
  `TYPE_CHECKING`): the model is imported when the class is first built, and built on the
  first value that needs it, so importing or building a model never builds the models it
  can reach, which on Stripe are a thousand from any of them (`_runtime/_lazy.py`);
- anything else (an enum, a base class, a default, a type alias, members of one union or of a
  discriminated union, which pydantic must see to choose among them): imported. Modules that
  would import each other in a circle are one module.

A model is built when first used, so the `X.model_rebuild()` calls of the models module are
left out (each would import the models its class names lazily).

`models/__init__.py` imports nothing at run time: `models.Customer` (and
`from <package>.models import Customer`) imports the class's module when first asked for.
"""

from __future__ import annotations

import ast
import hashlib
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.client.models import client_models
from generator.client.text_edits import Edits
from generator.render.fingerprint import code_digest
from generator.render.names import RESERVED, NameAllocator, snake_case
from generator.render.writer import Deferred, GeneratedFile
from generator.spec.load import remembered

__all__ = ["ModelModules", "client_modules", "model_files", "module_names", "split_models"]

COMMON = "_common"
_KIND = "clientmodules1"
_memo: dict[str, dict[str, str]] = {}


_LONGEST = 64  # a module's name, in characters: file systems bound a file's name


def module_names(keep: Iterable[str]) -> dict[str, str]:
    """Each named class's module (sorted order, collision-free, never a keyword, at most
    `_LONGEST` characters before its suffix)."""
    allocator = NameAllocator([*RESERVED, COMMON, "__init__"])
    return {name: allocator.allocate(name, _module_name(name)) for name in sorted(keep)}


def _module_name(name: str) -> str:
    """`name` in snake_case; a long one cut, with a digest of the whole name to tell apart
    the names that begin alike (`very_long_…_name_0123abcd`)."""
    module = snake_case(name, fallback="model")
    if len(module) <= _LONGEST:
        return module
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{module[: _LONGEST - len(digest) - 1].rstrip('_')}_{digest}"


@dataclass(frozen=True)
class ModelModules:
    """The package's modules: module name (without `.py`) → text, `__init__` included."""

    modules: dict[str, str]


def split_models(text: str, keep: Iterable[str], marker: str) -> ModelModules:
    """`text` (the client's models module, one file) as the package's modules."""
    names = module_names(keep)
    empty = {
        m: f'{marker}\n"""Not generated: see the models step\'s warnings."""\n'
        for m in names.values()
    }
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ModelModules({"__init__": text, **empty, COMMON: marker + "\n"})
    imports: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    definitions = _definitions(tree)
    homes = _homes(definitions, names)
    kinds = _kinds(tree)
    lazy: dict[int, str] = {}
    eager = _eager_names(definitions, kinds, lazy)
    homes = _merge_circles(definitions, homes, eager)
    by_module: dict[str, list[str]] = {}
    for name in definitions:  # the module's order: bases before their subclasses
        by_module.setdefault(homes[name], []).append(name)
    source = Edits(text)
    modules: dict[str, str] = {}
    for module in sorted({*names.values(), COMMON}):
        own = by_module.get(module, [])
        if not own:
            modules[module] = empty.get(
                module, f'{marker}\n"""No model is left to this module."""\n'
            )
            continue
        modules[module] = _module_text(
            text, source, marker, module, own, definitions, homes, eager, imports, lazy
        )
    modules["__init__"] = _index(marker, homes)
    return ModelModules(modules)


@dataclass(frozen=True)
class _Definition:
    node: ast.stmt
    uses: frozenset[str]  # the module's names it refers to


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _definitions(tree: ast.Module) -> dict[str, _Definition]:
    nodes = {name: n for n in tree.body if (name := _defined_name(n)) is not None}
    return {
        name: _Definition(
            node,
            frozenset(
                c.id
                for c in ast.walk(node)
                if isinstance(c, ast.Name) and c.id in nodes and c.id != name
            ),
        )
        for name, node in nodes.items()
    }


def _homes(definitions: Mapping[str, _Definition], names: Mapping[str, str]) -> dict[str, str]:
    """Each definition's module: its own for a named class, else its first owner's."""
    homes = {n: names[n] for n in definitions if n in names}
    for owner in sorted(homes):  # breadth first from each named class, in sorted order
        queue = deque([owner])
        while queue:
            current = queue.popleft()
            for used in sorted(definitions[current].uses):
                if used not in homes:
                    homes[used] = homes[owner]
                    queue.append(used)
    for name in definitions:
        homes.setdefault(name, COMMON)
    return homes


def _kinds(tree: ast.Module) -> dict[str, str]:
    """ "model" for pydantic models, "other" for enums, aliases and the rest."""
    kinds: dict[str, str] = {}
    for node in tree.body:
        name = _defined_name(node)
        if name is None:
            continue
        model = isinstance(node, ast.ClassDef) and any(
            (isinstance(b, ast.Name) and b.id == "BaseModel")
            or (
                isinstance(b, ast.Subscript)
                and isinstance(b.value, ast.Name)
                and b.value.id == "RootModel"
            )
            for b in node.bases
        )
        kinds[name] = "model" if model else "other"
    return kinds


def _eager_names(
    definitions: Mapping[str, _Definition], kinds: Mapping[str, str], lazy: dict[int, str]
) -> dict[str, frozenset[str]]:
    """For each definition, the names it must have imported; `lazy` is filled with the
    fields that may name their one model lazily (`id` of the statement → the model)."""
    eager: dict[str, frozenset[str]] = {}
    for name, definition in definitions.items():
        node = definition.node
        must: set[str] = {u for u in definition.uses if kinds.get(u) != "model"}
        lazy_ok: set[int] = set()
        statements = node.body if isinstance(node, ast.ClassDef) else []
        for statement in statements:
            if not isinstance(statement, ast.AnnAssign) or _mentions(statement.value, definitions):
                continue
            annotation = statement.annotation
            models = {
                c.id
                for c in ast.walk(annotation)
                if isinstance(c, ast.Name) and kinds.get(c.id) == "model" and c.id != name
            }
            if len(models) == 1 and not _discriminated(annotation):
                lazy[id(statement)] = next(iter(models))
                lazy_ok.update(
                    id(c)
                    for c in ast.walk(annotation)
                    if isinstance(c, ast.Name) and c.id in models
                )
        for child in ast.walk(node):
            if (
                isinstance(child, ast.Name)
                and kinds.get(child.id) == "model"
                and child.id != name
                and id(child) not in lazy_ok
            ):
                must.add(child.id)
        eager[name] = frozenset(must)
    return eager


def _mentions(value: ast.expr | None, definitions: Mapping[str, _Definition]) -> bool:
    return value is not None and any(
        isinstance(c, ast.Name) and c.id in definitions for c in ast.walk(value)
    )


def _discriminated(annotation: ast.expr) -> bool:
    return any(
        isinstance(c, ast.keyword) and c.arg == "discriminator" for c in ast.walk(annotation)
    )


def _merge_circles(
    definitions: Mapping[str, _Definition],
    homes: dict[str, str],
    eager: Mapping[str, frozenset[str]],
) -> dict[str, str]:
    """Modules that import each other in a circle made one (the first in sorted order)."""
    while True:
        graph: dict[str, set[str]] = {}
        for name, needed in eager.items():
            for other in needed:
                if homes[other] != homes[name]:
                    graph.setdefault(homes[name], set()).add(homes[other])
        circle = _a_circle(graph)
        if not circle:
            return homes
        target = min(circle)
        homes = {n: target if m in circle else m for n, m in homes.items()}


def _a_circle(graph: Mapping[str, set[str]]) -> set[str]:
    """The modules of one circle of `graph` (empty: none), found by an iterative walk."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path: list[str] = [start]
        stack: list[Iterable[str]] = [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while stack:
            following = next(iter(stack[-1]), None)
            if following is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(following) == 1:
                return set(path[path.index(following) :])
            if following not in state:
                state[following] = 1
                path.append(following)
                stack.append(iter(sorted(graph.get(following, ()))))
    return set()


def _module_text(
    text: str,
    source: Edits,
    marker: str,
    module: str,
    own: list[str],
    definitions: Mapping[str, _Definition],
    homes: Mapping[str, str],
    eager: Mapping[str, frozenset[str]],
    imports: list[ast.stmt],
    lazy: Mapping[int, str],
) -> str:
    foreign = sorted({u for n in own for u in definitions[n].uses if homes[u] != module})
    needed = {u for n in own for u in eager[n]}
    typed = [f for f in foreign if f not in needed]
    body = [_class_text(source, definitions[n].node, set(typed), lazy) for n in own]
    used = {c.id for n in own for c in ast.walk(definitions[n].node) if isinstance(c, ast.Name)}
    lines = [marker, "", "from __future__ import annotations", ""]
    lines += _imports(text, imports, used)
    if typed:
        lines.append("from typing import TYPE_CHECKING")
        if "Annotated" not in used:
            lines.append("from typing import Annotated")
    for name in foreign:
        if name in needed:
            lines.append(f"from .{homes[name]} import {name}")
    if typed:
        lines.append("from .._runtime._lazy import LAZY")
        lines += ["", "if TYPE_CHECKING:"]
        lines += [f"    from .{homes[n]} import {n}" for n in typed]
        lines += ["", "_LAZY_MODELS = {"]
        lines += [f'    "{n}": "{homes[n]}",' for n in typed]
        lines.append("}  # imported when a class of this module is first built")
    return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(body) + "\n"


def _class_text(source: Edits, node: ast.stmt, typed: set[str], lazy: Mapping[int, str]) -> str:
    """`node`'s lines, with `LAZY` first in the annotation of each field that names alone a
    model its module imports lazily (`typed`)."""
    fields = [
        s
        for s in (node.body if isinstance(node, ast.ClassDef) else [])
        if isinstance(s, ast.AnnAssign) and lazy.get(id(s)) in typed
    ]
    text = source.lines_of(node)
    if not fields:
        return text
    edits = Edits(text, first_line=node.lineno)
    for field in fields:
        annotation = field.annotation
        if (
            isinstance(annotation, ast.Subscript)
            and isinstance(annotation.value, ast.Name)
            and annotation.value.id == "Annotated"
            and isinstance(annotation.slice, ast.Tuple)
        ):
            edits.insert_after(annotation.slice.elts[0], ", LAZY")
        else:
            edits.replace(annotation, f"Annotated[{source.segment(annotation)}, LAZY]")
    return edits.apply()


def _imports(text: str, imports: list[ast.stmt], used: set[str]) -> list[str]:
    """The module's own imports, without `__future__` and the names it does not use; a
    relative import one package deeper."""
    lines: list[str] = []
    for node in imports:
        if isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                continue
            kept = [a for a in node.names if (a.asname or a.name) in used]
            if not kept:
                continue
            listed = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in kept)
            dots = "." * (node.level + 1 if node.level else 0)
            lines.append(f"from {dots}{node.module or ''} import {listed}")
        elif isinstance(node, ast.Import):
            kept_names = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
            if kept_names:
                lines.append(ast.unparse(node))
    return lines


def _index(marker: str, homes: Mapping[str, str]) -> str:
    """`models/__init__.py`: every class by name, its module imported when first asked for."""
    public = sorted(n for n in homes if not n.startswith("_"))
    lines = [
        marker,
        '"""The API\'s models: `models.Customer` (or `from .models import Customer`) imports',
        'the module of that class when it is first asked for, and nothing else."""',
        "",
        "import importlib as _importlib",
        "import typing as _typing",
        "",
    ]
    if public:
        lines.append("if _typing.TYPE_CHECKING:")
        lines += [f"    from .{homes[n]} import {n} as {n}" for n in public]
        lines.append("")
    lines.append("_MODULES: dict[str, str] = {")
    lines += [f'    "{n}": "{homes[n]}",' for n in public]
    lines += [
        "}",
        "",
        f"__all__ = [{', '.join(repr(n) for n in public)}]",
        "",
        "",
        "def __getattr__(name: str) -> _typing.Any:",
        "    module = _MODULES.get(name)",
        "    if module is None:",
        '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
        '    value = getattr(_importlib.import_module(f".{module}", __name__), name)',
        "    globals()[name] = value",
        "    return value",
        "",
        "",
        "def __dir__() -> list[str]:",
        "    return sorted([*globals(), *_MODULES])",
    ]
    return "\n".join(lines) + "\n"


def model_files(
    package: str, models_source: str | Deferred, keep: frozenset[str], marker: str
) -> list[GeneratedFile]:
    """The files of `<package>/models/`: the client's models module (`client_models`) split,
    when its text is there (else when it is)."""
    names = sorted({*module_names(keep).values(), COMMON, "__init__"})
    split: list[dict[str, str]] = []
    lock = threading.Lock()

    def modules() -> dict[str, str]:
        with lock:
            if not split:
                text = models_source if isinstance(models_source, str) else models_source.text()
                split.append(client_modules(text, keep, marker))
            return split[0]

    return [
        GeneratedFile(
            f"{package}/models/{name}.py",
            Deferred(lambda name=name: modules()[name]),  # type: ignore[misc]
            format=True,
        )
        for name in names
    ]


def client_modules(text: str, keep: frozenset[str], marker: str) -> dict[str, str]:
    """The package's modules made from `text` (the shared models module): module name →
    text, kept in the disk cache by everything they are made from (apiforge's code too), so
    a regeneration with the same models splits nothing (seconds on Stripe)."""
    material = "\0".join([code_digest(), marker, text, *sorted(keep)])
    key = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
    made = remembered(
        _memo,
        _KIND,
        key,
        dict,
        lambda: split_models(client_models(text, keep), keep, marker).modules,
    )
    assert made is not None
    return made
