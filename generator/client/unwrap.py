"""Responses that read as values: the client's models without `RootModel` wrappers on the
attributes a user reads.

datamodel-code-generator makes a `RootModel` of a schema that is not an object: the string
branch of Stripe's expandable fields (`anyOf: [{type: string, maxLength: 5000}, {$ref: ...}]`
gives `class DefaultSource(RootModel[str | None])`, used as `DefaultSource | Card | None`), a
`oneOf` with a discriminator, a constrained string component (`Currency`). On an attribute the
user then reads `customer.default_source.root` and `customer.default_source == "card_1"` is
False. `unwrap_root_models` writes each such use as the type the wrapper holds:

- `DefaultSource | Card | None` becomes `str | Card | None` (a union does not repeat a member
  it has already);
- a discriminated union keeps its discriminator: `Annotated[A | B, Field(discriminator="type")]`;
- the wrapper's constraints stay, on the type it holds (`Annotated[str, Field(max_length=5000)]`:
  a model built in code is checked as before); its description and examples are left out.

The classes the templates name stay (a resource may return one as a whole body, and it is a
name the user may import), the others are left out; a `RootModel` whose type refers to itself is left as it is, and so is one
used other than in an annotation (a default value, a base class).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeGuard

from generator.client.text_edits import Edits

__all__ = ["unwrap_root_models"]


def unwrap_root_models(text: str, keep: Iterable[str] = ()) -> str:
    """`text` (a models module) with every annotation's use of an unwrappable `RootModel`
    written as the type it holds (see the module docstring); the unwrapped classes not in
    `keep` (the ones templates name) are left out."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    edits = Edits(text)
    held = _held_types(tree, edits)
    if not held:
        return text
    outside = _used_outside_annotations(tree, set(held))
    for name in outside:
        held.pop(name, None)
    resolved: dict[str, str] = {}
    for name in sorted(held):
        _resolve(name, held, resolved, ())
    resolved = {k: v for k, v in resolved.items() if v}
    if not resolved:
        return text
    for annotation in _annotations_outside(tree, set(resolved)):
        _write_held(annotation, resolved, edits)
    kept = _still_named(tree, set(resolved), set(keep))
    for statement in tree.body:
        if (
            isinstance(statement, ast.ClassDef)
            and statement.name in resolved
            and statement.name not in kept
        ):
            edits.replace(statement, "")
        elif isinstance(statement, ast.Expr) and _is_rebuild(statement):
            target = statement.value.func.value  # type: ignore[attr-defined]
            if isinstance(target, ast.Name) and target.id in resolved and target.id not in kept:
                edits.replace(statement, "")
    return edits.apply()


def _still_named(tree: ast.Module, resolved: set[str], keep: set[str]) -> set[str]:
    """`keep` and the wrappers a kept wrapper names (its own `root` is left as it is), at
    any depth: the classes that stay."""
    bodies = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in resolved}
    kept, todo = set(keep), [n for n in bodies if n in keep]
    while todo:
        for child in ast.walk(bodies[todo.pop()]):
            if isinstance(child, ast.Name) and child.id in bodies and child.id not in kept:
                kept.add(child.id)
                todo.append(child.id)
    return kept


def _held_types(tree: ast.Module, source: Edits) -> dict[str, str]:
    """`RootModel` classes → the text of the type they hold (a discriminated union with its
    `Field(discriminator=...)`), for those that can be unwrapped."""
    held: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and _is_root_model(node)):
            continue
        root = next(
            (
                s
                for s in node.body
                if isinstance(s, ast.AnnAssign)
                and isinstance(s.target, ast.Name)
                and s.target.id == "root"
            ),
            None,
        )
        if root is None or len(node.body) != 1:
            continue  # a RootModel with methods or settings: not a plain wrapper
        held_type = _without_metadata(root.annotation, source)
        if held_type is not None:
            held[node.name] = held_type
    return held


def _is_root_model(node: ast.ClassDef) -> bool:
    return any(
        isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name) and b.value.id == "RootModel"
        for b in node.bases
    )


_CONSTRAINTS = frozenset(
    {
        "gt",
        "ge",
        "lt",
        "le",
        "multiple_of",
        "min_length",
        "max_length",
        "pattern",
        "allow_inf_nan",
        "max_digits",
        "decimal_places",
        "strict",
    }
)


