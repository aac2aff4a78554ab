"""The client generated from specs/secure.yaml against a real server on 127.0.0.1 that records
what each request carried: every operation sends exactly the credentials it needs, sync and
async; a missing one fails before anything is sent; OAuth2 client credentials; no secret in
logs or errors."""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.client.conftest import Generated, generate
from tests.runtime.client.fakes import (
    PROBLEM_HEADERS,
    Recorded,
    Reply,
    ScriptServer,
    problem,
    serving,
)

KEY = "ak-7f3e-header-secret"
USER, PASSWORD = "ada", "pw-91c2-basic-secret"
BEARER = "bt-55d0-bearer-secret"
COOKIE = "ck-0a9b-cookie-secret"
QUERY = "qk-e41f-query-secret"
OIDC = "ot-8c21-oidc-secret"
CLIENT_SECRET = "cs-3b7a-client-secret"
SECRETS = (KEY, PASSWORD, BEARER, COOKIE, QUERY, OIDC, CLIENT_SECRET)
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

CALLER = {"principal": None}
ROUTES: dict[tuple[str, str], Reply] = {
    ("GET", "/v1/secrets"): Reply(200, json={"names": []}),
    ("PUT", "/v1/secrets/db"): Reply(200, json={"name": "db", "owner": "ada"}),
    ("POST", "/v1/transfers"): Reply(201, json={"id": "tr_1", "amount": 5, "owner": "ada"}),
    ("GET", "/v1/status"): Reply(200, json={"ok": True}),
    ("GET", "/v1/whoami"): Reply(200, json=CALLER),
    ("GET", "/v1/session"): Reply(200, json=CALLER),
    ("GET", "/v1/exports"): Reply(200, json=CALLER),
    ("GET", "/v1/audit"): Reply(200, json=CALLER),
}
# operation → (how to call it, the request it makes)
CALLS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "list_secrets": (lambda c: c.secrets.list(), "GET /v1/secrets"),
    "put_secret": (
        lambda c: c.secrets.put(name="db", body={"value": "v"}),
        "PUT /v1/secrets/db",
    ),
    "create_transfer": (
        lambda c: c.transfers.create(body={"amount": 5}),
        "POST /v1/transfers",
    ),
    "get_status": (lambda c: c.meta.get_status(), "GET /v1/status"),
    "who_am_i": (lambda c: c.meta.who_am_i(), "GET /v1/whoami"),
    "get_session": (lambda c: c.meta.get_session(), "GET /v1/session"),
    "list_exports": (lambda c: c.meta.list_exports(), "GET /v1/exports"),
    "get_audit": (lambda c: c.meta.get_audit(), "GET /v1/audit"),
}


@pytest.fixture(scope="module")
def vault(generated: dict[str, Generated]) -> Iterator[Any]:
    """The generated vault package, imported."""
    out = generated["secure"]
    sys.path.insert(0, str(out.out))
    try:
        yield __import__(out.package)
    finally:
        sys.path.remove(str(out.out))


@pytest.fixture
def server() -> Iterator[ScriptServer]:
    script = ScriptServer()
    for (method, path), reply in ROUTES.items():
        script.on(method, path, reply)
    with serving(script) as served:
        yield served


def token_endpoint(server: ScriptServer, delay: float = 0.0) -> list[Recorded]:
    seen: list[Recorded] = []
    lock = threading.Lock()

    def answer(request: Recorded) -> Reply:
        with lock:
            seen.append(request)
            token = f"tok-{len(seen)}"
        return Reply(
            200,
            json={"access_token": token, "token_type": "bearer", "expires_in": 900},
            delay=delay,
        )

    server.on("POST", "/oauth/token", answer)
    return seen


def carried(request: Recorded) -> dict[str, str]:
    """Every place a credential could travel in: what the request carried there."""
    found = {
        k: request.headers[k]
        for k in ("authorization", "x-vault-key", "cookie")
        if k in request.headers
    }
    query = urlsplit(request.path).query
    if query:
        found["query"] = query
    return found


