"""What of the spec the generated client cannot express: said, never dropped silently.

`client_gaps(api)` lists each thing the client plan leaves out or weakens, with the spec node
it comes from; `apiforge client` / `generate` print each as a warning (`warn_gaps`, with
file:line), and `apiforge inspect` lists them (`gaps` in its JSON, a section of its table).
It reads the IR only, so `inspect` pays for no client plan; the rules mirror the plan's
choices (`plan.py`, `media.py`, `auth.py`, `pytypes.query_style`):

- a path, header or cookie parameter that is an array or an object: the method takes one
  string (OpenAPI's `simple` / `form` serialisations of structures are not written);
- a path parameter with style `label` or `matrix`: sent as a plain value;
- a query parameter with a style OpenAPI does not define for queries: sent as `form`;
- a request body with several media types: the method sends one (JSON first, else the first);
- a request body the client sends as raw bytes although it declares a schema (XML, …);
- a form body's `encoding` the client or the server cannot honour (`render.form_encoding`);
- a required header of a multipart part with no value of its own (`const`, one `enum` value,
  a `default`): sent only when the caller gives it (`part_headers=`);
- a success response with a schema in a text type (XML, YAML, …): returned as `str`, unparsed;
- a security scheme the client cannot send itself (mutualTLS, http digest, …): configure
  it on the `http_client`;
- an `x-apiforge-method-name` that is not a usable identifier, or that collides: the method
  keeps its operationId's name (`method_names`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from generator.client.media import is_text
from generator.client.method_names import client_methods
from generator.ir import Api, Operation, Parameter, Where
from generator.log import logger
from generator.render.form_encoding import encoding_gaps
from generator.schemas import essence, first_json, is_json

_log = logger()
_QUERY_STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")
_FORMS = ("application/x-www-form-urlencoded",)


@dataclass(frozen=True, order=True)
class Gap:
    where: Where  # the spec node
    subject: str  # `GET /path`, or `security scheme x`
    what: str  # what the client does instead


def _structure(schema: Mapping[str, Any] | None) -> str:
    """ "array" / "object" when the schema is one of them, else ""."""
    if not schema:
        return ""
    declared = schema.get("type")
    types = declared if isinstance(declared, list) else [declared]
    if "array" in types or "items" in schema:
        return "array"
    if "object" in types or "properties" in schema:
        return "object"
    return ""


def _parameter_gaps(op: Operation, p: Parameter) -> list[Gap]:
    kind = f"{p.location} parameter `{p.name}`"
    gaps = []
    shape = _structure(p.schema.data if p.schema else None)
    if p.location in ("path", "header", "cookie") and shape:
        gaps.append(
            Gap(p.where, op.label, f"{kind} is an {shape}: the method takes it as one string")
        )
    if p.location == "path" and p.style in ("label", "matrix"):
        gaps.append(Gap(p.where, op.label, f"{kind} has style `{p.style}`: sent as a plain value"))
    if p.location == "query" and p.style and p.style not in _QUERY_STYLES:
        gaps.append(
            Gap(
                p.where,
                op.label,
                f"{kind} has style `{p.style}`, not one for queries: sent as `form`",
            )
        )
    return gaps


def _body_gaps(api: Api, op: Operation) -> list[Gap]:
    body = op.request_body
    if body is None or not body.content:
        return []
    chosen = first_json(body.content) or body.content[0]
    sent = _sent_media_type(chosen.content_type)
    gaps = [
        Gap(
            m.where,
            op.label,
            f"request body `{m.content_type}` is not offered: the method sends `{sent}`",
        )
        for m in body.content
        if m is not chosen and essence(m.content_type) != sent
    ]
    ct = essence(chosen.content_type)
    structured = _structure(chosen.schema.data if chosen.schema else None)
    if not is_json(ct) and ct not in _FORMS and not ct.startswith("multipart/") and structured:
        gaps.append(
            Gap(
                chosen.where,
                op.label,
                f"request body `{chosen.content_type}` has a schema the client cannot encode: "
                "`body` is raw bytes",
            )
        )
    gaps += [Gap(where, op.label, what) for where, what in encoding_gaps(api, chosen)]
    if ct.startswith("multipart/"):
        gaps += [
            Gap(
                entry.where,
                op.label,
                f"part header `{header}` of multipart field `{field}` is required and has no "
                "value to send: the method sends it only when the caller gives it "
                f"(`part_headers={{{json.dumps(field)}: {{{json.dumps(header)}: ...}}}}`)",
            )
            for field, entry in chosen.encoding.items()
            for header, required in entry.open_headers
            if required
        ]
    return gaps


def _sent_media_type(declared: str) -> str:
    """The `Content-Type` the method sends for a body declared as `declared`: JSON of any
    kind (`*/*+json`, `application/*+json`, …) goes as `application/json`, a wildcard
    otherwise as `application/octet-stream`."""
    if is_json(declared):
        return "application/json"
    return "application/octet-stream" if "*" in declared else essence(declared)


def _response_gaps(op: Operation) -> list[Gap]:
    gaps = []
    for response in sorted(op.success_responses, key=lambda r: r.status):
        if first_json(response.content) is not None:
            continue
        for m in response.content:
            if is_text(m.content_type) and _structure(m.schema.data if m.schema else None):
                gaps.append(
                    Gap(
                        m.where,
                        op.label,
                        f"response {response.status} `{m.content_type}` has a schema: "
                        "returned as text, not parsed",
                    )
                )
    return gaps


def client_gaps(api: Api) -> list[Gap]:
    """Everything of `api` the client cannot express, in spec order (schemes first)."""
    gaps = [
        Gap(
            s.where,
            f"security scheme `{s.name}`",
            f"{s.type}{' ' + s.scheme if s.scheme else ''}: the client sends no credential "
            "for it; configure it on your `http_client`",
        )
        for s in api.security_schemes
        if not s.kind
    ]
    names: dict[str, list[Gap]] = {}  # `x-apiforge-method-name` not honoured, by operation
    for problem in client_methods(api).problems:
        names.setdefault(problem.subject, []).append(
            Gap(problem.where, problem.subject, problem.what)
        )
    for op in api.operations:
        gaps.extend(names.get(op.label, ()))
        for p in op.parameters:
            gaps.extend(_parameter_gaps(op, p))
        gaps.extend(_body_gaps(api, op))
        gaps.extend(_response_gaps(op))
    return gaps


def warn_gaps(api: Api, locate: Callable[[Where], tuple[int, int]] | None = None) -> list[Gap]:
    """`client_gaps(api)`, each logged as a warning naming file:line (`locate`: the
    resolver's) or file#pointer."""
    gaps = client_gaps(api)
    for gap in gaps:
        _log.warning(
            "warning: %s: %s: the client cannot express this: %s",
            location(gap.where, locate),
            gap.subject,
            gap.what,
        )
    return gaps


def location(where: Where, locate: Callable[[Where], tuple[int, int]] | None) -> str:
    if locate is not None:
        try:
            line, _column = locate(where)
            return f"{where.file}:{line}"
        except (KeyError, LookupError, ValueError):
            pass
    return f"{where.file}#{where.pointer}"


__all__ = ["Gap", "client_gaps", "location", "warn_gaps"]
