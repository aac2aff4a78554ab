"""Bodies that are not JSON, checked before the handler runs: a required one is there, and a
form (`application/x-www-form-urlencoded`, `multipart/form-data`) fits the operation's schema.
(And JSON `null`s the schema refuses where FastAPI or the models take them: `NullGuard`.)

The guard parses the form (read back into its shape as the operation's `encoding` wrote it:
`form_values.decode_form`) and validates the fields against the body's model, so a form that
misses a required field or sends `abc` for an integer is the server's usual validation problem
(`["body", field]` locations), not the handler's surprise; the handler gets the validated form
as its model (`form_values.form_value`). A text field becomes a number or boolean in pydantic's
lax mode; a field sent more than once, or declared as an array, is a list; a file part is an
`UploadedFile` (its bytes, file name and content type). Any other body reaches the handler as
its bytes.

Reading a form costs time linear in its size (one forward scan, no backtracking), and a form
is refused (422, location `["body"]`) past fixed bounds: `MAX_FORM_FIELDS` fields,
`MAX_PART_HEADER_BYTES` of headers per part, `MAX_HEADER_PARAMETERS` parameters per header. (A
number field's text is pydantic's to bound: it refuses more than 4,300 digits, in linear
time.) So a hostile form is refused in about the time it takes to scan it, and the other
requests on the event loop do not wait for it.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from starlette.requests import Request

from .form_values import FORM_SCOPE_KEY, Encoding, UploadedFile, decode_form
from .problems import RequestGuard

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
#: Fields (urlencoded pairs or multipart parts) a form may have.
MAX_FORM_FIELDS = 1000
#: Bytes of one multipart part's header block.
MAX_PART_HEADER_BYTES = 8192
#: Parameters of one header (`Content-Type`, a part's `Content-Disposition`).
MAX_HEADER_PARAMETERS = 16
#: A parameter of a header (RFC 9110 token `=` token or quoted-string), after its `;`.
_PARAMETER = re.compile(
    r""";[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"|[^;"]*)"""
)


class RawBodyGuard(RequestGuard):
    """422 `validation-error` for a required body that is missing or a form its model
    refuses (`model` `Any`: presence only)."""

    def __init__(
        self, model: Any, *, required: bool, encoding: Mapping[str, Encoding] | None = None
    ) -> None:
        self.adapter: TypeAdapter[Any] | None = None if model is Any else TypeAdapter(model)
        self.required = required
        self.model = model
        self.encoding = encoding or {}

    async def check(self, request: Request) -> None:
        body = await request.body()  # kept by Starlette for the handler
        if not body:
            if self.required:
                missing = {"type": "missing", "loc": ("body",), "msg": "Field required"}
                raise RequestValidationError([missing])
            return
        content_type = request.headers.get("content-type", "")
        media = content_type.split(";", 1)[0].strip().lower()
        if self.adapter is None or media not in FORM_TYPES:
            return  # another declared media type (415 is ContentTypeGuard's)
        try:
            pairs = _form_fields(media, content_type, body)
        except FormRefused as exc:
            refused = {"type": "form_refused", "loc": ("body",), "msg": str(exc)}
            raise RequestValidationError([refused]) from None
        data = decode_form(pairs, self.encoding, self.model)
        try:
            valid = self.adapter.validate_python(data)
        except ValidationError as exc:
            errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
            raise RequestValidationError(errors) from None
        if isinstance(valid, BaseModel):
            data = valid.model_dump(by_alias=True, exclude_unset=True)
        request.scope[FORM_SCOPE_KEY] = data


class FormRefused(ValueError):
    """A form past the bounds of this module, or not a form at all; the message says which."""


def _form_fields(media: str, content_type: str, body: bytes) -> list[tuple[str, str | bytes]]:
    """The (name, value) pairs of a form body (a file part's value is an `UploadedFile`), read in
    time linear in the body's size; `FormRefused` past the module's bounds."""
    if media == FORM_TYPES[0]:
        text = body.decode("utf-8", "replace")
        try:
            pairs = urllib.parse.parse_qsl(
                text, keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS
            )
        except ValueError:
            raise FormRefused(f"A form has at most {MAX_FORM_FIELDS} fields") from None
        return [(k, v) for k, v in pairs]
    boundary = header_parameters(content_type).get("boundary", "")
    if not 1 <= len(boundary) <= 70:  # RFC 2046
        raise FormRefused("A multipart form needs a boundary of 1 to 70 characters")
    return _multipart_fields(body, boundary.encode("latin-1", "replace"))


def header_parameters(value: str) -> dict[str, str]:
    """The parameters of a header value (`type; a=1; b="x y"`, names lowercased, quotes
    undone), read in one linear scan; `FormRefused` past `MAX_HEADER_PARAMETERS`."""
    params: dict[str, str] = {}
    for count, match in enumerate(_PARAMETER.finditer(value), 1):
        if count > MAX_HEADER_PARAMETERS:
            raise FormRefused(f"A header has at most {MAX_HEADER_PARAMETERS} parameters")
        raw = match.group(2).strip()
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        params.setdefault(match.group(1).lower(), raw)
    return params


def _multipart_fields(body: bytes, boundary: bytes) -> list[tuple[str, str | bytes]]:
    """The named parts of a `multipart/form-data` body, each found with one forward search:
    the whole body is scanned once. A part's `Content-Transfer-Encoding` is not applied
    (RFC 7578 retires it); the preamble and epilogue are ignored."""
    delimiter = b"--" + boundary
    start = body.find(delimiter)
    if start < 0:
        raise FormRefused("A multipart form's boundary is not in its body")
    pairs: list[tuple[str, str | bytes]] = []
    position = start + len(delimiter)
    parts = 0
    while not body.startswith(b"--", position):  # "--" after a delimiter: the last part ended
        parts += 1
        if parts > MAX_FORM_FIELDS:
            raise FormRefused(f"A form has at most {MAX_FORM_FIELDS} fields")
        line_end = body.find(b"\r\n", position)
        if line_end < 0:
            raise FormRefused("A multipart form ends before its closing boundary")
        head_end = body.find(b"\r\n\r\n", line_end, line_end + MAX_PART_HEADER_BYTES + 4)
        if head_end < 0:
            raise FormRefused(
                f"A part's headers end within {MAX_PART_HEADER_BYTES} bytes, with a blank line"
            )
        next_delimiter = body.find(b"\r\n" + delimiter, head_end + 2)
        if next_delimiter < 0:
            raise FormRefused("A multipart form ends before its closing boundary")
        headers = _part_headers(body[line_end + 2 : head_end])
        disposition = header_parameters(headers.get("content-disposition", ""))
        content = body[head_end + 4 : next_delimiter]
        position = next_delimiter + 2 + len(delimiter)
        name = disposition.get("name")
        if name is None:
            continue
        filename = disposition.get("filename")
        if filename is not None or "filename*" in disposition:
            kind = headers.get("content-type", "application/octet-stream").split(";", 1)[0]
            pairs.append((name, UploadedFile(content, filename, kind.strip().lower())))
        else:
            pairs.append((name, content.decode("utf-8", "replace")))
    return pairs


def _part_headers(block: bytes) -> dict[str, str]:
    """A part's headers (names lowercased; the first of a repeated one)."""
    headers: dict[str, str] = {}
    for line in block.decode("latin-1").split("\r\n"):
        name, colon, value = line.partition(":")
        if colon:
            headers.setdefault(name.strip().lower(), value.strip())
    return headers


def form_model(fields: Mapping[str, tuple[Any, Mapping[str, Any], bool]]) -> type[BaseModel]:
    """A model of an inline form schema: wire name → (type, `Field` constraints, required)."""
    definitions: dict[str, Any] = {
        f"field_{i}": (Annotated[tp, Field(alias=name, **bounds)], ... if required else None)
        for i, (name, (tp, bounds, required)) in enumerate(fields.items())
    }
    # built when a request first sends it: a big spec has hundreds of forms
    return create_model("Form", __config__=ConfigDict(defer_build=True), **definitions)


class NullGuard(RequestGuard):
    """422 `validation-error` for a JSON `null` the schema refuses where the model would take
    it: the whole body when it is optional (FastAPI reads `null` as no body), and members
    the models type `X | None = None` (absent and null are the same to them).

    `rules` come from the spec's schemas (generator/render/server_nulls.py): an object's
    rule maps a member to `[null refused, its own rule's name]`, an array's is
    `[null refused for an item, the items' rule's name]`."""

    def __init__(self, rules: Mapping[str, Any], root: str | None, *, body: bool) -> None:
        self.rules = rules
        self.root = root
        self.body = body

    async def check(self, request: Request) -> None:
        raw = await request.body()  # kept by Starlette for FastAPI
        if b"null" not in raw:  # nearly every request: nothing to parse
            return
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media and not media.endswith("json"):  # a form or text the operation also takes
            return
        if self.body and raw.strip() == b"null":
            raise RequestValidationError([_null_refused(("body",))])
        if self.root is None:
            return
        try:
            value = json.loads(raw)
        except ValueError:
            return  # not JSON: FastAPI's own validation says so
        found = _refused_nulls(value, self.root, self.rules)
        if found:
            raise RequestValidationError([_null_refused(loc) for loc in found])


def _refused_nulls(value: Any, root: str, rules: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The locations of the nulls in `value` the rules refuse (at most 20), walked without
    recursion: a body as deep as the parser allows cannot exhaust the stack."""
    found: list[tuple[Any, ...]] = []
    todo: list[tuple[Any, str, tuple[Any, ...]]] = [(value, root, ("body",))]
    while todo and len(found) < 20:
        node, name, loc = todo.pop()
        rule = rules.get(name)
        if isinstance(rule, dict) and isinstance(node, dict):
            pairs: Any = ((k, node[k], rule[k]) for k in rule if k in node)
        elif isinstance(rule, list) and isinstance(node, list):
            pairs = ((i, item, rule) for i, item in enumerate(node))
        else:
            continue
        for key, item, (refused, inner) in pairs:
            if item is None:
                if refused:
                    found.append((*loc, key))
            elif inner is not None:
                todo.append((item, inner, (*loc, key)))
    return sorted(found, key=lambda loc: [str(part) for part in loc])


def _null_refused(loc: tuple[Any, ...]) -> dict[str, Any]:
    return {"type": "null_refused", "loc": loc, "msg": "Input should not be null"}


def refuse_nulls(rules: Mapping[str, Any], root: str | None, *, body: bool) -> NullGuard:
    """The guard of a JSON body (see `NullGuard`): `body`, whether a `null` body is refused;
    `root`, the name of the body's rule in `rules`."""
    return NullGuard(rules, root, body=body)


def require_body(
    model: Any, *, required: bool, encoding: Mapping[str, Encoding] | None = None
) -> RawBodyGuard:
    """The guard of an operation whose body is not JSON (see `RawBodyGuard`); `encoding`: a form
    body's, by property name."""
    return RawBodyGuard(model, required=required, encoding=encoding)
