"""Small corrections of datamodel-code-generator's output (applied before it is cached).

`default_none_admits_none`: with `strict_nullable` (OpenAPI 3.0 documents, see
`models._options`), a member that is not `nullable` but has `default: null` — common in real
3.0 specs (just-eat: 123 of them) — comes out as `name: X = None`: a default its own type
refuses (mypy: "Incompatible types in assignment"). A default of null says null is a value of
the member, so its type gets `| None` (`Annotated[X | None, ...] = None`), as it had before
`strict_nullable`.
"""

from __future__ import annotations

import ast


def default_none_admits_none(text: str) -> str:
    """`text` with `| None` added to each model member whose default is None and whose type
    does not admit it."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int]] = []  # (line, byte column) to insert " | None" at
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for member in node.body:
            if (
                isinstance(member, ast.AnnAssign)
                and isinstance(member.value, ast.Constant)
                and member.value.value is None
            ):
                target = _type_of(member.annotation)
                if not _admits_none(target):
                    assert target.end_lineno is not None and target.end_col_offset is not None
                    edits.append((target.end_lineno - 1, target.end_col_offset))
    if not edits:
        return text
    for line, column in sorted(edits, reverse=True):
        lines[line] = lines[line][:column] + b" | None" + lines[line][column:]
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def _type_of(annotation: ast.expr) -> ast.expr:
    """The type in `Annotated[type, ...]`, or the annotation itself."""
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "Annotated"
        and isinstance(annotation.slice, ast.Tuple)
        and annotation.slice.elts
    ):
        return annotation.slice.elts[0]
    return annotation


def _admits_none(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.Name) and node.id in ("Any", "None"):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _admits_none(node.left) or _admits_none(node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id == "Optional"
    return False


__all__ = ["default_none_admits_none"]
