"""Pagination: how a list operation hands out its items one page at a time.

A *list operation* is a GET whose first 2xx JSON response is an array, or an object with one
array of items (`data`, `items`, `results`, ... or its only array member). Its style is read
from the spec, first match wins:

1. `x-apiforge-pagination` on the operation (or its path item) states it (`false`: none);
2. `link`: a 2xx response declares a `Link` header (GitHub);
3. `next_url`: the body has the next page's URL (`next` with `format: uri`, `next_url`,
   `nextLink`, `links.next`, `meta.next_page_url`, ... up to three levels down);
4. `cursor`: a cursor query parameter (`starting_after`, `after`, `cursor`, `page_token`,
   `marker`, ...) and, in the body, the next cursor (`next_cursor`, `nextPageToken`,
   `next_marker`, `last_id`, `response_metadata.next_cursor`, ...) or only a `has_more` flag
   (then the next cursor is the last item's `id`, as Stripe does);
5. `offset`: an integer `offset`/`skip`/`start` parameter;
6. `page`: an integer `page`/`page_number`/`page[number]` parameter.

The page-size parameter (`limit`, `per_page`, `page_size`, `page[size]`, `maxResults`, ...),
a `has_more` flag and a total (`total_count`, `total_pages`, ...) are picked up when the
operation has them. Names are compared without case, `_`, `-`, `.`, `[`, `]` and `$`.

The extension, for what detection cannot be sure of (every key but `style` optional; paths
are dotted, or lists of member names when a name has a dot in it):

    x-apiforge-pagination:
      style: cursor          # cursor | link | next_url | offset | page
      items: data            # where the items are ("" or omitted: detected)
      param: startingAfter   # cursor, offset, page: the query parameter that moves
      next: nextCursor       # cursor: the next cursor (omitted: the last item's id);
                             # next_url: the next page's URL
      hasMore: has_more
      total: total_count
      limit: limit           # the page-size query parameter

An extension that cannot be used is reported by the `pagination-extension-invalid` lint rule
and by the client generator (a warning), and the operation is left unpaginated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from generator.ir import (
    PAGINATION_STYLES,
    Api,
    Operation,
    PaginationSpec,
    PaginationStyle,
    Parameter,
    Where,
)
from generator.lint.model import Hit, Rule, op_hit, rule
from generator.schemas import component_name, first_json

EXTENSION = "x-apiforge-pagination"

_ITEM_FIELDS = (
    "data",
    "items",
    "results",
    "entries",
    "values",
    "value",
    "elements",
    "records",
    "objects",
    "nodes",
    "list",
    "content",
    "result",
    "resources",
)
_CURSOR_PARAMS = frozenset(
    {
        "after",
        "startingafter",
        "cursor",
        "pagetoken",
        "nexttoken",
        "nextpagetoken",
        "nextcursor",
        "marker",
        "continuationtoken",
        "startcursor",
        "pageafter",
        "pagecursor",
        "afterid",
    }
)
_NEXT_CURSOR_FIELDS = (
    "nextcursor",
    "nextpagetoken",
    "nexttoken",
    "nextmarker",
    "continuationtoken",
    "nextpagecursor",
    "endcursor",
    "lastid",
    "cursor",
    "after",
    "next",
)
_NEXT_URL_FIELDS = ("nexturl", "nextpageurl", "nextlink", "odatanextlink", "nexthref", "next")
_HAS_MORE_FIELDS = ("hasmore", "hasnext", "hasnextpage", "more", "hasmoreresults")
_OFFSET_PARAMS = frozenset({"offset", "skip", "start", "startindex"})
_PAGE_PARAMS = frozenset({"page", "pagenumber", "pageindex", "pageno", "pagenum"})
_LIMIT_PARAMS = (
    "limit",
    "perpage",
    "pagesize",
    "pagelimit",
    "size",
    "maxresults",
    "maxitems",
    "pagelen",
    "count",
    "top",
    "take",
    "first",
)
_OFFSET_TOTALS = ("total", "totalcount", "totalresults", "totalitems", "totalsize")
_PAGE_TOTALS = ("totalpages", "pagecount", "numpages", "lastpage", "pages")
_MAX_DEPTH = 3
_NOT_NAME = re.compile(r"[-_.\[\]$@ ]")


@lru_cache(maxsize=4096)  # the same few member names, thousands of times
def normalized(name: str) -> str:
    """`page[size]`, `page_size`, `PageSize` → `pagesize`."""
    return _NOT_NAME.sub("", name).lower()


# --- schemas, resolved just enough ---------------------------------------------------------


def resolve(api: Api, schema: Any, depth: int = 0) -> Mapping[str, Any]:
    """`schema` with a local component `$ref` followed and `allOf` members' properties merged
    in (bounded); `{}` for what cannot be read. Read-only: without `allOf` it is the spec's
    own mapping (not copied: pagination detection resolves thousands of members)."""
    # (a dict is told apart without `Mapping`'s slower check: thousands of calls)
    if not (schema.__class__ is dict or isinstance(schema, Mapping)) or depth > 8:
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = component_name(ref)
        if name is None:
            return {}
        target = api.schemas.get(name)
        return resolve(api, target.data, depth + 1) if target is not None else {}
    all_of = schema.get("allOf")
    if not isinstance(all_of, list):
        return schema
    out = dict(schema)
    properties: dict[str, Any] = {}
    for member in all_of:
        resolved = resolve(api, member, depth + 1)
        properties.update(_mapping(resolved.get("properties")))
        if "type" not in out and "type" in resolved:
            out["type"] = resolved["type"]
    properties.update(_mapping(schema.get("properties")))
    out["properties"] = properties
    return out


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[tuple[Any, Any]]:
    """A mapping's items sorted by key (none for anything else), without copying it."""
    return sorted(value.items()) if isinstance(value, Mapping) else []


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {t for t in kind if isinstance(t, str)}
    if "properties" in schema:
        return {"object"}
    if "items" in schema:
        return {"array"}
    return set()


