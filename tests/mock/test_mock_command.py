"""`apiforge mock SPEC`: one command serves the spec's operations, with the server's patterns,
any credential, `Prefer`, request validation and lists that end; nothing is written where
the user works."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "specs" / "acme.yaml"
PAYMENT = "pay_01HTZ4K5M8N9P0Q1R2S3T4V5W6"

# a small spec of its own: named response examples, page-numbered and cursor lists
SMALL = """\
openapi: 3.1.0
info: {title: Small, version: "1"}
security: [{key: []}]
paths:
  /things:
    get:
      operationId: listThings
      parameters:
        - {name: page, in: query, schema: {type: integer, minimum: 1}}
      responses:
        "200":
          description: a page
          content:
            application/json:
              schema:
                type: object
                required: [items, next_page]
                properties:
                  items: {type: array, items: {$ref: "#/components/schemas/Thing"}}
                  next_page: {type: [integer, "null"]}
              example: {items: [{id: a, name: one}, {id: b, name: two}], next_page: 2}
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string, maxLength: 5}}
      responses:
        "200":
          description: a thing
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
              examples:
                first: {value: {id: a, name: one}}
                second: {value: {id: b, name: two}}
        "404":
          description: no such thing
          content:
            application/problem+json:
              schema: {type: object, properties: {title: {type: string}, status: {type: integer}}}
              example: {type: about:blank, title: Not here, status: 404}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Thing:
      type: object
      required: [id, name]
      properties:
        id: {type: string}
        name: {type: string}
"""


class MockServer:
    def __init__(self, proc: subprocess.Popen[str], url: str, lines: list[str]) -> None:
        self.proc, self.url, self.lines = proc, url, lines


def _start(spec: Path, cwd: Path, cache: Path, timeout: float = 240) -> MockServer:
    env = {**os.environ, "APIFORGE_CACHE_DIR": str(cache)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator.cli", "mock", str(spec), "--port", "0"],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    try:
        first = lines.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        raise AssertionError(f"no banner within {timeout}s: {proc.stderr.read()}") from None  # type: ignore[union-attr]
    match = re.search(r" on (http://\S+): ", first)
    assert match, first
    return MockServer(proc, match.group(1), [first])


def _stop(server: MockServer) -> None:
    server.proc.send_signal(signal.SIGINT)
    try:
        server.proc.wait(20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(5)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def _serving(spec: Path, factory: pytest.TempPathFactory, cache: Path) -> Iterator[MockServer]:
    """A mock server of `spec` started in an empty folder, which must stay empty."""
    work = factory.mktemp("work")
    server = _start(spec, work, cache)
    try:
        yield server
    finally:
        _stop(server)
    assert list(work.iterdir()) == [], "the mock wrote into the folder it was started in"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Iterator[MockServer]:
    specs = tmp_path_factory.mktemp("specs")
    spec = specs / "small.yaml"
    spec.write_text(SMALL, encoding="utf-8")
    yield from _serving(spec, tmp_path_factory, cache)
    assert list(specs.iterdir()) == [spec]


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Iterator[MockServer]:
    yield from _serving(ACME, tmp_path_factory, cache)


def test_a_secured_operation_answers_any_credential_and_401_without_one(small: MockServer) -> None:
    with httpx.Client(base_url=small.url, timeout=10) as http:
        assert http.get("/things").status_code == 401
        for key in ("anything", "another one", "k"):
            answer = http.get("/things", headers={"X-Key": key})
            assert answer.status_code == 200, answer.text
        assert http.get("/things", headers={"X-Key": ""}).status_code == 401


def test_answers_come_from_examples_and_prefer_chooses_another(small: MockServer) -> None:
    key = {"X-Key": "k"}
    with httpx.Client(base_url=small.url, timeout=10, headers=key) as http:
        assert http.get("/things/a").json() == {"id": "a", "name": "one"}
        second = http.get("/things/a", headers={"Prefer": "example=second"})
        assert second.json() == {"id": "b", "name": "two"}
        missing = http.get("/things/a", headers={"Prefer": "code=404"})
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")
        assert missing.json()["title"] == "Not here"
        unknown = http.get("/things/a", headers={"Prefer": "code=418"})
        assert unknown.status_code == 422
        assert "200, 404" in unknown.json()["detail"]
        no_name = http.get("/things/a", headers={"Prefer": "example=third"})
        assert no_name.status_code == 422
        assert "first, second" in no_name.json()["detail"]


def test_requests_are_validated(small: MockServer) -> None:
    with httpx.Client(base_url=small.url, timeout=10, headers={"X-Key": "k"}) as http:
        too_long = http.get("/things/abcdefgh")
        assert too_long.status_code == 422
        assert too_long.json()["errors"][0]["location"][0] == "path"
        assert http.get("/things", params={"page": "zero"}).status_code == 422


def test_a_list_is_a_finite_collection(small: MockServer) -> None:
    with httpx.Client(base_url=small.url, timeout=10, headers={"X-Key": "k"}) as http:
        first = http.get("/things").json()
        assert [t["id"] for t in first["items"]] == ["a", "b"]
        assert http.get("/things", params={"page": 1}).json() == first
        assert http.get("/things", params={"page": 2}).json()["items"] == []


def test_a_port_in_use_is_one_line_and_exit_2(small: MockServer, tmp_path: Path) -> None:
    port = int(small.url.rsplit(":", 1)[1])
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", "mock", str(ACME), "--port", str(port)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in done.stderr


def test_the_generated_client_walks_every_list_to_its_end(
    acme: MockServer, cache: Path, tmp_path: Path
) -> None:
    """Every list method of the acme client, sync and async, against the mock: each ends."""
    made = subprocess.run(
        [sys.executable, "-m", "generator.cli", "client", str(ACME), "-o", str(tmp_path / "c")],
        env={**os.environ, "PYTHONPATH": str(ROOT), "APIFORGE_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert made.returncode == 0, made.stderr
    script = textwrap.dedent(
        """
        import asyncio, inspect, itertools, sys
        sys.path.insert(0, sys.argv[1])
        from acme_payments_api_client import AsyncClient, Client

        def lists(client):
            for name in sorted(dir(client)):
                resource = getattr(client, name)
                if name.startswith("_") or not hasattr(resource, "__dict__"):
                    continue
                for method in sorted(dir(resource)):
                    fn = getattr(resource, method)
                    if (method == "list" or method.startswith("list_")) and callable(fn):
                        yield f"{name}.{method}", fn

        walked = {}
        with Client(base_url=sys.argv[2], bearer_auth="any token") as client:
            for label, fn in lists(client):
                walked[label] = len(list(itertools.islice(fn(), 1000)))

        async def walk_async():
            async with AsyncClient(base_url=sys.argv[2], api_key_auth="any key") as client:
                for label, fn in lists(client):
                    items = [x async for x in fn()]
                    walked["async " + label] = len(items)

        asyncio.run(walk_async())
        for label, count in sorted(walked.items()):
            print(label, count)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "c"), acme.url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    walked = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    assert len(walked) == 6, walked  # payments, customers, refunds: sync and async
    assert all(0 < int(n) < 1000 for n in walked.values()), walked


