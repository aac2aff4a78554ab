"""Names from property paths: the client's models without numbered class names.

datamodel-code-generator names a model made inside another one after the property, and a
second one of the same name with a number (`Object27` for Stripe's 168th `object` enum,
`Customer1`). `name_from_paths` renames each such class after where it is used: the class
and the property that hold it (`Customer.object` → `CustomerObject`, `Charge.outcome` →
`ChargeOutcome`); used in several places, after the first in sorted order. A name already
taken gets a number after all (the allocator's rule), so the result is collision-free, and
it depends only on the module's classes and fields, not on the order the library numbered
them in. Classes named in `keep` (the component schemas' classes the templates name) are
never renamed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from generator.client.text_edits import Edits
from generator.render.names import NameAllocator, pascal_case

__all__ = ["is_numbered", "name_from_paths"]

_NUMBERED = re.compile(r"[A-Za-z]\d+$")


def is_numbered(name: str) -> bool:
    """A name the library made unique with a number (`Object27`)."""
    return _NUMBERED.search(name) is not None


def name_from_paths(text: str, keep: Iterable[str] = ()) -> str:
    """`text` (a models module) with its numbered classes named after their property paths."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    kept = set(keep)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    numbered = {n for n in classes if is_numbered(n) and n not in kept}
    if not numbered:
        return text
    paths: dict[str, list[tuple[str, str]]] = {}
    for owner, node in classes.items():
        for statement in node.body:
            if not (
                isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            ):
                continue
            for child in ast.walk(statement.annotation):
                if isinstance(child, ast.Name) and child.id in numbered and child.id != owner:
                    paths.setdefault(child.id, []).append((owner, statement.target.id))
    taken = set(classes) - numbered
    for statement in tree.body:  # type aliases and other names of the module
        if isinstance(statement, ast.Assign):
            taken.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    allocator = NameAllocator(sorted(taken), separator="")
    renamed: dict[str, str] = {}

    def name_of(name: str, seen: tuple[str, ...]) -> str:
        if name not in numbered or name in seen:
            return renamed.get(name, name)
        if name not in renamed:
            uses = sorted(set(paths.get(name, ())))
            if not uses:
                return name
            owner, field = uses[0]
            wanted = name_of(owner, (*seen, name)) + pascal_case(field, fallback="Value")
            renamed[name] = allocator.allocate(name, wanted.replace("_", ""))
        return renamed[name]

    # in the order of their first paths, not of the library's numbers
    for name in sorted(numbered, key=lambda n: (min(paths.get(n, [("~", "")])), n)):
        name_of(name, ())
    renamed = {old: new for old, new in renamed.items() if old != new}
    if not renamed:
        return text
    edits = Edits(text)
    for child in ast.walk(tree):
        if isinstance(child, ast.Name) and child.id in renamed:
            edits.replace(child, renamed[child.id])
        elif isinstance(child, ast.ClassDef) and child.name in renamed:
            edits.rename_class(child, renamed[child.name])
    return edits.apply()
