"""How each property of a form body goes on the wire: what the client writes and the server reads.

A form body (`application/x-www-form-urlencoded`, `multipart/form-data`) is flat pairs; its
media type's `encoding` says how each property becomes pairs. `form_encoding(api, media)`
gives, by property name, the `(style, explode, content_type)` both products pass to their
runtimes (the client's `_forms.Encoding`, the server's `form_values.Encoding`):

- a declared `style` / `explode`: as declared (`deepObject`: `address[city]=Paris`,
  `expand[0]=a`; `form`: a list repeats the field, or joins it when not exploded);
- a declared `contentType` alone: kept (a multipart part's type; JSON text for an object);
- declared `headers` with one value to send (`const`, one `enum` value, a `default`): kept for
  the client, which sends them on the multipart part;
- no entry, for a property that is an object (or a union with one): `application/json`,
  OpenAPI's default for an object in a form, so the server knows to parse it;
- anything else: no entry (a scalar as its text, a list as a repeated field).

`encoding_literal(api, media)` is the same as the dict expression generated code passes.

`encoding_gaps(api, media)` lists, with the spec node, what neither side can honour: a
style OpenAPI does not define for forms (written as `form`), an object in `form` style
exploded (its members become top-level fields, which the server does not gather back) or in a
delimited style, `allowReserved` (reserved characters are percent-encoded anyway), and an
entry for a property the body's schema does not declare.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.ir import Api, MediaType, Where
from generator.patterns.pagination import resolve
from generator.render.escape import py_string

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")
JSON = "application/json"

# style ("" none), explode (None: default), content type, a multipart part's fixed headers
Entry = tuple[str, bool | None, str, tuple[tuple[str, str], ...]]


def is_form(media: MediaType) -> bool:
    return media.content_type.split(";")[0].strip().lower() in FORM_TYPES


def _is_object(api: Api, schema: Any, depth: int = 0) -> bool:
    data = resolve(api, schema)
    declared = data.get("type")
    types = declared if isinstance(declared, list) else [declared]
    if "object" in types or "properties" in data or "additionalProperties" in data:
        return "array" not in types
    if depth < 4:
        for key in ("anyOf", "oneOf"):
            members = data.get(key)
            if isinstance(members, list) and any(_is_object(api, m, depth + 1) for m in members):
                return True
    return False


def _properties(api: Api, media: MediaType) -> Mapping[str, Any]:
    if media.schema is None:
        return {}
    props = resolve(api, media.schema.data).get("properties")
    return props if isinstance(props, Mapping) else {}


def form_encoding(api: Api, media: MediaType) -> dict[str, Entry]:
    """The encoding of each property of a form body that needs one (see the module docstring)."""
    found: dict[str, Entry] = {}
    props = _properties(api, media)
    for name, entry in media.encoding.items():
        style = entry.style if entry.style in STYLES else ("form" if entry.style else "")
        if style or entry.explode is not None:
            found[name] = (style or "form", entry.explode, entry.content_type, entry.headers)
        elif entry.content_type or entry.headers:
            found[name] = ("", None, entry.content_type, entry.headers)
    for name, schema in props.items():
        if str(name) not in found and _is_object(api, schema):
            found[str(name)] = ("", None, JSON, ())
    return dict(sorted(found.items()))


def encoding_literal(api: Api, media: MediaType, *, part_headers: bool = False) -> str:
    """`form_encoding` as the dict expression generated code passes its runtime,
    `{"field": Encoding("deepObject", explode=True), ...}` ("" when no property needs one);
    with `part_headers`, a multipart part's fixed headers too (`headers={...}`: the client
    sends them, the server has no use for them)."""
    entries = []
    for name, (style, explode, content_type, headers) in form_encoding(api, media).items():
        args = [py_string(style)] if style else []
        if explode is not None:
            args.append(f"explode={explode}")
        if content_type:
            args.append(f"content_type={py_string(content_type)}")
        if part_headers and headers:
            pairs = ", ".join(f"{py_string(k)}: {py_string(v)}" for k, v in headers)
            args.append(f"headers={{{pairs}}}")
        elif not (style or explode is not None or content_type):
            continue
        entries.append(f"{py_string(name)}: Encoding({', '.join(args)})")
    return "{" + ", ".join(entries) + "}" if entries else ""


def encoding_gaps(api: Api, media: MediaType) -> list[tuple[Where, str]]:
    """What of the body's `encoding` cannot be honoured, with where it is said."""
    if not is_form(media):
        return []
    gaps: list[tuple[Where, str]] = []
    props = _properties(api, media)
    for name, entry in media.encoding.items():
        what = f"the encoding of form field `{name}`"
        if props and name not in props:
            gaps.append((entry.where, f"{what} names no property of the body: ignored"))
            continue
        if entry.style and entry.style not in STYLES:
            gaps.append((entry.where, f"{what}: style `{entry.style}` is sent as `form`"))
        style = entry.style if entry.style in STYLES else "form"
        exploded = style == "form" if entry.explode is None else entry.explode
        styled = entry.style or entry.explode is not None
        if styled and style != "deepObject" and name in props and _is_object(api, props[name]):
            how = "exploded" if exploded and style == "form" else "delimited"
            gaps.append(
                (
                    entry.where,
                    f"{what}: an object in `{style}` style ({how}) is not read back into "
                    "its model by the server; `deepObject` is",
                )
            )
        if entry.allow_reserved:
            gaps.append((entry.where, f"{what}: `allowReserved` is ignored (percent-encoded)"))
    return gaps


__all__ = ["FORM_TYPES", "Entry", "encoding_gaps", "encoding_literal", "form_encoding", "is_form"]
