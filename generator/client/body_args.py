"""A request body's members as keyword arguments, and the `params` module of TypedDicts.

An operation whose JSON, form or multipart body is an object with properties takes each
property as a keyword argument (`members`): required properties are required keywords, the
others default to `omit` (left out of the body; an explicit `None` is sent as `null`). A
nested object is a TypedDict of the generated `params` module, keyed by wire name, so a typo
in a key is a type error, or the model of the same schema where the models have one (a value
read from a response is sent back as it is); the resource modules import `params` only for
type checking, so importing the client stays as fast as without it. The method has two
overloads, the members or `body=` (the whole body), so giving both is a type error.

Each TypedDict is made once per schema: a component's is named after it (`AddressParam`);
an object the spec writes in place is named after its `title` (kept as it is when it ends in
`Param` or `Params`), else after where it is (`<Operation><Property>Param`), and two in-place
objects of the same shape (descriptions aside) are one TypedDict. Names that collide get `2`,
`3`, … in the operations' order. A key that is no usable identifier (`a-b`, `from`, or a name
the types themselves use) puts its TypedDict in the functional form
(`X = TypedDict("X", {...})`).

They are kept between runs with the client's resource plans (`body_arguments`).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from generator.ir import Api, MediaType, Operation
from generator.patterns.pagination import resolve
from generator.render.escape import py_literal
from generator.render.names import NameAllocator, pascal_case
from generator.render.plan_cache import PlanCache
from generator.render.pytypes import (
    TypeMapper,
    admits_null,
    is_plain_class,
    union_members,
    union_type,
)
from generator.schemas import component_name, essence, is_json, required_properties

MODULE = "params"  # the generated module's name, as resource modules refer to it
_MAX_DEPTH = 8
_PRIMITIVES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
# names a TypedDict's class body uses in its annotations: a key spelled like one of them is
# written in the functional form, where it cannot shadow it
TYPE_NAMES = frozenset(
    {
        *("str", "int", "float", "bool", "list", "dict", "Any", "Literal", "Required"),
        *("FileSpec", "TypedDict", "annotations"),
    }
)
_DOC_KEYS = frozenset({"description", "title", "example", "examples", "externalDocs"})
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions"})


@dataclass(frozen=True)
class Member:
    """One property of a request body: the keyword argument it becomes (before its name is
    allocated), or one key of a TypedDict."""

    wire: str
    type: str  # in resource modules (`params.XParam`); in `params` itself without the prefix
    local_type: str
    required: bool
    description: str
    example: str  # a Python expression for the README


@dataclass(frozen=True)
class TypedDictPlan:
    name: str
    description: str
    fields: tuple[Member, ...]
    functional: bool = False  # a key cannot be a class-body field (`typed_dict_list`)


def _class_field(key: str, taken: frozenset[str]) -> bool:
    """Whether `key` can be a field of a TypedDict's class body (`taken`: every TypedDict's
    name, which a field must not shadow either)."""
    return (
        key.isidentifier()
        and key.isascii()
        and not keyword.iskeyword(key)
        and key not in TYPE_NAMES
        and key not in taken
        and not key.startswith("__")
    )


def _structure(schema: Any) -> str:
    """An in-place schema's shape, documentation aside: equal shapes share a TypedDict."""

    def strip(node: Any, names: bool = False) -> Any:
        # `names`: a mapping of names to schemas (`properties`), whose keys are all kept
        if isinstance(node, Mapping):
            return {
                str(k): strip(v, k in _NAMED and not names)
                for k, v in node.items()
                if names or k not in _DOC_KEYS
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(schema), sort_keys=True, default=str)


@dataclass(frozen=True)
class Bodies:
    """What `BodyArgs` planned: each operation's members (by operation id), the whole JSON
    bodies that TypedDicts type (`BodyArgs.whole`) and the TypedDicts by name."""

    by_operation: Mapping[str, tuple[Member, ...]]
    whole: Mapping[str, str]
    typed_dicts: Mapping[str, TypedDictPlan]

    def typed_dict_list(self) -> list[TypedDictPlan]:
        """The TypedDicts by name (numbers in names in their order: `X2` before `X10`, as
        linters sort `__all__`), each knowing whether it needs the functional form."""
        taken = frozenset(self.typed_dicts)
        return [
            replace(t, functional=not all(_class_field(f.wire, taken) for f in t.fields))
            for t in (self.typed_dicts[n] for n in sorted(self.typed_dicts, key=_natural))
        ]


_CACHE_NAMES = "body arguments"  # its plan-cache key's `names` (a resource's are a tuple)


def body_arguments(api: Api, mapper: TypeMapper, cache: PlanCache | None) -> Bodies:
    """Every body's members and the TypedDicts (`BodyArgs`), served from `cache` when an
    earlier run planned them from the same input: the API as a whole (`PlanCache.base`: the
    components and the models' class names, all `mapper` knows) and, in their order, the
    operations with a body, each by its path item (the others take no part in them)."""

    def make() -> Bodies:
        return BodyArgs(api, mapper).planned()

    if cache is None:
        return make()
    with_body = [op for op in api.operations if op.request_body and op.request_body.content]
    key = cache.key(_CACHE_NAMES, with_body)
    served = cache.served(key)
    if isinstance(served, Bodies):
        return served
    bodies = cache.plan(key, make)
    cache.keep(key, bodies)
    return bodies


