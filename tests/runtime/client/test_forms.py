"""Form bodies: which members are fields and which are files, and how a value is written."""

from __future__ import annotations

import datetime
import enum
import hashlib
import io
import tracemalloc
import urllib.parse
from pathlib import Path

import httpx
import pydantic
import pytest

from templates.client.runtime import RequestOptions, SyncAPIClient
from templates.client.runtime._forms import DiskFile, Encoding, multipart, text, urlencoded

from .fakes import Reply, ScriptServer

DEEP = Encoding("deepObject", True)


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


def test_deep_object_properties_as_stripe_reads_them() -> None:
    body = {
        "email": "a@b.c",
        "address": {"city": "Paris", "line1": "1 rue X"},
        "metadata": {"order": "42", "note": "a b"},
        "expand": ["default_source", "sources"],
        "invoice_settings": {"custom_fields": [{"name": "PO", "value": "7"}], "footer": None},
        "preferred_locales": [],
        "tax_exempt": "",
    }
    encoding = {k: DEEP for k in ("address", "metadata", "expand", "invoice_settings")}
    encoding["preferred_locales"] = DEEP
    assert urlencoded(body, encoding) == {
        "email": "a@b.c",
        "address[city]": "Paris",
        "address[line1]": "1 rue X",
        "metadata[order]": "42",
        "metadata[note]": "a b",
        "expand[0]": "default_source",
        "expand[1]": "sources",
        "invoice_settings[custom_fields][0][name]": "PO",
        "invoice_settings[custom_fields][0][value]": "7",
        "tax_exempt": "",
    }
    # a string member of an object|"" union (Stripe's "unset") is one field
    assert urlencoded({"metadata": ""}, {"metadata": DEEP}) == {"metadata": ""}


class Address(pydantic.BaseModel):
    postal_code: str = pydantic.Field(alias="postalCode")
    city: str | None = None


def test_a_nested_model_is_written_by_its_wire_names() -> None:
    address = Address.model_validate({"postalCode": "75001"})  # `city` unset: left out
    assert urlencoded({"address": address}, {"address": DEEP}) == {"address[postalCode]": "75001"}
    assert urlencoded({"address": address}) == {"address": '{"postalCode":"75001"}'}


def test_form_style_and_the_defaults() -> None:
    body = {"tags": ["a", "b"], "point": {"x": 1, "y": 2}}
    assert urlencoded(body, {"tags": Encoding("form", False)}) == {
        "tags": "a,b",
        "point": '{"x":1,"y":2}',  # no encoding: an object is JSON text
    }
    assert urlencoded(body, {"tags": Encoding("form", True)})["tags"] == ["a", "b"]
    assert urlencoded(body, {"point": Encoding("form", True)}) == {
        "tags": ["a", "b"],
        "x": "1",
        "y": "2",
    }
    assert urlencoded(body, {"tags": Encoding("pipeDelimited", False)})["tags"] == "a|b"


def test_multipart_writes_styles_part_types_and_file_names(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(b"%PDF")
    opened = (tmp_path / "notes.txt").open("wb+")
    opened.write(b"notes")
    opened.seek(0)
    parts = multipart(
        {
            "file": path,
            "other": opened,
            "purpose": "dispute_evidence",
            "file_link_data": {"create": True, "metadata": {"k": "v"}},
            "meta": {"a": 1},
        },
        {
            "file_link_data": DEEP,
            "meta": Encoding(content_type="application/json"),
            "file": Encoding(content_type="application/pdf"),
        },
    )
    streamed = [part for _, (_, part, *_) in parts if isinstance(part, DiskFile)]
    assert len(streamed) == 2  # both files are streamed from disk, not read here
    parts = [(n, (f, c.read() if isinstance(c, DiskFile) else c, *r)) for n, (f, c, *r) in parts]
    opened.close()
    assert parts == [
        ("file", ("scan.pdf", b"%PDF", "application/pdf")),
        ("other", ("notes.txt", b"notes")),
        ("purpose", (None, "dispute_evidence")),
        ("file_link_data[create]", (None, "true")),
        ("file_link_data[metadata][k]", (None, "v")),
        ("meta", (None, '{"a":1}', "application/json")),
    ]


def test_wire_bytes_of_a_stripe_form_on_a_real_server(server: ScriptServer) -> None:
    server.on("POST", "/v1/customers", Reply(200, json={"id": "cus_1"}))
    client = SyncAPIClient(server.url)
    client.request(
        RequestOptions(
            "POST",
            "/v1/customers",
            data={
                "address": {"city": "Paris"},
                "expand": ["default_source"],
                "metadata": {"key": "value"},
            },
            encoding={"address": DEEP, "expand": DEEP, "metadata": DEEP},
        )
    )
    (sent,) = server.requests
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert sent.body == (
        b"address%5Bcity%5D=Paris&expand%5B0%5D=default_source&metadata%5Bkey%5D=value"
    )
    assert urllib.parse.unquote(sent.body.decode()) == (
        "address[city]=Paris&expand[0]=default_source&metadata[key]=value"
    )


class Digesting(httpx.BaseTransport):
    """Reads each multipart upload of one file chunk by chunk, keeping only the digest of the
    file's bytes (what a server streaming an upload to disk holds). The first attempt is
    answered 503, the next 200."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)  # not a buffered body
        boundary = request.headers["content-type"].split("boundary=")[1]
        tail = len(f"\r\n--{boundary}--\r\n")
        digest, size, pending = hashlib.sha256(), 0, b""
        head: bytes | None = b""
        for chunk in request.stream:
            size += len(chunk)
            if head is not None:  # the part's headers, up to the blank line
                head += chunk
                if b"\r\n\r\n" not in head:
                    continue
                chunk, head = head.split(b"\r\n\r\n", 1)[1], None
            pending += chunk
            digest.update(pending[:-tail])
            pending = pending[-tail:]
        self.attempts.append((digest.hexdigest(), size, request.headers.get("content-length")))
        return httpx.Response(503 if len(self.attempts) == 1 else 200, json={})


def test_a_large_file_is_streamed_from_disk_on_every_attempt(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    block = bytes(range(256)) * 4096  # 1 MiB
    with big.open("wb") as out:
        for _ in range(8):
            out.write(block)
    expected = hashlib.sha256(big.read_bytes()).hexdigest()  # before tracing: the test's copy
    transport = Digesting()
    client = SyncAPIClient("http://uploads.test", transport=transport, sleep=lambda _: None)
    tracemalloc.start()
    try:
        client.request(RequestOptions("POST", "/files", files={"file": big}, idempotency_key="k"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes for an 8 MiB upload"
    assert len(transport.attempts) == 2  # retried (the key makes it safe): sent again whole
    for digest, size, length in transport.attempts:
        assert digest == expected and length == str(size)
