"""A multipart part carries what its `encoding` declares: its `contentType` and the headers
whose value the spec fixes (`const`, one `enum` value, a `default`), asserted on the bytes a
real server on 127.0.0.1 received from the generated client."""

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
                  X-Free: {schema: {type: string}}
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


def test_part_headers_and_content_type_on_the_wire(docs: Any, tmp_path: Path) -> None:
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(b"%PDF-1.7")
    script = ScriptServer()
    script.on("POST", "/documents", Reply(204))
    with serving(script) as server, docs.Client(base_url=server.url) as client:
        client.documents.upload(body={"file": scan, "note": "signed"})
    (sent,) = script.requests
    boundary = re.search(r"boundary=(\S+)", sent.headers["content-type"])
    assert boundary is not None
    parts = sent.body.split(b"--" + boundary.group(1).encode())
    assert parts[1:-1] == [
        b'\r\nContent-Disposition: form-data; name="file"; filename="scan.pdf"\r\n'
        b"X-Checksum-Algorithm: sha256\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\r\n",
        b'\r\nContent-Disposition: form-data; name="note"\r\nX-Note-Version: 2\r\n\r\nsigned\r\n',
    ]
    assert b"X-Free" not in sent.body  # a header without a value to send is not made up
