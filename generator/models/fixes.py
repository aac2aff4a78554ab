"""Small corrections of datamodel-code-generator's output (applied before it is cached).

`default_none_admits_none`: with `strict_nullable` (OpenAPI 3.0 documents, see
`models._options`), a member that is not `nullable` but has `default: null` — common in real
3.0 specs (just-eat: 123 of them) — comes out as `name: X = None`: a default its own type
refuses (mypy: "Incompatible types in assignment"). A default of null says null is a value of
the member, so its type gets `| None` (`Annotated[X | None, ...] = None`), as it had before
`strict_nullable`.

`parsed_defaults`: a string `format` (`date-time`, `uuid`, `uri`, ...) makes the member a type
pydantic parses strings into, and the library writes the spec's string default as it is:
`at: AwareDatetime | None = "2020-01-01T00:00:00Z"` — not a value of the type for
`mypy --strict`, and an instance built without the member holds the string. A default
pydantic parses becomes `Field(default=..., validate_default=True)` (instances hold the
parsed value); one it cannot parse (`"yesterday"`) is left out: `None`, which the type is
made to admit (as `default_none_admits_none` does). A default written as data (a list, a map
— a model's, `{"kind": "x"}`, which the library already has pydantic validate) becomes
`Field(default=...)` too: pydantic copies such a default for each instance, and ruff's
RUF012 ("mutable default value for class attribute"), which exempts only the direct subclasses
of pydantic's `BaseModel`, then sees a pydantic field, not a shared class attribute (the
client's models subclass its runtime's `BaseModel`, and ruff has no setting to name another
pydantic base).

`builtin_generics`: the library writes the typed extra members of a model
(`additionalProperties` beside `properties`) as `__annotations__ = {"__pydantic_extra__":
Dict[str, str]}`: `typing.Dict`, which ruff's default rules (UP006, UP035) refuse in a
generated project, becomes `dict` (the writer's formatter drops the unused import).

`listed_examples`: a schema's `examples` that is not an array (one value, or a map of
Example Objects, as OpenAPI 3.0 specs write it) becomes the array JSON Schema wants, so the
server's `/openapi.json` builds.
"""

from __future__ import annotations

import ast
import datetime
import decimal
import ipaddress
import re
import uuid
from functools import cache
from typing import Any


