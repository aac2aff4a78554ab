"""The destination policy on its own (no network): the static check a job submission runs on a
``callbackUrl``, the address classes the connect-time check refuses, and the allow-list."""

from __future__ import annotations

import ipaddress
import re
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.runtime.server.conftest import RuntimeModules

# (URL, a fragment of the refusal's reason): refused by the default policy, without DNS
STATIC_REFUSALS = [
    ("https://10.0.0.1/hook", "private address"),
    ("https://172.16.5.4/hook", "private address"),
    ("https://192.168.1.1/hook", "private address"),
    ("https://169.254.169.254/latest/meta-data/", "link-local"),
    ("https://127.0.0.1/", "loopback"),
    ("https://127.8.9.10/", "loopback"),
    ("https://[::1]/", "loopback"),
    ("https://[::ffff:127.0.0.1]/", "IPv4-mapped IPv6 address (it reaches 127.0.0.1)"),
    ("https://[::ffff:8.8.8.8]/", "IPv4-mapped"),
    ("https://[::127.0.0.1]/", "IPv4-compatible"),
    ("https://[64:ff9b::10.0.0.1]/", "NAT64 address of 10.0.0.1"),
    ("https://[64:ff9b::169.254.169.254]/", "NAT64 address of 169.254.169.254"),
    ("https://[64:ff9b:1::a00:1]/", "local-use NAT64"),
    ("https://[2002:a00:1::1]/", "6to4"),
    ("https://[2001:0:4136:e378::1]/", "Teredo"),
    ("https://[fc00::1]/", "unique local"),
    ("https://[fd12:3456::1]/", "unique local"),
    ("https://[fe80::1]/", "link-local"),
    ("https://[fec0::1]/", "site-local"),
    ("https://[ff02::1]/", "multicast"),
    ("https://[::]/", "unspecified"),
    ("https://[2001:db8::1]/", "documentation"),
    ("https://[4000::1]/", "not a global unicast address"),
    ("https://100.64.0.1/", "carrier-grade NAT"),
    ("https://100.127.255.254/", "carrier-grade NAT"),
    ("https://0.0.0.0/", "unspecified"),
    ("https://224.0.0.251/", "multicast"),
    ("https://239.255.255.250/", "multicast"),
    ("https://240.0.0.1/", "reserved"),
    ("https://255.255.255.255/", "reserved"),
    ("https://198.18.0.1/", "benchmarking"),
    ("https://192.0.2.10/", "documentation"),
    ("https://127.1/", "non-standard numeric form"),
    ("https://2130706433/", "non-standard numeric form"),
    ("https://0x7f.0.0.1/", "non-standard numeric form"),
    ("https://0177.0.0.1/", "not a valid absolute URL"),  # httpx refuses octal quads itself
    ("https://localhost/", "loopback name"),
    ("https://LOCALHOST./", "loopback name"),
    ("https://api.localhost/", "loopback name"),
    ("https://redis:6379/", "not a fully qualified"),
    ("https://metadata/computeMetadata/v1/", "not a fully qualified"),
    ("http://hooks.example.com/", "scheme must be https (got 'http')"),
    ("ftp://hooks.example.com/", "scheme must be https"),
    ("file:///etc/passwd", "scheme must be https"),
    ("gopher://hooks.example.com/", "scheme must be https"),
    ("//hooks.example.com/", "scheme must be https (got none)"),
    ("https://alice:s3cret@hooks.example.com/", "must not contain credentials"),
    ("https://hooks.example.com@10.0.0.1/", "must not contain credentials"),
    ("https://hooks.example.com:0/", "port 0 is out of range"),
    ("https://hooks.example.com:70000/", "out of range"),
    ("https://hooks.example.com/a b", "whitespace or control"),
    ("https://hooks.example.com/\r\nX-Injected: 1", "whitespace or control"),
    ("https:///path", "no host"),
    ("https://hooks.example.com/" + "a" * 2100, "longer than 2048"),
]

STATIC_ALLOWED = [
    "https://hooks.example.com/webhooks?token=abc",
    "https://hooks.example.com:8443/x",
    "https://8.8.8.8/",
    "https://[2606:4700:4700::1111]/",
    "https://[64:ff9b::8.8.8.8]/",  # DNS64 for an IPv4-only receiver: judged by 8.8.8.8
    "https://bücher.example/",
    "HTTPS://Hooks.Example.COM./x",
]


@pytest.mark.parametrize(("url", "why"), STATIC_REFUSALS, ids=[u[:60] for u, _ in STATIC_REFUSALS])
def test_the_static_check_refuses_without_dns(rt: RuntimeModules, url: str, why: str) -> None:
    with pytest.raises(rt.destinations.DestinationRefused) as refused:
        rt.destinations.DestinationPolicy().check_url(url)
    assert why in refused.value.reason
    assert "s3cret" not in refused.value.reason, "credentials are never repeated"


