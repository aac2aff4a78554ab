"""`_auth`: which credentials a call sends, OAuth2 client credentials against a real token
endpoint on 127.0.0.1, and secrets kept out of reprs, messages and logs."""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from collections.abc import Callable
from urllib.parse import parse_qs

import httpx
import pytest

from templates.client.runtime import (
    AsyncAPIClient,
    BasicAuth,
    ClientCredentials,
    Credentials,
    JobHandle,
    MissingCredentials,
    RequestOptions,
    Scheme,
    Security,
    SyncAPIClient,
    TokenRequestFailed,
    Unauthorized,
)
from templates.client.runtime._auth import Need

from .fakes import PROBLEM_HEADERS, FakeClock, Recorded, Reply, ScriptServer, problem, serving

SECRET = "s3cr3t-VALUE"
SCHEMES = (
    Scheme("apiKey", "apiKey", argument="api_key", location="header", parameter="X-Key"),
    Scheme("basic", "basic", argument="basic"),
    Scheme("bearer", "bearer", argument="bearer"),
    Scheme("cookie", "apiKey", argument="cookie", location="cookie", parameter="sid"),
    Scheme("mtls", "external"),
    Scheme("oauth", "oauth2", argument="oauth", token_url="/oauth/token"),
    Scheme("query", "apiKey", argument="query", location="query", parameter="key"),
)


def credentials(clock: Callable[[], float] = lambda: 0.0, **given: object) -> Credentials:
    """`Credentials` from constructor arguments (by argument name, as generated clients do)."""
    by_argument = {s.argument: s.name for s in SCHEMES if s.argument}
    named = {by_argument.get(argument, argument): value for argument, value in given.items()}
    return Credentials(SCHEMES, named, base_url="https://api.example.com", clock=clock)  # type: ignore[arg-type]


def names(selection: tuple[Need, ...]) -> list[str]:
    return [n.scheme.name for n in selection]


# -- which credentials a call sends ----------------------------------------------------------


def test_the_first_alternative_the_client_holds_everything_for() -> None:
    held = credentials(api_key="k", basic=("u", "p"), bearer="t")
    either = Security(({"oauth": ("write",)}, {"apiKey": (), "basic": ()}, {"bearer": ()}))
    assert names(held.select(either, "PUT /x")) == ["apiKey", "basic"]
    assert names(credentials(bearer="t").select(either, "PUT /x")) == ["bearer"]
    oauth = credentials(oauth="tok").select(either, "PUT /x")
    assert oauth == (Need(SCHEMES[5], ("write",)),)


def test_public_operations_send_nothing_unless_they_also_accept_credentials() -> None:
    held = credentials(bearer="t", api_key="k")
    assert held.select(Security((), public=True), "GET /status") == ()
    assert held.select(None, "GET /undeclared") == ()
    optional = Security(({"bearer": ()},), public=True)  # [{}, {bearer}]
    assert names(held.select(optional, "GET /whoami")) == ["bearer"]
    assert credentials().select(optional, "GET /whoami") == ()


def test_external_schemes_never_block_and_come_after_held_credentials() -> None:
    mtls_first = Security(({"mtls": ()}, {"bearer": ()}))
    assert names(credentials(bearer="t").select(mtls_first, "GET /x")) == ["bearer"]
    assert credentials().select(mtls_first, "GET /x") == ()
    both = Security(({"mtls": (), "bearer": ()},))
    assert names(credentials(bearer="t").select(both, "GET /x")) == ["mtls", "bearer"]


def test_a_missing_credential_names_the_arguments_and_schemes_that_would_do() -> None:
    security = Security(({"apiKey": (), "basic": ()}, {"oauth": ("w",)}, {"nope": ()}))
    with pytest.raises(MissingCredentials) as info:
        credentials(api_key="k").select(security, "POST /transfers")
    message = str(info.value)
    assert message == (
        "POST /transfers needs credentials this client was not given: pass `api_key=` (apiKey)"
        " and `basic=` (basic), or `oauth=` (oauth) to the client; the spec requires security"
        " schemes it does not define: nope"
    )
    assert info.value.arguments == (("api_key", "basic"), ("oauth",))
    assert info.value.undefined == ("nope",)
    with pytest.raises(MissingCredentials, match="cannot send"):
        credentials().select(Security(({"nope": ()},)), "GET /x")


def test_empty_values_count_as_not_given() -> None:
    held = credentials(bearer="", api_key=None)
    assert held.held == ()
    with pytest.raises(MissingCredentials):
        held.select(Security(({"bearer": ()},)), "GET /x")


