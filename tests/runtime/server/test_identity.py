"""Nobody can impersonate: AND requirements name one principal, public operations stay
anonymous for credentials short of scope, cookie credentials resist cross-site requests, and
client addresses cannot be forged through proxy headers (tests/runtime/server/identity_app.py
under uvicorn on 127.0.0.1; hostile addresses only appear as header text or in-process)."""

from __future__ import annotations

import base64
import shutil
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.runtime.server.conftest import HERE, RuntimeModules, copy_server_runtime
from tests.support import redis_server, uvicorn_server

ROOT = Path(__file__).resolve().parents[3]

PACKAGE = "identity_pkg"


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("identity")
    pkg = copy_server_runtime(root, PACKAGE)
    shutil.copy2(HERE / "identity_app.py", pkg / "identity_app.py")
    return root


def serve(
    project: Path, env: dict[str, str], *, workers: int = 1, args: tuple[str, ...] = ()
) -> Any:
    full = {"APIFORGE_AUTH_FAILURE_LIMIT": "1000/minute", **env}
    return uvicorn_server(
        f"{PACKAGE}.identity_app:create_app",
        cwd=project,
        env=full,
        workers=workers,
        extra_args=("--factory", *args),
    )


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[str]:
    env = {
        "TEST_REALM": "Coffre 🔐 金庫 Café",
        "APIFORGE_CSRF_ALLOWED_ORIGINS": "https://app.example.com",
    }
    with serve(project, env) as (base, _proc):
        yield base


def test_an_and_requirement_names_one_principal(server: str) -> None:
    url = server + "/transfers"
    mixed = httpx.post(url, headers={"X-Key": "key-alice", **basic("bob", "pw-bob")})
    assert mixed.status_code == 401, mixed.text
    assert mixed.json()["detail"] == "The credentials were not accepted."
    same = httpx.post(url, headers={"X-Key": "key-alice", **basic("alice", "pw-alice")})
    assert same.status_code == 200, same.text
    assert same.json()["principal"] == "alice"
    assert same.json()["principals"] == {"basic": "alice", "key": "alice"}


def test_a_credential_short_of_the_optional_scope_stays_anonymous(server: str) -> None:
    url = server + "/public"
    assert httpx.get(url).json()["principal"] is None
    assert httpx.get(url, headers=bearer("tok-alice")).json()["principal"] is None
    assert httpx.get(url, headers=bearer("tok-alice:read")).json()["principal"] == "alice"
    assert httpx.get(url, headers=bearer("forged")).status_code == 401


def test_a_title_in_any_script_still_makes_a_challenge(server: str) -> None:
    r = httpx.get(server + "/secret")
    assert r.status_code == 401, r.text
    assert r.headers["www-authenticate"] == 'Bearer realm="Coffre Cafe"'
    assert r.headers["content-type"] == "application/problem+json"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),  # not a browser's cross-site request: curl, SDKs
        ({"Sec-Fetch-Site": "same-origin"}, 200),
        ({"Sec-Fetch-Site": "none"}, 200),  # typed into the address bar
        ({"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Origin": "https://evil.example"}, 403),  # an older browser: Origin only
        ({"Origin": "null"}, 403),  # a sandboxed frame or a data: page
        ({"Origin": "https://api.example.com", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Origin": "https://app.example.com", "Sec-Fetch-Site": "same-site"}, 200),  # allowed
    ],
)
def test_cookie_credentials_refuse_cross_site_unsafe_requests(
    server: str, headers: dict[str, str], status: int
) -> None:
    cookies = {"sid": "key-alice"}
    with httpx.Client(cookies=cookies) as client:
        r = client.post(server + "/session", headers=headers)
        assert r.status_code == status, r.text
        if status == 403:
            assert r.json()["type"].endswith("/cross-site-request")
        # a safe method is never refused, and a cross-site form without the cookie gets 401
        assert client.get(server + "/session", headers=headers).status_code == 200
    assert httpx.post(server + "/session", headers=headers).status_code == 401


def test_an_origin_on_the_servers_own_host_is_same_origin(server: str) -> None:
    host = server.removeprefix("http://")
    r = httpx.post(
        server + "/session", cookies={"sid": "key-alice"}, headers={"Origin": f"http://{host}"}
    )
    assert r.status_code == 200, r.text


def test_rotating_forwarded_for_gains_nothing_under_uvicorns_defaults(project: Path) -> None:
    """uvicorn believes X-Forwarded-For from 127.0.0.1 by default; the server notices and
    counts those requests as one client, so rotating the header is not a fresh address,
    and non-address text never becomes a key."""
    with serve(project, {"APIFORGE_AUTH_FAILURE_LIMIT": "5/minute"}) as (base, _proc):
        statuses = []
        for i in range(8):
            xff = f"203.0.113.{i}" if i % 2 else f"not-an-ip-{i}\tforged"
            r = httpx.get(base + "/secret", headers={**bearer(f"x{i}"), "X-Forwarded-For": xff})
            statuses.append(r.status_code)
        assert statuses == [401] * 5 + [429] * 3
        locked = httpx.get(
            base + "/secret", headers={**bearer("tok-alice"), "X-Forwarded-For": "198.51.100.1"}
        )
        assert locked.status_code == 429  # the right credential too, while locked
        # the connection's own address (no header) was never the guesser's key
        r = httpx.get(base + "/secret", headers=bearer("tok-alice"))
        assert r.status_code == 200, r.text
        assert r.json()["client"] == "127.0.0.1"


