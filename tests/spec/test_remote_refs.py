"""Remote `$ref`s, against a real HTTP server on 127.0.0.1: refused unless allowed, fetched
with a timeout and a size cap, cached by URL so a second run makes no request."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support import models_text

ROOT = Path(__file__).resolve().parents[2]

COMMON = b"""\
parameters:
  Limit:
    name: limit
    in: query
    schema: {type: integer}
  Broken:
    $ref: "#/parameters/Nowhere"
schemas:
  Pet:
    type: object
    properties:
      name: {type: string}
  Count: {type: integer}
"""


class _Server:
    """Serves `common` (COMMON unless a test changes it) at /common.yaml with an ETag of its
    text (a 304 to a matching If-None-Match; `fail_with`'s status while it is set), 4 KB at /big.yaml, and
    nothing for 5 s at /slow.yaml; counts the requests by path and keeps the If-None-Match
    headers it was sent."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.if_none_match: list[str] = []
        self.common = COMMON
        self.fail_with: int | None = None
        self.stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits[self.path] += 1
                etag = f'"{hashlib.sha256(outer.common).hexdigest()[:16]}"'
                asked = self.headers.get("If-None-Match")
                if asked is not None:
                    outer.if_none_match.append(asked)
                if outer.fail_with is not None:
                    self.send_error(outer.fail_with)
                    return
                if self.path == "/common.yaml" and asked == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                if self.path == "/slow.yaml":
                    outer.stop.wait(5)  # bounded: the fetch gives up long before
                    body = COMMON
                elif self.path == "/big.yaml":
                    body = b"# " + b"x" * 4096 + b"\n" + COMMON
                elif self.path == "/common.yaml":
                    body = outer.common
                else:
                    self.send_error(404)
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/yaml")
                    if self.path == "/common.yaml":
                        self.send_header("ETag", etag)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def server() -> Iterator[_Server]:
    with _Server() as running:
        yield running


def spec_text(base: str, file: str = "common.yaml", parameter: str = "Limit") -> str:
    return f"""\
openapi: 3.0.3
info: {{title: Remote, version: "1"}}
paths:
  /pets:
    get:
      parameters:
        - $ref: "{base}/{file}#/parameters/{parameter}"
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Pets"}}
components:
  schemas:
    Pets:
      type: array
      items: {{$ref: "{base}/{file}#/schemas/Pet"}}
"""


def apiforge(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "APIFORGE_CACHE_DIR": str(tmp_path / "cache"),
            "APIFORGE_ALLOW_REMOTE_REFS": "",
            **(env or {}),
        },
        timeout=300,
    )


def assert_clear_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_refused_unless_allowed_with_the_way_to_allow(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    proc = apiforge(tmp_path, "inspect", str(spec))
    assert_clear_error(proc, f"{spec}:7:", "is not followed", "--allow-remote-refs")
    assert server.hits == Counter()  # not even one request


def test_fetched_once_then_read_from_the_cache(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    out = tmp_path / "out"
    first = apiforge(tmp_path, "generate", "--allow-remote-refs", str(spec), "-o", str(out))
    assert first.returncode == 0, first.stderr
    assert server.hits == Counter({"/common.yaml": 1})
    models = models_text(out / "client")
    assert "class Pet(BaseModel):" in models and "name: str | None" in models
    client = "".join(p.read_text() for p in sorted((out / "client").glob("*/resources/*.py")))
    assert "limit: int | None" in client  # the remote parameter reached the client
    # the setting, instead of the flag; the cache answers: no request at all
    again = apiforge(tmp_path, "inspect", str(spec), env={"APIFORGE_ALLOW_REMOTE_REFS": "1"})
    assert again.returncode == 0, again.stderr
    assert "GET /pets" in again.stdout
    assert server.hits == Counter({"/common.yaml": 1})


def test_a_defect_in_a_remote_document_names_its_url_and_line(
    server: _Server, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url, parameter="Broken"))
    proc = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec))
    assert_clear_error(proc, f"{server.url}/common.yaml:7:", "#/parameters/Nowhere")


def test_a_too_large_answer_is_a_clear_error(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url, file="big.yaml"))
    out = tmp_path / "out"
    proc = apiforge(
        tmp_path,
        "generate",
        "--allow-remote-refs",
        str(spec),
        "-o",
        str(out),
        env={"APIFORGE_REMOTE_MAX_BYTES": "2000"},
    )
    assert_clear_error(proc, f"{spec}:7:", "over the 2,000 byte limit", "APIFORGE_REMOTE_MAX_BYTES")
    assert not out.exists()
    assert server.hits == Counter({"/big.yaml": 1})


