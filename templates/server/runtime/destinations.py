"""Where the server may send requests of its own (webhooks, job callbacks): a destination URL
comes from callers and is untrusted input, so it must not reach inside.

``DestinationPolicy(allow_http=False, allow=())`` decides, in two places:

- ``policy.check_url(url)`` — the *static* check, no DNS: for a ``callbackUrl`` when a job is
  submitted (a refusal is a 422 problem there, see ``DestinationRefused.problem``) and again
  before every delivery attempt. ``https`` only (``http`` too with ``allow_http``); no
  credentials in the URL; a port in 1 to 65535; at most 2,048 characters, no whitespace or control
  characters; a literal IP must be public; IPv4 in a non-standard numeric form (``127.1``,
  ``0x7f.0.0.1``, ``2130706433``) is refused, and so are ``localhost``/``*.localhost`` and
  single-label names (``http://redis/``: resolved through search domains, never a public host).
- ``GuardedNetworkBackend`` — the *connect-time* check, inside the HTTP connection itself:
  it resolves the host name (an injectable ``Resolver``), checks **every** address the name
  resolves to and refuses the destination if any one is not public (a name that mixes public
  and internal addresses is a misconfiguration or an attack: refusing it is the clear answer,
  and connecting to "the public ones" would not make it safe to keep using), then connects to
  the checked address itself — never resolving again, so DNS rebinding between check and
  connect is impossible. TLS still verifies the certificate against the host *name* and sends
  it as SNI (httpcore starts TLS with ``server_hostname`` = the URL's host).
- ``guarded_client(policy, …)`` — the ``httpx.AsyncClient`` to send with: ``GuardedTransport``
  (the check above plus ``check_url`` on every request, redirects or not), proxies and
  ``.netrc`` from the environment ignored (``trust_env=False``), redirects never followed (a
  3xx is the answer).

Not public, so refused unless the allow-list names them: loopback, private (RFC 1918, CGNAT
100.64/10, IPv6 unique local fc00::/7), link-local (169.254/16 — cloud metadata at
169.254.169.254 — and fe80::/10), multicast, unspecified, reserved, documentation and
benchmarking ranges, IPv4-mapped (``::ffff:127.0.0.1``) and IPv4-compatible IPv6, 6to4
(2002::/16), Teredo and the rest of 2001::/23, local-use NAT64 (64:ff9b:1::/48), and any IPv6
address outside global unicast 2000::/3. The well-known NAT64 prefix 64:ff9b::/96 (what DNS64
hands an IPv6-only host for an IPv4-only receiver) is judged by the IPv4 address it embeds.

The allow-list (``allow``) names exceptions: an IP (``127.0.0.1``, ``::1``), a network
(``10.20.0.0/16``, ``fd00::/8``), a host name (``hooks.internal``: any address it resolves to
is accepted) or every subdomain of a name (``*.hooks.internal``). An entry is exact:
allowing ``127.0.0.1`` does not allow ``::ffff:127.0.0.1``. It does not allow ``http``; that
is ``allow_http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeAlias

import httpcore
import httpx

from .problems import ProblemDetail

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
#: ``await resolver(host, port)`` → the host's addresses (in the order to try them); raises
#: ``OSError`` (e.g. ``socket.gaierror``) when the name does not resolve.
Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[IPAddress]]]

MAX_URL_LENGTH = 2048
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_HOST_ENTRY = re.compile(r"^(\*\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_-]+$")


class DestinationRefused(Exception):
    """A destination the policy does not allow. ``reason`` says why in words fit for a problem
    detail; it names the host or address, never credentials (URLs with them are refused
    without being repeated)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def problem(self, location: Sequence[str | int] = ("body", "callbackUrl")) -> ProblemDetail:
        """The 422 problem for a refused URL in a request (the shape of a validation error,
        so clients handle it like any invalid field)."""
        return ProblemDetail(
            422,
            "validation-error",
            "Validation failed",
            "The request has 1 invalid field.",
            extensions={
                "errors": [
                    {
                        "location": list(location),
                        "message": f"destination refused: {self.reason}",
                        "type": "destination_refused",
                    }
                ]
            },
        )


