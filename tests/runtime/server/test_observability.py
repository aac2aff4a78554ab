"""Request metrics and logs (runtime/observability.py) under uvicorn on 127.0.0.1: labels
from closed sets whatever clients send, a client that leaves is not a server error, and no
input forges a log line."""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import string
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi import FastAPI

from tests.runtime.server.conftest import RuntimeModules, served_app

STATUS_LINE = re.compile(rb"HTTP/1\.1 (\d{3}) ")
SERIES = re.compile(r"^(apiforge_request\w*\{.*\}) \S+$", re.MULTILINE)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("observed")
    env = {
        "APIFORGE_STORE_URL": f"sqlite:///{root / 'app.db'}",
        "APIFORGE_RATE_LIMIT_DEFAULT": "1000000/minute",
        "TEST_REQUEST_IDS": "1",
    }
    with served_app(root, "observed_app", env) as base:
        yield base


def request_series(base: str) -> set[str]:
    return set(SERIES.findall(httpx.get(base + "/metrics", timeout=30).text))


def pipelined(base: str, requests: list[tuple[str, str]], connections: int = 4) -> list[int]:
    """The statuses of `requests` (method, path), sent pipelined over a few raw HTTP/1.1
    connections (a client library costs more than the server here)."""
    address = urlsplit(base)
    statuses: list[list[int]] = [[] for _ in range(connections)]

    def run(i: int) -> None:
        mine = requests[i::connections]
        lines = [f"{m} {p} HTTP/1.1\r\nHost: t\r\n\r\n" for m, p in mine[:-1]]
        last_method, last_path = mine[-1]
        lines.append(f"{last_method} {last_path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        received = bytearray()
        with socket.create_connection((address.hostname, address.port), timeout=60) as conn:
            sender = threading.Thread(target=conn.sendall, args=("".join(lines).encode(),))
            sender.start()
            while chunk := conn.recv(1 << 16):
                received += chunk
            sender.join()
        statuses[i] = [int(code) for code in STATUS_LINE.findall(bytes(received))]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [status for each in statuses for status in each]


def test_random_methods_and_paths_add_no_series(base_url: str) -> None:
    """10,000 requests with invented methods on real and invented paths: the request series
    stay as they were after one of each kind (`method="other"`, route templates)."""
    rng = random.Random(7)
    real = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}

    def method() -> str:
        while True:
            name = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 10)))
            if name not in real:
                return name

    def path() -> str:
        token = "".join(rng.choices(string.ascii_lowercase + string.digits, k=12))
        return rng.choice(["/plain", f"/widgets/{token}", f"/{token}/{token}"])

    kinds = [("/plain", 405), ("/widgets/w1", 405), ("/no/where", 404)]
    assert pipelined(base_url, [("QUUX", p) for p, _ in kinds], 1) == [s for _, s in kinds]
    request_series(base_url)  # the scrape's own series exist
    before = request_series(base_url)
    assert any('method="other"' in s and 'route="/widgets/{wid}"' in s for s in before)

    started = time.perf_counter()
    statuses = pipelined(base_url, [(method(), path()) for _ in range(10_000)])
    took = time.perf_counter() - started
    assert len(statuses) == 10_000 and set(statuses) == {404, 405}
    after = request_series(base_url)
    assert after == before, sorted(after - before)[:5]
    print(f"\n10,000 random methods in {took:.1f} s: {len(after)} request series before and after")


def test_a_client_that_leaves_before_its_body_is_not_a_server_error(base_url: str) -> None:
    """A POST that promises 1,000 bytes, sends 10 and closes: counted as 499, not 500."""

    def counted(status: str) -> float:
        text = httpx.get(base_url + "/metrics", timeout=30).text
        pattern = (
            rf'^apiforge_requests_total\{{method="POST",route="/echo",status="{status}"\}} (\S+)'
        )
        found = re.search(pattern, text, re.MULTILINE)
        return float(found.group(1)) if found else 0.0

    before = counted("499")
    address = urlsplit(base_url)
    with socket.create_connection((address.hostname, address.port)) as conn:
        conn.sendall(
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n" + b'{"name": "'
        )
        time.sleep(0.2)  # the handler is waiting for the rest
    deadline = time.monotonic() + 10
    while counted("499") == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert counted("499") == before + 1
    assert counted("500") == 0


def test_no_input_forges_a_text_log_line(
    rt: RuntimeModules, capsys: pytest.CaptureFixture[str]
) -> None:
    """A percent-decoded CR/LF in a path reaches the message of the unhandled-exception line
    (and any handler's own): the text line stays one line, the characters escaped."""
    rt.observability.configure_logging(rt.package, "INFO", "text")
    app = FastAPI()
    rt.problems.install_problem_handlers(app, max_body_bytes=1024)

    @app.get("/items/{item}")
    async def item(item: str) -> None:
        logging.getLogger(f"{rt.package}.handlers").info("looking up %s", item)
        raise RuntimeError("boom")

    forged = "x%0d%0a2026-01-01 00:00:00,000 CRITICAL app admin logged in%e2%80%a8"

    async def call() -> int:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return (await client.get(f"/items/{forged}")).status_code

    assert asyncio.run(call()) == 500
    lines = capsys.readouterr().err.splitlines()
    assert not [line for line in lines if line.startswith("2026-01-01")], lines
    messages = [line for line in lines if "admin logged in" in line]
    assert len(messages) == 2, lines  # the handler's line and the unhandled-exception line
    assert all("x\\r\\n2026-01-01" in line and "\\u2028" in line for line in messages)
