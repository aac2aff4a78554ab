"""Who is on the other end of the connection: the client address that brute-force limits and
anonymous rate limits count by, and that log lines name.

A client controls every header it sends, so `X-Forwarded-For` is believed only from the
proxies the operator names (`APIFORGE_TRUSTED_PROXIES`: addresses or networks). Then the
address is the rightmost entry that is not itself a trusted proxy, as each trusted hop
appends the address it saw (RFC 7239's reasoning, applied to the de facto header).

What comes out is always a parsed address, never header text: a value that is not an IP
address ends the walk (the hop that forwarded it is the client), IPv4-mapped IPv6 addresses
are their IPv4 address, and an IPv6 address stands for its /64 (one subscriber's prefix: an
attacker rotating through its own /64 is still one client). Without a usable address (a
Unix socket) the key is `unknown`.

uvicorn rewrites the connection's address from `X-Forwarded-For` itself when the peer is one
it trusts (127.0.0.1 unless told otherwise): the application then cannot see who connected.
The commands the README gives turn that off (`--no-proxy-headers`) so this module decides;
when a request still looks rewritten (its address is one the header names, or no address at
all) the client is counted as one fixed key, `forwarded`, and a warning is logged once:
rotating the header then gains nothing.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import Any

from starlette.requests import Request

logger = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_STATE_PROXIES = "apiforge_trusted_proxies"
_CACHE = "apiforge_client_address"
UNKNOWN = "unknown"
FORWARDED = "forwarded"  # uvicorn rewrote the address: whoever connected, one key
_MAX_HOPS = 32  # entries of X-Forwarded-For read, from the right


def trusted_networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """`APIFORGE_TRUSTED_PROXIES` entries as networks; ValueError names a bad one."""
    networks = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(
                f"{text!r} is not an IP address or network (e.g. 10.0.0.5, 10.0.0.0/8)"
            ) from None
    return tuple(networks)


def install_trusted_proxies(app: Any, entries: Iterable[str]) -> None:
    """Believe `X-Forwarded-For` from these proxies only (none: from no one)."""
    setattr(app.state, _STATE_PROXIES, trusted_networks(entries))


def parse_address(text: str) -> Address | None:
    """An IP address from a header or socket value (`[v6]:port`, `v4:port`, zone ids and
    surrounding blanks allowed); None for anything else."""
    value = text.strip()
    if value.startswith("["):  # [v6] or [v6]:port
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:  # v4:port
        value = value.partition(":")[0]
    value = value.partition("%")[0]  # a zone id names an interface, not a client
    if not value or len(value) > 45:
        return None
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_key(address: Address | None) -> str:
    """The key an address is counted and logged by: IPv4 as is, IPv6 by its /64."""
    if address is None:
        return UNKNOWN
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _trusted(address: Address, proxies: tuple[Network, ...]) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def _forwarded_for(headers: Iterable[tuple[bytes, bytes]]) -> list[str] | None:
    values = [v for k, v in headers if k == b"x-forwarded-for"]
    if not values:
        return None
    entries = b",".join(values).decode("latin-1").split(",")
    return entries[-_MAX_HOPS:]


_warned = False


def _warn_rewritten() -> None:
    global _warned
    if not _warned:
        _warned = True
        logger.warning(
            "uvicorn rewrote client addresses from X-Forwarded-For: the server cannot tell "
            "who connected and counts such requests as one client. Run uvicorn with "
            "--no-proxy-headers and name your proxies in APIFORGE_TRUSTED_PROXIES."
        )


def resolve(
    client: Any, headers: Iterable[tuple[bytes, bytes]], proxies: tuple[Network, ...]
) -> str:
    """The client key of a connection from `client` (the ASGI scope's) with these raw
    headers, believing `X-Forwarded-For` from `proxies` only (see the module docstring)."""
    peer = parse_address(str(client[0])) if client else None
    entries = _forwarded_for(headers)
    if entries is None:
        return client_key(peer)
    parsed = [parse_address(e) for e in entries]
    if peer is None or peer in parsed:  # uvicorn took it from the header: the peer is lost
        _warn_rewritten()
        return FORWARDED
    if not _trusted(peer, proxies):
        return client_key(peer)
    hop = peer
    for address in reversed(parsed):
        if address is None:
            return client_key(hop)  # not an address: the hop that forwarded it answers
        hop = address
        if not _trusted(hop, proxies):
            return client_key(hop)
    return client_key(hop)  # every hop trusted: the leftmost is the client


def client_ip(request: Request) -> str:
    """The request's client key (an IPv4 address, an IPv6 /64, `forwarded` or `unknown`)."""
    state = request.scope.setdefault("state", {})
    found = state.get(_CACHE)
    if isinstance(found, str):
        return found
    app = request.scope.get("app")
    proxies = getattr(getattr(app, "state", None), _STATE_PROXIES, ())
    found = resolve(request.scope.get("client"), request.scope.get("headers") or (), proxies)
    state[_CACHE] = found
    return found
