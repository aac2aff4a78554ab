"""Query parameters in OpenAPI's `style` / `explode` forms that FastAPI's `Query` cannot read.

FastAPI reads a query parameter as one scalar or as a list of scalars (`?tag=a&tag=b`).
OpenAPI also puts objects, arrays of objects and delimited arrays in the query string; a
generated router reads those through a dependency:

    created: Annotated[
        dict[str, int] | int | None,
        Depends(styled_query("created", dict[str, int] | int, style="deepObject")),
    ] = None

`styled_query(name, type_, *, style="form", explode=None, required=False, default=None,
properties=(), exclude=())` reads:

- `deepObject`: `name[key]=v`, nested `name[key][sub]=v`, and arrays the way Stripe, PHP,
  Rails and `qs` write them: `name[0][key]=v`, or `name[][key]=v` (a new element whenever a
  key repeats); a plain `name=v` is the scalar member of a union (Stripe's `created=…` beside
  `created[gte]=…`);
- `form`, exploded (the default), for an object: each of the schema's declared `properties`
  as a key of its own (`?gte=1&lte=9`); a free-form object (no `properties`): every key that
  is not in `exclude` (the operation's other query parameters);
- `form` not exploded: `name=k1,v1,k2,v2` for an object, `name=a,b,c` for an array;
  `spaceDelimited` / `pipeDelimited`: `name=a b c`, `name=a|b|c`;
- an array of objects or of arrays, whatever the style: the bracket form above (OpenAPI
  defines no other), which every style also accepts for objects.

A repeated key gives a list of its values. Values stay strings until the declared `type_`
validates them with pydantic in lax mode ("1" → 1, "true" → True; where `type_` wants a list,
a dict keyed `0`, `1`, … becomes one). A failure, or a required parameter that is absent, is the
server's usual 422 `validation-error` problem (a `RequestValidationError` whose locations start
`["query", name, …]`); an optional parameter that is absent gives `default`.

A `form` array that is not exploded and sent empty (`name=`) is the empty array.

Scalar parameters (FastAPI's `Path`/`Query`/`Header`/`Cookie`) get validators here too: an
enum's text read as its numbers or booleans (`FROM_TEXT`, `NUMBER_FROM_TEXT`), `null` read as
None where the schema admits it (`NULL_FROM_TEXT`), and a string's `format` checked
(`text_format`: `date-time`, `date`, `uuid`, `uri`).
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import types
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, TypeAlias, Union, get_args, get_origin, get_type_hints

from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, BeforeValidator, TypeAdapter, ValidationError
from starlette.requests import Request

Node: TypeAlias = "str | list[Node] | dict[str, Node]"


def scalar_from_text(value: Any) -> Any:
    """A parameter's text as the JSON number or boolean it spells ("2" → 2, "true" → True);
    any other value as it is. pydantic compares a `Literal` without converting text, so a
    path, query, header or cookie parameter whose enum has numbers needs this first."""
    if not isinstance(value, str):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return parsed if isinstance(parsed, int | float | bool) else value


def _is_date_time(text: str) -> bool:
    """RFC 3339 `date-time`: a date, `T`, a time (Python's ISO reader, a date alone refused)."""
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return len(text) > 10 and text[10] in "Tt "


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


#: RFC 3986: a scheme, then no space or control character (what a URI never holds)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]*")


def _is_uri(text: str) -> bool:
    return _URI.fullmatch(text) is not None and text.isascii()


_FORMATS: dict[str, Callable[[str], bool]] = {
    "date-time": _is_date_time,
    "date": _is_date,
    "uuid": _is_uuid,
    "uri": _is_uri,
    "url": _is_uri,
}


def text_format(*formats: str) -> AfterValidator:
    """`Annotated[str, Query(), text_format("date-time", "date")]`: the text must have one of
    the spec's `format`s (the handler still gets the text, as the spec's type says)."""
    checks = [_FORMATS[f] for f in formats]

    def check(value: Any) -> Any:
        if not isinstance(value, str) or any(fits(value) for fits in checks):
            return value
        raise ValueError(f"Input should be a {' or '.join(formats)}")

    return AfterValidator(check)


def number_from_text(value: Any) -> Any:
    """`scalar_from_text` for an enumeration of numbers only: `true` stays text (pydantic
    takes True for the `Literal` 1, so `/chapters/true` was chapter 1)."""
    parsed = scalar_from_text(value)
    return value if isinstance(parsed, bool) else parsed


#: `Annotated[Literal[True, 2], Path(), FROM_TEXT]`: see `scalar_from_text`.
FROM_TEXT = BeforeValidator(scalar_from_text)
#: `Annotated[Literal[1, 2], Path(), NUMBER_FROM_TEXT]`: see `number_from_text`.
NUMBER_FROM_TEXT = BeforeValidator(number_from_text)


def null_from_text(value: Any) -> Any:
    """The text `null` as None: a nullable parameter that is not a string takes it for its
    null (what the spec's `nullable` allows; a string's `null` is text)."""
    return None if value == "null" else value


#: `Annotated[bool | None, Query(), NULL_FROM_TEXT]`: see `null_from_text`.
NULL_FROM_TEXT = BeforeValidator(null_from_text)
STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")

#: Brackets a key may nest (`a[b][c]…`): deeper keys are read as plain names.
MAX_DEPTH = 12
#: Digits an array index may have: `a[99999999999]` is a dict key, not an index.
_MAX_INDEX_DIGITS = 6
_TREE_KEY = "apiforge.query_tree"
_DELIMITERS = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}
_KEY = re.compile(r"([^\[\]]+)((?:\[[^\[\]]*\])+)")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")


