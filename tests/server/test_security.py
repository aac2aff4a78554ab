"""The spec's `security`, enforced by the generated server (specs/secure.yaml) under uvicorn on
127.0.0.1: every scheme type, OR and AND requirements, public operations, 401/403/429/501."""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import SPECS, generate, problem, serve, write_handler

PACKAGE = "vault_srv"

VERIFIER = """
from __future__ import annotations

import hmac

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal

BEARER = {"tok-alice": Principal("alice", tier="gold")}
KEYS = {"key-bob": Principal("bob")}
USERS = {"bob": "hunter2", "carol": "pa:ss"}
OAUTH = {
    "oauth-write": Principal("dave", scopes=frozenset({"secrets:write"})),
    "oauth-read": Principal("erin", scopes=frozenset({"secrets:read"})),
}
OIDC = {
    "oidc-audit": Principal("frank", scopes=frozenset({"audit"})),
    "oidc-plain": Principal("gina"),
}


class Verifier(VerifierBase):
    async def bearer_auth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return BEARER.get(token)

    async def basic_auth(
        self, username: str, password: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        expected = USERS.get(username, "")
        if not hmac.compare_digest(expected.encode(), password.encode()) or not expected:
            return None
        return Principal(username)

    async def api_key_header(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return KEYS.get(key)

    async def query_key(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return KEYS.get(key)

    async def cookie_key(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return KEYS.get(key)

    async def oauth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return OAUTH.get(token)

    async def oidc(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return OIDC.get(token)
"""

HANDLERS = {
    "secrets": """
from typing import Any

from ..interfaces import SecretsBase
from ..runtime.context import RequestContext


def who(ctx: RequestContext) -> Any:
    return ctx.principal.id if ctx.principal else None


class SecretsHandler(SecretsBase):
    async def list_secrets(self, ctx: RequestContext) -> Any:
        return {"names": [who(ctx)]}

    async def put_secret(self, ctx: RequestContext, *, name: str, body: Any) -> Any:
        return {"name": name, "owner": who(ctx)}
""",
    "transfers": """
import secrets
from typing import Any

from ..interfaces import TransfersBase
from ..runtime.context import RequestContext


class TransfersHandler(TransfersBase):
    async def create_transfer(self, ctx: RequestContext, *, body: Any) -> Any:
        owner = ctx.principal.id if ctx.principal else None
        return {"id": secrets.token_hex(8), "amount": body.amount, "owner": owner}
""",
    "meta": """
from typing import Any

from ..interfaces import MetaBase
from ..runtime.context import RequestContext


def caller(ctx: RequestContext) -> Any:
    p = ctx.principal
    return {"principal": p.id if p else None, "scopes": sorted(p.scopes) if p else []}


class MetaHandler(MetaBase):
    async def get_status(self, ctx: RequestContext) -> Any:
        return {"ok": True}

    async def who_am_i(self, ctx: RequestContext) -> Any:
        return caller(ctx)

    async def get_session(self, ctx: RequestContext) -> Any:
        return caller(ctx)

    async def list_exports(self, ctx: RequestContext) -> Any:
        return caller(ctx)

    async def get_audit(self, ctx: RequestContext) -> Any:
        return caller(ctx)
""",
}

# A second app in the same project, with the verifier's stubs (nothing implemented).
UNVERIFIED_APP = """
from vault_srv.auth import VerifierBase
from vault_srv.main import Handlers, create_app

app = create_app(handlers=Handlers(verifier=VerifierBase()))
"""


def basic(user: str, password: str) -> dict[str, str]:
    pair = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {pair}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def vault_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("vault") / "project"
    generate(SPECS / "secure.yaml", project, PACKAGE)
    for module, source in HANDLERS.items():
        write_handler(project, PACKAGE, module, source)
    (project / PACKAGE / "verifier.py").write_text(VERIFIER.lstrip())
    (project / "unverified_app.py").write_text(textwrap.dedent(UNVERIFIED_APP).lstrip())
    return project


@pytest.fixture(scope="module")
def vault(vault_project: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"APIFORGE_AUTH_FAILURE_LIMIT": "1000/minute", "APIFORGE_AUTH_REALM": "vault"}
    with serve(vault_project, PACKAGE, tmp_path_factory.mktemp("vault_state"), env=env) as base:
        yield base


def call(base: str, method: str, path: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, base + path, timeout=10, **kw)


TRANSFER = {"amount": 5}
SECRET = {"value": "s"}

