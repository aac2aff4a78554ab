"""The client plan's part for list operations: the page type and the runtime's `Pagination`.

A list operation (generator/patterns/pagination.py) returns `SyncPage[Item, Body]` (the async
client: `AsyncPaginator[Item, Body]`, awaitable for the first `AsyncPage`): `Body` is what the
response parses as, `Item` the type of one element of its item array. The method passes the
runtime a `Pagination(...)` expression spelling the detected style; every spec value in it is
a string literal made by `py_string`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.ir import Api, Operation, PaginationSpec
from generator.log import logger
from generator.patterns.pagination import EXTENSION, from_extension, resolve
from generator.render.escape import py_string
from generator.render.pytypes import TypeMapper, is_plain_class
from generator.schemas import first_json

_log = logger()


@dataclass(frozen=True)
class PagePlan:
    expression: str  # `Pagination(...)`
    item: str  # the item's type expression
    item_plain: bool  # a class (passed as is; else through a TypeAdapter)
    style: str


def plan_page(op: Operation, api: Api, types: TypeMapper) -> PagePlan | None:
    spec = op.patterns.pagination
    if spec is None:
        if EXTENSION in op.extensions:
            for problem in from_extension(op, api)[1]:
                _log.warning(
                    "warning: %s: `%s` ignored, the method returns one page: %s",
                    op.label,
                    EXTENSION,
                    problem,
                )
        return None
    item = item_type(op, api, spec, types)
    return PagePlan(pagination_expression(spec), item, is_plain_class(item), spec.style)


def item_type(op: Operation, api: Api, spec: PaginationSpec, types: TypeMapper) -> str:
    """The type of one item: the `items` schema of the array at `spec.items` in the first
    2xx JSON body (`Any` when it cannot be followed)."""
    for response in sorted(op.success_responses, key=lambda r: r.status):
        media = first_json(response.content)
        if media is None or media.schema is None:
            continue
        node: Any = media.schema.data
        for name in spec.items:
            properties = resolve(api, node).get("properties")
            node = properties.get(name) if isinstance(properties, Mapping) else None
        array = resolve(api, node)
        return types.type_of(array.get("items")) if "items" in array else "Any"
    return "Any"


def _path(path: tuple[str, ...]) -> str:
    inner = ", ".join(py_string(p) for p in path)
    return f"({inner},)" if len(path) == 1 else f"({inner})"


def pagination_expression(spec: PaginationSpec) -> str:
    """`Pagination(...)` with the style and every member that is not its default."""
    parts = [py_string(spec.style)]
    for name in ("items", "next", "has_more", "total"):
        value: tuple[str, ...] = getattr(spec, name)
        if value:
            parts.append(f"{name}={_path(value)}")
    for name in ("param", "limit_param"):
        text: str = getattr(spec, name)
        if text:
            parts.append(f"{name}={py_string(text)}")
    for name in ("limit_default", "limit_maximum"):
        number: int | None = getattr(spec, name)
        if number is not None:
            parts.append(f"{name}={int(number)}")
    if spec.style == "page" and spec.first_page != 1:
        parts.append(f"first_page={int(spec.first_page)}")
    return f"Pagination({', '.join(parts)})"


__all__ = ["PagePlan", "item_type", "pagination_expression", "plan_page"]
