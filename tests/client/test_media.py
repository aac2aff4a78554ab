"""The client generated from specs/media.yaml against a real server on 127.0.0.1: bytes, a
file streamed to disk, CSV text, Server-Sent Events (sync and async), JSON or events from one
operation; `Accept` says what each operation declares."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import Generated
from tests.runtime.client.fakes import StreamServer, streaming

FILE = bytes(range(256)) * 1024  # 256 KiB
CSV = "id,total\nr1,10\nr2,\u00e9\n"


@pytest.fixture(scope="module")
def media(generated: dict[str, Generated]) -> Iterator[Any]:
    out = generated["media"]
    sys.path.insert(0, str(out.out))
    try:
        yield __import__(out.package)
    finally:
        sys.path.remove(str(out.out))


def _send(h: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes) -> None:
    h.send_response(status)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def content(h: BaseHTTPRequestHandler) -> None:
    if h.path.endswith("/missing/content"):
        problem = {"type": "about:blank", "title": "Not Found", "status": 404}
        _send(h, 404, "application/problem+json", json.dumps(problem).encode())
        return
    _send(h, 200, "application/octet-stream", FILE)


def export(h: BaseHTTPRequestHandler) -> None:
    _send(h, 200, "text/csv; charset=utf-8", CSV.encode())


def events(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Connection", "close")
    h.end_headers()
    for n, kind in enumerate(("file.created", "file.deleted", "file.archived")):
        h.wfile.write(f'id: {n}\ndata: {{"id": "e{n}", "type": "{kind}"}}\n\n'.encode())
        h.wfile.flush()


def completions(h: BaseHTTPRequestHandler) -> None:
    if h.headers.get("accept", "").startswith("text/event-stream"):
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        for i, word in enumerate(("Hello", " world")):
            h.wfile.write(f'data: {{"index": {i}, "delta": "{word}"}}\n\n'.encode())
        h.wfile.write(b"data: [DONE]\n\n")
        return
    _send(h, 200, "application/json", b'{"id": "c1", "text": "Hello world"}')


@pytest.fixture
def server() -> Iterator[StreamServer]:
    routes = {
        "/v1/files/f1/content": content,
        "/v1/files/missing/content": content,
        "/v1/reports/r1/export": export,
        "/v1/events": events,
        "/v1/completions": completions,
    }
    with streaming(routes) as running:
        yield running


def test_bytes_a_streamed_file_and_text(media: Any, server: StreamServer, tmp_path: Path) -> None:
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        assert client.files.download(file_id="f1") == FILE
        with client.files.download_stream(file_id="f1") as stream:
            assert isinstance(stream, media.BinaryStream)
            assert stream.write_to(tmp_path / "f1.bin") == len(FILE)
        with pytest.raises(media.NotFound):
            client.files.download_stream(file_id="missing")
        assert client.reports.export(report_id="r1") == CSV
    assert (tmp_path / "f1.bin").read_bytes() == FILE
    accepts = [r.headers["accept"] for r in server.requests]
    assert accepts == [
        "application/octet-stream, application/problem+json",
        "application/octet-stream, application/problem+json",
        "application/octet-stream, application/problem+json",
        "text/csv, application/json, application/problem+json",
    ]


def test_events_sync_and_async(media: Any, server: StreamServer) -> None:
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        with client.events.stream() as stream:
            seen = [(e.id, e.data.type) for e in stream]
        assert seen == [("0", "file.created"), ("1", "file.deleted"), ("2", "file.archived")]
        assert isinstance(stream, media.EventStream)

    async def main() -> list[str]:
        async with media.AsyncClient(base_url=server.url, bearer_auth="t") as client:
            stream = await client.events.stream(last_event_id="0")
            return [event.data.id async for event in stream]

    assert asyncio.run(main()) == ["e0", "e1", "e2"]
    assert server.requests[-1].headers["last-event-id"] == "0"
    assert server.requests[-1].headers["accept"] == "text/event-stream, application/problem+json"


def test_one_operation_answering_json_or_events(media: Any, server: StreamServer) -> None:
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        whole = client.completions.create(body={"prompt": "hi"})
        chunks = client.completions.create_stream(body={"prompt": "hi", "stream": True})
        text = "".join(event.data.delta for event in chunks)
    assert whole.text == text == "Hello world"
    json_call, events_call = server.requests
    assert json_call.headers["accept"] == "application/json, application/problem+json"
    assert events_call.headers["accept"] == "text/event-stream, application/problem+json"
    assert json.loads(events_call.body) == {"prompt": "hi", "stream": True}


# --- servers with variables ---------------------------------------------------------------------


def test_servers_and_their_variables(media: Any, server: StreamServer) -> None:
    def base(**kw: Any) -> str:
        with media.Client(**kw) as client:
            return str(client.base_url)

    assert base() == "https://eu.media.example.com/v1" == media._client.DEFAULT_BASE_URL
    assert base(region="us", version="v2") == "https://us.media.example.com/v2"
    assert base(server=1) == "http://localhost:8080"
    assert base(base_url="https://proxy.test/media", region="us") == "https://proxy.test/media"
    with pytest.raises(ValueError, match="'mars' is not a value of the server variable `region`"):
        media.Client(region="mars")
    with pytest.raises(ValueError, match="has no variable port"):
        media.Client(port="9000")  # the first server has no port
    with pytest.raises(ValueError, match="server=2: the spec lists 2 server"):
        media.AsyncClient(server=2)
    # a variable reaches the wire: the local server on the test server's port
    port = server.url.rsplit(":", 1)[1]
    with media.Client(server=1, port=port, bearer_auth="t") as client:
        assert client.reports.export(report_id="r1") == CSV
    assert server.requests[-1].headers["host"] == f"localhost:{port}"


def test_a_server_the_client_cannot_use_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from generator.client.servers import plan_servers
    from generator.spec import load_spec

    spec = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "servers": [
            {"url": "/api"},
            {"url": "https://{tenant}.example.com", "variables": {"tenant": {"default": "a"}}},
            {"url": "https://{undeclared}.example.com"},
        ],
        "paths": {},
    }
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(spec))
    api = load_spec(str(path)).api
    with caplog.at_level("WARNING", logger="apiforge"):
        plan = plan_servers(api, ["base_url", "server"])
    assert plan.default_url == "https://a.example.com"
    assert [s.template for s in plan.servers] == ["https://{tenant}.example.com"]
    assert [(v.argument, v.type) for v in plan.variables] == [("tenant", "str")]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "warning: servers[0] '/api' is not an absolute http(s) URL the client can use; "
        "the default base URL is 'https://a.example.com'",
        "warning: servers[2] 'https://{undeclared}.example.com' is not an absolute http(s) "
        "URL the client can use",
    ]


# --- deprecations, errors, logs -----------------------------------------------------------------


def test_deprecated_operations_and_parameters_warn_at_the_callers_line(
    media: Any, server: StreamServer
) -> None:
    def legacy(h: BaseHTTPRequestHandler) -> None:
        _send(h, 200, "application/json", b"[]")

    def files(h: BaseHTTPRequestHandler) -> None:
        _send(h, 200, "application/json", b'{"items": [], "total": 0}')

    server.routes["/v1/legacy/files"] = legacy
    server.routes["/v1/files"] = files
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        with pytest.warns(
            DeprecationWarning, match=r"GET /v1/legacy/files \(listLegacyFiles\)"
        ) as op:
            client.files.list_legacy()
        with pytest.warns(DeprecationWarning, match="query parameter `sort` of GET /v1/files"):
            client.files.list(sort="name")
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.files.list(order="-size")  # not deprecated: no warning
    assert op[0].filename == __file__  # the caller's line, not the generated code's


def test_an_error_says_what_the_body_says_and_its_request_id(
    media: Any, server: StreamServer
) -> None:
    def missing(h: BaseHTTPRequestHandler) -> None:
        body = b'{"error": {"code": "no_report", "message": "Report r9 does not exist."}}'
        h.send_response(404)
        h.send_header("Content-Type", "application/json")
        h.send_header("X-Request-Id", "req_7")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    server.routes["/v1/reports/r9/export"] = missing
    with (
        media.Client(base_url=server.url, bearer_auth="t") as client,
        pytest.raises(media.NotFound) as caught,
    ):
        client.reports.export(report_id="r9")
    error = caught.value
    assert str(error) == "HTTP 404: Report r9 does not exist. (request id req_7)"
    assert error.request_id == "req_7"
    assert isinstance(error.parsed, media.models.Error)
    assert error.parsed.error.code == "no_report"


def test_requests_are_logged_at_debug_without_secrets(
    media: Any, server: StreamServer, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    caplog.set_level(logging.DEBUG, logger=media.__name__)
    secret = "bt-secret-51d0"
    with media.Client(base_url=server.url, bearer_auth=secret) as client:
        client.reports.export(
            report_id="r1", extra_headers={"Cookie": "sid=ck-secret", "X-Trace": "t1"}
        )
    lines = [r.getMessage() for r in caplog.records if r.name == media.__name__]
    assert lines[0].startswith(f"GET {server.url}/v1/reports/r1/export -> 200 in ")
    assert "'authorization': 'REDACTED'" in lines[1] and "'cookie': 'REDACTED'" in lines[1]
    assert "'x-trace': 't1'" in lines[1]
    assert secret not in caplog.text and "ck-secret" not in caplog.text


def test_the_environment_variable_switches_logging_on(
    generated: dict[str, Generated], tmp_path: Path
) -> None:
    import os
    import subprocess

    out = generated["media"]
    script = (
        "import httpx, media_api_client as m\n"
        "t = httpx.MockTransport(lambda r: httpx.Response(200, text='a,b'))\n"
        "c = m.Client(base_url='https://user:pw-secret@api.test', transport=t, bearer_auth='tok-9')\n"
        "c.reports.export(report_id='r1', extra_headers={'X-Api-Token': 'xt-secret'})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(out.out), "MEDIA_API_CLIENT_LOG": "debug"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert (
        "media_api_client DEBUG GET https://user:REDACTED@api.test/v1/reports/r1/export -> 200"
        in done.stderr
    )
    for secret in ("pw-secret", "tok-9", "xt-secret"):
        assert secret not in done.stderr
    quiet = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "MEDIA_API_CLIENT_LOG": ""},
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_an_upload_sends_its_content_type_and_cookie_parameter(
    media: Any, server: StreamServer
) -> None:
    def upload(h: BaseHTTPRequestHandler) -> None:
        _send(h, 200, "application/json", b'{"id": "f1", "name": "a.bin", "size": 3}')

    server.routes["/v1/files/f1/content"] = upload
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        done = client.files.upload(file_id="f1", body=b"abc", upload_session="s 1;x")
    assert done.size == 3
    sent = server.requests[-1]
    assert (sent.method, sent.body) == ("PUT", b"abc")
    assert sent.headers["content-type"] == "application/octet-stream"
    assert sent.headers["cookie"] == "upload_session=s%201%3Bx"


def _parts(content_type: str, body: bytes) -> list[tuple[str, str | None, str | None, bytes]]:
    """(name, filename, content type, content) of each part of a multipart body."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    parts = []
    for part in message.iter_parts():
        disposition = part.get("content-disposition", "")
        params = dict(part["content-disposition"].params) if disposition else {}
        ctype = part.get("content-type")
        parts.append(
            (
                params["name"],
                params.get("filename"),
                ctype and str(ctype),
                part.get_payload(decode=True),
            )
        )
    return parts