def test_a_slow_answer_is_a_clear_error(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url, file="slow.yaml"))
    proc = apiforge(
        tmp_path,
        "inspect",
        "--allow-remote-refs",
        str(spec),
        env={"APIFORGE_REMOTE_TIMEOUT": "0.5"},
    )
    assert_clear_error(proc, f"{spec}:7:", "within 0.5 s", "APIFORGE_REMOTE_TIMEOUT")
    assert server.hits == Counter({"/slow.yaml": 1})


def test_nothing_is_cached_from_a_failed_fetch(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url, file="missing.yaml"))
    for _ in range(2):
        proc = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec))
        assert_clear_error(proc, f"{spec}:7:", "HTTP 404")
    assert server.hits == Counter({"/missing.yaml": 2})


def test_a_default_is_checked_against_a_remote_schema(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    text = spec_text(server.url) + (
        "    Page:\n"
        "      type: object\n"
        "      properties:\n"
        "        size:\n"
        f'          allOf: [{{$ref: "{server.url}/common.yaml#/schemas/Count"}}]\n'
        "          default: many\n"
    )
    spec.write_text(text)
    proc = apiforge(tmp_path, "inspect", "--validate", "--allow-remote-refs", str(spec))
    assert_clear_error(proc, f"{spec}:24:", "default: 'many' is not of type 'integer'")


# The second version of the remote document: the parameter the spec uses now points nowhere,
# so a run that reads it stops at its line — proof of which version a run used.
COMMON_V2 = COMMON.replace(
    b"    name: limit\n    in: query\n    schema: {type: integer}\n",
    b"    $ref: '#/parameters/Gone'\n",
)


def test_a_stale_copy_is_asked_for_again_with_its_etag(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    first = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec))
    assert first.returncode == 0, first.stderr
    young = {"APIFORGE_REMOTE_MAX_AGE": "3600"}  # the copy is seconds old: kept
    assert (
        apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec), env=young).returncode == 0
    )
    assert server.hits == Counter({"/common.yaml": 1}) and server.if_none_match == []
    old = {"APIFORGE_REMOTE_MAX_AGE": "0.001"}  # older than that: asked again, conditionally
    again = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec), env=old)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert server.hits == Counter({"/common.yaml": 2})
    assert len(server.if_none_match) == 1 and server.if_none_match[0].startswith('"')
    # the document changes: the next stale run gets the new version (a 200, a new ETag)
    server.common = COMMON_V2
    changed = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec), env=old)
    assert_clear_error(changed, f"{server.url}/common.yaml:3:", "#/parameters/Gone")
    assert server.hits == Counter({"/common.yaml": 3})


def test_refresh_fetches_again_and_implies_allow(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    assert apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec)).returncode == 0
    server.common = COMMON_V2
    kept = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec))
    assert kept.returncode == 0, kept.stderr  # no max age: the kept copy, no request
    assert server.hits == Counter({"/common.yaml": 1})
    refreshed = apiforge(tmp_path, "inspect", "--refresh-remote-refs", str(spec))
    assert_clear_error(refreshed, f"{server.url}/common.yaml:3:", "#/parameters/Gone")
    assert server.hits == Counter({"/common.yaml": 2})


def test_an_unreachable_host_keeps_the_copy_with_a_warning(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    first = apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec))
    assert first.returncode == 0, first.stderr
    server.fail_with = 503
    proc = apiforge(tmp_path, "inspect", str(spec), env={"APIFORGE_REFRESH_REMOTE_REFS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == first.stdout
    assert f"warning: {spec}:7:" in proc.stderr
    assert "HTTP 503 from" in proc.stderr and "using the copy fetched" in proc.stderr
    assert server.hits == Counter({"/common.yaml": 2})


def test_a_document_gone_on_refresh_is_an_error(server: _Server, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(server.url))
    assert apiforge(tmp_path, "inspect", "--allow-remote-refs", str(spec)).returncode == 0
    server.fail_with = 404
    proc = apiforge(tmp_path, "inspect", "--refresh-remote-refs", str(spec))
    assert_clear_error(proc, f"{spec}:7:", "HTTP 404")
    assert server.hits == Counter({"/common.yaml": 2})
