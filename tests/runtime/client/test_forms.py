"""Form bodies: which members are fields and which are files, and how a value is written."""

from __future__ import annotations

import datetime
import enum
import io

import pydantic
import pytest

from templates.client.runtime._forms import multipart, text, urlencoded


class Color(enum.Enum):
    RED = "red"


class Upload(pydantic.BaseModel):
    file_name: str = pydantic.Field(alias="fileName")
    data: bytes
    meta: dict[str, int] | None = None


def test_values_as_text() -> None:
    assert [text(v) for v in (True, 3, 1.5, Color.RED, "x y")] == ["true", "3", "1.5", "red", "x y"]
    assert (
        text(datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC))
        == "2026-01-02T03:04:00+00:00"
    )
    assert text({"a": [1, None]}) == '{"a":[1,null]}'


def test_multipart_parts() -> None:
    stream = io.BytesIO(b"read once")
    parts = multipart(
        {"a": "1", "f": stream, "g": [b"x", ("g.txt", b"y", "text/plain")], "n": None}
    )
    assert parts == [
        ("a", (None, "1")),
        ("f", ("f", b"read once")),
        ("g", ("g", b"x")),
        ("g", ("g.txt", b"y", "text/plain")),
    ]
    model = Upload(fileName="a.bin", data=b"\x00")
    assert multipart(model) == [("fileName", (None, "a.bin")), ("data", ("data", b"\x00"))]
    with pytest.raises(TypeError, match="a model or a mapping"):
        multipart([1, 2])


def test_urlencoded_fields() -> None:
    assert urlencoded({"q": "x", "k": ["a", "b"], "on": True, "none": None}) == {
        "q": "x",
        "k": ["a", "b"],
        "on": "true",
    }
