"""Form bodies: `multipart/form-data` and `application/x-www-form-urlencoded`.

Public API:

- `multipart(body) -> parts`: a model (dumped by alias, unset fields left out) or a mapping,
  as the parts httpx sends (`files=`): form fields are parts without a file name (so a body
  without any file is still `multipart/form-data`), files are parts with one. A file is `bytes`, a binary file object, or
  a tuple `(filename, content)` / `(filename, content, content_type)` (/ `+ headers`) — so a
  file's name and content type can be set; anything else is a field: a string as it is,
  `true`/`false`, a number, an enum's value, a date-time in ISO 8601, an object as JSON; a list
  is one part per item (fields or files). None is left out. File objects are read once, so
  every attempt sends the same bytes.
- `urlencoded(body) -> fields`: the same for a URL-encoded form (no files; a list repeats
  the field).
"""

from __future__ import annotations

import datetime
import enum
import json
from collections.abc import Mapping
from typing import Any

import pydantic

Fields = dict[str, str | list[str]]
Files = list[tuple[str, Any]]


def _members(body: Any) -> Mapping[str, Any]:
    if isinstance(body, pydantic.BaseModel):
        dumped: dict[str, Any] = body.model_dump(by_alias=True, exclude_unset=True)
        return dumped
    if isinstance(body, Mapping):
        return body
    raise TypeError(f"a form body is a model or a mapping, not {type(body).__name__}")


def _is_file(value: Any) -> bool:
    if isinstance(value, bytes | bytearray | memoryview):
        return True
    if isinstance(value, tuple):
        return 2 <= len(value) <= 4 and _is_file(value[1])
    return callable(getattr(value, "read", None))


def _read(content: Any) -> bytes:
    if isinstance(content, bytes | bytearray | memoryview):
        return bytes(content)
    data = content.read()
    return data.encode() if isinstance(data, str) else bytes(data)


def _file(name: str, value: Any) -> tuple[str, Any]:
    if isinstance(value, tuple):
        return name, (value[0], _read(value[1]), *value[2:])
    return name, (name, _read(value))  # a bare file: named after its field


def text(value: Any) -> str:
    """One form value as text (see the module docstring)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return text(value.value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, pydantic.BaseModel | Mapping | list | tuple):
        dumped = pydantic.TypeAdapter(Any).dump_python(
            value, mode="json", by_alias=True, exclude_unset=True
        )
        return json.dumps(dumped, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _add(fields: Fields, name: str, value: str) -> None:
    present = fields.get(name)
    if present is None:
        fields[name] = value
    elif isinstance(present, list):
        present.append(value)
    else:
        fields[name] = [present, value]


def multipart(body: Any) -> Files:
    parts: Files = []
    for name, value in _members(body).items():
        for item in value if isinstance(value, list) else [value]:
            if item is None:
                continue
            parts.append(_file(name, item) if _is_file(item) else (name, (None, text(item))))
    return parts


def urlencoded(body: Any) -> Fields:
    fields: Fields = {}
    for name, value in _members(body).items():
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                _add(fields, name, text(item))
    return fields


__all__ = ["multipart", "text", "urlencoded"]