def default_none_admits_none(text: str) -> str:
    """`text` with `| None` added to each model member whose default is None and whose type
    does not admit it, with each scalar default its type refuses mended
    (`_scalar_default`), and with a root model's parameter admitting None where its `root`
    does (`RootModel[X]` with `root: X | None`: mypy refuses the override)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    kinds = _class_kinds(tree)
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int, int, int, str]] = []  # replace (line, col)-(line, col)
    # each class's members: (type, whether it admits None once edited), for `_overrides`
    declared: dict[str, dict[str, tuple[ast.expr, bool]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        members = declared.setdefault(node.name, {})
        for member in node.body:
            if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                none = _mend_default(text, node, member, kinds, edits)
                target = _type_of(member.annotation)
                members[member.target.id] = (target, none or _admits_none(target))
    edits.extend(_overrides(tree, declared, kinds, lines))
    if not edits:
        return text
    for line, column, end_line, end_column, new in sorted(set(edits), reverse=True):
        head, tail = lines[line][:column], lines[end_line][end_column:]
        lines[line : end_line + 1] = [head + new.encode("utf-8", "surrogatepass") + tail]
    if any(new.startswith("Field(") for *_, new in edits):
        _import_field(tree, lines)
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def _mend_default(
    text: str,
    node: ast.ClassDef,
    member: ast.AnnAssign,
    kinds: dict[str, Any],
    edits: list[tuple[int, int, int, int, str]],
) -> bool:
    """Add to `edits` what `member`'s default needs (see `default_none_admits_none`); True
    when its type is made to admit None."""
    target = _type_of(member.annotation)
    value = member.value
    if value is None:
        return False
    none = isinstance(value, ast.Constant) and value.value is None
    if not none and isinstance(value, ast.Constant):
        mended = _scalar_default(value.value, target, kinds)
        if mended is None:
            return False
        if not mended and _root_parameter(node, member) is not None:
            # a root model's default it refuses (a union member given the union's default):
            # no default, as the member has none of its own
            assert member.annotation.end_lineno is not None
            assert member.annotation.end_col_offset is not None
            start = (member.annotation.end_lineno - 1, member.annotation.end_col_offset)
            edits.append((*start, *_span(value, "", at_end=True)[:2], ""))
            return False
        source = ast.get_source_segment(text, value) or repr(value.value)
        new = f"Field(default={source}, validate_default=True)" if mended else "None"
        edits.append(_span(value, new))
        none = not mended
    if none and not _admits_none(target):
        edits.append(_span(target, " | None", at_end=True))
    if none or _admits_none(target):
        root = _root_parameter(node, member)
        if root is not None and not _admits_none(root):
            edits.append(_span(root, " | None", at_end=True))
    return none


# --- a member redefined by a subclass with a type its parent's refuses -------------------
#
# `allOf: [$ref: Parent, {properties: {role: {type: string}}}]` where the parent has
# `role: {enum: [assistant]}` (openai), or a subtype that narrows a parent's `const` to its
# own (just-eat): the library writes the subclass's member with its own type, which pydantic
# takes (the subclass validates its own) and mypy refuses ("Incompatible types in
# assignment ... base class ... defined the type as ..."). Such a member gets
# `# type: ignore[assignment]` on its first line — only where the types are made of what is
# known here and are told incompatible (an unneeded ignore is an error under `--strict`), in
# the server's models and in the client's alike (there an enum `E` is `E | str`).


def _overrides(
    tree: ast.Module,
    declared: dict[str, dict[str, tuple[ast.expr, bool]]],
    kinds: dict[str, Any],
    lines: list[bytes],
) -> list[tuple[int, int, int, int, str]]:
    parents: dict[str, list[str]] = {
        node.name: [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in declared]
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }

    def inherited(cls: str, name: str, depth: int = 0) -> tuple[ast.expr, bool] | None:
        for parent in parents.get(cls, ()):
            found = declared[parent].get(name)
            if found is None and depth < 16:
                found = inherited(parent, name, depth + 1)
            if found is not None:
                return found
        return None

    def ancestors(cls: str, depth: int = 0) -> set[str]:
        found = set(parents.get(cls, ()))
        for parent in parents.get(cls, ()):
            if depth < 16:
                found |= ancestors(parent, depth + 1)
        return found

    edits = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not parents.get(node.name):
            continue
        for member in node.body:
            if not (isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name)):
                continue
            base = inherited(node.name, member.target.id)
            if base is None:
                continue
            own = declared[node.name][member.target.id]
            if _subtype(own, base, kinds, ancestors) is False:
                line = member.lineno - 1
                end = len(lines[line])
                edits.append((line, end, line, end, "  # type: ignore[assignment]"))
    return edits


def _atoms(node: ast.expr, none: bool) -> list[tuple[str, Any]] | None:
    """A type's union members: ("name", id), ("literal", value) or ("other", dump)."""
    found: list[tuple[str, Any]] = [("name", "None")] if none else []
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.BitOr):
            todo += [item.left, item.right]
        elif isinstance(item, ast.Constant) and item.value is None:
            found.append(("name", "None"))
        elif isinstance(item, ast.Name):
            found.append(("name", item.id))
        elif (
            isinstance(item, ast.Subscript)
            and isinstance(item.value, ast.Name)
            and item.value.id == "Literal"
        ):
            values = _literals(item)
            inner = item.slice.elts if isinstance(item.slice, ast.Tuple) else [item.slice]
            if len(values) != len(inner):
                return None
            found += [("literal", v) for v in values]
        else:
            found.append(("other", ast.dump(item)))
    return found


