"""Errors in the spec's own words: how each problem shows as the error schema an operation
declares (`error_views.json`, read by the runtime's `ErrorView`).

The server decides every error as an RFC 9457 problem (`type`, `title`, `status`, `detail`,
`instance`, `requestId`, `errors`). Many specs declare their own error object instead —
`{code, message}`, Spring's `{timestamp, status, error, message, path}`, `{error: {code,
message}}` — often with `additionalProperties: false`, and clients validate against it. For
each declared error response whose JSON schema is an object that is not a problem, this plans
which of the problem's members fills which property (by the property's name and type; one
level of nesting, as in `{error: {...}}`), and a value made from the schema for each required
property nothing fills (with a located warning). Schemas that already are problems, or that
say nothing the problem could fill, are left alone: the problem goes out as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from generator.ir import Operation, Schema, Where
from generator.log import logger
from generator.schemas import (
    json_media,
    may_be_type,
    required_properties,
    resolved_data,
    schema_properties,
)
from generator.server.conformance import normalized_name, pointer_label
from generator.server.mock_values import value_of

_log = logger()

#: What fills a property: (problem member, the JSON types the property must allow, the names
#: it goes by, compared without case, `_`, `-`, spaces). The first match of a name wins.
SOURCES: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    ("detail", frozenset({"string"}), (
        "message", "detail", "errormessage", "errordescription", "description", "msg",
        "details", "reason", "errordetail", "text",
    )),
    ("status", frozenset({"integer", "number"}), (
        "status", "statuscode", "httpstatus", "httpstatuscode", "httpcode", "code", "errorcode",
    )),
    ("status_text", frozenset({"string"}), ("status", "statuscode", "httpstatus", "httpcode")),
    ("kind", frozenset({"string"}), (
        "code", "errorcode", "error", "type", "errortype", "kind", "name", "key", "reason",
    )),
    ("title", frozenset({"string"}), ("title", "summary", "error")),
    ("request_id", frozenset({"string"}), (
        "requestid", "traceid", "correlationid", "reqid", "errorid", "trackingid",
    )),
    ("instance", frozenset({"string"}), ("instance", "path", "uri")),
    ("timestamp", frozenset({"string"}), ("timestamp", "time", "date", "datetime")),
    ("errors", frozenset({"array"}), (
        "errors", "details", "detail", "validationerrors", "fielderrors", "issues", "problems",
    )),
)  # fmt: skip

#: What fills a property of one validation error (`{location, message, type}` in a problem;
#: FastAPI's `{loc, msg, type}` …), the same way.
ITEM_SOURCES: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    ("location", frozenset({"array"}), ("loc", "location", "path", "pointer", "fields")),
    ("location_text", frozenset({"string"}), (
        "loc", "location", "field", "path", "pointer", "param", "parameter", "property", "name",
    )),
    ("message", frozenset({"string"}), (
        "msg", "message", "detail", "description", "error", "reason", "text",
    )),
    ("type", frozenset({"string"}), ("type", "code", "errortype", "kind", "errorcode")),
)  # fmt: skip

#: Property names a problem-shaped schema has (RFC 9457 members).
_PROBLEM_MEMBERS = frozenset({"type", "title", "status", "detail", "instance"})


def plan_error_views(
    operations: Iterable[Operation], schemas: Mapping[str, Schema]
) -> dict[str, Any]:
    """`error_views.json`'s content: {"views": {name → view}, "operations": {operation id →
    {response key → view name}}}; a view is {"fields": {property → member}, "constants":
    {property → value}, "wrap": property or ""}. Empty where no operation has a view."""
    data = {name: s.data for name, s in schemas.items()}
    views: dict[str, dict[str, Any]] = {}
    names: dict[str, str] = {}  # the view's JSON → its name, so operations share views
    table: dict[str, dict[str, str]] = {}
    planned: dict[int, dict[str, Any] | None] = {}  # schema object → its view (shared refs)
    for op in operations:
        for response in op.error_responses:
            media = json_media(response)
            if media is None or media.schema is None:
                continue
            key = id(media.schema.data)
            if key not in planned:
                planned[key] = _view(media.schema.data, schemas, data, media.schema.where)
            view = planned[key]
            if view is None:
                continue
            text = json.dumps(view, sort_keys=True)
            name = names.setdefault(text, f"v{len(names) + 1}")
            views[name] = view
            table.setdefault(op.id, {})[response.status] = name
    if not table:
        return {}
    return {"views": views, "operations": dict(sorted(table.items()))}


def error_views_json(views: Mapping[str, Any]) -> str:
    return json.dumps(views, indent=1, sort_keys=True, default=str) + "\n"


def _view(
    schema: Any, schemas: Mapping[str, Schema], data: Mapping[str, Any], where: Where
) -> dict[str, Any] | None:
    """The view of one error schema, or None where the problem goes out as it is; `data`:
    the components' JSON, for values made from a schema."""
    top = resolved_data(schema, schemas)
    props = schema_properties(top, schemas)
    if not props or _is_problem(props):
        return None
    wrap = ""
    fields = _fields(props, schemas, data)
    if not fields:  # `{error: {code, message}}`: the members one level down
        inner = [
            (name, resolved_data(p, schemas))
            for name, p in props.items()
            if may_be_type(resolved_data(p, schemas), frozenset({"object"}))
        ]
        for name, node in inner:
            inner_props = schema_properties(node, schemas)
            if inner_props and (fields := _fields(inner_props, schemas, data)):
                wrap, top, props = name, node, inner_props
                break
    if not fields:
        return None
    constants: dict[str, Any] = {}
    for name in required_properties(top, schemas):
        if name not in fields and name in props:
            constants[name] = value_of(props[name], data, examples=True)
    if constants:
        _log.warning(
            "warning: %s: the error schema requires %s, which nothing the server's errors "
            "say fills: %s a value made from the schema",
            pointer_label(where),
            ", ".join(f"`{c}`" for c in sorted(constants)),
            "it gets" if len(constants) == 1 else "they get",
        )
    return {"fields": fields, "constants": constants, "wrap": wrap}


