"""Test doubles for the client runtime tests: a fake clock, a scripted HTTP server, and a
server whose routes write their responses themselves (streams: `streaming`)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeClock:
    """Wall clock + sleep for the client: sleeping only moves time forward."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)


@dataclass
class Recorded:
    method: str
    path: str  # with the query string
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # read the request, then hang up without answering
    delay: float = 0.0  # real seconds before answering (for timeouts)


ReplyFn = Callable[[Recorded], Reply]


class ScriptServer:
    """Replies are consumed in order per (method, path); the last one repeats. A reply may
    be a function of the request, for stateful servers (idempotency stores, jobs)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._scripts: dict[tuple[str, str], list[Reply | ReplyFn]] = {}
        self._lock = threading.Lock()
        self.url = ""

    def on(self, method: str, path: str, *replies: Reply | ReplyFn) -> None:
        self._scripts[(method.upper(), path)] = list(replies)

    def received(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            script = self._scripts.get((recorded.method, recorded.path.split("?", 1)[0]))
            if not script:
                return Reply(404, json={"type": "about:blank", "title": "Not Found", "status": 404})
            step = script.pop(0) if len(script) > 1 else script[0]
        return step(recorded) if callable(step) else step


def handler_for(script: ScriptServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            recorded = Recorded(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            reply = script._next(recorded)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.drop:
                self.close_connection = True
                return
            payload = reply.body
            headers = dict(reply.headers)
            if reply.json is not None:
                payload = json.dumps(reply.json).encode()
                headers.setdefault("Content-Type", "application/json")
            try:
                self.send_response(reply.status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            except OSError:  # the client gave up (timeout tests)
                pass

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def problem(status: int, kind: str, detail: str = "", **extra: Any) -> dict[str, Any]:
    """A problem body like the generated server writes."""
    return {
        "type": f"/problems/{kind}",
        "title": kind.replace("-", " ").capitalize(),
        "status": status,
        "detail": detail or kind,
        **extra,
    }


PROBLEM_HEADERS = {"Content-Type": "application/problem+json"}


@contextlib.contextmanager
def serving(script: ScriptServer) -> Iterator[ScriptServer]:
    """`script` answering on a real socket on 127.0.0.1 (its `url` set) until the block ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(script))
    httpd.daemon_threads = True
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield script
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


Writer = Callable[[BaseHTTPRequestHandler], None]


class StreamServer:
    """Each path answers through a function that writes the whole response itself; every
    request is recorded (its body read first)."""

    def __init__(self) -> None:
        self.routes: dict[str, Writer] = {}
        self.hits: dict[str, int] = {}
        self.requests: list[Recorded] = []
        self.url = ""


@contextlib.contextmanager
def streaming(routes: dict[str, Writer]) -> Iterator[StreamServer]:
    state = StreamServer()
    state.routes = routes

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.requests.append(Recorded(self.command, self.path, headers, body))
            path = self.path.split("?")[0]
            state.hits[path] = state.hits.get(path, 0) + 1
            state.routes[path](self)

        do_GET = do_POST = do_PUT = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
