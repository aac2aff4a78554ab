"""The client's `models.py`: the shared models module, made forward-compatible for responses.

One run of datamodel-code-generator serves the server and the client (DESIGN.md: "one run plus
a small, tested transformation"). The server keeps the module as it is (strict: it validates
requests); the client gets this transformation of it, built on its runtime's `_models`:

- `BaseModel` comes from the runtime (`extra="allow"`: undeclared members are kept), and a
  model's `extra="forbid"` becomes `extra="allow"`;
- every use of a `StrEnum` class `E` in a type becomes `Open[E]` (`E | str`), of an `IntEnum`
  `OpenInt[E]` (`E | int`): unknown values of a response arrive as plain values;
- `AwareDatetime` comes from the runtime (a response's naive date-time is read as naive);
- `EmailStr` (`format: email`, which the server checks: `format_checks`) becomes `str`: a
  response is never refused for an address;
- a `RootModel` used on an attribute is written as the type it holds (`unwrap`): a
  response reads as plain values (a wrapper no template names is left out);
- a class the library numbered (`Object27`) is named after its property path
  (`CustomerObject`: `class_paths`);
- each `Annotated[..., Field(discriminator=...)]` gets `OPEN_UNION` beside the `Field`: an
  unknown variant of a response is kept as its JSON object.

Uses of an enum's members (`Format.CSV` as a default) stay as they are. The edits are made on
the text at the positions `ast` gives, so everything else (descriptions, formatting) is
untouched; the result is remembered by the SHA-256 of the input (in memory and on disk), so a
regeneration of an unchanged spec does not parse the module again.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator

from generator.client.class_paths import name_from_paths
from generator.client.text_edits import Edits
from generator.client.unwrap import unwrap_root_models
from generator.spec.load import remembered

_VERSION = "6"
_KIND = "clientmodels" + _VERSION
_RUNTIME = "._runtime._models"
_FROM_RUNTIME = frozenset({"AwareDatetime", "BaseModel"})  # pydantic's names the runtime replaces
_IGNORE = "# type: ignore[assignment]"  # the models step's (generator/models/fixes.py)
_AS_STR = "EmailStr"  # a pydantic name read as `str`
_memo: dict[str, str] = {}


def client_models(text: str, keep: Iterable[str] = ()) -> str:
    """`text` (the shared models module) made forward-compatible (see the module docstring);
    `keep`: the classes the templates name (never renamed or removed)."""
    kept = sorted(set(keep))
    material = "\0".join([text, *kept]).encode("utf-8", "surrogatepass")
    key = hashlib.sha256(material).hexdigest()
    made = remembered(_memo, _KIND, key, str, lambda: transform(text, kept))
    assert made is not None
    return made


def transform(text: str, keep: Iterable[str] = ()) -> str:
    """The transformation itself (uncached)."""
    text = name_from_paths(unwrap_root_models(text, keep), keep)
    # a member redefined against its parent's type may agree with it once unwrapped
    text = text.replace(_IGNORE, "# type: ignore[assignment, unused-ignore]")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text  # the plans report an unusable module themselves
    enums = _enum_kinds(tree)
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)} | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    names = {name: _free(name, defined) for name in ("Open", "OpenInt", "OPEN_UNION")}
    edits = Edits(text)
    used: set[str] = set()
    for node in _type_names(tree, enums):
        wrapper = "Open" if enums[node.id] == "str" else "OpenInt"
        used.add(wrapper)
        edits.replace(node, f"{names[wrapper]}[{node.id}]")
    for call in _discriminator_fields(tree):
        used.add("OPEN_UNION")
        edits.insert_after(call, f", {names['OPEN_UNION']}")
    for value in _forbidding(tree):
        edits.replace(value, '"allow"')
    for name in ast.walk(tree):
        if isinstance(name, ast.Name) and name.id == _AS_STR and _AS_STR not in defined:
            edits.replace(name, "str")
    pydantic_import = next(
        (
            n
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and n.module == "pydantic" and n.level == 0
        ),
        None,
    )
    imported = {a.name for a in pydantic_import.names} if pydantic_import is not None else set()
    runtime = sorted(used | (imported & _FROM_RUNTIME))
    replaced = _FROM_RUNTIME | {_AS_STR}
    if not runtime:
        if pydantic_import is not None and _AS_STR in imported:
            edits.replace(pydantic_import, _import_without(pydantic_import, replaced))
        return edits.apply()
    aliases = [n if names.get(n, n) == n else f"{n} as {names[n]}" for n in runtime]
    statement = f"from {_RUNTIME} import {', '.join(sorted(aliases, key=_sort_key))}"
    if pydantic_import is not None:
        kept = _import_without(pydantic_import, replaced)
        edits.replace(pydantic_import, (f"{kept}\n" if kept else "") + statement)
    else:
        edits.append_line(_last_import(tree), statement)
    return edits.apply()


def _import_without(statement: ast.ImportFrom, names: frozenset[str]) -> str:
    """`from pydantic import ...` without `names` (empty: nothing is left)."""
    kept = [a for a in statement.names if a.name not in names]
    listed = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in kept)
    return f"from pydantic import {listed}" if kept else ""


def _sort_key(name: str) -> tuple[bool, str]:
    # isort's order for one `from` import: constants, classes, then the rest
    return (not name.isupper(), name)


def _free(name: str, defined: set[str]) -> str:
    """`name`, or a private alias when the module defines a class of that name."""
    return name if name not in defined else f"_Apiforge{name}"


def _enum_kinds(tree: ast.Module) -> dict[str, str]:
    """Enum classes of the module: name → "str" (`StrEnum`) or "int" (`IntEnum`)."""
    kinds: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else ""
            if name == "StrEnum":
                kinds[node.name] = "str"
            elif name == "IntEnum":
                kinds[node.name] = "int"
    return kinds


def _type_names(tree: ast.Module, enums: dict[str, str]) -> Iterator[ast.Name]:
    """Every use of an enum class as a type: a `Name` that is not `E.MEMBER`, outside the
    enum classes themselves."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in enums:
            continue
        members: set[int] = set()
        for parent in ast.walk(node):
            if isinstance(parent, ast.Attribute):
                members.add(id(parent.value))
        for child in ast.walk(node):
            if (
                isinstance(child, ast.Name)
                and child.id in enums
                and isinstance(child.ctx, ast.Load)
                and id(child) not in members
            ):
                yield child


def _discriminator_fields(tree: ast.Module) -> Iterator[ast.Call]:
    """`Field(..., discriminator=...)` calls that are metadata of an `Annotated[...]`."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Annotated"
            and isinstance(node.slice, ast.Tuple)
        ):
            continue
        for element in node.slice.elts[1:]:
            if (
                isinstance(element, ast.Call)
                and isinstance(element.func, ast.Name)
                and element.func.id == "Field"
                and any(k.arg == "discriminator" for k in element.keywords)
            ):
                yield element


def _forbidding(tree: ast.Module) -> Iterator[ast.expr]:
    """The `"forbid"` of each `ConfigDict(extra="forbid")`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id != "ConfigDict":
                continue
            for keyword in node.keywords:
                value = keyword.value
                if (
                    keyword.arg == "extra"
                    and isinstance(value, ast.Constant)
                    and value.value == "forbid"
                ):
                    yield value


def _last_import(tree: ast.Module) -> ast.stmt:
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return imports[-1] if imports else tree.body[0]


__all__ = ["client_models", "transform"]