def _is_problem(props: Mapping[str, Any]) -> bool:
    return len(_PROBLEM_MEMBERS & set(props)) >= 3


def _fields(
    props: Mapping[str, Any],
    schemas: Mapping[str, Schema],
    data: Mapping[str, Any],
    sources: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = SOURCES,
) -> dict[str, Any]:
    """Property → the problem member that fills it (for an array of errors, possibly how
    each error shows: {"each": {property → member}, "constants": {…}})."""
    by_norm: dict[str, str] = {}
    for name in props:
        by_norm.setdefault(normalized_name(name), name)
    fields: dict[str, Any] = {}
    for member, types, synonyms in sources:
        for synonym in synonyms:
            found = by_norm.get(synonym)
            if found is None or found in fields:
                continue
            node = resolved_data(props[found], schemas)
            if _fits(node, types, member):
                if member == "errors":
                    fields[found] = _errors_member(node, schemas, data)
                elif member == "location" and _holds_strings_only(node, schemas):
                    fields[found] = "location_strings"  # ["query", "ids", "0"]
                else:
                    fields[found] = member
                break
    return {name: fields[name] for name in sorted(fields) if fields[name]}


def _fits(node: Mapping[str, Any], types: frozenset[str], member: str) -> bool:
    """Whether the property's schema takes what `member` gives."""
    if "enum" in node or "const" in node:
        return False  # a closed set of values the problem's cannot be known to be in
    if node.get("type") is None:  # untyped: only the texts, which any such property takes
        return member in ("detail", "kind", "title")
    if not may_be_type(node, types):
        return False
    if member == "instance":
        return node.get("format") not in ("uri", "url")  # the problem's is a path
    return True


def _holds_strings_only(node: Mapping[str, Any], schemas: Mapping[str, Schema]) -> bool:
    items = resolved_data(node.get("items"), schemas) if "items" in node else {}
    return items.get("type") == "string"


def _errors_member(
    node: Mapping[str, Any], schemas: Mapping[str, Schema], data: Mapping[str, Any]
) -> Any:
    """What fills an array of errors: the validation errors' messages where it holds strings;
    where it holds objects, each error shown as one (its properties filled by name, as the
    error object's are); else nothing ("")."""
    items = resolved_data(node.get("items"), schemas) if "items" in node else {}
    if items.get("type") is not None and may_be_type(items, frozenset({"string"})):
        return "messages" if "enum" not in items else ""
    if not may_be_type(items, frozenset({"object"})):
        return ""
    props = schema_properties(items, schemas)
    each = _fields(props, schemas, data, ITEM_SOURCES) if props else {}
    constants = {
        name: value_of(props[name], data)
        for name in required_properties(items, schemas)
        if name not in each and name in props
    }
    if each or constants:
        return {"each": each, "constants": constants}
    return "" if items.get("additionalProperties") is False else "errors"