def parse_query(items: Iterable[tuple[str, str]]) -> dict[str, Node]:
    """The query string's items as a tree: `a[b][0]=1` → `{"a": {"b": {"0": "1"}}}`,
    `a[]=1&a[]=2` and `a=1&a=2` → `{"a": ["1", "2"]}`. Where two items disagree on a key's
    shape (`a[b]=1&a[b][c]=2`), the first one's wins."""
    root: dict[str, Node] = {}
    for key, value in items:
        match = _KEY.fullmatch(key)
        tokens = _BRACKET.findall(match.group(2)) if match else []
        if match is None or len(tokens) > MAX_DEPTH:
            _insert(root, key, [], value)
        else:
            _insert(root, match.group(1), tokens, value)
    return root


def _insert(container: dict[str, Node], key: str, tokens: list[str], value: str) -> None:
    if not tokens:
        old = container.get(key)
        if old is None:
            container[key] = value
        elif isinstance(old, str):
            container[key] = [old, value]
        elif isinstance(old, list):
            old.append(value)
        return
    head, rest = tokens[0], tokens[1:]
    child = container.get(key)
    if head == "":  # `a[]…`: append
        if child is None:
            child = container[key] = []
        elif isinstance(child, str):
            child = container[key] = [child]
        if not isinstance(child, list):
            return
        if not rest:
            child.append(value)
            return
        last = child[-1] if child else None
        # Rails' rule: `a[][k]` starts a new element when the last one already has `k`
        if not isinstance(last, dict) or _has_path(last, rest):
            last = {}
            child.append(last)
        _insert(last, rest[0], rest[1:], value)
        return
    if child is None:
        child = container[key] = {}
    if isinstance(child, dict):
        _insert(child, head, rest, value)


def _has_path(node: Node, path: list[str]) -> bool:
    if "" in path:
        return False
    for token in path:
        if not isinstance(node, dict) or token not in node:
            return False
        node = node[token]
    return True


# --- shaping a tree for the declared type ------------------------------------------------


