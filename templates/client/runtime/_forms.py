"""Form bodies: `multipart/form-data` and `application/x-www-form-urlencoded`.

Public API:

- `Encoding(style, explode, content_type)`: how one property of a form body goes on the wire,
  as the operation's `encoding` declares it; generated methods pass them by property name.
- `form_members(body) -> members`: a form body's members by wire name (a model dumped by
  alias, unset fields left out; a mapping as it is).
- `urlencoded(body, encoding) -> fields`: a model (dumped by alias, unset fields left out) or a
  mapping, as the fields httpx sends (`data=`).
- `multipart(body, encoding, part_headers) -> parts`: the same as the parts httpx sends
  (`files=`): form fields are parts without a file name (so a body without any file is still
  `multipart/form-data`), files are parts with one; `part_headers` (by property name) are
  the caller's headers for a property's parts.

Each property is written as its encoding says:

- with a `style` (or `explode`): in that style, as a query parameter of the same style is
  (`_query.encode_query`): `deepObject` gives `address[city]=Paris`, `metadata[key]=v`,
  `expand[0]=a` and nested objects at any depth (`a[b][c]=v`, Stripe's and Rails' forms);
  `form` repeats the key for each item of a list (`tag=a&tag=b`) or, not exploded, joins them
  (`tag=a,b`); each pair is one field (one part in a multipart body);
- else (no encoding, or only a `contentType`): a scalar as its text (`true` / `false`, a
  number, an enum's value, a date-time in ISO 8601), a list as one field per item, an object
  as JSON text (OpenAPI's default for an object in a form is `application/json`); in a
  multipart body the part carries the declared `contentType`.

A file (multipart only) is `bytes`, a binary file object (sent with its own file name, the
last part of its `name`), a `pathlib.Path` (read, sent with its name), or a tuple
`(filename, content)` / `(filename, content, content_type)` (/ `+ headers`); a file without a
content type of its own gets the part's declared `contentType` when it names one type. Each
part of a property carries the headers its encoding declares (`Encoding.headers`), then the
caller's `part_headers` for it, then a file tuple's own. A list is one part per item. None is
left out. A file on disk (a `Path`, or a file opened from one, at its start) is streamed from
disk (`DiskFile`), never held whole in memory, and sent again from its start on each attempt;
other file objects are read once, so every attempt sends the same bytes.
"""

from __future__ import annotations

import datetime
import enum
import json
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

import pydantic

from ._query import encode_query

Fields = dict[str, str | list[str]]
Files = list[tuple[str, Any]]

_ANY: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Any)


@dataclass(frozen=True, slots=True)
class Encoding:
    """One property's `encoding` entry: `style` "" when none is declared (then `explode`
    None too); `content_type` "" when none is declared; `headers`, sent on each multipart
    part of the property (a file's own headers, given in its tuple, win)."""

    style: str = ""
    explode: bool | None = None
    content_type: str = ""
    headers: Mapping[str, str] | None = None  # a multipart part's own headers


_NONE = Encoding()


