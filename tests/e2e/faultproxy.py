"""A fault-injecting HTTP/1.1 proxy on 127.0.0.1, for end-to-end and chaos runs.

`FaultProxy(upstream, plan)` listens on a free port of 127.0.0.1 and relays each HTTP/1.1
request of each client connection to `upstream` ("http://127.0.0.1:PORT"), one upstream
connection per client connection. For every request it asks `plan.next_fault(request)` what to
do with it:

- `Fault.passthrough()` — relay the request and the response unchanged;
- `Fault.drop_response()` — relay the request, read the server's *whole* response (so the
  server has processed it, committed its effects and stored its idempotent reply), then close
  the client connection (FIN) without sending a byte of it: "the response was lost";
- `Fault.reset(after=False)` — abort the client connection with a TCP RST (SO_LINGER 0):
  before relaying the request (the server never sees it), or with `after=True` once the server
  has answered (the server processed it, the client sees "connection reset by peer");
- `Fault.delay(seconds)` — relay the request, hold the server's response for `seconds`, then
  send it (a slow network or a slow server; a client timeout shorter than that gives up);
- `Fault.truncate()` — relay the request, send the status line, headers and half of the
  body, then close;
- `Fault.status(code, retry_after=..., problem_type=..., after=False)` — answer with a
  synthetic `application/problem+json` response instead of relaying (`after=False`: the server
  never sees the request), or after relaying it and discarding the server's answer
  (`after=True`: the server processed it, the client sees e.g. a 503).

`FaultPlan(script=[...], weights={fault: weight}, seed=0, match=predicate)`: requests for which
`match(request)` is false always pass; the others take the next fault of `script`, and once it
is used up a fault drawn from `weights` with a seeded `random.Random` (reproducible: the same
seed and request order give the same faults), else pass.

Counters (`proxy.stats`, a `ProxyStats`): connections, requests read from clients, requests
forwarded to the upstream (what the server saw), responses delivered intact, and faults applied
by kind. `stats.snapshot()` copies them; `proxy.reset()` zeroes them (and can swap the plan).
`proxy.log` keeps (method, target, fault label) of the latest requests.

Use it from synchronous code (it runs its own event loop in a daemon thread)::

    with FaultProxy(server_url, FaultPlan([Fault.drop_response()], match=...)) as proxy:
        client = Client(base_url=proxy.url, ...)

or inside a running event loop: `await proxy.start_async()` / `await proxy.aclose()`.
Only `Content-Length` and chunked bodies are understood (what httpx and uvicorn send); a
response without either is read until the server closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import struct
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Literal, Self
from urllib.parse import urlsplit

FaultKind = Literal["pass", "drop_response", "reset", "delay", "truncate", "status"]
MAX_HEAD = 64 * 1024


@dataclass(frozen=True, slots=True)
class Fault:
    """One thing to do to one request (see the module docstring); build with the classmethods."""

    kind: FaultKind
    after: bool = False  # reset/status: after the server processed the request
    seconds: float = 0.0  # delay
    status_code: int = 0  # status
    headers: tuple[tuple[str, str], ...] = ()  # status: extra response headers
    problem_type: str = "about:blank"  # status

    @classmethod
    def passthrough(cls) -> Fault:
        return cls("pass")

    @classmethod
    def drop_response(cls) -> Fault:
        return cls("drop_response", after=True)

    @classmethod
    def reset(cls, *, after: bool = False) -> Fault:
        return cls("reset", after=after)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        return cls("delay", seconds=seconds)

    @classmethod
    def truncate(cls) -> Fault:
        return cls("truncate", after=True)

    @classmethod
    def status(
        cls,
        code: int,
        *,
        retry_after: str | float | None = None,
        problem_type: str = "about:blank",
        headers: Mapping[str, str] | None = None,
        after: bool = False,
    ) -> Fault:
        extra = dict(headers or {})
        if retry_after is not None:
            value = retry_after
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            extra["Retry-After"] = str(value)
        return cls(
            "status",
            after=after,
            status_code=code,
            headers=tuple(extra.items()),
            problem_type=problem_type,
        )

    @property
    def label(self) -> str:
        """A short name for counters: `drop_response`, `reset_before`, `status_503_after`, …"""
        if self.kind == "reset":
            return "reset_after" if self.after else "reset_before"
        if self.kind == "status":
            return f"status_{self.status_code}" + ("_after" if self.after else "")
        return self.kind


PASS = Fault.passthrough()


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A request as the proxy read it: what a plan's `match` and faults look at."""

    method: str
    target: str  # path and query, as sent
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)


class FaultPlan:
    """Which fault each matching request gets: a script first, then seeded weights."""

    def __init__(
        self,
        script: Iterable[Fault] = (),
        *,
        weights: Mapping[Fault, float] | None = None,
        seed: int = 0,
        match: Callable[[HttpRequest], bool] | None = None,
    ) -> None:
        self.script = list(script)
        self.weights = dict(weights or {})
        self.match = match
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def next_fault(self, request: HttpRequest) -> Fault:
        if self.match is not None and not self.match(request):
            return PASS
        with self._lock:
            if self.script:
                return self.script.pop(0)
            if self.weights:
                faults = list(self.weights)
                return self._random.choices(faults, [self.weights[f] for f in faults])[0]
        return PASS


@dataclass
class ProxyStats:
    connections: int = 0
    requests: int = 0  # complete requests read from clients
    forwarded: int = 0  # requests relayed to the upstream: the server saw them
    delivered: int = 0  # responses relayed to the client intact
    faults: Counter[str] = field(default_factory=Counter)

    def snapshot(self) -> ProxyStats:
        return ProxyStats(
            self.connections, self.requests, self.forwarded, self.delivered, Counter(self.faults)
        )