def test_each_kind_lands_where_its_scheme_says() -> None:
    held = credentials(api_key="k", basic=BasicAuth("ü", "p:w"), bearer="t", cookie="c1", query="q")
    with httpx.Client() as client:
        every = tuple(Need(s) for s in SCHEMES if s.name not in ("oauth", "bearer"))
        applied = held.apply(every, client)
        assert applied.headers == {
            "X-Key": "k",
            "Authorization": "Basic " + base64.b64encode("ü:p:w".encode()).decode(),
        }
        assert applied.params == [("key", "q")] and applied.cookies == [("sid", "c1")]
        bearer = held.apply((Need(SCHEMES[2]),), client)
        assert bearer.headers == {"Authorization": "Bearer t"} and bearer.tokens == {}


def test_bad_values_are_refused_without_showing_them() -> None:
    cases: list[tuple[dict[str, object], type[Exception], str]] = [
        ({"bearer": SECRET + "\r\nX-Evil: 1"}, ValueError, "control or non-ASCII"),
        ({"api_key": SECRET + "\n"}, ValueError, "control or non-ASCII"),
        ({"cookie": SECRET + "; admin=1"}, ValueError, "cannot be sent in a cookie"),
        ({"basic": (SECRET + ":x", "p")}, ValueError, "cannot contain ':'"),
        ({"basic": SECRET}, TypeError, "BasicAuth"),
        ({"api_key": 12}, TypeError, "as a str"),
        ({"bearer": ClientCredentials("id", SECRET)}, TypeError, "not an OAuth2 scheme"),
        ({"bogus": SECRET}, TypeError, "no security scheme named 'bogus'"),
    ]
    for given, error, text in cases:
        with pytest.raises(error, match=text) as info:
            credentials(**given)
        assert SECRET not in str(info.value)


def test_reprs_mask_every_secret() -> None:
    grant = ClientCredentials("my-client", SECRET, scopes=["a"])
    held = credentials(api_key=SECRET, basic=("user", SECRET), bearer=SECRET, oauth=grant)
    with httpx.Client() as client:
        applied = held.apply((Need(SCHEMES[0]), Need(SCHEMES[2])), client)
    shown = [repr(BasicAuth("user", SECRET)), str(BasicAuth("user", SECRET)), repr(grant)]
    shown += [repr(held), repr(applied), repr(held._held)]
    for text in shown:
        assert SECRET not in text, text
    assert repr(grant).startswith("ClientCredentials(client_id='my-client', client_secret='***'")
    assert repr(held) == "<Credentials apiKey, basic, bearer, oauth>"


# -- through the client, against a real server -------------------------------------------------


def token_endpoint(
    server: ScriptServer, *, expires_in: int | None = 3600, delay: float = 0.0
) -> list[Recorded]:
    """Answers tok-1, tok-2, … on POST /oauth/token; returns the requests it received."""
    seen: list[Recorded] = []
    lock = threading.Lock()

    def answer(request: Recorded) -> Reply:
        with lock:
            seen.append(request)
            number = len(seen)
        body: dict[str, object] = {"access_token": f"tok-{number}", "token_type": "Bearer"}
        if expires_in is not None:
            body["expires_in"] = expires_in
        return Reply(200, json=body, delay=delay)

    server.on("POST", "/oauth/token", answer)
    return seen


def authorization(request: Recorded) -> str:
    return request.headers.get("authorization", "")


def api_accepting(*tokens: str) -> Callable[[Recorded], Reply]:
    def answer(request: Recorded) -> Reply:
        if authorization(request) in {f"Bearer {t}" for t in tokens}:
            return Reply(200, json={"ok": True})
        return Reply(401, json=problem(401, "unauthorized"), headers=PROBLEM_HEADERS)

    return answer


OAUTH = Security(({"oauth": ("secrets:write",)},))


def sync_client(server: ScriptServer, clock: FakeClock, grant: object) -> SyncAPIClient:
    return SyncAPIClient(
        server.url,
        schemes=SCHEMES,
        credentials={"oauth": grant},
        clock=clock,
        sleep=clock.sleep,  # type: ignore[dict-item]
    )