# (operation, credentials) → (status, principal in the body or the problem kind)
MATRIX: list[tuple[str, str, str, dict[str, Any], int, str | None]] = [
    # the API's default: bearerAuth
    ("listSecrets", "GET", "/v1/secrets", {}, 401, "unauthorized"),
    ("listSecrets", "GET", "/v1/secrets", {"headers": bearer("made-up")}, 401, "unauthorized"),
    ("listSecrets", "GET", "/v1/secrets", {"headers": basic("bob", "hunter2")}, 401, None),
    ("listSecrets", "GET", "/v1/secrets", {"headers": bearer("tok-alice")}, 200, "alice"),
    # [{apiKeyHeader}, {oauth: [secrets:write]}]
    ("putSecret", "PUT", "/v1/secrets/a", {"json": SECRET}, 401, "unauthorized"),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": {"X-Vault-Key": "nope"}},
        401,
        None,
    ),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": {"X-Vault-Key": "key-bob"}},
        200,
        "bob",
    ),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": bearer("oauth-write")},
        200,
        "dave",
    ),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": bearer("oauth-read")},
        403,
        "insufficient-scope",
    ),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": bearer("made-up")},
        401,
        None,
    ),
    (
        "putSecret",
        "PUT",
        "/v1/secrets/a",
        {"json": SECRET, "headers": bearer("tok-alice")},
        401,
        None,
    ),
    # {apiKeyHeader, basicAuth} AND-ed
    ("createTransfer", "POST", "/v1/transfers", {}, 401, "unauthorized"),
    ("createTransfer", "POST", "/v1/transfers", {"headers": {"X-Vault-Key": "key-bob"}}, 401, None),
    ("createTransfer", "POST", "/v1/transfers", {"headers": basic("bob", "hunter2")}, 401, None),
    (
        "createTransfer",
        "POST",
        "/v1/transfers",
        {"headers": {"X-Vault-Key": "key-bob", **basic("bob", "wrong")}},
        401,
        None,
    ),
    (
        "createTransfer",
        "POST",
        "/v1/transfers",
        {"headers": {"X-Vault-Key": "key-bob", **basic("zed", "hunter2")}},
        401,
        None,
    ),
    (
        "createTransfer",
        "POST",
        "/v1/transfers",
        {"headers": {"X-Vault-Key": "key-bob", "Authorization": "Basic !!!"}},
        401,
        None,
    ),
    (
        "createTransfer",
        "POST",
        "/v1/transfers",
        {"headers": {"X-Vault-Key": "key-bob", **basic("carol", "pa:ss")}},
        401,
        None,
    ),  # two accounts' credentials: neither vouches for the other
    (
        "createTransfer",
        "POST",
        "/v1/transfers",
        {"headers": {"X-Vault-Key": "key-bob", **basic("bob", "hunter2")}},
        201,
        "bob",
    ),
    # public
    ("getStatus", "GET", "/v1/status", {}, 200, None),
    ("getStatus", "GET", "/v1/status", {"headers": bearer("made-up")}, 401, "unauthorized"),
    ("whoAmI", "GET", "/v1/whoami", {}, 200, None),
    ("whoAmI", "GET", "/v1/whoami", {"headers": bearer("tok-alice")}, 200, "alice"),
    ("whoAmI", "GET", "/v1/whoami", {"headers": bearer("made-up")}, 401, "unauthorized"),
    # cookie, query
    ("getSession", "GET", "/v1/session", {}, 401, "unauthorized"),
    ("getSession", "GET", "/v1/session", {"cookies": {"vault_session": "nope"}}, 401, None),
    ("getSession", "GET", "/v1/session", {"cookies": {"vault_session": "key-bob"}}, 200, "bob"),
    ("getSession", "GET", "/v1/session", {"headers": {"X-Vault-Key": "key-bob"}}, 401, None),
    ("listExports", "GET", "/v1/exports", {}, 401, "unauthorized"),
    ("listExports", "GET", "/v1/exports", {"params": {"api_key": "nope"}}, 401, None),
    ("listExports", "GET", "/v1/exports", {"params": {"api_key": "key-bob"}}, 200, "bob"),
    # openIdConnect with a scope
    ("getAudit", "GET", "/v1/audit", {}, 401, "unauthorized"),
    ("getAudit", "GET", "/v1/audit", {"headers": bearer("oidc-plain")}, 403, "insufficient-scope"),
    ("getAudit", "GET", "/v1/audit", {"headers": bearer("oidc-audit")}, 200, "frank"),
]