class BodyArgs:
    """The keyword arguments of every operation's body and the TypedDicts they use, planned
    in the operations' order (so names are stable for a given spec)."""

    def __init__(self, api: Api, mapper: TypeMapper) -> None:
        self.api = api
        self.mapper = mapper
        self.typed_dicts: dict[str, TypedDictPlan] = {}  # by name
        self._names = NameAllocator(TYPE_NAMES, separator="")
        self._by_key: dict[str, str] = {}  # component or shape → TypedDict name
        self._shapes: dict[int, str] = {}  # id of an in-place schema (the spec's, alive) → shape
        self.by_operation: dict[str, tuple[Member, ...]] = {}
        # a JSON body that is no object with properties, when a TypedDict types it better
        # than a model could (`list[params.XParam]`, `params.XParam | list[str]`)
        self.whole: dict[str, str] = {}
        for op in api.operations:
            self._operation(op)

    def _operation(self, op: Operation) -> None:
        body = op.request_body
        if body is None or not body.content:
            return
        media = _chosen(body.content)
        if media is None or media.schema is None:
            return
        files = essence(media.content_type).startswith("multipart/")
        context = pascal_case(op.id, fallback="Operation")
        members = self._members(media.schema.data, context, files=files, top=True)
        if members is not None:
            self.by_operation[op.id] = members
        elif is_json(media.content_type):
            whole = self._type(media.schema.data, context + "Body", 0, MODULE + ".", False)
            if uses_params(whole):
                self.whole[op.id] = whole

    def _members(
        self, schema: Any, context: str, *, files: bool = False, top: bool = False
    ) -> tuple[Member, ...] | None:
        """An object schema's properties as members (None: no object with properties)."""
        data = resolve(self.api, schema)
        props = data.get("properties")
        if not isinstance(props, Mapping) or not props or not _may_be_object(data):
            return None
        required = set(required_properties(data, self.api.schemas))
        members = []
        for wire, prop in props.items():
            if not isinstance(wire, str):
                continue
            target = resolve(self.api, prop)
            if top and target.get("readOnly") is True:
                continue  # a server-set member is not sent
            hint = context + pascal_case(wire, fallback="Member")
            members.append(
                Member(
                    wire=wire,
                    type=self._type(prop, hint, 0, MODULE + ".", files and top),
                    local_type=self._type(prop, hint, 0, "", files and top),
                    required=wire in required,
                    description=_description(prop, target),
                    example=value_example(self.api, prop),
                )
            )
        return tuple(members)

    def _type(self, schema: Any, hint: str, depth: int, prefix: str, files: bool) -> str:
        if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = component_name(ref)
            target = self.api.schemas.get(name) if name is not None else None
            if name is None or target is None:
                return "Any"
            if self._is_typed_dict(target.data):
                typed = self._typed_dict(("component", name), pascal_case(name), target.data)
                return union_type(self._or_model(prefix + typed, schema), False)
            return self._type(target.data, pascal_case(name), depth + 1, prefix, files)
        nullable = schema.get("nullable") is True
        if "const" in schema or schema.get("enum"):
            return self.mapper.type_of(schema, mode="param")
        for key in ("oneOf", "anyOf"):
            variants = schema.get(key)
            if isinstance(variants, list) and variants:
                parts = [
                    self._type(v, hint, depth + 1, prefix, files)
                    for v in variants
                    if isinstance(v, Mapping)
                ]
                return _union(parts, nullable)
        if self._is_typed_dict(schema):
            title = schema.get("title")
            candidate = pascal_case(title) if isinstance(title, str) and title else hint
            shape = self._shapes.get(id(schema))
            if shape is None:
                shape = self._shapes[id(schema)] = _structure(schema)
            name = self._typed_dict(("shape", shape), candidate, schema)
            return union_type(
                self._or_model(prefix + name, schema), nullable or admits_null(schema)
            )
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return union_type([self._type(all_of[0], hint, depth + 1, prefix, files)], nullable)
        types = schema.get("type")
        kinds = types if isinstance(types, list) else [types] if types else []
        if not kinds:
            return "Any"
        parts = []
        for kind in kinds:
            if kind == "null":
                parts.append("None")
            elif kind == "string" and files and _is_binary(schema):
                parts.append("FileSpec")
            elif kind in _PRIMITIVES:
                parts.append(_PRIMITIVES[kind])
            elif kind == "array":
                items = self._type(schema.get("items"), hint + "Item", depth + 1, prefix, files)
                parts.append(f"list[{items}]")
            elif kind == "object":
                extra = schema.get("additionalProperties")
                value = (
                    self._type(extra, hint + "Value", depth + 1, prefix, False)
                    if isinstance(extra, Mapping) and extra
                    else "Any"
                )
                parts.append(f"dict[str, {value}]")
            else:
                return "Any"
        return _union(parts, nullable)

    def _or_model(self, typed_dict: str, schema: Mapping[str, Any]) -> list[str]:
        """A TypedDict, and the model of the same schema when the models have one (a value
        read from a response can be sent back as it is)."""
        model = self.mapper.type_of(schema)
        if is_plain_class(model) and model.startswith(self.mapper.models_module + "."):
            return [typed_dict, model]
        return [typed_dict]

    def _is_typed_dict(self, data: Mapping[str, Any]) -> bool:
        """An object with properties (its `allOf` members' included), and nothing else."""
        if any(isinstance(data.get(k), list) for k in ("oneOf", "anyOf")) or "enum" in data:
            return False
        resolved = resolve(self.api, data)
        props = resolved.get("properties")
        return isinstance(props, Mapping) and bool(props) and _may_be_object(resolved)

    def _typed_dict(self, key: tuple[str, str], candidate: str, data: Mapping[str, Any]) -> str:
        found = self._by_key.get(key[0] + "\0" + key[1])
        if found is not None:
            return found
        base = candidate if candidate.endswith(("Param", "Params")) else candidate + "Param"
        name = self._names.allocate(key, base)
        self._by_key[key[0] + "\0" + key[1]] = name
        members = self._members(data, base.removesuffix("Params").removesuffix("Param")) or ()
        self.typed_dicts[name] = TypedDictPlan(
            name=name,
            description=str(resolve(self.api, data).get("description") or ""),
            fields=members,
        )
        return name

    def planned(self) -> Bodies:
        return Bodies(self.by_operation, self.whole, self.typed_dicts)