@pytest.mark.parametrize("url", STATIC_ALLOWED)
def test_public_https_destinations_pass(rt: RuntimeModules, url: str) -> None:
    rt.destinations.DestinationPolicy().check_url(url)


def test_allow_list_names_exact_addresses_networks_and_hosts(rt: RuntimeModules) -> None:
    dst = rt.destinations
    policy = dst.DestinationPolicy(
        allow_http=True,
        allow=("127.0.0.1", "10.20.0.0/16", "[fd00::1]", "hooks.internal", "redis", "*.corp.test"),
    )
    for url in (
        "http://127.0.0.1:8080/",
        "https://10.20.3.4/",
        "https://[fd00::1]/",
        "http://hooks.internal/",
        "http://redis:6379/",  # a single label, named by the allow-list
        "https://a.corp.test/",
        "https://a.b.corp.test/",
    ):
        policy.check_url(url)
    for url, why in (
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),  # allowing 127.0.0.1 is not allowing this
        ("http://[::1]/", "loopback"),
        ("http://127.0.0.2/", "loopback"),
        ("https://10.21.0.1/", "private"),
        ("https://localhost/", "loopback"),
    ):
        with pytest.raises(dst.DestinationRefused, match=why):
            policy.check_url(url)
    # names: what they resolve to is accepted; anything else is checked address by address
    public = ipaddress.ip_address("93.184.215.14")
    private = ipaddress.ip_address("10.9.9.9")
    policy.check_resolved("hooks.internal", [private])
    policy.check_resolved("x.corp.test.", [private])
    policy.check_resolved("hooks.example.com", [public, ipaddress.ip_address("10.20.0.7")])
    with pytest.raises(dst.DestinationRefused, match=re.escape("'corp.test' resolves to 10.9.9.9")):
        policy.check_resolved("corp.test", [private])
    with pytest.raises(dst.DestinationRefused, match=re.escape("resolves to 10.9.9.9, a private")):
        policy.check_resolved("mixed.example.com", [public, private])
    # allow-listing a destination does not allow plain http
    with pytest.raises(dst.DestinationRefused, match="scheme"):
        dst.DestinationPolicy(allow=("127.0.0.1",)).check_url("http://127.0.0.1/")


@pytest.mark.parametrize("entry", ["not a host", "http://x.example/", "10.0.0.0/33", "*", "a..b"])
def test_a_malformed_allow_list_entry_fails_at_startup(rt: RuntimeModules, entry: str) -> None:
    with pytest.raises(ValueError, match="allow-list"):
        rt.destinations.DestinationPolicy(allow=(entry,))


def test_a_refusal_is_a_422_validation_problem(rt: RuntimeModules) -> None:
    with pytest.raises(rt.destinations.DestinationRefused) as refused:
        rt.destinations.DestinationPolicy().check_url("https://169.254.169.254/latest")
    problem = refused.value.problem().body("/v1/reports")
    assert problem["status"] == 422
    assert problem["type"].endswith("/validation-error")
    [error] = problem["errors"]
    assert error["location"] == ["body", "callbackUrl"]
    assert error["type"] == "destination_refused"
    assert "169.254.169.254 is a link-local address" in error["message"]


def test_the_policy_repr_shows_its_rules(rt: RuntimeModules) -> None:
    policy = rt.destinations.DestinationPolicy(allow_http=True, allow=("10.0.0.0/8", "*.x.test"))
    assert repr(policy) == "DestinationPolicy(allow_http=True, allow=['10.0.0.0/8', '*.x.test'])"


# ---- the address classes, against the standard library's own notion of "global"


@pytest.fixture(scope="module")
def dst(rt: RuntimeModules) -> ModuleType:
    return rt.destinations


def _reason(dst: ModuleType, ip: Any) -> str | None:
    result: str | None = dst.non_public_reason(ip)
    return result


@settings(max_examples=3000, deadline=None)
@given(st.ip_addresses())
def test_whatever_passes_is_globally_routable_unicast(dst: ModuleType, ip: Any) -> None:
    if _reason(dst, ip) is None:
        assert not ip.is_multicast and not ip.is_private and not ip.is_loopback
        if ip.version == 6 and ip in ipaddress.IPv6Network("64:ff9b::/96"):
            assert ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF).is_global
        else:
            assert ip.is_global
            assert ip.version == 4 or ip in ipaddress.IPv6Network("2000::/3")


@settings(max_examples=500, deadline=None)
@given(st.ip_addresses(v=4))
def test_ipv4_inside_ipv6_never_passes_unless_nat64_of_a_public_one(
    dst: ModuleType, v4: Any
) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{v4}")
    assert _reason(dst, mapped) is not None
    assert str(v4) in str(_reason(dst, mapped))
    assert _reason(dst, ipaddress.IPv6Address(f"::{v4}")) is not None
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(v4) << 80) | 1)
    assert _reason(dst, six_to_four) is not None
    nat64 = ipaddress.IPv6Address(f"64:ff9b::{v4}")
    assert (_reason(dst, nat64) is None) == (_reason(dst, v4) is None)
