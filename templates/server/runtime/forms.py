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
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import urllib.parse
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model
from starlette.requests import Request

from .form_values import FORM_SCOPE_KEY, Encoding, UploadedFile, decode_form
from .problems import RequestGuard

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


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
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if self.adapter is None or media not in FORM_TYPES:
            return  # another declared media type (415 is ContentTypeGuard's)
        pairs = _form_fields(media, request.headers.get("content-type", ""), body)
        data = decode_form(pairs, self.encoding, self.model)
        try:
            valid = self.adapter.validate_python(data)
        except ValidationError as exc:
            errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
            raise RequestValidationError(errors) from None
        if isinstance(valid, BaseModel):
            data = valid.model_dump(by_alias=True, exclude_unset=True)
        request.scope[FORM_SCOPE_KEY] = data


def _form_fields(media: str, content_type: str, body: bytes) -> list[tuple[str, str | bytes]]:
    """The (name, value) pairs of a form body (a file part's value is its bytes), read with
    the standard library: a server need not depend on a multipart package to check one."""
    if media == FORM_TYPES[0]:
        text = body.decode("utf-8", "replace")
        return [(k, v) for k, v in urllib.parse.parse_qsl(text, keep_blank_values=True)]
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    pairs: list[tuple[str, str | bytes]] = []
    for part in message.iter_parts() if message.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        raw = part.get_payload(decode=True)
        payload = raw if isinstance(raw, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            pairs.append((name, UploadedFile(payload, filename, part.get_content_type())))
        else:
            pairs.append((name, payload.decode("utf-8", "replace")))
    return pairs


def form_model(fields: Mapping[str, tuple[Any, Mapping[str, Any], bool]]) -> type[BaseModel]:
    """A model of an inline form schema: wire name → (type, `Field` constraints, required)."""
    definitions: dict[str, Any] = {
        f"field_{i}": (Annotated[tp, Field(alias=name, **bounds)], ... if required else None)
        for i, (name, (tp, bounds, required)) in enumerate(fields.items())
    }
    return create_model("Form", **definitions)


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
