"""A form body read back into its model's shape, as the operation's `encoding` wrote it.

A form (`application/x-www-form-urlencoded`, `multipart/form-data`) arrives as flat
`(key, value)` pairs; `decode_form` makes them the body's JSON-like value, the inverse of what a
client writes for each property's `Encoding` (the generated client's `_forms` module):

- a property with a `style`, sent with brackets: `address[city]=Paris` →
  `{"address": {"city": "Paris"}}`, at any depth; `expand[0]=a&expand[1]=b` and
  `expand[]=a&expand[]=b` → `["a", "b"]` (the forms Stripe, Rails and PHP read; read as a
  deepObject query parameter is, by `query.parse_query`);
- `form` not exploded, `spaceDelimited`, `pipeDelimited`: the one value split on `,`, ` ` or
  `|`;
- a `contentType` that is JSON (what a client sends for an object without a style): the value
  parsed as JSON;
- otherwise a field sent more than once is a list, else its one value;

then shaped for the model as a query parameter is (`query.conform`): a field the model
declares as a list is one even when sent once, a dict keyed `0`, `1`, … where it wants a list.

A file part is an `UploadedFile`: its bytes (so a `bytes` field of the model takes it as it
is), with the part's `filename` and `content_type`.

`form_value(request, model)`: the body the form guard (`forms.RawBodyGuard`) read and
validated, as the handler's model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel
from starlette.requests import Request

from .query import conform, parse_query

M = TypeVar("M", bound=BaseModel)

FORM_SCOPE_KEY = "apiforge.form"  # the validated form, by wire name, kept in the ASGI scope
_DELIMITERS = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}


class UploadedFile(bytes):
    """A file part of a multipart body: its bytes, its `filename` and its `content_type`."""

    filename: str | None
    content_type: str

    def __new__(
        cls, data: bytes, filename: str | None = None, content_type: str = ""
    ) -> UploadedFile:
        made = super().__new__(cls, data)
        made.filename = filename
        made.content_type = content_type or "application/octet-stream"
        return made


@dataclass(frozen=True, slots=True)
class Encoding:
    """One property's `encoding` entry, as declared ("" / None: not declared)."""

    style: str = ""
    explode: bool | None = None
    content_type: str = ""


_NONE = Encoding()


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # validation says what is wrong with it
    return value


def _is_json(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def decode_form(
    pairs: Iterable[tuple[str, Any]], encoding: Mapping[str, Encoding], model: Any = Any
) -> Any:
    """The body's value from its form pairs, shaped for `model` (see the module docstring)."""
    flat: dict[str, list[Any]] = {}
    styled: list[tuple[str, str]] = []
    for key, value in pairs:
        base = key.split("[", 1)[0]
        if base != key and encoding.get(base, _NONE).style and isinstance(value, str):
            styled.append((key, value))
        else:
            flat.setdefault(key, []).append(value)
    data: dict[str, Any] = {}
    for key, values in flat.items():
        how = encoding.get(key, _NONE)
        delimiter = _DELIMITERS.get(how.style)
        exploded = how.style == "form" if how.explode is None else how.explode
        if delimiter and not exploded and len(values) == 1:
            text = values[0]
            data[key] = text.split(delimiter) if isinstance(text, str) and text else []
            continue
        if _is_json(how.content_type):
            values = [_json(v) for v in values]
        data[key] = values if len(values) > 1 else values[0]
    for key, node in parse_query(styled).items():
        data.setdefault(key, node)  # a plain field of the same name wins
    return conform(data, model)


@overload
def form_value(request: Request, model: type[M]) -> M: ...
@overload
def form_value(request: Request, model: type[M], *, required: Literal[False]) -> M | None: ...
@overload
def form_value(request: Request, model: type[dict[Any, Any]]) -> dict[str, Any]: ...
@overload
def form_value(
    request: Request, model: type[dict[Any, Any]], *, required: Literal[False]
) -> dict[str, Any] | None: ...
def form_value(request: Request, model: type[Any], *, required: bool = True) -> Any:
    """The form the guard validated, as `model` (the handler's body; `dict`: its members by
    wire name); None for an optional body that was not sent."""
    data: Any = request.scope.get(FORM_SCOPE_KEY)
    if data is None:
        if required:
            raise RuntimeError("no form body: the operation's form guard (require_body) runs first")
        return None
    if model is dict:
        return data
    return model.model_validate(data)


__all__ = ["FORM_SCOPE_KEY", "Encoding", "UploadedFile", "decode_form", "form_value"]