def test_client_credentials_fetched_once_by_eight_threads_then_cached(
    server: ScriptServer, clock: FakeClock
) -> None:
    tokens = token_endpoint(server, delay=0.2)
    server.on("GET", "/v1/thing", api_accepting("tok-1"))
    grant = ClientCredentials("my-client", SECRET, scopes=["base"])
    with sync_client(server, clock, grant) as client:
        barrier = threading.Barrier(8)
        results: list[int] = []

        def call() -> None:
            barrier.wait()
            response = client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
            results.append(response.status_code)

        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert results == [200] * 8
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
    assert len(tokens) == 1
    [fetch] = tokens
    form = parse_qs(fetch.body.decode())
    assert form == {"grant_type": ["client_credentials"], "scope": ["base secrets:write"]}
    expected = base64.b64encode(f"my-client:{SECRET}".encode()).decode()
    assert fetch.headers["authorization"] == f"Basic {expected}"
    assert fetch.headers["content-type"] == "application/x-www-form-urlencoded"
    assert {authorization(r) for r in server.received("GET")} == {"Bearer tok-1"}


def test_client_credentials_cached_until_shortly_before_expiry_and_per_scope_set(
    server: ScriptServer, clock: FakeClock
) -> None:
    tokens = token_endpoint(server, expires_in=600)
    server.on("GET", "/v1/thing", Reply(200, json={}))
    read = Security(({"oauth": ("read",)},))
    with sync_client(server, clock, ClientCredentials("id", SECRET)) as client:
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))  # tok-1
        client.request(RequestOptions("GET", "/v1/thing", security=read))  # tok-2: other scopes
        clock.now += 600 - 30 - 1  # 30 s (a tenth of 600 is 60, capped at 30) before expiry
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))  # still tok-1
        clock.now += 1
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))  # tok-3
    assert [parse_qs(t.body.decode())["scope"] for t in tokens] == [
        ["secrets:write"],
        ["read"],
        ["secrets:write"],
    ]
    sent = [authorization(r) for r in server.received("GET")]
    assert sent == ["Bearer tok-1", "Bearer tok-2", "Bearer tok-1", "Bearer tok-3"]


def test_a_401_refreshes_the_token_once(server: ScriptServer, clock: FakeClock) -> None:
    tokens = token_endpoint(server)
    server.on("POST", "/v1/thing", api_accepting("tok-2"))
    server.on("GET", "/v1/never", api_accepting())
    options = RequestOptions("POST", "/v1/thing", json={"a": 1}, security=OAUTH)
    with sync_client(server, clock, ClientCredentials("id", SECRET)) as client:
        assert client.request(options).status_code == 200
        assert len(tokens) == 2
        with pytest.raises(Unauthorized) as info:  # rejected again: one refresh, no more
            client.request(RequestOptions("GET", "/v1/never", security=OAUTH))
    assert len(tokens) == 3
    assert [authorization(r) for r in server.received("GET")] == ["Bearer tok-2", "Bearer tok-3"]
    assert SECRET not in str(info.value) and "tok-" not in str(info.value)
    assert clock.sleeps == []  # a refresh is not a retry: no backoff