def everything(vault: Any, server: ScriptServer) -> dict[str, Any]:
    return {
        "api_key_header": KEY,
        "basic_auth": (USER, PASSWORD),
        "bearer_auth": BEARER,
        "cookie_key": COOKIE,
        "oauth": vault.ClientCredentials(
            "vault-cli", CLIENT_SECRET, token_url=server.url + "/oauth/token"
        ),
        "oidc": OIDC,
        "query_key": QUERY,
    }


EXACTLY = {
    "list_secrets": {"authorization": f"Bearer {BEARER}"},
    "put_secret": {"x-vault-key": KEY},  # the first alternative the client holds
    "create_transfer": {"x-vault-key": KEY, "authorization": BASIC},  # both, AND-ed
    "get_status": {},  # security: []
    "who_am_i": {"authorization": f"Bearer {BEARER}"},  # [{}, {bearerAuth}]: says who calls
    "get_session": {"cookie": f"vault_session={COOKIE}"},
    "list_exports": {"query": f"api_key={QUERY}"},
    "get_audit": {"authorization": f"Bearer {OIDC}"},
}


def run(
    vault: Any, server: ScriptServer, is_async: bool, names: list[str], **given: Any
) -> dict[str, Any]:
    """Call each operation with a client holding `given`; returns name → result or error."""
    outcomes: dict[str, Any] = {}
    if not is_async:
        with vault.Client(base_url=server.url, **given) as client:
            for name in names:
                try:
                    outcomes[name] = CALLS[name][0](client)
                except vault.APIError as exc:
                    outcomes[name] = exc
        return outcomes

    async def main() -> None:
        async with vault.AsyncClient(base_url=server.url, **given) as client:
            for name in names:
                try:
                    outcomes[name] = await CALLS[name][0](client)
                except vault.APIError as exc:
                    outcomes[name] = exc

    asyncio.run(main())
    return outcomes


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_each_operation_sends_exactly_what_it_needs(
    vault: Any, server: ScriptServer, is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    outcomes = run(vault, server, is_async, list(CALLS), **everything(vault, server))
    assert not [o for o in outcomes.values() if isinstance(o, Exception)], outcomes
    sent = {f"{r.method} {r.path.split('?')[0]}": carried(r) for r in server.requests}
    assert sent == {CALLS[name][1]: expected for name, expected in EXACTLY.items()}
    assert not any(secret in caplog.text for secret in SECRETS)
    assert "api_key=REDACTED" in caplog.text  # httpx logs the URL; the key is masked


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_oauth_client_credentials_with_the_scopes_each_operation_needs(
    vault: Any, server: ScriptServer, is_async: bool
) -> None:
    tokens = token_endpoint(server)
    grant = vault.ClientCredentials(
        "vault-cli", CLIENT_SECRET, token_url=server.url + "/oauth/token"
    )
    names = ["put_secret", "put_secret", "who_am_i", "get_status", "list_secrets"]
    outcomes = run(vault, server, is_async, names, oauth=grant)
    assert isinstance(outcomes["list_secrets"], vault.MissingCredentials)
    assert len(tokens) == 1 and parse_qs(tokens[0].body.decode())["scope"] == ["secrets:write"]
    sent = [(r.method, carried(r)) for r in server.requests if r.path != "/oauth/token"]
    assert sent == [
        ("PUT", {"authorization": "Bearer tok-1"}),
        ("PUT", {"authorization": "Bearer tok-1"}),  # cached
        ("GET", {}),  # whoami: oauth is not one of its schemes
        ("GET", {}),
    ]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_missing_credential_fails_before_anything_is_sent(
    vault: Any, server: ScriptServer, is_async: bool
) -> None:
    secured = [n for n in CALLS if n not in ("get_status", "who_am_i")]
    outcomes = run(vault, server, is_async, secured, basic_auth=(USER, PASSWORD))
    assert server.requests == []
    for name in secured:
        assert isinstance(outcomes[name], vault.MissingCredentials), name
        assert isinstance(outcomes[name], vault.CredentialsError)
    assert str(outcomes["put_secret"]) == (
        "PUT /v1/secrets/db needs credentials this client was not given: pass "
        "`api_key_header=` (apiKeyHeader), or `oauth=` (oauth) to the client"
    )
    assert outcomes["create_transfer"].arguments == (("api_key_header", "basic_auth"),)
    assert "`bearer_auth=` (bearerAuth)" in str(outcomes["list_secrets"])
    # the public ones go out, with nothing
    public = run(vault, server, is_async, ["get_status", "who_am_i"], basic_auth=(USER, PASSWORD))
    assert not [o for o in public.values() if isinstance(o, Exception)]
    assert [carried(r) for r in server.requests] == [{}, {}]


def test_oauth_token_fetched_once_by_eight_threads(vault: Any, server: ScriptServer) -> None:
    tokens = token_endpoint(server, delay=0.2)
    grant = vault.ClientCredentials(
        "vault-cli", CLIENT_SECRET, token_url=server.url + "/oauth/token"
    )
    with vault.Client(base_url=server.url, oauth=grant) as client:
        barrier = threading.Barrier(8)
        results: list[Any] = []

        def call() -> None:
            barrier.wait()
            results.append(client.secrets.put(name="db", body={"value": "v"}))

        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert len(results) == 8 and len(tokens) == 1


def test_oauth_token_fetched_once_by_eight_tasks_and_refreshed_once_after_a_401(
    vault: Any, server: ScriptServer
) -> None:
    tokens = token_endpoint(server, delay=0.2)
    accepted = {"Bearer tok-1"}

    def put(request: Recorded) -> Reply:
        if request.headers.get("authorization") in accepted:
            return ROUTES[("PUT", "/v1/secrets/db")]
        return Reply(401, json=problem(401, "unauthorized"), headers=PROBLEM_HEADERS)

    server.on("PUT", "/v1/secrets/db", put)
    grant = vault.ClientCredentials(
        "vault-cli", CLIENT_SECRET, token_url=server.url + "/oauth/token"
    )

    async def main() -> None:
        async with vault.AsyncClient(base_url=server.url, oauth=grant) as client:
            calls = [client.secrets.put(name="db", body={"value": "v"}) for _ in range(8)]
            await asyncio.gather(*calls)
            assert len(tokens) == 1
            accepted.clear()
            accepted.add("Bearer tok-2")  # the server revokes tok-1
            secret = await client.secrets.put(name="db", body={"value": "v"})
            assert secret.owner == "ada"
            assert len(tokens) == 2
            accepted.clear()  # and now rejects everything: one refresh, then the 401
            with pytest.raises(vault.Unauthorized) as info:
                await client.secrets.put(name="db", body={"value": "v"})
            assert len(tokens) == 3
            assert not any(s in str(info.value) or s in repr(info.value) for s in SECRETS)

    asyncio.run(main())


def test_token_providers_sync_and_async(vault: Any, server: ScriptServer) -> None:
    issued: list[str] = []

    def sync_provider() -> str:
        issued.append("sync")
        return f"sync-{len(issued)}"

    async def async_provider() -> str:
        issued.append("async")
        return f"async-{len(issued)}"

    with vault.Client(base_url=server.url, oidc=sync_provider) as client:
        client.meta.get_audit()
        client.meta.get_audit()

    async def main() -> None:
        async with vault.AsyncClient(base_url=server.url, oidc=async_provider) as client:
            await client.meta.get_audit()

    asyncio.run(main())
    assert [carried(r) for r in server.requests] == [
        {"authorization": "Bearer sync-1"},
        {"authorization": "Bearer sync-2"},  # called for each request
        {"authorization": "Bearer async-3"},
    ]


def test_reprs_and_errors_hide_credentials(vault: Any, server: ScriptServer) -> None:
    server.on(
        "GET", "/v1/audit", Reply(401, json=problem(401, "unauthorized"), headers=PROBLEM_HEADERS)
    )
    given = everything(vault, server)
    client = vault.Client(base_url=server.url, **given)
    with client, pytest.raises(vault.Unauthorized) as info:
        client.meta.get_audit()
    shown = [
        repr(client._auth),
        repr(given["oauth"]),
        repr(vault.BasicAuth(USER, PASSWORD)),
        str(info.value),
        repr(info.value),
    ]
    for text in shown:
        assert not any(secret in text for secret in SECRETS), text


def test_generated_constructor_signatures(vault: Any, acme: Any) -> None:
    def credentials(cls: type) -> dict[str, str]:
        parameters = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
        keep = list(parameters)[
            list(parameters).index("base_url") + 1 : list(parameters).index("timeout")
        ]
        # (`server=`, when the spec lists several servers, comes first)
        return {name: parameters[name].annotation for name in keep if name != "server"}

    assert credentials(vault.Client) == {
        "api_key_header": "str | None",
        "basic_auth": "BasicAuth | tuple[str, str] | None",
        "bearer_auth": "str | TokenProvider | None",
        "cookie_key": "str | None",
        "oauth": "str | TokenProvider | ClientCredentials | None",
        "oidc": "str | TokenProvider | None",
        "query_key": "str | None",
    }
    assert (
        credentials(vault.AsyncClient)["oauth"]
        == "str | AsyncTokenProvider | ClientCredentials | None"
    )
    assert credentials(acme.Client) == {
        "api_key_auth": "str | None",
        "bearer_auth": "str | TokenProvider | None",
    }


def test_readme_says_how_to_pass_each_credential(generated: dict[str, Generated]) -> None:
    readme = (generated["secure"].out / "README.md").read_text()
    for argument in (
        "api_key_header",
        "basic_auth",
        "bearer_auth",
        "cookie_key",
        "oauth",
        "oidc",
        "query_key",
    ):
        assert f"### `{argument}`" in readme, argument
    assert 'with Client(bearer_auth="...") as client:' in readme
    assert (
        'client = Client(oauth=ClientCredentials("client-id", os.environ["CLIENT_SECRET"]))'
        in readme
    )
    assert "`https://auth.vault.example.com/oauth/token` (override with `token_url=`)" in readme
    assert "Credentials: `api_key_header=` or `oauth=` (scope `secrets:write`)." in readme
    assert "Credentials: `api_key_header=` and `basic_auth=`." in readme
    assert "Public: sends no credentials." in readme
    assert "Public; sends `bearer_auth=` when the client has it" in readme


EDGE_SPEC = """
openapi: 3.1.0
info: {title: Edge, version: 1.0.0}
security:
  - timeout: []
paths:
  /tls:
    get:
      operationId: viaTls
      security: [{mtls: []}]
      responses: {'204': {description: ok}}
  /ghost:
    get:
      operationId: ghost
      security: [{ghost: []}]
      responses: {'204': {description: ok}}
  /default:
    get:
      operationId: byDefault
      responses: {'204': {description: ok}}
components:
  securitySchemes:
    timeout: {type: http, scheme: bearer}
    base-url: {type: apiKey, in: query, name: base}
    mtls: {type: mutualTLS}
    digest: {type: http, scheme: digest}
"""


def test_argument_names_avoid_the_constructors_own_and_unsendable_schemes_get_none(
    tmp_path: Path, server: ScriptServer
) -> None:
    spec = tmp_path / "edge.yaml"
    spec.write_text(EDGE_SPEC)
    edge = generate(spec, tmp_path / "out")
    sys.path.insert(0, str(edge.out))
    try:
        module = __import__(edge.package)
        parameters = list(inspect.signature(module.Client.__init__).parameters)
        assert parameters[1:4] == ["base_url", "base_url_2", "timeout_2"]
        assert parameters.count("timeout") == 1 and "mtls" not in parameters
        for path in ("/tls", "/default"):
            server.on("GET", path, Reply(204))
        with module.Client(base_url=server.url) as client:
            client.tls.retrieve()  # mutual TLS is the http_client's business: not blocked
            with pytest.raises(module.MissingCredentials, match="`timeout_2=` \\(timeout\\)"):
                client.default.retrieve()
            with pytest.raises(module.MissingCredentials, match="does not define: ghost"):
                client.ghost.retrieve()
        with module.Client(base_url=server.url, timeout_2="tok") as client:
            client.default.retrieve()
    finally:
        sys.path.remove(str(edge.out))
    assert [(r.path, carried(r)) for r in server.requests] == [
        ("/tls", {}),
        ("/default", {"authorization": "Bearer tok"}),
    ]
