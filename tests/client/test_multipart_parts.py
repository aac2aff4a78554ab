"""A multipart part carries what its `encoding` declares: its `contentType` and the headers
whose value the spec fixes (`const`, one `enum` value, a `default`), and the declared headers
without one when the caller gives them (`part_headers=`; a required one is a generation
warning), asserted on the bytes a real server on 127.0.0.1 received from the generated
client."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import Generated, generate
from tests.runtime.client.fakes import Reply, ScriptServer, serving

SPEC = """
openapi: 3.1.0
info: {title: Docs, version: 1.0.0}
paths:
  /documents:
    post:
      operationId: uploadDocument
      tags: [documents]
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [file]
              properties:
                file: {type: string, format: binary}
                note: {type: string}
            encoding:
              file:
                contentType: application/pdf
                headers:
                  X-Checksum-Algorithm: {schema: {type: string, const: sha256}}
                  X-Free: {schema: {type: string}, required: true}
                  X-Trace: {schema: {type: string}}
              note:
                headers:
                  X-Note-Version: {schema: {type: integer, enum: [2]}}
      responses: {'204': {description: stored}}
"""


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("docs")
    spec = base / "docs.yaml"
    spec.write_text(SPEC)
    generated: Generated = generate(spec, base / "out")
    sys.path.insert(0, str(generated.out))
    try:
        yield __import__(generated.package)
    finally:
        sys.path.remove(str(generated.out))


def _parts(body: bytes, content_type: str) -> list[bytes]:
    boundary = re.search(r"boundary=(\S+)", content_type)
    assert boundary is not None
    return body.split(b"--" + boundary.group(1).encode())[1:-1]


def test_part_headers_and_content_type_on_the_wire(docs: Any, tmp_path: Path) -> None:
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(b"%PDF-1.7")
    script = ScriptServer()
    script.on("POST", "/documents", Reply(204))
    with serving(script) as server, docs.Client(base_url=server.url) as client:
        client.documents.upload(body={"file": scan, "note": "signed"})
    (sent,) = script.requests
    assert _parts(sent.body, sent.headers["content-type"]) == [
        b'\r\nContent-Disposition: form-data; name="file"; filename="scan.pdf"\r\n'
        b"X-Checksum-Algorithm: sha256\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\r\n",
        b'\r\nContent-Disposition: form-data; name="note"\r\nX-Note-Version: 2\r\n\r\nsigned\r\n',
    ]
    assert b"X-Free" not in sent.body  # a header without a value to send is not made up


def test_headers_without_a_value_are_the_callers(docs: Any, tmp_path: Path) -> None:
    script = ScriptServer()
    script.on("POST", "/documents", Reply(204), Reply(204))
    with serving(script) as server, docs.Client(base_url=server.url) as client:
        client.documents.upload(
            file=("a.pdf", b"%PDF"),
            note="signed",
            part_headers={
                "file": {"X-Free": "abc", "X-Trace": "t1"},
                "note": {"X-Note-Version": "3"},
            },
        )
        client.documents.upload(  # a file tuple's own headers win over the caller's for it
            file=("b.pdf", b"%PDF", None, {"X-Free": "own"}),
            part_headers={"file": {"X-Free": "given"}},
        )
    first, second = (_parts(r.body, r.headers["content-type"]) for r in script.requests)
    assert first == [
        b'\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
        b"X-Checksum-Algorithm: sha256\r\nX-Free: abc\r\nX-Trace: t1\r\n"
        b"Content-Type: application/pdf\r\n\r\n%PDF\r\n",
        # the caller's value wins over the declared one
        b'\r\nContent-Disposition: form-data; name="note"\r\nX-Note-Version: 3\r\n\r\nsigned\r\n',
    ]
    assert second == [
        b'\r\nContent-Disposition: form-data; name="file"; filename="b.pdf"\r\n'
        b"X-Checksum-Algorithm: sha256\r\nX-Free: own\r\n"
        b"Content-Type: application/pdf\r\n\r\n%PDF\r\n",
    ]


def test_a_required_header_without_a_value_is_a_located_warning(tmp_path: Path) -> None:
    from generator.client.gaps import client_gaps
    from generator.spec import load_spec

    spec = tmp_path / "docs.yaml"
    spec.write_text(SPEC)
    gaps = client_gaps(load_spec(str(spec)).api)
    (gap,) = [g for g in gaps if "part header" in g.what]  # X-Trace is optional: no warning
    assert gap.where.pointer == (
        "/paths/~1documents/post/requestBody/content/multipart~1form-data/encoding/file"
    )
    assert gap.subject == "POST /documents"
    assert "`X-Free` of multipart field `file` is required" in gap.what
    assert 'part_headers={"file": {"X-Free": ...}}' in gap.what