def form_members(body: Any) -> Mapping[str, Any]:
    if isinstance(body, pydantic.BaseModel):
        dumped: dict[str, Any] = body.model_dump(by_alias=True, exclude_unset=True)
        return dumped
    if isinstance(body, Mapping):
        members: Mapping[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
        return members
    raise TypeError(f"a form body is a model or a mapping, not {type(body).__name__}")


def _is_file(value: Any) -> bool:
    if isinstance(value, bytes | bytearray | memoryview | pathlib.PurePath):
        return True
    if isinstance(value, tuple):
        parts: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return 2 <= len(parts) <= 4 and _is_file(parts[1])
    return callable(getattr(value, "read", None))


class DiskFile:
    """A file on disk sent as a multipart part, streamed from disk: opened when httpx first
    sizes (`fileno`) or reads it, closed once read to its end; httpx seeks it back to the start
    for each attempt, so every attempt sends the file again without holding it in memory."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self._file: BinaryIO | None = None

    def _open(self) -> BinaryIO:
        if self._file is None or self._file.closed:
            self._file = open(self.path, "rb")  # noqa: SIM115 (closed at the end of a read)
        return self._file

    def fileno(self) -> int:
        return self._open().fileno()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._open().seek(offset, whence)

    def tell(self) -> int:
        return self._open().tell()

    def read(self, size: int = -1) -> bytes:
        data = self._open().read(size)
        if not data:
            self.close()
        return data

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def _read(content: Any) -> bytes | DiskFile:
    if isinstance(content, bytes | bytearray | memoryview):
        return bytes(content)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(content, pathlib.PurePath):
        return DiskFile(content)
    name = getattr(content, "name", None)
    if isinstance(name, str) and os.path.isfile(name) and _at_start(content):
        return DiskFile(name)  # a file opened from disk: streamed from its path
    data = content.read()
    return data.encode() if isinstance(data, str) else bytes(data)


def _at_start(file: Any) -> bool:
    try:
        return bool(file.tell() == 0 and "b" in getattr(file, "mode", "b"))
    except (OSError, AttributeError):
        return False


def _file_name(value: Any, field: str) -> str:
    """A file's own name (a path's, an open file's), else its field's."""
    if isinstance(value, pathlib.PurePath):
        return value.name
    name = getattr(value, "name", None)
    if isinstance(name, str | bytes | os.PathLike) and not isinstance(value, bytes | bytearray):
        text = os.fsdecode(name)  # pyright: ignore[reportUnknownArgumentType]
        base = os.path.basename(text)
        if base and not (text.startswith("<") and text.endswith(">")):  # `<stdin>`
            return base
    return field


def _part_type(encoding: Encoding) -> str | None:
    """The declared content type of a part, when it names one type (not `image/*`, not a
    list)."""
    declared = encoding.content_type.strip()
    if not declared or "," in declared or "*" in declared:
        return None
    return declared


def _file(name: str, value: Any, encoding: Encoding) -> tuple[str, Any]:
    declared = _part_type(encoding)
    if isinstance(value, tuple):
        given: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        filename, content = given[0], given[1]
        declared = given[2] if len(given) > 2 else declared
        own: Mapping[str, str] = given[3] if len(given) > 3 else {}
    else:
        filename, content, own = _file_name(value, name), value, {}
    return name, _part(filename, _read(content), declared, encoding, own)


def _part(
    filename: str | None,
    content: Any,
    content_type: str | None,
    encoding: Encoding,
    own: Mapping[str, str] | None = None,
) -> tuple[Any, ...]:
    """One multipart part as httpx takes it, with the encoding's headers (then its own)."""
    headers = {**(encoding.headers or {}), **(own or {})}
    if headers:
        return (filename, content, content_type, headers)
    if content_type:
        return (filename, content, content_type)
    return (filename, content)


def text(value: Any) -> str:
    """One form value as text (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return text(value.value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, pydantic.BaseModel | Mapping | list | tuple):
        dumped = _ANY.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
        return json.dumps(dumped, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _pairs(name: str, value: Any, encoding: Encoding) -> list[tuple[str, str]]:
    """The `(key, text)` fields of one property that is not a file."""
    if encoding.style or encoding.explode is not None:
        data = _ANY.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
        return encode_query(name, data, style=encoding.style or "form", explode=encoding.explode)
    items: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore
    return [(name, text(item)) for item in items if item is not None]


def _add(fields: Fields, name: str, value: str) -> None:
    present = fields.get(name)
    if present is None:
        fields[name] = value
    elif isinstance(present, list):
        present.append(value)
    else:
        fields[name] = [present, value]


def multipart(
    body: Any,
    encoding: Mapping[str, Encoding] | None = None,
    part_headers: Mapping[str, Mapping[str, str]] | None = None,
) -> Files:
    parts: Files = []
    for name, value in form_members(body).items():
        how = (encoding or {}).get(name, _NONE)
        given = (part_headers or {}).get(name)
        if given:  # the caller's headers for this property's parts, after the declared ones
            how = replace(how, headers={**(how.headers or {}), **given})
        items: list[Any] = value if isinstance(value, list) else [value]  # pyright: ignore
        if value is not None and items and all(_is_file(item) for item in items):
            parts += [_file(name, item, how) for item in items]
            continue
        if value is None:
            continue
        declared = None if how.style else _part_type(how)
        for key, field in _pairs(name, value, how):
            parts.append((key, _part(None, field, declared, how)))
    return parts


def urlencoded(body: Any, encoding: Mapping[str, Encoding] | None = None) -> Fields:
    fields: Fields = {}
    for name, value in form_members(body).items():
        if value is None:
            continue
        for key, field in _pairs(name, value, (encoding or {}).get(name, _NONE)):
            _add(fields, key, field)
    return fields


__all__ = ["Encoding", "form_members", "multipart", "text", "urlencoded"]
