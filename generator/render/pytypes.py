"""JSON schemas → Python type expressions for generated signatures.

The expressions are built only from safe parts: identifiers from `generator.render.names`,
model class names the generator chose, and `repr` literals of enum values. A schema the
mapping does not understand becomes `Any` (in a signature a caller can always satisfy).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from generator.render.escape import py_literal
from generator.schemas import component_name, is_inline_key

if TYPE_CHECKING:
    from generator.ir import Parameter

Mode = Literal["param", "model"]
_MAX_DEPTH = 8
_MAX_LITERALS = 64
_PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


class TypeMapper:
    """Maps schemas to type expressions.

    - `schemas`: the component schemas (name → schema data), to look through `$ref`s;
    - `classes`: component name → model class name, for those the models module defines;
    - `models_module`: how generated code refers to the models module ("models").

    `mode="param"` resolves references to primitive schemas (an enum becomes a `Literal`) and
    never names a model (a query parameter is a string on the wire); `mode="model"` names the
    model class of a referenced component, and of an operation's inline schema that the
    models step lifted (`models.inline`: its key in `schemas` is its pointer, and it is found
    here by identity, wherever the planners meet its data).
    """

    def __init__(
        self,
        schemas: Mapping[str, Mapping[str, Any]],
        classes: Mapping[str, str],
        *,
        models_module: str = "models",
    ) -> None:
        self.schemas = schemas
        self.classes = classes
        self.models_module = models_module
        self._lifted = {id(data): name for name, data in schemas.items() if is_inline_key(name)}

    def model_ref(self, name: str) -> str | None:
        cls = self.classes.get(name)
        return f"{self.models_module}.{cls}" if cls else None

    def type_of(
        self, schema: Mapping[str, Any] | None, *, name: str | None = None, mode: Mode = "model"
    ) -> str:
        """The type for `schema` (`name`: its component name when it was a `$ref`)."""
        if mode == "model" and name is not None:
            ref = self.model_ref(name)
            if ref is not None:
                return ref
        if schema is None:
            return "Any"
        return self._type(schema, mode, 0)

    def _type(self, schema: Any, mode: Mode, depth: int) -> str:
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return "Any"
        lifted = self._lifted.get(id(schema)) if mode == "model" else None
        model = self.model_ref(lifted) if lifted is not None else None
        if model is not None:
            return union_type([model], admits_null(schema))
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = component_name(ref)
            if target is None:
                return "Any"
            if mode == "model":
                return self.model_ref(target) or "Any"
            return self._type(self.schemas.get(target), mode, depth + 1)
        nullable = schema.get("nullable") is True
        if "const" in schema:
            return self._literal([schema["const"]], nullable)
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self._literal(enum, nullable)
        for key in ("oneOf", "anyOf"):
            variants = schema.get(key)
            if isinstance(variants, list) and variants:
                return union_type([self._type(v, mode, depth + 1) for v in variants], nullable)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return union_type([self._type(all_of[0], mode, depth + 1)], nullable)
        if isinstance(all_of, list):
            return union_type(["dict[str, Any]"], nullable)
        types = schema.get("type")
        type_list = types if isinstance(types, list) else [types] if types else []
        if not type_list:
            return "Any"
        parts = []
        for t in type_list:
            if t == "null":
                parts.append("None")
            elif t in _PRIMITIVES:
                parts.append(_PRIMITIVES[t])
            elif t == "array":
                items = self._type(schema.get("items"), mode, depth + 1)
                parts.append(f"list[{items}]")
            elif t == "object":
                extra = schema.get("additionalProperties")
                props = schema.get("properties")
                if isinstance(extra, Mapping) and extra and not props:
                    parts.append(f"dict[str, {self._type(extra, mode, depth + 1)}]")
                elif mode == "param" and isinstance(props, Mapping) and props and not extra:
                    # a query object whose properties share one type (Stripe's `created[gte]`
                    # range: all integers) validates its values as that type
                    parts.append(f"dict[str, {self._shared_type(props, mode, depth + 1)}]")
                else:
                    parts.append("dict[str, Any]")
            else:
                return "Any"
        return union_type(parts, nullable)

    def _shared_type(self, props: Mapping[str, Any], mode: Mode, depth: int) -> str:
        """The one type all `props` have, else "Any" (known at the second type seen: Stripe's
        form bodies have hundreds of nested properties)."""
        shared: str | None = None
        for value in props.values():
            found = self._type(value, mode, depth)
            if shared is not None and found != shared:
                return "Any"
            shared = found
        return shared or "Any"

    def _literal(self, values: list[Any], nullable: bool) -> str:
        usable = [v for v in values if isinstance(v, str | int | bool) or v is None]
        if len(usable) != len(values) or len(usable) > _MAX_LITERALS:
            return "Any"
        has_none = nullable or any(v is None for v in usable)
        literals = [py_literal(v) for v in usable if v is not None]
        if not literals:
            return "None"
        unique = list(dict.fromkeys(literals))
        return union_type([f"Literal[{', '.join(unique)}]"], has_none)


def admits_null(schema: Mapping[str, Any]) -> bool:
    """Whether the schema says null is a value (`nullable`, or `null` among its types)."""
    types = schema.get("type")
    return schema.get("nullable") is True or (isinstance(types, list) and "null" in types)


def union_type(parts: list[str], nullable: bool) -> str:
    """`a | b | None` from the member types (None last; "Any" absorbs the rest)."""
    if "Any" in parts:
        return "Any"
    unique = list(dict.fromkeys(parts))
    if nullable and "None" not in unique:
        unique.append("None")
    if "None" in unique:  # None last, as people write it
        unique = [p for p in unique if p != "None"] + ["None"]
    return " | ".join(unique) if unique else "Any"


def is_plain_class(expr: str) -> bool:
    """Whether `expr` names a class (so `type[T]` APIs accept it as is)."""
    return expr.replace(".", "").replace("_", "").isalnum() and expr not in ("Any", "None")


# --- query parameters in OpenAPI's `style`/`explode` forms ---------------------------------

QueryShape = Literal["scalar", "array", "complex"]
_QUERY_STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")


def union_members(expr: str) -> list[str]:
    """The top-level members of a type expression's union (`a[b | c] | d` → `a[b | c]`, `d`)."""
    members: list[str] = []
    depth = start = 0
    for i, char in enumerate(expr):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            members.append(expr[start:i].strip())
            start = i + 1
    members.append(expr[start:].strip())
    return [m for m in members if m]


def query_shape(expr: str) -> QueryShape:
    """How a query parameter of type `expr` is read: `complex` when a member of its union is
    an object or a list of objects/lists (FastAPI's `Query` reads neither), `array` when one
    is a list of scalars, else `scalar`."""
    shape: QueryShape = "scalar"
    for member in union_members(expr):
        if member.startswith("dict["):
            return "complex"
        if member.startswith("list["):
            items = union_members(member[len("list[") : -1])
            if any(i.startswith(("dict[", "list[")) for i in items):
                return "complex"
            shape = "array"
    return shape


def query_style(p: Parameter, shape: QueryShape) -> tuple[str, bool] | None:
    """(style, explode) when a query parameter of this shape needs them to be read and sent,
    None when FastAPI's `Query` and httpx's `params` already do what the spec says (a scalar,
    or a list of scalars as repeated `name=value` keys: `form` exploded).

    The style and explode are the parameter's (OpenAPI's defaults: `form`; explode for
    `form` only)."""
    if shape == "scalar":
        return None
    style = p.style if p.style in _QUERY_STYLES else "form"
    explode = p.explode if p.explode is not None else style == "form"
    if shape == "array" and style == "form" and explode:
        return None
    return style, explode