def _members(tp: Any) -> tuple[Any, ...]:
    origin = get_origin(tp)
    if origin is Annotated:
        return _members(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        # `X | None`: None is an absent value, not a shape the tree could take
        return tuple(m for arg in get_args(tp) if arg is not type(None) for m in _members(arg))
    return (tp,)


def _kind(tp: Any) -> str:
    """list, dict, any or scalar."""
    if tp is Any:
        return "any"
    origin = get_origin(tp) or tp
    if isinstance(origin, type):
        if issubclass(origin, str | bytes):
            return "scalar"
        if issubclass(origin, list | tuple | set | frozenset):
            return "list"
        if issubclass(origin, dict | BaseModel) or hasattr(origin, "__total__"):
            return "dict"
    if origin in (Sequence, Iterable):
        return "list"
    if origin is Mapping:
        return "dict"
    return "scalar"


def _wants(tp: Any) -> set[str]:
    kinds = {_kind(m) for m in _members(tp)}
    if "any" in kinds:
        return {"list", "dict", "scalar"}
    return kinds


def _item_type(tp: Any) -> Any:
    lists = [m for m in _members(tp) if _kind(m) == "list"]
    args = get_args(lists[0]) if len(lists) == 1 else ()
    return args[0] if args else Any


def _value_type(tp: Any, key: str) -> Any:
    dicts = [m for m in _members(tp) if _kind(m) == "dict"]
    if len(dicts) != 1:
        return Any
    kind = get_origin(dicts[0]) or dicts[0]
    args = get_args(dicts[0])
    if len(args) == 2:
        return args[1]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        field = kind.model_fields.get(key)
        if field is None:
            field = next((f for f in kind.model_fields.values() if f.alias == key), None)
        return field.annotation if field is not None else Any
    if isinstance(kind, type) and hasattr(kind, "__total__"):  # a TypedDict
        return get_type_hints(kind).get(key, Any)
    return Any


def _is_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and len(key) <= _MAX_INDEX_DIGITS


def conform(node: Node, tp: Any) -> Any:
    """`node` shaped for `tp`: where `tp` wants a list, a dict keyed by indexes becomes one
    in index order (`a[0]=x&a[1]=y`; where `tp` could also be a dict, only when the indexes
    are 0, 1, …) and a single value a list of one; everything else is left to pydantic."""
    wants = _wants(tp)
    if isinstance(node, dict):
        keys = list(node)
        if "list" in wants and keys and all(_is_index(k) for k in keys):
            order = sorted(keys, key=int)
            if "dict" not in wants or order == [str(i) for i in range(len(order))]:
                item = _item_type(tp)
                return [conform(node[k], item) for k in order]
        return {k: conform(v, _value_type(tp, k)) for k, v in node.items()}
    if isinstance(node, list):
        item = _item_type(tp)
        return [conform(v, item) for v in node]
    if "list" in wants and "scalar" not in wants:
        return [node]
    return node


# --- the dependency ---------------------------------------------------------------------


def query_tree(request: Request) -> dict[str, Node]:
    """The request's query string as `parse_query` reads it, parsed once per request."""
    tree = request.scope.get(_TREE_KEY)
    if not isinstance(tree, dict):
        tree = parse_query(request.query_params.multi_items())
        request.scope[_TREE_KEY] = tree
    return tree


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def _validator(tp: Any) -> TypeAdapter[Any]:
    try:
        return _adapter(tp)
    except TypeError:  # an unhashable type
        return TypeAdapter(tp)


def _strings(node: Node) -> list[str] | None:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list) and all(isinstance(v, str) for v in node):
        return [v for v in node if isinstance(v, str)]
    return None


class StyledQuery:
    """How one parameter is read (see the module docstring); `read(tree)` gives the raw
    value, None when the parameter is absent."""

    def __init__(
        self,
        name: str,
        type_: Any,
        *,
        style: str = "form",
        explode: bool | None = None,
        properties: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown query style {style!r}: one of {', '.join(STYLES)}")
        self.name = name
        self.type = type_
        self.style = style
        self.explode = style == "form" if explode is None else explode
        self.properties = tuple(properties)
        self.exclude = frozenset(exclude) | {name}
        self.wants = _wants(type_)

    def read(self, tree: Mapping[str, Node]) -> Node | None:
        node = tree.get(self.name)
        if "dict" in self.wants and self.style == "form" and self.explode:
            if self.properties:
                picked = {k: tree[k] for k in self.properties if k in tree}
            else:
                picked = {k: v for k, v in tree.items() if k not in self.exclude}
            if picked:
                return picked
            return node  # the scalar member of a union, or an object in brackets
        if node is None or self.style == "deepObject" or self.explode:
            return node
        values = _strings(node)
        if values is None:  # brackets: read as such whatever the style
            return node
        delimiter = _DELIMITERS[self.style]
        parts: list[Node] = [part for value in values for part in value.split(delimiter)]
        if "dict" in self.wants and (len(parts) > 1 or "scalar" not in self.wants):
            if len(parts) % 2:
                return node  # an odd number of items is no object: validation says so
            pairs: dict[str, Node] = {}
            for i in range(0, len(parts), 2):
                pairs[str(parts[i])] = parts[i + 1]
            return pairs
        if "list" in self.wants:
            # `ids=`: the empty array (OpenAPI's style examples), not one empty item
            return [] if values == [""] else parts
        return node

    def validate(self, node: Node) -> Any:
        try:
            return _validator(self.type).validate_python(conform(node, self.type))
        except ValidationError as exc:
            errors = [
                {**error, "loc": ("query", self.name, *error["loc"])}
                for error in exc.errors(include_url=False, include_input=False)
            ]
            raise RequestValidationError(errors) from None


def styled_query(
    name: str,
    type_: Any,
    *,
    style: str = "form",
    explode: bool | None = None,
    required: bool = False,
    default: Any = None,
    properties: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Callable[[Request], Awaitable[Any]]:
    """A FastAPI dependency giving the query parameter `name` as a `type_` (see the module
    docstring)."""
    reader = StyledQuery(
        name, type_, style=style, explode=explode, properties=properties, exclude=exclude
    )

    async def dependency(request: Request) -> Any:
        node = reader.read(query_tree(request))
        if node is None:
            if required:
                missing = {"type": "missing", "loc": ("query", name), "msg": "Field required"}
                raise RequestValidationError([missing])
            return default
        return reader.validate(node)

    dependency.__name__ = "query_" + re.sub(r"\W", "_", name)
    return dependency