def test_every_scheme_and_outcome(vault: str) -> None:
    tally: dict[int, int] = {}
    for op_id, method, path, kw, status, expect in MATRIX:
        headers = dict(kw.pop("headers", {}))
        if op_id == "createTransfer":
            headers["Idempotency-Key"] = f"k-{len(tally)}-{sum(tally.values())}"
            kw.setdefault("json", TRANSFER)
        r = call(vault, method, path, headers=headers, **kw)
        what = f"{op_id} with {headers or kw}"
        assert r.status_code == status, f"{what}: {r.status_code} {r.text}"
        tally[status] = tally.get(status, 0) + 1
        if status == 401:
            body = problem(r, 401, "unauthorized")
            challenge = r.headers["www-authenticate"]
            assert 'realm="vault"' in challenge, what
            sent_bearer = headers.get("Authorization", "").startswith("Bearer ")
            if sent_bearer and "Bearer" in challenge:
                assert 'error="invalid_token"' in challenge, what
            if body["detail"] != "The credentials were not accepted.":
                assert body["detail"].startswith("This operation needs "), what
        elif status == 403:
            body = problem(r, 403, "insufficient-scope")
            assert 'error="insufficient_scope"' in r.headers["www-authenticate"]
            assert body["scopes"] in (["secrets:write"], ["audit"])
        elif expect is not None:
            data = r.json()
            assert expect in (data.get("owner"), data.get("principal"), *data.get("names", [])), (
                what
            )
    assert sum(tally.values()) == len(MATRIX)
    print(f"scheme x outcome matrix: {len(MATRIX)} cases, by status {sorted(tally.items())}")


def test_challenges_name_each_scheme_of_the_operation(vault: str) -> None:
    r = call(vault, "PUT", "/v1/secrets/a", json=SECRET)
    challenge = r.headers["www-authenticate"]
    assert 'APIKey realm="vault", in="header", name="X-Vault-Key"' in challenge
    assert 'Bearer realm="vault", scope="secrets:write"' in challenge
    r = call(vault, "POST", "/v1/transfers", json=TRANSFER, headers={"Idempotency-Key": "x"})
    assert 'Basic realm="vault", charset="UTF-8"' in r.headers["www-authenticate"]
    assert problem(r, 401, "unauthorized")["detail"] == (
        "This operation needs an API key in the header 'X-Vault-Key' (apiKeyHeader) and "
        "HTTP basic credentials (basicAuth)."
    )


def test_unknown_user_and_wrong_password_look_the_same(vault: str) -> None:
    key = {"X-Vault-Key": "key-bob", "Idempotency-Key": "same"}
    wrong = call(
        vault, "POST", "/v1/transfers", json=TRANSFER, headers={**key, **basic("bob", "x")}
    )
    unknown = call(
        vault, "POST", "/v1/transfers", json=TRANSFER, headers={**key, **basic("nobody", "x")}
    )
    assert (wrong.status_code, wrong.headers["www-authenticate"], wrong.json()["detail"]) == (
        unknown.status_code,
        unknown.headers["www-authenticate"],
        unknown.json()["detail"],
    )


def test_openapi_shows_the_schemes_and_each_operations_requirements(vault: str) -> None:
    doc = call(vault, "GET", "/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "opaque",
        "description": "A personal access token.",
    }
    assert schemes["cookieKey"] == {"type": "apiKey", "in": "cookie", "name": "vault_session"}
    assert schemes["oauth"]["flows"]["clientCredentials"]["tokenUrl"].endswith("/oauth/token")
    assert schemes["oidc"]["type"] == "openIdConnect"
    ops = {op["operationId"]: op for item in doc["paths"].values() for op in item.values()}
    assert ops["putSecret"]["security"] == [{"apiKeyHeader": []}, {"oauth": ["secrets:write"]}]
    assert ops["createTransfer"]["security"] == [{"apiKeyHeader": [], "basicAuth": []}]
    assert ops["getStatus"]["security"] == []
    assert ops["whoAmI"]["security"] == [{}, {"bearerAuth": []}]
    assert ops["listSecrets"]["security"] == [{"bearerAuth": []}]