@pytest.fixture(scope="module")
def proxied(project: Path) -> Iterator[str]:
    """The server behind a load balancer that is 127.0.0.1 (as the README runs it)."""
    env = {"APIFORGE_AUTH_FAILURE_LIMIT": "3/minute", "APIFORGE_TRUSTED_PROXIES": "127.0.0.1"}
    with serve(project, env, args=("--no-proxy-headers",)) as (base, _proc):
        yield base


def test_behind_a_trusted_proxy_only_the_proxys_word_counts(proxied: str) -> None:
    """The load balancer (here 127.0.0.1) appends the address it saw; the server believes
    that entry only. A guesser cannot lock out a victim by naming the victim's address, and
    rotating through its IPv6 /64 is still one client."""
    base = proxied
    victim = "198.51.100.7"
    forged = [
        httpx.get(
            base + "/secret",
            headers={**bearer(f"x{i}"), "X-Forwarded-For": f"{victim}, 203.0.113.9"},
        ).status_code
        for i in range(5)
    ]
    assert forged == [401] * 3 + [429] * 2
    r = httpx.get(base + "/secret", headers={**bearer("tok-v"), "X-Forwarded-For": victim})
    assert r.status_code == 200, r.text
    assert r.json()["client"] == victim
    v6 = [
        httpx.get(
            base + "/secret",
            headers={**bearer(f"y{i}"), "X-Forwarded-For": f"2001:db8:1:2::{i:x}"},
        ).status_code
        for i in range(1, 6)
    ]
    assert v6 == [401] * 3 + [429] * 2
    r = httpx.get(
        base + "/secret",
        headers={**bearer("tok-w"), "X-Forwarded-For": "[2001:db8:1:3::1]:4711"},
    )
    assert r.json()["client"] == "2001:db8:1:3::/64"


def test_the_failure_count_is_shared_by_every_worker(project: Path) -> None:
    """Two workers on Redis: the guesses of one kept-alive connection (one worker) lock the
    address out on the other worker too, from its very first request."""
    with redis_server() as url:
        env = {"APIFORGE_AUTH_FAILURE_LIMIT": "6/minute", "APIFORGE_RATE_LIMIT_STORAGE_URL": url}
        with serve(project, env, workers=2) as (base, _proc):
            with httpx.Client(base_url=base) as one_worker:
                first = [
                    one_worker.get("/secret", headers=bearer(f"x{i}")).status_code for i in range(6)
                ]
            # fresh connections land on either worker: each must already know
            later = [
                httpx.get(base + "/secret", headers=bearer(token)).status_code
                for token in [f"y{i}" for i in range(8)] + ["tok-alice"] * 2
            ]
    assert first == [401] * 6
    assert later == [429] * 10


# --- in-process: hostile addresses never leave this process -------------------------------


@pytest.mark.parametrize(
    ("client", "xff", "trusted", "key"),
    [
        (("203.0.113.5", 4000), None, "", "203.0.113.5"),
        (("203.0.113.5", 4000), "198.51.100.1", "", "203.0.113.5"),  # not a trusted peer
        (("10.0.0.5", 4000), "198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
        (("10.0.0.5", 4000), "198.51.100.1, 10.0.0.9", "10.0.0.0/8", "198.51.100.1"),
        (("10.0.0.5", 4000), "forged, 198.51.100.1", "10.0.0.0/8", "198.51.100.1"),
        (("10.0.0.5", 4000), "198.51.100.1\r\nINFO forged", "10.0.0.0/8", "10.0.0.5"),
        (("10.0.0.5", 4000), "[2001:db8::1]:443", "10.0.0.0/8", "2001:db8::/64"),
        (("2001:db8:aa:bb:1:2:3:4", 1), None, "", "2001:db8:aa:bb::/64"),
        (("::ffff:192.0.2.1", 1), None, "", "192.0.2.1"),
        (("fe80::1%eth0", 1), None, "", "fe80::/64"),
        (("198.51.100.1", 0), "198.51.100.1", "", "forwarded"),  # rewritten by uvicorn
        (("evil\nINFO forged", 0), "evil\nINFO forged", "", "forwarded"),
        (("evil\nINFO forged", 0), None, "", "unknown"),
        (None, None, "", "unknown"),
    ],
)
def test_client_keys_are_parsed_addresses(
    rt: RuntimeModules, client: Any, xff: str | None, trusted: str, key: str
) -> None:
    mod = rt.client_address
    headers = [(b"x-forwarded-for", xff.encode())] if xff is not None else []
    proxies = mod.trusted_networks(trusted.split(","))
    assert mod.resolve(client, headers, proxies) == key


def test_bad_trusted_proxies_stop_the_server(rt: RuntimeModules) -> None:
    settings = rt.settings.Settings(trusted_proxies=("10.0.0.0/8", "lb.internal"))
    assert any("APIFORGE_TRUSTED_PROXIES" in p and "lb.internal" in p for p in settings.problems())


# --- the basic-auth example of the generated verifier's docstring -------------------------


def docstring_example(method: str = "basic_auth") -> str:
    """The code of the example in the generated verifier's `method` docstring (secure.yaml)."""
    import ast
    import textwrap

    source = (
        ROOT / "golden" / "secure" / "server" / "vault_api_server" / "verifier.py"
    ).read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AsyncFunctionDef) and node.name == method:
            doc = ast.get_docstring(node) or ""
            code = [line for line in doc.splitlines() if line.startswith("    ")]
            return textwrap.dedent("\n".join(code)) + "\n"
    raise AssertionError(f"no {method} in the generated verifier")