def _subtype(
    own: tuple[ast.expr, bool],
    base: tuple[ast.expr, bool],
    kinds: dict[str, Any],
    ancestors: Any,
) -> bool | None:
    """Whether mypy takes type `own` where `base` was declared (None: cannot be told here),
    the same in the server's models and in the client's (enums widened: `E | str`)."""
    mine, theirs = _atoms(*own), _atoms(*base)
    if mine is None or theirs is None:
        return None
    known = {*_PRIMITIVES, "None", "Any"}
    for kind, value in [*mine, *theirs]:
        if kind == "name" and (value == "Any" or (value not in known and value not in kinds)):
            return None  # a name from elsewhere (a format type), or Any

    def wider(value: str) -> set[str]:  # (a StrEnum is a str, an IntEnum an int)
        found: set[str] = ancestors(value)
        return found | set(_enum_value_type(kinds.get(value)))

    verdicts = {
        _fits(mine, theirs, wider),
        _fits(_widened(mine, kinds), _widened(theirs, kinds), wider),
    }
    return verdicts.pop() if len(verdicts) == 1 else None


def _enum_value_type(kind: Any) -> list[str]:
    """["str"] for a StrEnum's values, ["int"] for an IntEnum's, [] for anything else."""
    if not isinstance(kind, list) or not kind:
        return []
    if all(isinstance(v, str) for v in kind):
        return ["str"]
    return ["int"] if all(isinstance(v, int) for v in kind) else []


def _widened(atoms: list[tuple[str, Any]], kinds: dict[str, Any]) -> list[tuple[str, Any]]:
    """`atoms` as the client's models have them: each enum `E` is `E | str` (`Open[E]`)."""
    return atoms + [
        ("name", base)
        for kind, value in atoms
        if kind == "name"
        for base in _enum_value_type(kinds.get(value))
    ]


def _fits(mine: list[tuple[str, Any]], theirs: list[tuple[str, Any]], wider: Any) -> bool | None:
    unknown = any(kind == "other" for kind, _ in [*mine, *theirs])
    fits = all(any(_atom_fits(atom, other, wider) for other in theirs) for atom in mine)
    # (a type spelled otherwise, `list[Any]`, `Annotated[...]`: only told equal, never apart)
    return True if fits else None if unknown else False


def _atom_fits(atom: tuple[str, Any], other: tuple[str, Any], ancestors: Any) -> bool:
    if atom == other or (
        atom[0] == "literal" and other[0] == "literal" and _same(atom[1], other[1])
    ):
        return True
    kind, value = atom
    wider = other[1] if other[0] == "name" else None
    if kind == "literal":
        name = type(value).__name__
        return wider in {
            "str": ("str",),
            "int": ("int", "float"),
            "bool": ("bool", "int", "float"),
        }.get(name, ())
    if kind == "name":
        if (value, wider) in (("int", "float"), ("bool", "int"), ("bool", "float")):
            return True
        return wider is not None and wider in ancestors(value)
    return False


def _span(node: ast.expr, new: str, *, at_end: bool = False) -> tuple[int, int, int, int, str]:
    assert node.end_lineno is not None and node.end_col_offset is not None
    end = (node.end_lineno - 1, node.end_col_offset)
    return (*end, *end, new) if at_end else (node.lineno - 1, node.col_offset, *end, new)


def _root_parameter(node: ast.ClassDef, member: ast.AnnAssign) -> ast.expr | None:
    """`X` of a `class C(RootModel[X])` when `member` is its `root`."""
    if not (isinstance(member.target, ast.Name) and member.target.id == "root"):
        return None
    for base in node.bases:
        if (
            isinstance(base, ast.Subscript)
            and isinstance(base.value, ast.Name)
            and base.value.id == "RootModel"
        ):
            return base.slice
    return None


# --- scalar defaults a member's type refuses --------------------------------------------
#
# A spec's `default` can be of another type than its member's (openai: `batch_size` is
# `anyOf: [auto, integer]` with `default: auto`, and the library gives the integer member
# `= "auto"`; a `oneOf` member class gets `= 1` where it wraps an integer): `mypy --strict`
# refuses the module ("Incompatible types in assignment"). Where the type is made of what
# is known here (str, int, float, bool, None, Any, Literal, list/dict/set, and the module's
# enum and root model classes), the default becomes `Field(default=..., validate_default=True)`
# when pydantic makes a value of the type from it (an enum's value, a root model's inner
# value), else it is left out: None, which the type is made to admit (a root model's `root`
# has no default then). Anything else (a
# format type, an unknown name) is left as the library wrote it.