def test_failed_credentials_are_rate_limited_per_client(
    vault_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Brute force: after 5 rejected credentials, even a right one waits (429 + Retry-After),
    and invented tokens never reach the API's own rate limit or handlers."""
    env = {"APIFORGE_AUTH_FAILURE_LIMIT": "5/minute"}
    state = tmp_path_factory.mktemp("vault_brute")
    with serve(vault_project, PACKAGE, state, env=env) as base:
        statuses = [
            call(base, "GET", "/v1/secrets", headers=bearer(f"guess-{i}")).status_code
            for i in range(8)
        ]
        assert statuses == [401] * 5 + [429] * 3
        r = call(base, "GET", "/v1/secrets", headers=bearer("tok-alice"))
        body = problem(r, 429, "rate-limited")
        assert "rejected credentials" in body["detail"]
        assert 1 <= int(r.headers["retry-after"]) <= 60
        # callers without credentials are not locked out by the guesser's failures: their
        # requests carry nothing to check
        assert call(base, "GET", "/v1/status").status_code == 200


def test_unimplemented_verifier_fails_closed_naming_the_scheme_and_file(
    vault_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.support import uvicorn_server

    state = tmp_path_factory.mktemp("vault_unverified")
    env = {"APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}"}
    with uvicorn_server("unverified_app:app", cwd=state, env=env, pythonpath=[vault_project]) as (
        base,
        _proc,
    ):
        for headers in ({}, bearer("tok-alice"), bearer("anything")):
            r = call(base, "GET", "/v1/secrets", headers=headers)
            body = problem(r, 501, "authentication-not-implemented")
            assert "'bearerAuth'" in body["detail"]
            assert "bearer_auth in vault_srv/verifier.py" in body["detail"]
        # public operations stay open, and an unverifiable credential does not lock them
        assert call(base, "GET", "/v1/status", headers=bearer("x")).status_code == 200
        assert call(base, "GET", "/v1/whoami").json() == {"principal": None, "scopes": []}


def test_the_generated_client_sends_what_the_generated_server_requires(
    vault: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Both sides from specs/secure.yaml: a client holding every credential opens every
    operation, each with the credential of its first satisfiable alternative (the principal
    the server saw says which); a client holding only an OAuth2 token gets its own."""
    import importlib
    import sys

    from tests.client.conftest import generate as generate_client

    out = tmp_path_factory.mktemp("vault_client")
    generated = generate_client(SPECS / "secure.yaml", out)
    sys.path.insert(0, str(out))
    try:
        pkg: Any = importlib.import_module(generated.package)
        with pkg.Client(
            base_url=vault,
            bearer_auth="tok-alice",
            api_key_header="key-bob",
            basic_auth=("bob", "hunter2"),
            cookie_key="key-bob",
            query_key="key-bob",
            oauth="oauth-write",
            oidc="oidc-audit",
        ) as client:
            assert client.secrets.list().names == ["alice"]
            assert client.secrets.put(name="db", body={"value": "x"}).owner == "bob"
            assert client.transfers.create(body={"amount": 3}).owner == "bob"
            assert client.meta.get_status().ok is True
            assert client.meta.who_am_i().principal == "alice"
            assert client.meta.get_session().principal == "bob"
            assert client.meta.list_exports().principal == "bob"
            assert client.meta.get_audit().principal == "frank"
        with pkg.Client(base_url=vault, oauth="oauth-write") as oauth_only:
            assert oauth_only.secrets.put(name="db", body={"value": "x"}).owner == "dave"
            assert oauth_only.meta.who_am_i().principal is None  # public: nothing to send
            with pytest.raises(pkg.MissingCredentials):
                oauth_only.secrets.list()
    finally:
        sys.path.remove(str(out))


def test_the_readme_quickstart_logs_no_query_key(
    vault_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The server as its README starts it, at uvicorn's info level: an API key sent in the
    query string appears in no log line (uvicorn's own access line would carry it)."""
    from tests.server.conftest import base_env
    from tests.support import uvicorn_server

    readme = (vault_project / "README.md").read_text()
    command = next(line for line in readme.splitlines() if line.startswith("uvicorn "))
    args = command.split()[2:]
    del args[args.index("--port") : args.index("--port") + 2]
    state = tmp_path_factory.mktemp("vault_readme")
    log = state / "server.log"
    with uvicorn_server(
        f"{PACKAGE}.main:app",
        cwd=state,
        env=base_env(state),
        pythonpath=[vault_project],
        extra_args=[*args, "--log-level", "info"],
        output=log,
    ) as (base, _proc):
        r = call(base, "GET", "/v1/exports", params={"api_key": "key-bob"})
        assert r.status_code == 200, r.text
    text = log.read_text()
    assert "/v1/exports" in text  # the server's own access line
    assert "key-bob" not in text
