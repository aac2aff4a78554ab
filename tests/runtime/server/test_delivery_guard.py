"""Webhook delivery cannot reach inside and cannot be stalled.

SSRF: refused destinations are checked and refused without a socket: the dispatcher gets a fake
resolver and a recording network backend that only ever opens connections to 127.0.0.1, and
``socket.socket.connect``/``socket.getaddrinfo`` themselves refuse anything else while these
tests run. Real deliveries go to receivers on 127.0.0.1, allow-listed.

Stalls: receivers on 127.0.0.1 that trickle (headers then one byte per second, or the status
line one byte per second) or never answer must not delay another destination's delivery by
more than one attempt deadline (0.5 s here)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpcore
import pytest

from tests.runtime.server.conftest import RuntimeModules

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
DEADLINE = 0.5
T0 = 1_800_000_000.0
PUBLIC = "93.184.215.14"


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------- fakes


class FakeResolver:
    """DNS from a table; a name may map to a callable (answers that change: rebinding)."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[Any]:
        self.calls.append(host)
        entry = self.table.get(host.lower().rstrip("."))
        if entry is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answers = entry() if callable(entry) else entry
        return [ipaddress.ip_address(a) for a in answers]


class CountingStream(httpcore.AsyncNetworkStream):
    def __init__(self, inner: httpcore.AsyncNetworkStream, owner: RecordingBackend) -> None:
        self.inner = inner
        self.owner = owner
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = await self.inner.read(max_bytes, timeout)
        self.owner.bytes_read += len(data)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self.inner.write(buffer, timeout)

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self.owner.open -= 1
        await self.inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.owner.tls_names.append(server_hostname)
        tls = await self.inner.start_tls(ssl_context, server_hostname, timeout)
        self.closed = True  # the TLS stream stands for this connection from now on
        return CountingStream(tls, self.owner)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """The connector the guard hands checked addresses to: records every connect; opens a
    real connection only to 127.0.0.1, never anywhere else."""

    def __init__(self) -> None:
        self.connects: list[tuple[str, int]] = []
        self.tls_names: list[str | None] = []
        self.bytes_read = 0
        self.open = 0  # connections open now, and the most at once
        self.max_open = 0
        self.real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        if host != "127.0.0.1":
            raise AssertionError(f"the guard let a connection to {host} through")
        stream = await self.real.connect_tcp(host, port, timeout=timeout)
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        return CountingStream(stream, self)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("unix socket")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """While a test runs, the process cannot connect to, or resolve, anything but 127.0.0.1."""
    attempts: list[Any] = []
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(address: Any) -> None:
        attempts.append(address)
        host = address[0] if isinstance(address, tuple) else address
        if host != "127.0.0.1":
            raise AssertionError(f"a socket tried to connect to {address!r}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", b"127.0.0.1"):
            raise AssertionError(f"a DNS lookup of {host!r}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts


# --------------------------------------------------------------------------- receivers


@dataclass
class Received:
    at: float
    head: bytes
    body: bytes


@dataclass
class Receiver:
    """An HTTP/1.1 receiver on 127.0.0.1. Modes: ``ok`` (204), ``redirect`` (302 to
    ``location``), ``trickle_body`` (200 headers, then one body byte per second),
    ``trickle_head`` (the status line one byte per second), ``silent`` (reads the request,
    never answers), ``big`` (200 with a ``size``-byte body, as fast as it goes)."""

    mode: str = "ok"
    location: str = ""
    size: int = 0
    close_after: bool = False
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    open: int = 0
    max_open: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.05)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket, buffered: bytes) -> tuple[Received, bytes]:
        data = buffered
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            rest += conn.recv(65536)
        return Received(time.monotonic(), head, rest[:length]), rest[length:]

    def _serve(self, conn: socket.socket) -> None:
        with self.lock:
            self.connections += 1
            self.open += 1
            self.max_open = max(self.max_open, self.open)
        conn.settimeout(30)
        buffered = b""
        try:
            while not self.stop.is_set():
                request, buffered = self._read_request(conn, buffered)
                with self.lock:
                    self.requests.append(request)
                if not self._answer(conn):
                    break
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            with self.lock:
                self.open -= 1
            conn.close()

    def _answer(self, conn: socket.socket) -> bool:
        """Answer one request; False: close the connection."""
        close = b"Connection: close\r\n" if self.close_after else b""
        if self.mode == "ok":
            conn.sendall(b"HTTP/1.1 204 No Content\r\n" + close + b"Content-Length: 0\r\n\r\n")
            return not self.close_after
        if self.mode == "redirect":
            conn.sendall(
                b"HTTP/1.1 302 Found\r\nLocation: "
                + self.location.encode()
                + b"\r\nContent-Length: 0\r\n\r\n"
            )
            return True
        if self.mode == "trickle_body":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 60\r\n\r\n")
            for _ in range(60):
                if self.stop.wait(1.0):
                    break
                conn.sendall(b"x")
            return False
        if self.mode == "trickle_head":
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                if self.stop.wait(1.0):
                    break
                conn.sendall(bytes([byte]))
            return False
        if self.mode == "silent":  # until the client gives up (or the test ends)
            conn.settimeout(0.02)
            while not self.stop.is_set():
                try:
                    if conn.recv(1) == b"":
                        break
                except TimeoutError:
                    continue
            return False
        if self.mode == "big":
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {self.size}\r\n\r\n".encode())
            chunk = b"y" * 65536
            sent = 0
            while sent < self.size and not self.stop.is_set():
                conn.sendall(chunk)
                sent += len(chunk)
            return False
        raise AssertionError(self.mode)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    made: list[Receiver] = []

    def make(mode: str = "ok", **kwargs: Any) -> Receiver:
        receiver = Receiver(mode, **kwargs)
        made.append(receiver)
        return receiver

    yield make
    for receiver in made:
        receiver.close()