def test_concurrent_401s_refresh_once(server: ScriptServer, clock: FakeClock) -> None:
    tokens = token_endpoint(server, delay=0.1)
    server.on("GET", "/v1/thing", api_accepting("tok-1"))
    with sync_client(server, clock, ClientCredentials("id", SECRET)) as client:
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))  # caches tok-1
        server.on("GET", "/v1/thing", api_accepting("tok-2"))  # which stops working
        barrier = threading.Barrier(8)
        codes: list[int] = []

        def call() -> None:
            barrier.wait()
            codes.append(
                client.request(RequestOptions("GET", "/v1/thing", security=OAUTH)).status_code
            )

        threads = [threading.Thread(target=call) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert codes == [200] * 8
    assert len(tokens) == 2


def test_client_secret_post_extra_params_and_an_explicit_token_url(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "POST", "/elsewhere/token", Reply(200, json={"access_token": "t", "expires_in": "60"})
    )
    server.on("GET", "/v1/thing", Reply(200, json={}))
    grant = ClientCredentials(
        "id",
        SECRET,
        token_url=server.url + "/elsewhere/token",
        auth_method="client_secret_post",
        extra_params={"audience": "api"},
    )
    with sync_client(server, clock, grant) as client:
        client.request(RequestOptions("GET", "/v1/thing", security=Security(({"oauth": ()},))))
    [fetch] = server.received("POST")
    assert "authorization" not in fetch.headers
    assert parse_qs(fetch.body.decode()) == {
        "audience": ["api"],
        "grant_type": ["client_credentials"],
        "client_id": ["id"],
        "client_secret": [SECRET],
    }


def test_a_refused_or_unreachable_token_endpoint_raises_without_the_secret(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "POST",
        "/oauth/token",
        Reply(401, json={"error": "invalid_client", "error_description": f"bad {SECRET}"}),
    )
    client = sync_client(server, clock, ClientCredentials("id", SECRET))
    with client, pytest.raises(TokenRequestFailed) as info:
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
    assert info.value.status_code == 401 and info.value.error == "invalid_client"
    assert SECRET not in str(info.value)
    assert server.received("GET") == []  # the API call itself never went out
    grant = ClientCredentials("id", SECRET, token_url="http://127.0.0.1:9/token")
    client = sync_client(server, clock, grant)
    with client, pytest.raises(TokenRequestFailed, match="could not reach") as info:
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
    assert SECRET not in str(info.value)


def test_async_client_credentials_fetched_once_by_eight_tasks(
    server: ScriptServer, clock: FakeClock
) -> None:
    tokens = token_endpoint(server, delay=0.2)
    server.on("GET", "/v1/thing", api_accepting("tok-1"))

    async def main() -> list[int]:
        async with AsyncAPIClient(
            server.url,
            schemes=SCHEMES,
            credentials={"oauth": ClientCredentials("id", SECRET)},
            clock=clock,
            sleep=clock.async_sleep,
        ) as client:
            calls = [
                client.request(RequestOptions("GET", "/v1/thing", security=OAUTH)) for _ in range(8)
            ]
            return [r.status_code for r in await asyncio.gather(*calls)]

    assert asyncio.run(main()) == [200] * 8
    assert len(tokens) == 1


def test_async_401_refresh_and_sync_or_async_token_providers(
    server: ScriptServer, clock: FakeClock
) -> None:
    tokens = token_endpoint(server)
    server.on("GET", "/v1/thing", api_accepting("tok-2", "from-sync", "from-async"))

    async def provider() -> str:
        return "from-async"

    async def main() -> list[str]:
        sent = []
        given: list[dict[str, object]] = [
            {"oauth": ClientCredentials("id", SECRET)},
            {"oauth": lambda: "from-sync"},
            {"oauth": provider},
        ]
        for credentials_ in given:
            async with AsyncAPIClient(
                server.url,
                schemes=SCHEMES,
                credentials=credentials_,
                clock=clock,  # type: ignore[arg-type]
            ) as client:
                response = await client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
                sent.append(response.http_response.request.headers["authorization"])
        return sent

    assert asyncio.run(main()) == ["Bearer tok-2", "Bearer from-sync", "Bearer from-async"]
    assert len(tokens) == 2


def test_the_sync_client_refuses_an_async_provider(server: ScriptServer, clock: FakeClock) -> None:
    async def provider() -> str:
        return SECRET

    client = sync_client(server, clock, provider)
    with client, pytest.raises(TypeError, match="use it with the AsyncClient"):
        client.request(RequestOptions("GET", "/v1/thing", security=OAUTH))
    assert server.requests == []


def test_no_secret_reaches_the_logs(
    server: ScriptServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    token_endpoint(server)
    server.on("GET", "/v1/thing", api_accepting("tok-2"))
    caplog.set_level(logging.DEBUG)
    everything = Security(({"oauth": (), "query": (), "apiKey": (), "cookie": ()},))
    with SyncAPIClient(
        server.url,
        schemes=SCHEMES,
        credentials={
            "oauth": ClientCredentials("id", SECRET + "-client"),
            "query": SECRET + "-query",
            "apiKey": SECRET + "-header",
            "cookie": SECRET + "-cookie",
        },
        clock=clock,
    ) as client:
        client.request(RequestOptions("GET", "/v1/thing", security=everything))
    [first, second] = server.received("GET")
    assert first.path == f"/v1/thing?key={SECRET}-query"
    assert second.headers["cookie"] == f"sid={SECRET}-cookie"
    assert "HTTP Request: GET" in caplog.text and "key=REDACTED" in caplog.text
    assert "fetched an OAuth2 token" in caplog.text and "trying once more" in caplog.text
    assert SECRET not in caplog.text and "tok-" not in caplog.text


def test_credentials_stay_with_the_api_origin_and_yield_to_the_callers_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    bearer_and_cookie = Security(({"bearer": (), "cookie": ()},))
    client = SyncAPIClient(
        "https://api.example.com",
        transport=httpx.MockTransport(handler),
        schemes=SCHEMES,
        credentials={"bearer": "tok", "cookie": "c1"},
        default_headers={"Authorization": "Bearer default"},
    )
    with client:
        client.request(RequestOptions("GET", "/a", security=bearer_and_cookie))
        client.request(
            RequestOptions(
                "GET",
                "/b",
                headers={"authorization": "Bearer mine", "Cookie": "theme=dark"},
                security=bearer_and_cookie,
            )
        )
        # another origin (a job Location elsewhere) gets nothing, and needs nothing
        client.request(
            RequestOptions("GET", "https://jobs.example.com/1", security=bearer_and_cookie)
        )
        with pytest.raises(MissingCredentials):
            client.request(RequestOptions("GET", "/c", security=Security(({"basic": ()},))))
    assert seen[0].headers["authorization"] == "Bearer tok"  # over the default header
    assert seen[0].headers["cookie"] == "sid=c1"
    assert seen[1].headers["authorization"] == "Bearer mine"  # the call's own header wins
    assert seen[1].headers["cookie"] == "theme=dark; sid=c1"
    assert "cookie" not in seen[2].headers
    assert seen[2].headers["authorization"] == "Bearer default"  # the caller's default only
    assert len(seen) == 3


def test_a_job_is_polled_and_cancelled_with_the_credentials_that_started_it(
    server: ScriptServer, clock: FakeClock
) -> None:
    server.on(
        "POST",
        "/v1/jobs",
        Reply(202, json={"status": "queued"}, headers={"Location": "/v1/jobs/1"}),
    )
    server.on("GET", "/v1/jobs/1", Reply(200, json={"status": "running"}))
    server.on("DELETE", "/v1/jobs/1", Reply(200, json={"status": "cancelled"}))
    server.on(
        "POST",
        "/v1/public-jobs",
        Reply(202, json={"status": "queued"}, headers={"Location": "/v1/jobs/1"}),
    )
    client = SyncAPIClient(
        server.url,
        schemes=SCHEMES,
        credentials={"bearer": "tok", "apiKey": "k"},
        clock=clock,
        sleep=clock.sleep,
    )
    with client:
        started = client.request(
            RequestOptions("POST", "/v1/jobs", security=Security(({"bearer": ()},)))
        )
        job = JobHandle(client, started, dict)
        job.refresh()
        job.cancel()
        public = client.request(
            RequestOptions("POST", "/v1/public-jobs", security=Security((), public=True))
        )
        JobHandle(client, public, dict).refresh()
    sent = [(r.method, r.path, carried_auth(r)) for r in server.requests]
    assert sent == [
        ("POST", "/v1/jobs", "Bearer tok"),
        ("GET", "/v1/jobs/1", "Bearer tok"),
        ("DELETE", "/v1/jobs/1", "Bearer tok"),
        ("POST", "/v1/public-jobs", None),
        ("GET", "/v1/jobs/1", None),
    ]
    assert not any("x-key" in r.headers for r in server.requests)


def carried_auth(request: Recorded) -> str | None:
    return request.headers.get("authorization")


def test_a_redirect_to_another_origin_carries_no_credential(server: ScriptServer) -> None:
    """A caller's own `httpx.Client(follow_redirects=True)`: the redirect within the API keeps
    the credentials; the one to another origin (another port of 127.0.0.1) gets none of them
    — httpx alone would carry the API key header there. Sync and async clients alike."""
    everything = Security(({"apiKey": (), "bearer": (), "cookie": ()},))
    held = {"apiKey": SECRET, "bearer": "tok", "cookie": "c1"}
    with serving(ScriptServer()) as other:
        other.on("GET", "/landing", Reply(200, json={"where": "other"}))
        server.on("GET", "/v1/moved", Reply(307, headers={"Location": "/v1/here"}))
        server.on("GET", "/v1/here", Reply(307, headers={"Location": other.url + "/landing"}))
        with (
            httpx.Client(follow_redirects=True) as http,
            SyncAPIClient(server.url, schemes=SCHEMES, credentials=held, http_client=http) as c,
        ):
            assert c.request(RequestOptions("GET", "/v1/moved", security=everything)).json() == {
                "where": "other"
            }

        async def go() -> None:
            async with (
                httpx.AsyncClient(follow_redirects=True) as http,
                AsyncAPIClient(
                    server.url, schemes=SCHEMES, credentials=held, http_client=http
                ) as c,
            ):
                await c.request(RequestOptions("GET", "/v1/moved", security=everything))

        asyncio.run(go())
    here = server.received("GET", "/v1/here")
    assert len(here) == 2
    for request in here:  # within the API's origin: every credential
        assert request.headers["x-key"] == SECRET
        assert request.headers["authorization"] == "Bearer tok"
    landed = other.received("GET", "/landing")
    assert len(landed) == 2
    for request in landed:
        leaked = {"x-key", "authorization", "cookie"} & set(request.headers)
        assert not leaked, request.headers