def _fields(
    api: Api, schema: Mapping[str, Any]
) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every (path, resolved schema) of the object members of `schema`, breadth first, down to
    `_MAX_DEPTH` levels."""
    level: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [((), schema)]
    for _ in range(_MAX_DEPTH):
        deeper: list[tuple[tuple[str, ...], Mapping[str, Any]]] = []
        for path, node in level:
            for name, sub in _items(node.get("properties")):
                resolved = resolve(api, sub)
                member = (*path, str(name))
                yield member, resolved
                if "object" in _types(resolved):
                    deeper.append((member, resolved))
        level = deeper


def _find(
    fields: Sequence[tuple[tuple[str, ...], Mapping[str, Any]]],
    names: Sequence[str],
    kinds: set[str],
) -> tuple[str, ...] | None:
    """The shallowest member named like one of `names` (earlier names first) whose type is one
    of `kinds` (or undeclared)."""
    best: tuple[int, int, tuple[str, ...]] | None = None
    for path, schema in fields:
        key = normalized(path[-1])
        if key not in names:
            continue
        types = _types(schema)
        if types and not (types - {"null"}) & kinds:
            continue
        rank = (len(path), names.index(key), path)
        if best is None or rank < best:
            best = rank
    return best[2] if best is not None else None


# --- which operations list things ----------------------------------------------------------


def list_body(op: Operation, api: Api) -> tuple[tuple[str, ...], Mapping[str, Any]] | None:
    """(where the items are, the resolved body schema) when `op` lists things; None otherwise.
    An object body with several arrays and none of the usual names is not a list."""
    if op.method != "get":
        return None
    for response in sorted(op.success_responses, key=lambda r: r.status):
        media = first_json(response.content, any_type=False)
        if media is None or media.schema is None:
            continue
        body = resolve(api, media.schema.data)
        if "array" in _types(body):
            return (), body
        arrays = [
            str(name)
            for name, sub in _items(body.get("properties"))
            if "array" in _types(resolve(api, sub))
        ]
        if len(arrays) == 1:
            return (arrays[0],), body
        by_name = {normalized(a): a for a in arrays}
        resource = normalized(_last_segment(op.path))
        for name in (*_ITEM_FIELDS, resource):
            if name and name in by_name:
                return (by_name[name],), body
        return None
    return None


def _last_segment(path: str) -> str:
    segments = [s for s in path.split("/") if s and not s.startswith("{")]
    return segments[-1] if segments else ""


# --- detection -----------------------------------------------------------------------------


def detect(op: Operation, api: Api) -> PaginationSpec | None:
    if EXTENSION in op.extensions:
        spec, _ = from_extension(op, api)
        return spec
    found = list_body(op, api)
    if found is None:
        return None
    items, body = found
    fields = list(_fields(api, body))
    query = {normalized(p.name): p for p in op.parameters if p.location == "query"}
    limit = _limit(query)
    # what every style shares; `style` is decided below
    base = PaginationSpec(
        "link",
        items=items,
        has_more=_find(fields, _HAS_MORE_FIELDS, {"boolean"}) or (),
        limit_param=limit.name if limit else "",
        limit_default=_int(limit, "default"),
        limit_maximum=_int(limit, "maximum"),
        where=op.where,
    )
    if any(r.header("Link") is not None for r in op.success_responses):
        return base
    cursor = _param(query, _CURSOR_PARAMS, ("string", "integer"))
    url = _next_url(fields, cursor is not None)
    if url is not None:
        return replace(base, style="next_url", next=url)
    if cursor is not None:
        nxt = _find(fields, _NEXT_CURSOR_FIELDS, {"string", "integer"})
        if nxt is not None or (base.has_more and _items_have_id(api, body, items)):
            return replace(base, style="cursor", param=cursor.name, next=nxt or ())
    offset = _param(query, _OFFSET_PARAMS, ("integer", "number"))
    if offset is not None:
        total = _find(fields, _OFFSET_TOTALS, {"integer", "number"}) or ()
        return replace(base, style="offset", param=offset.name, total=total)
    page = _param(query, _PAGE_PARAMS, ("integer", "number"))
    if page is not None:
        total = _find(fields, _PAGE_TOTALS, {"integer", "number"}) or ()
        return replace(base, style="page", param=page.name, total=total, first_page=_first(page))
    return None


def _first(page: Parameter) -> int:
    """The first page's number: the parameter's `default`, else its `minimum` when that is
    0 or 1, else 1."""
    default = _int(page, "default")
    if default is not None:
        return default
    minimum = _int(page, "minimum")
    return minimum if minimum in (0, 1) else 1


def _next_url(
    fields: Sequence[tuple[tuple[str, ...], Mapping[str, Any]]], has_cursor: bool
) -> tuple[str, ...] | None:
    """The body member with the next page's URL: a URL-named one, or `next` itself when it is
    a `format: uri` string (or any string, with no cursor parameter to feed it to). A `next`
    inside `links`/`_links`/`pages` may be an object with an `href`."""
    for path, schema in fields:
        key = normalized(path[-1])
        if key not in _NEXT_URL_FIELDS or not (_types(schema) <= {"string", "null"}):
            continue
        if key == "next" and schema.get("format") not in ("uri", "url", "uri-reference"):
            parent = normalized(path[-2]) if len(path) > 1 else ""
            if has_cursor and parent not in ("links", "pages", "paging"):
                continue
        return path
    for path, _ in fields:
        if normalized(path[-1]) == "href" and len(path) > 1 and normalized(path[-2]) == "next":
            return path
    return None


def _items_have_id(api: Api, body: Mapping[str, Any], items: tuple[str, ...]) -> bool:
    node: Mapping[str, Any] = body
    for name in items:
        node = resolve(api, _mapping(node.get("properties")).get(name))
    item = resolve(api, node.get("items"))
    properties = _mapping(item.get("properties"))
    return "id" in properties or not properties


def _param(
    query: Mapping[str, Parameter], names: frozenset[str], kinds: tuple[str, ...]
) -> Parameter | None:
    for key in sorted(query):
        if key in names:
            p = query[key]
            types = _types(p.schema.data) if p.schema else set()
            if not types or types & set(kinds):
                return p
    return None


def _limit(query: Mapping[str, Parameter]) -> Parameter | None:
    for key in _LIMIT_PARAMS:
        p = query.get(key)
        if p is not None:
            types = _types(p.schema.data) if p.schema else set()
            if not types or types & {"integer", "number"}:
                return p
    return None


def _int(p: Parameter | None, keyword: str) -> int | None:
    if p is None or p.schema is None:
        return None
    value = p.schema.data.get(keyword)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- the extension -------------------------------------------------------------------------


def _path(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(part for part in value.split(".") if part)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    return None


def from_extension(op: Operation, api: Api) -> tuple[PaginationSpec | None, list[str]]:
    """The spec `x-apiforge-pagination` states, and what is wrong with it (then no spec)."""
    value = op.extensions.get(EXTENSION)
    where = extension_where(op)
    if value is False:
        return None, []
    if not isinstance(value, Mapping):
        return None, [f"`{EXTENSION}` must be `false` or a mapping with a `style`"]
    problems: list[str] = []
    style = value.get("style")
    if style not in PAGINATION_STYLES:
        problems.append(f"`style` must be one of {', '.join(PAGINATION_STYLES)}, not {style!r}")
    paths = {key: _path(value.get(key)) for key in ("items", "next", "hasMore", "total")}
    problems += [
        f"`{k}` must be a dotted path or a list of names" for k, v in paths.items() if v is None
    ]
    query = {p.name: p for p in op.parameters if p.location == "query"}
    for key in ("param", "limit"):
        name = value.get(key)
        if name is not None and (not isinstance(name, str) or name not in query):
            problems.append(f"`{key}` {name!r} is not a query parameter of the operation")
    param: str = value["param"] if isinstance(value.get("param"), str) else ""
    if style in ("cursor", "offset", "page") and not param:
        problems.append(f"style `{style}` needs `param`: the query parameter that moves")
    if style == "next_url" and not paths["next"]:
        problems.append("style `next_url` needs `next`: where the body has the next page's URL")
    items = paths["items"]
    if not items and "items" not in value:  # not stated: where detection finds them
        found = list_body(op if op.method == "get" else replace(op, method="get"), api)
        items = found[0] if found is not None else ()
    if problems or style not in PAGINATION_STYLES:
        return None, problems
    chosen: PaginationStyle = style
    limit = query.get(value["limit"]) if isinstance(value.get("limit"), str) else None
    spec = PaginationSpec(
        style=chosen,
        items=items or (),
        param=param,
        next=paths["next"] or (),
        has_more=paths["hasMore"] or (),
        total=paths["total"] or (),
        limit_param=limit.name if limit else "",
        limit_default=_int(limit, "default"),
        limit_maximum=_int(limit, "maximum"),
        first_page=_first(query[param]) if style == "page" else 1,
        source="extension",
        where=where,
    )
    return spec, []


# --- lint rules ----------------------------------------------------------------------------


@rule(
    "pagination-extension-invalid",
    "error",
    f"an `{EXTENSION}` extension that cannot be used",
    "pagination",
)
def extension_invalid(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        if EXTENSION not in op.extensions:
            continue
        _, problems = from_extension(op, api)
        for problem in problems:
            yield op_hit(
                op,
                f"{problem}; the operation is not paginated until it is fixed",
                extension_where(op),
            )


def extension_where(op: Operation) -> Where:
    """Where the operation's extension is (the lint engine locates the nearest node that
    exists: the operation, when the path item has it)."""
    return op.where.child(EXTENSION)


RULES: tuple[Rule, ...] = (extension_invalid,)

__all__ = ["EXTENSION", "PaginationStyle", "detect", "from_extension", "list_body"]