def _without_metadata(annotation: ast.expr, source: Edits) -> str | None:
    """The type of a `root` annotation with its constraints, without its description; a
    discriminated union keeps `Field(discriminator=...)`."""
    if not (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
    ):
        return source.segment(annotation)
    inner, *metadata = annotation.slice.elts
    kept: list[str] = []
    for item in metadata:
        if not (isinstance(item, ast.Call) and isinstance(item.func, ast.Name)):
            continue
        if item.func.id != "Field":
            continue
        kept += [
            f"{k.arg}={source.segment(k.value)}"
            for k in item.keywords
            if k.arg == "discriminator" or k.arg in _CONSTRAINTS
        ]
    if not kept:
        return source.segment(inner)
    return f"Annotated[{source.segment(inner)}, Field({', '.join(kept)})]"


def _resolve(
    name: str, held: dict[str, str], resolved: dict[str, str], stack: tuple[str, ...]
) -> str:
    """The held type of `name` with the wrappers it names unwrapped too ("" when it refers to
    itself, directly or through others: left as it is)."""
    if name in resolved:
        return resolved[name]
    if name in stack:
        return ""
    expression = ast.parse(held[name], mode="eval")
    inner = {n.id for n in ast.walk(expression) if isinstance(n, ast.Name) and n.id in held}
    parts: dict[str, str] = {}
    for other in sorted(inner):
        part = _resolve(other, held, resolved, (*stack, name))
        if not part:
            resolved[name] = ""
            return ""
        parts[other] = part
    if not parts:
        resolved[name] = held[name]
        return held[name]
    edits = Edits(held[name])
    _write_held(expression.body, parts, edits)
    resolved[name] = edits.apply()
    return resolved[name]


def _write_held(root: ast.expr, types: Mapping[str, str], edits: Edits) -> None:
    """Each name of `types` in the type `root` written as its type; in a union, without the
    members the union has already (`X | None` with X holding `str | None` gives `str | None`,
    not `str | None | None`)."""
    unions = _unions(root, types)
    for node in ast.walk(root):
        if not (isinstance(node, ast.Name) and node.id in types):
            continue
        present = unions.get(id(node))
        held = types[node.id]
        if present is not None:
            new = [(key, text) for key, text in _union_members(held) if key not in present]
            if new:  # (a union of nothing new keeps its duplicates: rare, and still valid)
                present.update(key for key, _ in new)
                held = " | ".join(text for _, text in new)
        edits.replace(node, held)


def _unions(root: ast.expr, types: Mapping[str, str]) -> dict[int, set[str]]:
    """The names of `types` that are members of a union (`A | B | ...`) in `root` → the
    members that union has besides them (as `ast.dump`s, one set shared by a union's names)."""
    found: dict[int, set[str]] = {}
    inner: set[int] = set()
    for node in ast.walk(root):  # outer unions first: the inner `|`s of one are not unions
        if not _is_union(node) or id(node) in inner:
            continue
        members = _members(node, inner)
        present = {ast.dump(m) for m in members if not (isinstance(m, ast.Name) and m.id in types)}
        for member in members:
            if isinstance(member, ast.Name) and member.id in types:
                found[id(member)] = present
    return found


def _union_members(text: str) -> list[tuple[str, str]]:
    """The members of the type `text` (itself if not a union): (`ast.dump`, text)."""
    expression = ast.parse(text, mode="eval").body
    if not _is_union(expression):
        return [(ast.dump(expression), text)]
    source = Edits(text)
    return [(ast.dump(m), source.segment(m)) for m in _members(expression, set())]


def _members(union: ast.expr, inner: set[int]) -> list[ast.expr]:
    """The members of `union`, left to right; the ids of its `|` nodes are added to `inner`."""
    members: list[ast.expr] = []
    todo = [union]
    while todo:
        part = todo.pop()
        if _is_union(part):
            inner.add(id(part))
            todo += [part.right, part.left]
        else:
            members.append(part)
    return members


def _is_union(node: ast.AST) -> TypeGuard[ast.BinOp]:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)


def _annotations(tree: ast.Module) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            yield node.annotation


def _annotations_outside(tree: ast.Module, names: set[str]) -> Iterator[ast.expr]:
    """The annotations outside the classes of `names`."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            continue
        yield from _annotations(ast.Module(body=[node], type_ignores=[]))


def _used_outside_annotations(tree: ast.Module, names: set[str]) -> set[str]:
    """Which of `names` appear elsewhere than in an annotation or their own class (a default
    value, a base, a type alias): those stay wrapped."""
    in_annotations = {id(n) for a in _annotations(tree) for n in ast.walk(a)}
    outside: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            continue
        if isinstance(node, ast.Expr) and _is_rebuild(node):
            continue
        for child in ast.walk(node):
            if (
                isinstance(child, ast.Name)
                and child.id in names
                and id(child) not in in_annotations
            ):
                outside.add(child.id)
    return outside


def _is_rebuild(node: ast.Expr) -> bool:
    """`X.model_rebuild()`."""
    call = node.value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "model_rebuild"
    )