_PRIMITIVES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}
_COLLECTIONS = frozenset({"list", "dict", "set", "tuple", "frozenset"})


def _class_kinds(tree: ast.Module) -> dict[str, Any]:
    """The module's classes a scalar can be validated into: enum name → its values, root
    model name → its parameter's node; other classes → None (a model: never a scalar)."""
    kinds: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [b.id if isinstance(b, ast.Name) else "" for b in node.bases]
        if any(b in ("StrEnum", "IntEnum", "Enum") for b in bases):
            kinds[node.name] = [
                m.value.value
                for m in node.body
                if isinstance(m, ast.Assign) and isinstance(m.value, ast.Constant)
            ]
        else:
            root = next(
                (
                    b.slice
                    for b in node.bases
                    if isinstance(b, ast.Subscript)
                    and isinstance(b.value, ast.Name)
                    and b.value.id == "RootModel"
                ),
                None,
            )
            kinds[node.name] = ("root", root) if root is not None else None
    return kinds


def _scalar_default(value: Any, target: ast.expr, kinds: dict[str, Any]) -> bool | None:
    """None: `value` is a value of `target` as mypy sees it, or that cannot be told here;
    True: it is not, but pydantic validates it into one; False: it is no value of it."""
    seen = _mypy_admits(value, target, kinds)
    if seen is not False:
        return None
    return _validates(value, target, kinds, 0)


def _mypy_admits(value: Any, node: ast.expr, kinds: dict[str, Any]) -> bool | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = _mypy_admits(value, node.left, kinds)
        right = _mypy_admits(value, node.right, kinds)
        if left or right:
            return True
        return None if left is None or right is None else False
    if isinstance(node, ast.Constant) and node.value is None:
        return False
    if isinstance(node, ast.Name):
        if node.id == "Any":
            return True
        if node.id == "None":
            return False
        kind = _PRIMITIVES.get(node.id)
        if kind is not None:
            if kind is float:  # (int and bool are floats to mypy)
                return isinstance(value, int | float)
            return isinstance(value, kind)
        return False if node.id in kinds else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if node.value.id == "Literal":
            return any(_same(value, v) for v in _literals(node))
        if node.value.id in _COLLECTIONS:
            return False
    return None


def _validates(value: Any, node: ast.expr, kinds: dict[str, Any], depth: int) -> bool | None:
    """Whether pydantic makes a value of `node` from `value` (None: cannot be told here)."""
    if depth > 8:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = _validates(value, node.left, kinds, depth)
        right = _validates(value, node.right, kinds, depth)
        if left or right:
            return True
        return None if left is None or right is None else False
    if isinstance(node, ast.Name) and node.id in kinds:
        kind = kinds[node.id]
        if isinstance(kind, list):
            return any(_same(value, v) for v in kind)
        if isinstance(kind, tuple):
            return _validates(value, kind[1], kinds, depth + 1)
        return False  # a model: an object, never a scalar
    if isinstance(node, ast.Name) and node.id in _PRIMITIVES:
        return _lax(_PRIMITIVES[node.id], value)
    admitted = _mypy_admits(value, node, kinds)
    return admitted


def _lax(kind: type, value: Any) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(kind).validate_python(value)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


def _literals(node: ast.Subscript) -> list[Any]:
    inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return [e.value for e in inner if isinstance(e, ast.Constant)]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


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


def _typed_as_written(member: ast.AnnAssign) -> bool:
    """Whether a data default must stay as written for mypy: enum members in a type that
    admits None. The client makes such enums open (`X | str`); mypy then matches a plain
    `[X.A]` to `list[X | str] | None`, but not `Field(default=[X.A])`, whose type it takes
    from the list alone."""
    value = member.value
    assert value is not None
    members = value.values if isinstance(value, ast.Dict) else getattr(value, "elts", [])
    return any(isinstance(m, ast.Attribute) for m in members) and _admits_none(
        _type_of(member.annotation)
    )