@pytest.fixture(scope="module")
def example_server(project: Path) -> Iterator[str]:
    with serve(project, {"TEST_BASIC_EXAMPLE": docstring_example()}) as (base, _proc):
        yield base


def test_the_basic_auth_example_refuses_unknown_users_in_the_same_time(
    example_server: str,
) -> None:
    """Known user with a wrong password vs unknown user: the medians of 15 interleaved
    attempts each agree within 25 % (or 5 ms); without the dummy hash the unknown user is
    answered some 30 times faster."""
    with httpx.Client(base_url=example_server, timeout=30) as client:
        ok = client.get("/login", headers=basic("alice", "pw-alice"))
        assert ok.json()["principal"] == "alice", ok.text
        wrong: list[float] = []
        unknown: list[float] = []
        for i in range(15):
            for user, times in (("alice", wrong), (f"nobody-{i}", unknown)):
                start = time.perf_counter()
                r = client.get("/login", headers=basic(user, "guess"))
                times.append(time.perf_counter() - start)
                assert r.status_code == 401
    a, b = statistics.median(wrong), statistics.median(unknown)
    print(f"basic example: wrong password {a * 1e3:.1f} ms, unknown user {b * 1e3:.1f} ms")
    assert abs(a - b) < max(0.005, 0.25 * max(a, b)), (a, b)


def test_the_basic_auth_example_leaves_the_event_loop_free(example_server: str) -> None:
    """8 senders of basic credentials keep the server busy hashing; `/healthz` still answers
    within 100 ms (median), as the hash runs in threads."""
    stop = threading.Event()

    def sender() -> None:
        with httpx.Client(base_url=example_server, timeout=30) as client:
            while not stop.is_set():
                client.get("/login", headers=basic("alice", "wrong"))

    threads = [threading.Thread(target=sender) for _ in range(8)]
    for t in threads:
        t.start()
    latencies = []
    try:
        time.sleep(0.3)
        with httpx.Client(base_url=example_server, timeout=30) as client:
            for _ in range(20):
                start = time.perf_counter()
                assert client.get("/healthz").status_code == 200
                latencies.append(time.perf_counter() - start)
                time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join()
    median = statistics.median(latencies)
    print(f"/healthz under 8 basic-auth senders: median {median * 1e3:.1f} ms")
    assert median < 0.1, latencies


def test_anonymous_idempotency_keys_are_unique_and_replay_no_cookie(proxied: str) -> None:
    """A public idempotent operation: a short key is refused; the same key and body from
    another client runs afresh (the scope is the caller's address); the caller's own retry
    is a replay without the first answer's `Set-Cookie`."""
    url = proxied + "/signups"
    victim = {"X-Forwarded-For": "198.51.100.7"}
    for short in ("7", "aaaaaaaaaaaaaaaaaaaa"):
        r = httpx.post(url, json={}, headers={**victim, "Idempotency-Key": short})
        assert r.status_code == 400, r.text
        assert r.json()["type"].endswith("/idempotency-key-invalid")
    key = "4b7e6c1a-93d2-4f0e-b8a5-2c9d71e3f604"
    first = httpx.post(url, json={}, headers={**victim, "Idempotency-Key": key})
    assert first.status_code == 201 and "session=" in first.headers["set-cookie"]
    other = httpx.post(
        url, json={}, headers={"X-Forwarded-For": "203.0.113.9", "Idempotency-Key": key}
    )
    assert other.status_code == 201 and "idempotent-replayed" not in other.headers
    assert other.json()["executions"] == first.json()["executions"] + 1
    retry = httpx.post(url, json={}, headers={**victim, "Idempotency-Key": key})
    assert retry.headers["idempotent-replayed"] == "true"
    assert retry.content == first.content
    assert "set-cookie" not in retry.headers