_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_PARAMS_REF = re.compile(rf"(?<![\w.]){MODULE}\.")


def uses_params(type_expr: str) -> bool:
    """Whether a type expression of a resource module names a TypedDict of `params` (a
    literal's text aside)."""
    return _PARAMS_REF.search(_STRING_LITERAL.sub("", type_expr)) is not None


def _natural(name: str) -> list[str | int]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _union(parts: list[str], nullable: bool) -> str:
    """`union_type`, its `Literal` members made one (`Literal["now", ""] | int`, as linters
    ask)."""
    members = [m for p in parts for m in union_members(p)]
    literal = [i for i, m in enumerate(members) if m.startswith("Literal[") and m.endswith("]")]
    if len(literal) < 2:
        return union_type(members, nullable)
    try:
        values = [v for i in literal for v in ast.literal_eval(f"({members[i][8:-1]},)")]
    except (ValueError, SyntaxError):  # a bracket inside a literal's text: left as it is
        return union_type(members, nullable)
    merged = "Literal[" + ", ".join(dict.fromkeys(py_literal(v) for v in values)) + "]"
    kept = [m for i, m in enumerate(members) if i not in literal]
    return union_type([*kept[: literal[0]], merged, *kept[literal[0] :]], nullable)


def _chosen(content: tuple[MediaType, ...]) -> MediaType | None:
    """The media type the client sends: the first JSON one, else a form's."""
    json_media = next((m for m in content if is_json(m.content_type)), None)
    if json_media is not None:
        return json_media
    first = content[0]
    ct = essence(first.content_type)
    if ct == "application/x-www-form-urlencoded" or ct.startswith("multipart/"):
        return first
    return None


def _may_be_object(data: Mapping[str, Any]) -> bool:
    kind = data.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    return not kinds or "object" in kinds


def _is_binary(schema: Mapping[str, Any]) -> bool:
    return schema.get("format") == "binary" or "contentMediaType" in schema


def _description(prop: Any, target: Mapping[str, Any]) -> str:
    own = prop.get("description") if isinstance(prop, Mapping) else None
    text = own if isinstance(own, str) and own else target.get("description")
    return text if isinstance(text, str) else ""


def value_example(api: Api, schema: Any, depth: int = 0) -> str:
    """A Python literal for one property in a README example: its `example`, `default` or
    first enum value when it is plain JSON, else a placeholder of its type (an object: its
    required members, a few levels deep)."""
    data = resolve(api, schema)
    for value in (data.get("example"), data.get("default"), *(data.get("enum") or [None])[:1]):
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, str | int | float) and value != "":
            return json.dumps(value)  # a Python literal too, in the README's quotes
    declared = data.get("type")
    kind = declared[0] if isinstance(declared, list) and declared else declared
    for union in ("oneOf", "anyOf"):
        if kind is None and isinstance(data.get(union), list) and data[union]:
            return value_example(api, data[union][0], depth)
    props = data.get("properties")
    if isinstance(props, Mapping) and (kind is None or kind == "object"):
        if depth >= 3:
            return "{}"
        required = [r for r in required_properties(data, api.schemas) if r in props]
        members = [
            f"{json.dumps(name)}: {value_example(api, props[name], depth + 1)}"
            for name in dict.fromkeys(required)
        ]
        return "{" + ", ".join(members[:6]) + "}"
    return {"integer": "1", "number": "1.0", "boolean": "True", "array": "[]", "object": "{}"}.get(
        str(kind), '"..."'
    )