def parsed_defaults(text: str) -> str:
    """`text` with each string default of a parsed type (see the module docstring) given as
    a validated `Field` default, or left out when pydantic cannot parse it."""
    tree = _parsed_if(_CANDIDATE, text)  # (most modules: parsing Stripe's takes 1.3 s)
    if tree is None:
        return text
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int, int, int, str]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for member in node.body:
            if not isinstance(member, ast.AnnAssign) or member.value is None:
                continue
            value = member.value
            if isinstance(value, ast.Dict | ast.List | ast.Set) and _typed_as_written(member):
                # pydantic copies the default for each instance; ruff cannot tell that the
                # client's BaseModel is pydantic's
                end = (value.end_lineno or value.lineno) - 1, value.end_col_offset or 0
                edits.append((*end, *end, "  # noqa: RUF012"))
                continue
            if isinstance(value, ast.Dict | ast.List | ast.Set):  # a default written as data
                # (`validate_default=True`: a model's, which pydantic validates into the model)
                validated = "validate_default=True" in (
                    ast.get_source_segment(text, member.annotation) or ""
                )
                new = f"Field(default={ast.get_source_segment(text, value)}"
                new += ", validate_default=True)" if validated else ")"
                assert value.end_lineno is not None and value.end_col_offset is not None
                edits.append(
                    (
                        value.lineno - 1,
                        value.col_offset,
                        value.end_lineno - 1,
                        value.end_col_offset,
                        new,
                    )
                )
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                continue
            parser = _parser_of(_type_of(member.annotation))
            if parser is None:
                continue
            if _parses(parser, value.value):
                source = ast.get_source_segment(text, value) or repr(value.value)
                new = f"Field(default={source}, validate_default=True)"
            else:  # left out: None, which the type is made to admit (3.0's strict types)
                new = "None"
                target = _type_of(member.annotation)
                if not _admits_none(target):
                    assert target.end_lineno is not None and target.end_col_offset is not None
                    end = (target.end_lineno - 1, target.end_col_offset)
                    edits.append((*end, *end, " | None"))
            edits.append(_span(value, new))
    _apply(lines, edits)
    if any("Field(" in edit[4] for edit in edits):
        _import_field(tree, lines)
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


_EXAMPLES = re.compile(r"\bexamples=(?!\[)")
_EXAMPLE_OBJECT_KEYS = frozenset({"value", "externalValue", "summary", "description"})


_TYPING_ALIASES = {
    "Dict": "dict",
    "List": "list",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Tuple": "tuple",
    "Type": "type",
}
_TYPING_ALIAS = re.compile(r"\b(?:Dict|List|Set|FrozenSet|Tuple|Type)\[")


def builtin_generics(text: str) -> str:
    """`text` with each use of a `typing` alias of a builtin (`Dict[str, str]`) written as
    the builtin (`dict[str, str]`)."""
    tree = _parsed_if(_TYPING_ALIAS, text)
    if tree is None:
        return text
    imported = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "typing" and node.level == 0
        for alias in node.names
        if alias.name in _TYPING_ALIASES and alias.asname is None
    }
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits = [
        _span(node, _TYPING_ALIASES[node.id])
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in imported
    ]
    _apply(lines, edits)
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def listed_examples(text: str) -> str:
    """`text` with each `Field(examples=X)` whose X is not a list made the list JSON Schema
    (and so OpenAPI 3.1, pydantic and FastAPI) wants: OpenAPI 3.0 specs often write one value
    there, or a map of Example Objects as media types have, and the server's `/openapi.json`
    then fails to build. A map whose members are all Example Objects becomes their values
    (`externalValue`-only ones left out); anything else is one example: `[X]`."""
    tree = _parsed_if(_EXAMPLES, text)
    if tree is None:
        return text
    from generator.render.escape import py_literal

    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Field"):
            continue
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg != "examples" or isinstance(value, ast.List):
                continue
            try:
                data = ast.literal_eval(value)
            except ValueError:
                new = f"[{ast.get_source_segment(text, value)}]"
            else:
                new = py_literal(_example_list(data))
            edits.append(_span(value, new))
    _apply(lines, edits)
    return b"\n".join(lines).decode("utf-8", "surrogatepass")