class _Closed(Exception):
    """The peer closed the connection between messages."""


def _parse_headers(lines: list[bytes]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _Closed from exc
        raise
    except asyncio.LimitOverrunError as exc:
        raise ValueError("HTTP head too large") from exc


async def _read_body(
    reader: asyncio.StreamReader, headers: Mapping[str, str], *, until_eof: bool
) -> bytes:
    """The message body, raw (chunked framing kept, so it can be relayed as is)."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        out = bytearray()
        while True:
            size_line = await reader.readuntil(b"\r\n")
            out += size_line
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                while True:  # trailers, then the empty line
                    line = await reader.readuntil(b"\r\n")
                    out += line
                    if line == b"\r\n":
                        return bytes(out)
            out += await reader.readexactly(size + 2)
    length = headers.get("content-length")
    if length is not None:
        return await reader.readexactly(int(length))
    return await reader.read() if until_eof else b""


def _problem_response(fault: Fault, request: HttpRequest) -> bytes:
    try:
        title = HTTPStatus(fault.status_code).phrase
    except ValueError:
        title = "Injected fault"
    body = json.dumps(
        {
            "type": fault.problem_type,
            "title": title,
            "status": fault.status_code,
            "detail": "Injected by the fault proxy.",
            "instance": request.path,
        }
    ).encode()
    lines = [
        f"HTTP/1.1 {fault.status_code} {title}",
        "Content-Type: application/problem+json",
        f"Content-Length: {len(body)}",
        *(f"{k}: {v}" for k, v in fault.headers),
        "",
        "",
    ]
    return "\r\n".join(lines).encode("latin-1") + body


def _abort_with_rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()
        await writer.wait_closed()


class FaultProxy:
    """See the module docstring."""

    def __init__(
        self, upstream: str, plan: FaultPlan | None = None, *, log_size: int = 1000
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"upstream must be http://HOST:PORT, not {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port
        self.plan = plan or FaultPlan()
        self.stats = ProxyStats()
        #: (method, target, fault label) of the latest requests, for post-mortems
        self.log: deque[tuple[str, str, str]] = deque(maxlen=log_size)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self, plan: FaultPlan | None = None) -> None:
        """Zero the counters; with `plan`, use it from the next request on."""
        self.stats = ProxyStats()
        self.log.clear()
        if plan is not None:
            self.plan = plan

    # -- lifecycle -------------------------------------------------------------------------

    async def start_async(self) -> None:
        """Listen, in the running event loop."""
        self._server = await asyncio.start_server(
            self._serve_connection, "127.0.0.1", 0, limit=MAX_HEAD
        )
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    def start(self) -> Self:
        """Listen from a daemon thread running its own event loop (for synchronous callers)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start_async())
            ready.set()
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fault proxy did not start")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- relaying ----------------------------------------------------------------------------

    async def _serve_connection(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.stats.connections += 1
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                try:
                    head = await _read_head(client_r)
                except (_Closed, asyncio.IncompleteReadError, ConnectionError):
                    return
                request_line, *header_lines = head[:-4].split(b"\r\n")
                method, target, _version = request_line.decode("latin-1").split(" ", 2)
                headers = _parse_headers(header_lines)
                body = await _read_body(client_r, headers, until_eof=False)
                request = HttpRequest(method.upper(), target, headers, body)
                self.stats.requests += 1
                fault = self.plan.next_fault(request)
                if fault.kind != "pass":
                    self.stats.faults[fault.label] += 1
                self.log.append((request.method, request.target, fault.label))

                if fault.kind == "reset" and not fault.after:
                    _abort_with_rst(client_w)
                    return
                if fault.kind == "status" and not fault.after:
                    client_w.write(_problem_response(fault, request))
                    await client_w.drain()
                    continue

                if upstream is not None and upstream[0].at_eof():
                    await _close(upstream[1])  # the server closed the idle keep-alive
                    upstream = None
                if upstream is None:
                    upstream = await asyncio.open_connection(
                        self.upstream_host, self.upstream_port, limit=MAX_HEAD
                    )
                up_r, up_w = upstream
                up_w.write(head + body)
                await up_w.drain()
                self.stats.forwarded += 1
                response_head = await _read_head(up_r)
                status_line, *response_lines = response_head[:-4].split(b"\r\n")
                response_headers = _parse_headers(response_lines)
                status = int(status_line.split(b" ", 2)[1])
                no_body = request.method == "HEAD" or status in (204, 304) or status < 200
                response_body = (
                    b"" if no_body else await _read_body(up_r, response_headers, until_eof=True)
                )
                upstream_closes = "close" in response_headers.get("connection", "").lower()

                if fault.kind == "drop_response":
                    return  # the finally closes both sides without a byte of the response
                if fault.kind == "reset":
                    _abort_with_rst(client_w)
                    return
                if fault.kind == "truncate":
                    client_w.write(response_head + response_body[: len(response_body) // 2])
                    await client_w.drain()
                    return
                if fault.kind == "status":
                    client_w.write(_problem_response(fault, request))
                    await client_w.drain()
                else:
                    if fault.kind == "delay":
                        await asyncio.sleep(fault.seconds)
                        if client_r.at_eof():
                            return  # the client gave up waiting and hung up
                    client_w.write(response_head + response_body)
                    await client_w.drain()
                    self.stats.delivered += 1
                if upstream_closes:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, OSError):
            return
        finally:
            if upstream is not None:
                await _close(upstream[1])
            if not client_w.transport.is_closing():
                await _close(client_w)
            self._tasks.discard(task)