def test_forms_arrive_as_the_server_expects(media: Any, server: StreamServer) -> None:
    def created(h: BaseHTTPRequestHandler) -> None:
        _send(h, 201, "application/json", b'{"id": "f9", "name": "r.csv", "size": 4}')

    def found(h: BaseHTTPRequestHandler) -> None:
        _send(h, 200, "application/json", b'{"items": [], "total": 0}')

    server.routes["/v1/files"] = created
    server.routes["/v1/files/search"] = found
    with media.Client(base_url=server.url, bearer_auth="t") as client:
        model = media.models.FileUpload(
            name="r.csv", size=4, kind="document", tags=["a", "b"], content=b"1,2\n"
        )
        assert client.files.create(body=model).id == "f9"
        client.files.create(
            body={"name": "x", "content": ("x.png", b"\x89PNG", "image/png"), "note": None}
        )
        client.files.search(body=media.models.FileSearch(q="q r", kinds=["a", "b"], archived=False))
    first, second, search = server.requests
    assert first.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert _parts(first.headers["content-type"], first.body) == [
        ("name", None, None, b"r.csv"),
        ("size", None, None, b"4"),
        ("kind", None, None, b"document"),
        ("tags", None, None, b"a"),
        ("tags", None, None, b"b"),
        ("content", "content", "application/octet-stream", b"1,2\n"),
    ]
    assert _parts(second.headers["content-type"], second.body) == [
        ("name", None, None, b"x"),
        ("content", "x.png", "image/png", b"\x89PNG"),
    ]
    assert search.headers["content-type"] == "application/x-www-form-urlencoded"
    assert search.body == b"q=q+r&kinds=a&kinds=b&archived=false"
