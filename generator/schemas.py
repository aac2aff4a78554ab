"""Questions about schemas and media types, asked by every product (server, client, models),
by the lint rules and by the mock values: one answer each.

- references: `component_name` (the component a `$ref` names), `resolved_data` and
  `resolved` (a schema after following `$ref`s to components, at most `REF_HOPS` of them);
- object members: `schema_properties`, `required_properties` (`allOf` members included);
- type tests: `may_be_type`;
- media types: `essence`, `is_json`, `first_json` (of a content list), `json_media` (of a
  response);
- keys of the models step: `is_inline_key` (a lifted inline schema's key, not a
  component's).

A leaf: it imports only the IR, so that any package may ask it without importing another
package's internals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from generator.ir import MediaType, Response, Schema

COMPONENTS = "#/components/schemas/"
INLINE_PREFIX = "#/"  # the key of a lifted schema: `#` + its JSON pointer in the root file
REF_HOPS = 8  # `$ref`s followed from one node: a longer chain (or a loop) resolves to nothing


def component_name(ref: object) -> str | None:
    """The component schema that `ref` (a `$ref`'s value) names, unescaped, or None when it
    is no `#/components/schemas/...` reference."""
    if not isinstance(ref, str) or not ref.startswith(COMPONENTS):
        return None
    return ref[len(COMPONENTS) :].replace("~1", "/").replace("~0", "~")


def resolved_data(node: Any, schemas: Mapping[str, Schema]) -> Mapping[str, Any]:
    """`node` (a schema's JSON) after following `$ref`s to components ({} for what is no
    mapping, for an unknown component and past `REF_HOPS`); a `$ref` elsewhere stays as it
    is."""
    for _ in range(REF_HOPS):
        if not isinstance(node, Mapping):
            return {}
        name = component_name(node.get("$ref"))
        if name is None:
            return node
        target = schemas.get(name)
        node = target.data if target else {}
    return {}


def resolved(schema: Schema | None, schemas: Mapping[str, Schema]) -> Mapping[str, Any] | None:
    """`schema`'s data after following `$ref`s to known components (the last node reached
    when a reference is unknown or the chain is longer than `REF_HOPS`)."""
    if schema is None:
        return None
    data: Mapping[str, Any] = schema.data
    for _ in range(REF_HOPS):
        name = component_name(data.get("$ref"))
        target = schemas.get(name) if name is not None else None
        if target is None:
            break
        data = target.data
    return data


def schema_properties(data: Mapping[str, Any], schemas: Mapping[str, Schema]) -> dict[str, Any]:
    """An object schema's properties, its `allOf` members' included."""
    props: dict[str, Any] = {}
    for part in data.get("allOf") or ():
        props.update(schema_properties(resolved_data(part, schemas), schemas))
    own = data.get("properties")
    if isinstance(own, Mapping):
        props.update(own)
    return props


def required_properties(data: Mapping[str, Any], schemas: Mapping[str, Schema]) -> list[str]:
    """An object schema's required property names, its `allOf` members' included."""
    names = [str(n) for n in data.get("required") or () if isinstance(n, str)]
    for part in data.get("allOf") or ():
        names += required_properties(resolved_data(part, schemas), schemas)
    return names


def may_be_type(data: Mapping[str, Any], types: frozenset[str]) -> bool:
    """Whether a value of one of `types` may fit the schema's `type` (any, without one)."""
    kind = data.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()
    return not kinds or bool(kinds & types)


def essence(content_type: str) -> str:
    """`text/csv; charset=utf-8` → `text/csv`."""
    return content_type.split(";")[0].strip().lower()


def is_json(content_type: str, *, any_type: bool = True) -> bool:
    """Whether a media type is read as JSON: `application/json`, any `+json`, and (unless
    `any_type` is False) `*/*`."""
    ct = essence(content_type)
    return ct == "application/json" or ct.endswith("+json") or (any_type and ct == "*/*")


def first_json(content: Iterable[MediaType], *, any_type: bool = True) -> MediaType | None:
    """The first JSON media type of a body's or a response's `content` (see `is_json`)."""
    return next((m for m in content if is_json(m.content_type, any_type=any_type)), None)


def json_media(response: Response | None) -> MediaType | None:
    """The response's first JSON media type."""
    return None if response is None else first_json(response.content)


def is_inline_key(name: str) -> bool:
    """Whether a key of the models step's schemas is a lifted schema's (not a component's)."""
    return name.startswith(INLINE_PREFIX)


__all__ = [
    "COMPONENTS",
    "INLINE_PREFIX",
    "REF_HOPS",
    "component_name",
    "essence",
    "first_json",
    "is_inline_key",
    "is_json",
    "json_media",
    "may_be_type",
    "required_properties",
    "resolved",
    "resolved_data",
    "schema_properties",
]