def _example_list(data: Any) -> list[Any]:
    if isinstance(data, tuple):
        return list(data)
    if (
        isinstance(data, dict)
        and data
        and all(isinstance(v, dict) and v and set(v) <= _EXAMPLE_OBJECT_KEYS for v in data.values())
    ):
        return [v["value"] for v in data.values() if "value" in v]
    return [data]


def _parsed_if(candidate: re.Pattern[str], text: str) -> ast.Module | None:
    """`text` parsed when `candidate` finds a line a fix may change in it (else None, and
    when it does not parse)."""
    if candidate.search(text) is None:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _apply(lines: list[bytes], edits: list[tuple[int, int, int, int, str]]) -> None:
    """Replace each (line, column, end line, end column) span of `lines` (UTF-8 bytes, as
    `ast` counts columns) by its text, last first."""
    for line, column, end_line, end_column, new in sorted(edits, reverse=True):
        head, tail = lines[line][:column], lines[end_line][end_column:]
        lines[line : end_line + 1] = [head + new.encode("utf-8", "surrogatepass") + tail]


def _import_field(tree: ast.Module, lines: list[bytes]) -> None:
    """`Field` added to `tree`'s `from pydantic import ...` in `lines` (or that import
    inserted) unless imported: one statement, which the client's models rewrite to import
    `BaseModel` from their runtime."""
    if _imports_field(tree):
        return
    pydantic = next(
        (
            n
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and n.module == "pydantic" and n.level == 0
        ),
        None,
    )
    if pydantic is not None:
        last = pydantic.names[-1]
        assert last.end_lineno is not None and last.end_col_offset is not None
        line = lines[last.end_lineno - 1]
        lines[last.end_lineno - 1] = (
            line[: last.end_col_offset] + b", Field" + line[last.end_col_offset :]
        )
        return
    first = next((n.lineno - 1 for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import)), 0)
    if isinstance(tree.body[0], ast.ImportFrom) and tree.body[0].module == "__future__":
        first = tree.body[0].end_lineno or first
    lines.insert(first, b"from pydantic import Field")


def _imports_field(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.ImportFrom)
        and n.module == "pydantic"
        and any(a.name == "Field" and a.asname is None for a in n.names)
        for n in tree.body
    )


# a member line this fix may change: a parsed type with a string default, or a default
# written as data (`= [` or `= {`)
_CANDIDATE = re.compile(
    r"^ +\w+: .*\b(?:AwareDatetime|NaiveDatetime|datetime|date|time|timedelta|UUID|AnyUrl|"
    r"Decimal|IPv4Address|IPv6Address)\b.*\] = ['\"]|^ +\w+: [^\n]*\b(?:AwareDatetime|"
    r"NaiveDatetime|datetime|date|time|timedelta|UUID|AnyUrl|Decimal|IPv4Address|IPv6Address)"
    r"(?: \| None)? = ['\"]|^ +(?:\w+: [^\n]*|\]) = [{\[]",
    re.MULTILINE,
)


@cache
def _parsers() -> dict[str, Any]:
    """The types the library writes for string formats, by the name it writes them with."""
    import pydantic

    return {
        "AwareDatetime": pydantic.AwareDatetime,
        "NaiveDatetime": pydantic.NaiveDatetime,
        "datetime": datetime.datetime,
        "date": datetime.date,
        "time": datetime.time,
        "timedelta": datetime.timedelta,
        "UUID": uuid.UUID,
        "AnyUrl": pydantic.AnyUrl,
        "Decimal": decimal.Decimal,
        "IPv4Address": ipaddress.IPv4Address,
        "IPv6Address": ipaddress.IPv6Address,
    }


def _parser_of(node: ast.expr) -> Any:
    """The parsed type of `X` or `X | None` (None: another type)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.Constant) and node.right.value is None:
            node = node.left
        else:
            return None
    return _parsers().get(node.id) if isinstance(node, ast.Name) else None


def _parses(kind: Any, value: str) -> bool:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(kind).validate_python(value)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


__all__ = ["builtin_generics", "default_none_admits_none", "listed_examples", "parsed_defaults"]