# --------------------------------------------------------------------------- helpers


def loopback_policy(rt: RuntimeModules, *, allow_http: bool = True) -> Any:
    return rt.destinations.DestinationPolicy(allow_http=allow_http, allow=("127.0.0.1",))


def make_dispatcher(rt: RuntimeModules, outbox: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("policy", loopback_policy(rt))
    kwargs.setdefault("attempt_timeout", DEADLINE)
    return rt.delivery.WebhookDispatcher(
        outbox, rt.webhook_signing.WebhookSigner((SECRET,)), **kwargs
    )


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.005)


# --------------------------------------------------------------------------- SSRF

DNS = {
    "internal.example.com": ["10.1.2.3"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": [PUBLIC, "192.168.0.10"],
    "mapped.example.com": ["::ffff:10.0.0.1"],
    "ula.example.com": ["fd00::1"],
    "loop6.example.com": ["::1"],
    "cgnat.example.com": ["100.64.1.1"],
    "hooks.example.com": [PUBLIC],
}

# (URL, a fragment of the recorded reason, whether the name reaches the resolver). The policy:
# https only, allow-list 127.0.0.1 (what a test setup allows, and no more).
SSRF = [
    ("https://10.0.0.1/hook", "10.0.0.1 is a private address", False),
    ("https://169.254.169.254/latest/meta-data/iam/", "169.254.169.254 is a link-local", False),
    ("https://[::1]:{port}/hook", "::1 is a loopback address", False),
    ("https://[::ffff:127.0.0.1]:{port}/hook", "it reaches 127.0.0.1", False),
    ("https://127.0.0.2:{port}/hook", "127.0.0.2 is a loopback address", False),
    ("https://[fc00::1]/hook", "unique local", False),
    ("https://[fe80::1]/hook", "link-local", False),
    ("https://100.64.0.1/hook", "carrier-grade NAT", False),
    ("https://2130706433:{port}/hook", "non-standard numeric form", False),
    ("https://localhost:{port}/hook", "loopback name", False),
    ("https://internal:{port}/hook", "not a fully qualified", False),
    ("http://hooks.example.com/hook", "scheme must be https", False),
    ("http://127.0.0.1:{port}/hook", "scheme must be https", False),
    ("https://alice:s3cret@hooks.example.com/hook", "must not contain credentials", False),
    ("https://internal.example.com/hook", "'internal.example.com' resolves to 10.1.2.3", True),
    ("https://metadata.example.com/hook", "resolves to 169.254.169.254, a link-local", True),
    ("https://mixed.example.com/hook", "resolves to 192.168.0.10, a private", True),
    ("https://mapped.example.com/hook", "IPv4-mapped IPv6 address (it reaches 10.0.0.1)", True),
    ("https://ula.example.com/hook", "resolves to fd00::1, a unique local", True),
    ("https://loop6.example.com/hook", "resolves to ::1, a loopback", True),
    ("https://cgnat.example.com/hook", "resolves to 100.64.1.1", True),
]


@pytest.mark.parametrize(("url", "why", "resolved"), SSRF, ids=[u for u, _, _ in SSRF])
def test_refused_destinations_are_dead_without_a_connection(
    rt: RuntimeModules,
    receivers: Callable[..., Receiver],
    loopback_only: list[Any],
    url: str,
    why: str,
    resolved: bool,
) -> None:
    inside = receivers("ok")  # something is listening on loopback: nothing may reach it
    target = url.format(port=inside.port)
    backend, resolver = RecordingBackend(), FakeResolver(DNS)

    async def scenario() -> tuple[Any, list[Any]]:
        clock = FakeClock()
        outbox = rt.webhooks.open_outbox("memory://", clock=clock)
        dispatcher = make_dispatcher(
            rt,
            outbox,
            clock=clock,
            policy=loopback_policy(rt, allow_http=False),
            network_backend=backend,
            resolver=resolver,
        )
        [delivery] = await outbox.enqueue(rt.webhooks.new_event("job.finished", {}), [target])
        assert await dispatcher.run_once() == 1
        clock.now += 10**8
        assert await dispatcher.run_once() == 0, "refused for good: not retried"
        await dispatcher.stop()
        return await outbox.get_delivery(delivery.id), await outbox.attempts(delivery.id)

    delivery, attempts = asyncio.run(scenario())
    assert backend.connects == [], "no connection was attempted"
    assert loopback_only == [] and inside.connections == 0
    assert resolver.calls == ([target.split("/")[2]] if resolved else []), "DNS only for names"
    assert delivery.status == "dead" and delivery.attempt_count == 1
    [attempt] = attempts
    assert attempt.status_code is None
    assert attempt.error.startswith("destination refused: ")
    assert why in attempt.error
    assert "s3cret" not in attempt.error


def test_a_redirect_is_a_failed_attempt_and_is_not_followed(
    rt: RuntimeModules, receivers: Callable[..., Receiver], loopback_only: list[Any]
) -> None:
    receiver = receivers("redirect", location="http://169.254.169.254/latest/meta-data/")
    backend = RecordingBackend()

    async def scenario() -> tuple[Any, list[Any]]:
        clock = FakeClock()
        outbox = rt.webhooks.open_outbox("memory://", clock=clock)
        dispatcher = make_dispatcher(rt, outbox, clock=clock, network_backend=backend)
        [delivery] = await outbox.enqueue(rt.webhooks.new_event("e", {}), [receiver.url])
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()
        return await outbox.get_delivery(delivery.id), await outbox.attempts(delivery.id)

    delivery, [attempt] = asyncio.run(scenario())
    assert backend.connects == [("127.0.0.1", receiver.port)], "only the allowed receiver"
    assert len(receiver.requests) == 1
    assert attempt.status_code == 302
    assert attempt.error == "HTTP 302 (redirects are not followed)"
    assert delivery.status == "pending" and delivery.next_attempt_at == T0 + 60, "retried"


def test_the_connection_goes_to_the_address_that_was_checked(
    rt: RuntimeModules, receivers: Callable[..., Receiver], loopback_only: list[Any]
) -> None:
    """A name that rebinds (allowed 127.0.0.1 first, 10.0.0.1 next): each connection is
    resolved once, checked, and made to the checked IP, never by name."""
    receiver = receivers("ok", close_after=True)
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])
    resolver = FakeResolver({"rebind.example.com": lambda: next(answers)})
    backend = RecordingBackend()
    url = f"http://rebind.example.com:{receiver.port}/hooks"

    async def scenario() -> list[Any]:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(rt, outbox, network_backend=backend, resolver=resolver)
        first = await outbox.enqueue(rt.webhooks.new_event("e", {"n": 1}), [url])
        assert await dispatcher.run_once() == 1
        second = await outbox.enqueue(rt.webhooks.new_event("e", {"n": 2}), [url])
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()
        return [await outbox.get_delivery(d.id) for d in (*first, *second)]

    first, second = asyncio.run(scenario())
    assert first.status == "delivered"
    assert second.status == "dead"
    assert "'rebind.example.com' resolves to 10.0.0.1" in second.last_error
    assert resolver.calls == ["rebind.example.com", "rebind.example.com"]
    assert backend.connects == [("127.0.0.1", receiver.port)]
    assert len(receiver.requests) == 1
    head = receiver.requests[0].head.decode()
    assert f"Host: rebind.example.com:{receiver.port}" in head, "the name still goes in Host"


