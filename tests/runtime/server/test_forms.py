"""Form bodies (runtime/forms.py): read the way browsers and httpx write them, in time linear
in their size, and refused past the module's bounds."""

from __future__ import annotations

import contextlib
import time

import httpx
import pytest

from tests.runtime.server.conftest import RuntimeModules


def encoded(data: dict[str, object], files: dict[str, object] | None = None) -> tuple[str, bytes]:
    """(Content-Type, body) of a form as httpx writes it."""
    request = httpx.Request("POST", "http://127.0.0.1/", data=data, files=files)
    return request.headers["content-type"], request.read()


def fields(rt: RuntimeModules, content_type: str, body: bytes) -> list[tuple[str, str | bytes]]:
    media = content_type.split(";", 1)[0].strip().lower()
    result: list[tuple[str, str | bytes]] = rt.forms._form_fields(media, content_type, body)
    return result


def test_multipart_forms_read_as_httpx_writes_them(rt: RuntimeModules) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\xff\r\n--not-the-boundary\r\n"
    content_type, body = encoded(
        {"text": 'h\u00e9 "quoted"\r\nline', "tags": ["a", "b"]},
        {"doc": ('a "b".png', png, "image/png")},
    )
    assert fields(rt, content_type, body) == [
        ("text", 'h\u00e9 "quoted"\r\nline'),
        ("tags", "a"),
        ("tags", "b"),
        ("doc", png),  # a file part is its bytes, CRLFs and dashes included
    ]


def test_multipart_details(rt: RuntimeModules) -> None:
    content_type = 'multipart/form-data; charset=utf-8; boundary="a b"'
    body = (
        b"preamble\r\n--a b\r\n"
        b'Content-Disposition: form-data; name="q\\"x"; filename*=UTF-8\'\'r%C3%A9.txt\r\n'
        b"Content-Type: text/plain\r\n\r\nfile\r\n"
        b"--a b\r\nContent-Type: text/plain\r\n\r\nno name: skipped\r\n"
        b"--a b\r\ncontent-disposition: form-data;name=plain\r\n\r\n\r\n"
        b"--a b--\r\nepilogue"
    )
    assert fields(rt, content_type, body) == [('q"x', b"file"), ("plain", "")]


@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        ("multipart/form-data", b"--x--", "boundary of 1 to 70"),
        ("multipart/form-data; boundary=x", b"no delimiter", "not in its body"),
        ("multipart/form-data; boundary=x", b"--x\r\n\r\nunterminated", "closing boundary"),
        ("multipart/form-data; boundary=x", b"--x", "closing boundary"),
        ("multipart/form-data; boundary=x", b"--x\r\nA: b" + b"c" * 9000, "blank line"),
        (
            "multipart/form-data; boundary=x",
            b"--x\r\nContent-Disposition: form-data" + b"; a=b" * 17 + b"\r\n\r\nv\r\n--x--",
            "at most 16 parameters",
        ),
        ("multipart/form-data; boundary=x" + "; a=b" * 16, b"--x--", "at most 16 parameters"),
        (
            "multipart/form-data; boundary=x",
            b"--x\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n" * 1001 + b"--x--",
            "at most 1000 fields",
        ),
        ("application/x-www-form-urlencoded", b"&".join([b"a=1"] * 1001), "at most 1000 fields"),
    ],
)
def test_forms_past_the_bounds_are_refused(
    rt: RuntimeModules, content_type: str, body: bytes, message: str
) -> None:
    with pytest.raises(rt.forms.FormRefused, match=message):
        fields(rt, content_type, body)


def test_reading_a_form_takes_time_linear_in_its_size(rt: RuntimeModules) -> None:
    """Each shape that made the standard library's parser quadratic (78k Content-Disposition
    parameters: 30 s), at 10x the size, costs at most ~10x (20x with noise) the time."""

    def took(content_type: str, body: bytes) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            with contextlib.suppress(rt.forms.FormRefused):
                fields(rt, content_type, body)
            best = min(best, time.perf_counter() - started)
        return best

    multipart = "multipart/form-data; boundary=B"
    shapes = {
        "parameters": lambda n: (
            b'--B\r\nContent-Disposition: form-data; name="a"'
            + b'; p="v"' * n
            + b"\r\n\r\nx\r\n--B--"
        ),
        "unclosed quotes": lambda n: (
            b'--B\r\nContent-Disposition: form-data; name="a'
            + b"; a=\\" * n
            + b"\r\n\r\nx\r\n--B--"
        ),
        "parts": lambda n: b"--B\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n" * n,
        "header lines": lambda n: b"--B\r\n" + b"X-A: b\r\n" * n + b"\r\nx\r\n--B--",
    }
    for name, make in shapes.items():
        small, large = took(multipart, make(8_000)), took(multipart, make(80_000))
        assert large < max(small, 1e-4) * 20, (name, small, large)
        assert large < 0.05, (name, large)