def test_each_credential_is_a_principal_of_its_own(acme: MockServer) -> None:
    """Idempotency keys are scoped by principal: the same key replays for one credential and
    is a new request for another."""
    body = {
        "amount": 5000,
        "currency": "usd",
        "customerId": "cus_01HTZ3A7B8C9D0E1F2G3H4J5K6",
        "paymentMethod": {"type": "card", "token": "tok_visa_4242"},
    }
    with httpx.Client(base_url=acme.url, timeout=10) as http:

        def pay(token: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "key-1"}
            return http.post("/v1/payments", json=body, headers=headers)

        first = pay("alice")
        assert first.status_code == 201, first.text
        assert "idempotent-replayed" not in first.headers
        assert pay("alice").headers.get("idempotent-replayed") == "true"
        assert "idempotent-replayed" not in pay("bob").headers


def test_a_second_start_reuses_what_was_generated(
    acme: MockServer, cache: Path, tmp_path: Path
) -> None:
    """The project in the cache is stamped: a second start of the same spec generates
    nothing (the stamp is not rewritten)."""
    stamps = [p for p in (cache / "mock").glob("*/.generated.json") if "acme" in p.read_text()]
    assert len(stamps) == 1
    before = {p: p.stat().st_mtime_ns for p in stamps}
    again = _start(ACME, tmp_path, cache)
    try:
        assert httpx.get(f"{again.url}/v1/payments", timeout=10).status_code == 401
    finally:
        _stop(again)
    assert {p: p.stat().st_mtime_ns for p in stamps} == before