# --------------------------------------------------------------------------- addresses

_V4_REFUSED: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "an unspecified ('this network') address"),
    ("10.0.0.0/8", "a private address (RFC 1918)"),
    ("100.64.0.0/10", "a shared carrier-grade NAT address (RFC 6598)"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address (cloud metadata lives at 169.254.169.254)"),
    ("172.16.0.0/12", "a private address (RFC 1918)"),
    ("192.0.0.0/24", "an IETF protocol assignment (RFC 6890)"),
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a 6to4 relay anycast address"),
    ("192.168.0.0/16", "a private address (RFC 1918)"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("240.0.0.0/4", "a reserved address"),
)
_V6_REFUSED: tuple[tuple[str, str], ...] = (
    ("::/128", "the unspecified address"),
    ("::1/128", "a loopback address"),
    ("::ffff:0:0/96", "an IPv4-mapped IPv6 address"),
    ("::/96", "an IPv4-compatible IPv6 address"),
    ("64:ff9b:1::/48", "a local-use NAT64 address (RFC 8215)"),
    ("100::/64", "a discard-only address"),
    ("2001::/23", "an IETF protocol assignment (Teredo, ORCHID, …)"),
    ("2001:db8::/32", "a documentation address"),
    ("2002::/16", "a 6to4 address (it embeds an IPv4 address)"),
    ("3fff::/20", "a documentation address"),
    ("5f00::/16", "a segment routing (SRv6) address"),
    ("fc00::/7", "a unique local address (private)"),
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
)
_V4_TABLE = tuple((ipaddress.IPv4Network(n), why) for n, why in _V4_REFUSED)
_V6_TABLE = tuple((ipaddress.IPv6Network(n), why) for n, why in _V6_REFUSED)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def non_public_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address (e.g. ``"a loopback address"``); None when
    it is one. The allow-list is not consulted here."""
    if ip.version == 4:
        for net4, why in _V4_TABLE:
            if ip in net4:
                return why
        return None if ip.is_global else "not a globally routable address"
    assert isinstance(ip, ipaddress.IPv6Address)
    plain = ipaddress.IPv6Address(int(ip))  # without a %scope
    if plain in _NAT64:
        embedded = ipaddress.IPv4Address(int(plain) & 0xFFFFFFFF)
        inner = non_public_reason(embedded)
        return None if inner is None else f"a NAT64 address of {embedded}, {inner}"
    for net6, why in _V6_TABLE:
        if plain in net6:
            if plain.ipv4_mapped is not None:
                return f"{why} (it reaches {plain.ipv4_mapped})"
            return why
    if plain not in _GLOBAL_UNICAST:
        return "not a global unicast address"
    return None if plain.is_global else "not a globally routable address"


def parse_ip(host: str) -> IPAddress | None:
    """``host`` as an IP address (IPv6 with or without brackets), or None for a name."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _norm(host: str) -> str:
    return host.strip().lower().rstrip(".")


# --------------------------------------------------------------------------- the policy


class DestinationPolicy:
    """Which destinations the server may call (module docstring). Build it once from the
    settings; a malformed allow-list entry is a ``ValueError`` at startup, not a surprise
    later."""

    def __init__(self, *, allow_http: bool = False, allow: Iterable[str] = ()) -> None:
        self.allow_http = allow_http
        networks: list[IPNetwork] = []
        names: set[str] = set()
        suffixes: set[str] = set()
        for raw in allow:
            entry = raw.strip()
            if not entry:
                continue
            text = entry[1:-1] if entry.startswith("[") and entry.endswith("]") else entry
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
                continue
            except ValueError:
                pass
            name = _norm(entry)
            if not _HOST_ENTRY.match(name):
                raise ValueError(
                    f"webhook destination allow-list: {entry!r} is not an IP address, a network"
                    " (10.0.0.0/8), a host name or *.domain"
                )
            if name.startswith("*."):
                suffixes.add(name[1:])  # ".domain": subdomains only
            else:
                names.add(name)
        self.allowed_networks: tuple[IPNetwork, ...] = tuple(networks)
        self.allowed_names: frozenset[str] = frozenset(names)
        self.allowed_suffixes: tuple[str, ...] = tuple(sorted(suffixes))

    def __repr__(self) -> str:
        allowed = [str(n) for n in self.allowed_networks]
        allowed += sorted(self.allowed_names) + ["*" + s for s in self.allowed_suffixes]
        return f"DestinationPolicy(allow_http={self.allow_http}, allow={allowed!r})"

    # ---- allow-list

    def name_allowed(self, host: str) -> bool:
        name = _norm(host)
        return name in self.allowed_names or any(name.endswith(s) for s in self.allowed_suffixes)

    def address_allowed(self, ip: IPAddress) -> bool:
        plain: IPAddress = ipaddress.IPv6Address(int(ip)) if ip.version == 6 else ip
        return any(plain.version == n.version and plain in n for n in self.allowed_networks)

    # ---- checks

    def check_address(self, ip: IPAddress) -> None:
        """Refuse an address that is not public, unless the allow-list names it."""
        if self.address_allowed(ip):
            return
        why = non_public_reason(ip)
        if why is not None:
            raise DestinationRefused(f"{ip} is {why}")

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """The static check (no DNS); returns the parsed URL. Raises ``DestinationRefused``."""
        if isinstance(url, str):
            if len(url) > MAX_URL_LENGTH:
                raise DestinationRefused(f"the URL is longer than {MAX_URL_LENGTH} characters")
            if _CONTROL_OR_SPACE.search(url):
                raise DestinationRefused("the URL contains whitespace or control characters")
            try:
                parsed = httpx.URL(url)
            except (httpx.InvalidURL, ValueError, TypeError):
                raise DestinationRefused("not a valid absolute URL") from None
        else:
            parsed = url
        scheme = parsed.scheme.lower()
        if scheme != "https" and not (scheme == "http" and self.allow_http):
            allowed = "https or http" if self.allow_http else "https"
            shown = f"{scheme!r}" if scheme else "none"
            raise DestinationRefused(f"the scheme must be {allowed} (got {shown})")
        if parsed.userinfo:
            raise DestinationRefused("the URL must not contain credentials (user:password@)")
        try:
            host = parsed.raw_host.decode("ascii")
        except UnicodeDecodeError:
            raise DestinationRefused("the host is not a valid host name") from None
        if not host:
            raise DestinationRefused("the URL has no host")
        port = parsed.port
        if port is not None and not 1 <= port <= 65535:
            raise DestinationRefused(f"the port {port} is out of range")
        self.check_host(host)
        return parsed

    def check_host(self, host: str) -> None:
        """Static checks of a host (a literal IP, or a name before it is resolved)."""
        ip = parse_ip(host)
        if ip is not None:
            self.check_address(ip)
            return
        if self.name_allowed(host):
            return
        name = _norm(host)
        labels = name.split(".")
        if _NUMERIC_LABEL.match(labels[-1]):
            raise DestinationRefused(
                f"the host {name!r} is an IP address in a non-standard numeric form"
            )
        if name == "localhost" or name.endswith(".localhost"):
            raise DestinationRefused(f"the host {name!r} is a loopback name")
        if len(labels) < 2:
            raise DestinationRefused(f"the host {name!r} is not a fully qualified domain name")

    def check_resolved(self, host: str, addresses: Sequence[IPAddress]) -> None:
        """The connect-time check: every address ``host`` resolved to must pass (unless the
        allow-list names the host itself)."""
        if self.name_allowed(host):
            return
        for ip in addresses:
            if self.address_allowed(ip):
                continue
            why = non_public_reason(ip)
            if why is not None:
                raise DestinationRefused(f"the host {_norm(host)!r} resolves to {ip}, {why}")


# --------------------------------------------------------------------------- resolving


class SystemResolver:
    """``getaddrinfo`` on its own thread pool: a name server that never answers holds one of
    these threads until the system resolver gives up (glibc: up to 30 s, longer than an attempt
    deadline, which only stops the waiting), never a thread of the event loop's default
    executor, which the SQLite stores use. Threads are started as needed, up to
    ``max_workers``."""

    def __init__(self, max_workers: int = 64) -> None:
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="apiforge-dns")

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        loop = asyncio.get_running_loop()
        infos = await loop.run_in_executor(
            self._executor,
            socket.getaddrinfo,
            host,
            port,
            0,
            socket.SOCK_STREAM,
            socket.IPPROTO_TCP,
        )
        found: list[IPAddress] = []
        for family, _, _, _, sockaddr in infos:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if ip not in found:
                found.append(ip)
        return found

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the connect-time check: resolve, check every address,
    connect to a checked address (``backend``, default anyio, only ever sees IP addresses).
    Unix sockets are refused."""

    def __init__(
        self,
        policy: DestinationPolicy,
        *,
        resolver: Resolver | None = None,
        backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.policy = policy
        self._system_resolver: SystemResolver | None = None
        if resolver is None:
            self._system_resolver = resolver = SystemResolver()
        self.resolver: Resolver = resolver
        self.backend = backend or httpcore.AnyIOBackend()

    async def resolve_checked(self, host: str, port: int) -> list[IPAddress]:
        """The addresses to connect to, all checked; ``DestinationRefused`` if any is not
        allowed; ``httpcore.ConnectError`` if the name does not resolve."""
        literal = parse_ip(host)
        if literal is not None:
            self.policy.check_address(literal)
            return [literal]
        self.policy.check_host(host)
        try:
            addresses = list(await self.resolver(host, port))
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise httpcore.ConnectError(f"cannot resolve {_norm(host)!r}: {why}") from None
        if not addresses:
            raise httpcore.ConnectError(f"{_norm(host)!r} has no address")
        self.policy.check_resolved(host, addresses)
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.resolve_checked(host, port)
        failure: Exception | None = None
        for ip in addresses:  # one after the other; the attempt's deadline bounds them all
            try:
                return await self.backend.connect_tcp(
                    str(ip),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise DestinationRefused("unix sockets are not a destination")

    async def sleep(self, seconds: float) -> None:
        await self.backend.sleep(seconds)

    def close(self) -> None:
        if self._system_resolver is not None:
            self._system_resolver.close()


# --------------------------------------------------------------------------- the transport

_HTTPCORE_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's (what ``httpx.AsyncHTTPTransport`` does)."""
    try:
        yield
    except Exception as exc:
        for core, mapped in _HTTPCORE_ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            await self._stream.aclose()


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that checks every request's URL (``check_url``) and connects only
    through ``GuardedNetworkBackend``; no proxy, HTTP/1.1. ``verify``: the TLS trust (True:
    the system's CAs; an ``ssl.SSLContext`` for a private CA). Connections are pooled per
    origin with no pool limit: the dispatcher bounds how many requests run at once."""

    def __init__(
        self,
        policy: DestinationPolicy,
        *,
        resolver: Resolver | None = None,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        verify: ssl.SSLContext | bool = True,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self.policy = policy
        self.backend = GuardedNetworkBackend(policy, resolver=resolver, backend=network_backend)
        context = (
            verify
            if isinstance(verify, ssl.SSLContext)
            else httpx.create_ssl_context(verify=verify)
        )
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=None,
            keepalive_expiry=keepalive_expiry,
            network_backend=self.backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.policy.check_url(request.url)
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
        self.backend.close()


def guarded_client(
    policy: DestinationPolicy,
    *,
    timeout: float,
    resolver: Resolver | None = None,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
    verify: ssl.SSLContext | bool = True,
    headers: dict[str, str] | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that only reaches destinations ``policy`` allows: checked at
    connect time, no environment proxies or ``.netrc``, no redirects followed."""
    return httpx.AsyncClient(
        transport=GuardedTransport(
            policy, resolver=resolver, network_backend=network_backend, verify=verify
        ),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    )