def test_environment_proxies_are_ignored(
    rt: RuntimeModules,
    receivers: Callable[..., Receiver],
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: list[Any],
) -> None:
    proxy = receivers("ok")
    receiver = receivers("ok")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def scenario() -> Any:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(rt, outbox)  # the real network backend
        [delivery] = await outbox.enqueue(rt.webhooks.new_event("e", {}), [receiver.url])
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()
        return await outbox.get_delivery(delivery.id)

    assert asyncio.run(scenario()).status == "delivered"
    assert len(receiver.requests) == 1 and proxy.connections == 0


# --------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A throwaway CA and a server certificate for ``hooks.test`` (openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("tls")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=apiforge test CA")  # fmt: skip
    openssl("req", *ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=hooks.test")
    (d / "ext.cnf").write_text(
        "subjectAltName=DNS:hooks.test\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip
    return {"ca": d / "ca.pem", "cert": d / "leaf.pem", "key": d / "leaf.key"}


def test_tls_verifies_and_sends_the_host_name_while_connecting_to_the_checked_ip(
    rt: RuntimeModules, tls_files: dict[str, Path], loopback_only: list[Any]
) -> None:
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tls_files["cert"], tls_files["key"])
    sni: list[str | None] = []
    server_ctx.sni_callback = lambda _sock, name, _ctx: sni.append(name)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    port = int(listener.getsockname()[1])
    stop = threading.Event()
    bodies: list[bytes] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                raw.settimeout(5)
                conn = server_ctx.wrap_socket(raw, server_side=True)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(body) < length:  # all of it: closing with unread bytes resets
                    body += conn.recv(65536)
                bodies.append(body)
                conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
                conn.close()
            except (OSError, ssl.SSLError):
                raw.close()

    threading.Thread(target=serve, daemon=True).start()
    backend = RecordingBackend()
    resolver = FakeResolver({"hooks.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    client_ctx = ssl.create_default_context(cafile=str(tls_files["ca"]))

    async def scenario() -> list[Any]:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(
            rt,
            outbox,
            policy=loopback_policy(rt, allow_http=False),
            network_backend=backend,
            resolver=resolver,
            verify=client_ctx,
        )
        good = await outbox.enqueue(
            rt.webhooks.new_event("e", {}), [f"https://hooks.test:{port}/hooks"]
        )
        bad = await outbox.enqueue(
            rt.webhooks.new_event("e", {}), [f"https://other.test:{port}/hooks"]
        )
        assert await dispatcher.run_once() == 2
        await dispatcher.stop()
        return [await outbox.get_delivery(d.id) for d in (*good, *bad)]

    try:
        good, bad = asyncio.run(scenario())
    finally:
        stop.set()
        listener.close()
    assert good.status == "delivered", good.last_error
    assert bad.status == "pending" and "CERTIFICATE_VERIFY_FAILED" in bad.last_error
    assert backend.connects == [("127.0.0.1", port)] * 2, "connected by the checked IP"
    assert sorted(n for n in backend.tls_names if n) == ["hooks.test", "other.test"]
    assert "hooks.test" in sni, "SNI carries the host name, not the IP"
    assert len(bodies) == 1


# --------------------------------------------------------------------------- stalls


@pytest.mark.parametrize("mode", ["trickle_body", "trickle_head", "silent"])
def test_a_slow_endpoint_does_not_delay_another_destination(
    rt: RuntimeModules, receivers: Callable[..., Receiver], mode: str
) -> None:
    slow, fast = receivers(mode), receivers("ok")

    async def scenario() -> tuple[float, Any]:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(rt, outbox, poll_interval=30)
        dispatcher.start()
        [slow_delivery] = await outbox.enqueue(rt.webhooks.new_event("slow", {}), [slow.url])
        await until(lambda: bool(slow.requests))  # the slow attempt is in flight
        started = time.monotonic()
        await outbox.enqueue(rt.webhooks.new_event("fast", {}), [fast.url])
        await until(lambda: bool(fast.requests))
        delay = fast.requests[0].at - started
        while not await outbox.attempts(slow_delivery.id):
            await asyncio.sleep(0.01)
        await dispatcher.stop()
        [attempt] = await outbox.attempts(slow_delivery.id)
        return delay, attempt

    delay, slow_attempt = asyncio.run(scenario())
    print(f"\n{mode}: another destination's delivery was delayed {delay * 1000:.0f} ms")
    assert delay < DEADLINE, f"delayed {delay:.2f} s by a {mode} endpoint"
    assert slow_attempt.duration_ms < (DEADLINE + 0.3) * 1000, "the deadline cut the attempt"
    if mode == "trickle_body":  # the status line was the answer; the body read was cut
        assert slow_attempt.status_code == 200 and slow_attempt.error is None
    else:
        assert slow_attempt.status_code is None
        assert slow_attempt.error == "timed out: no answer within the 0.5 s deadline"


def test_a_timed_out_attempt_follows_the_retry_schedule(
    rt: RuntimeModules, receivers: Callable[..., Receiver]
) -> None:
    silent = receivers("silent")

    async def scenario() -> tuple[Any, list[Any]]:
        clock = FakeClock()
        outbox = rt.webhooks.open_outbox("memory://", clock=clock)
        dispatcher = make_dispatcher(rt, outbox, clock=clock, attempt_timeout=0.2)
        [delivery] = await outbox.enqueue(rt.webhooks.new_event("e", {}), [silent.url])
        assert await dispatcher.run_once() == 1
        after_one = await outbox.get_delivery(delivery.id)
        assert after_one.status == "pending" and after_one.next_attempt_at == T0 + 60
        clock.now = T0 + 59
        assert await dispatcher.run_once() == 0
        clock.now = T0 + 60
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()
        return await outbox.get_delivery(delivery.id), await outbox.attempts(delivery.id)

    delivery, attempts = asyncio.run(scenario())
    assert [a.error for a in attempts] == ["timed out: no answer within the 0.2 s deadline"] * 2
    assert delivery.status == "pending" and delivery.next_attempt_at == T0 + 60 + 300


def test_the_response_body_read_is_capped(
    rt: RuntimeModules, receivers: Callable[..., Receiver]
) -> None:
    big = receivers("big", size=32 * 1024 * 1024)
    backend = RecordingBackend()

    async def scenario() -> Any:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(
            rt, outbox, network_backend=backend, max_response_bytes=4096, attempt_timeout=5
        )
        [delivery] = await outbox.enqueue(rt.webhooks.new_event("e", {}), [big.url])
        assert await dispatcher.run_once() == 1
        await dispatcher.stop()
        return (await outbox.attempts(delivery.id))[0]

    attempt = asyncio.run(scenario())
    assert attempt.status_code == 200 and attempt.error is None
    assert backend.bytes_read <= 4096 + 65536 + 1024, "one read past the cap at most"
    assert attempt.duration_ms < 1000


def test_free_slots_are_refilled_while_a_slow_attempt_runs(
    rt: RuntimeModules, receivers: Callable[..., Receiver]
) -> None:
    silent, fast = receivers("silent"), receivers("ok")

    async def scenario() -> float:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(rt, outbox, concurrency=2, poll_interval=30)
        dispatcher.start()
        await outbox.enqueue(rt.webhooks.new_event("slow", {}), [silent.url])
        await until(lambda: bool(silent.requests))
        started = time.monotonic()
        for i in range(8):
            await outbox.enqueue(rt.webhooks.new_event("fast", {"i": i}), [fast.url])
        await until(lambda: len(fast.requests) == 8)
        elapsed = fast.requests[-1].at - started
        await dispatcher.stop()
        return elapsed

    elapsed = asyncio.run(scenario())
    assert elapsed < DEADLINE, "eight deliveries through the one free slot, none waiting"


def test_one_destination_cannot_take_every_slot(
    rt: RuntimeModules, receivers: Callable[..., Receiver]
) -> None:
    """Six deliveries to a silent endpoint and four slots: it gets two (per_destination); the
    others are given back (not counted as attempts) and another destination goes at once."""
    silent, fast = receivers("silent"), receivers("ok")
    backend = RecordingBackend()

    async def scenario() -> tuple[float, list[Any]]:
        outbox = rt.webhooks.open_outbox("memory://")
        dispatcher = make_dispatcher(
            rt, outbox, concurrency=4, per_destination=2, poll_interval=30, network_backend=backend
        )
        dispatcher.start()
        slow = []
        for i in range(6):
            slow += await outbox.enqueue(rt.webhooks.new_event("slow", {"i": i}), [silent.url])
        await until(lambda: len(silent.requests) == 2)
        started = time.monotonic()
        await outbox.enqueue(rt.webhooks.new_event("fast", {}), [fast.url])
        await until(lambda: bool(fast.requests))
        delay = fast.requests[0].at - started
        found: list[Any] = []
        for _ in range(500):  # every slow delivery gets its (timed out) attempt, two at a time
            found = [await outbox.get_delivery(d.id) for d in slow]
            if all(d.attempt_count == 1 for d in found):
                break
            await asyncio.sleep(0.01)
        await dispatcher.stop()
        return delay, found

    delay, slow = asyncio.run(scenario())
    assert delay < DEADLINE / 2
    assert [d.attempt_count for d in slow] == [1] * 6, "given back unsent: not counted"
    assert len(silent.requests) == 6
    assert backend.max_open <= 3, "two to the silent endpoint at most, plus the fast one"


# --------------------------------------------------------------------------- secrets


def test_secrets_never_reach_a_recorded_error_a_log_line_or_a_repr(
    rt: RuntimeModules,
    receivers: Callable[..., Receiver],
    caplog: pytest.LogCaptureFixture,
    loopback_only: list[Any],
) -> None:
    closed = receivers("ok")
    closed.close()  # nothing listens there any more: a connection error
    signer = rt.webhook_signing.WebhookSigner((SECRET,))

    def signers(key: str) -> Any:
        if key == "broken":
            raise ValueError(f"cannot load the secret {SECRET}")
        return signer

    caplog.set_level(logging.DEBUG)

    async def scenario() -> tuple[Any, list[Any], list[Any]]:
        clock = FakeClock()
        outbox = rt.webhooks.open_outbox("memory://", clock=clock)
        dispatcher = rt.delivery.WebhookDispatcher(
            outbox,
            signers,
            clock=clock,
            policy=loopback_policy(rt),
            attempt_timeout=DEADLINE,
            schedule=[1],
        )
        targets = [
            rt.webhooks.Endpoint(f"{closed.url}?token=tok_live_abc"),
            rt.webhooks.Endpoint("https://10.0.0.1/hook?token=tok_live_abc"),
            rt.webhooks.Endpoint(closed.url, "broken"),
        ]
        deliveries = await outbox.enqueue(rt.webhooks.new_event("e", {}), targets)
        for _ in range(2):
            await dispatcher.run_once()
            clock.now += 1
        found = [await outbox.get_delivery(d.id) for d in deliveries]
        attempts = [a for d in deliveries for a in await outbox.attempts(d.id)]
        await dispatcher.stop()
        return dispatcher, found, attempts

    dispatcher, deliveries, attempts = asyncio.run(scenario())
    assert [d.status for d in deliveries] == ["dead", "dead", "dead"]
    errors = [a.error for a in attempts]
    assert any(e.startswith("ConnectError") for e in errors)
    assert "signing failed: ValueError (signer 'broken')" in errors
    assert any(e.startswith("destination refused: ") for e in errors if e)  # 10.0.0.1
    hosts = {address[0] if isinstance(address, tuple) else address for address in loopback_only}
    assert hosts <= {"127.0.0.1"}, "10.0.0.1 was refused before any socket, not connected to"
    everything = "\n".join(
        [
            caplog.text,
            repr(dispatcher),
            repr(dispatcher.policy),
            json.dumps([d.to_json() for d in deliveries]),
            json.dumps([a.to_json() for a in attempts]),
        ]
    )
    assert "webhook delivery" in caplog.text, "dead deliveries are logged"
    key = SECRET.removeprefix("whsec_")
    assert SECRET not in everything and key not in everything
    assert "tok_live_abc" not in "\n".join(e for e in errors if e), "URLs are not repeated"


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_one_principal_with_many_hanging_destinations_cannot_delay_another(
    rt: RuntimeModules, receivers: Callable[..., Receiver], tmp_path: Path, store: str
) -> None:
    """Alice's 96 events go to 8 loopback ports that accept and never answer (8 destinations
    x 4 slots would take all 16): she holds her share (4), her backlog is skipped when the
    outbox is asked, and Bob's delivery starts within one attempt deadline, at once in fact."""
    hanging = [receivers("silent") for _ in range(8)]
    fast = receivers("ok")
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'outbox.db'}"

    async def scenario() -> tuple[float, int]:
        outbox = rt.webhooks.open_outbox(url)
        dispatcher = make_dispatcher(rt, outbox, poll_interval=30)
        for i in range(96):
            endpoint = rt.webhooks.Endpoint(hanging[i % 8].url, owner="alice")
            await outbox.enqueue(rt.webhooks.new_event("job.completed", {"i": i}), [endpoint])
        dispatcher.start()
        await until(lambda: sum(len(r.requests) for r in hanging) >= 4)
        await asyncio.sleep(0.05)  # the dispatcher has had its chance to take more
        held = sum(r.open for r in hanging)
        started = time.monotonic()
        bob = rt.webhooks.Endpoint(fast.url, owner="bob")
        await outbox.enqueue(rt.webhooks.new_event("job.completed", {"who": "bob"}), [bob])
        await until(lambda: bool(fast.requests), timeout=30)
        delay = fast.requests[0].at - started
        await dispatcher.stop(grace=0)
        await outbox.close()
        return delay, held

    delay, held = asyncio.run(scenario())
    print(f"\n{store}: bob's callback waited {delay * 1000:.0f} ms; alice held {held} slots")
    # (one attempt may just have met its deadline, its successor not yet connected)
    assert 3 <= held <= 4, "alice's deliveries hold her share of the slots, no more"
    assert delay < DEADLINE, f"bob waited {delay:.2f} s behind alice's hanging destinations"
