"""Idempotency-Key enforcement, served by uvicorn on 127.0.0.1 the way a generated server uses
the runtime: the runtime copied as `<package>/runtime/`, an app that installs a store and
routes enabled with `route_class_override=idempotent_route(...)`."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.support import stop_process_group, uvicorn_server

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"
PKG = "idemsvc"

APP = '''
import asyncio
import os
import sqlite3

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from .runtime.idempotency import idempotent_route, install_idempotency
from .runtime.problems import GuardedRoute, ProblemDetail, install_problem_handlers, require_content_type
from .runtime.security import AuthRequirement, AuthScheme, Principal, install_authentication

COUNTER = os.environ["IDEM_COUNTER"]
FLAG = os.environ.get("IDEM_SLOW_FLAG", "")

if COUNTER.startswith("redis://"):
    import redis.asyncio as aioredis

    _redis = aioredis.Redis.from_url(COUNTER)

    async def bump(name: str) -> int:
        return int(await _redis.incr(name))
else:
    _db = sqlite3.connect(COUNTER, timeout=30, isolation_level=None)
    _db.execute("PRAGMA journal_mode=WAL")
    _db.execute("CREATE TABLE IF NOT EXISTS counts (name TEXT PRIMARY KEY, n INTEGER)")

    async def bump(name: str) -> int:
        _db.execute(
            "INSERT INTO counts VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET n = n + 1", (name,)
        )
        return int(_db.execute("SELECT n FROM counts WHERE name = ?", (name,)).fetchone()[0])


class Verifier:
    """Every credential is valid and names its own principal (callers are told apart)."""

    async def bearer(self, token, *, scopes, ctx):
        return Principal("bearer:" + token)

    async def key(self, key, *, scopes, ctx):
        return Principal("key:" + key)


app = FastAPI()
install_problem_handlers(app, max_body_bytes=1_000_000)
install_authentication(
    app,
    (AuthScheme("bearer", "bearer", "bearer"), AuthScheme("key", "apiKey", "key", parameter="X-API-Key")),
    Verifier(),
    realm="idem",
)
AUTH = AuthRequirement(public=True, optional=((("bearer", ()),), (("key", ()),)))
install_idempotency(
    app,
    os.environ["IDEM_STORE_URL"],
    lock_timeout=float(os.environ.get("IDEM_LOCK_TIMEOUT", "60")),
)


@app.middleware("http")
async def served_by(request: Request, call_next):  # outside the route: never stored
    response = await call_next(request)
    response.headers["x-served-by"] = str(os.getpid())
    return response


# authentication (a guard) runs before the key is claimed, so the scope is the principal
router = APIRouter(dependencies=[Depends(AUTH)])
required = idempotent_route("Idempotency-Key", required=True, base=GuardedRoute)


class Payment(BaseModel):
    amount: int
    currency: str


async def create_payment(payment: Payment, request: Request) -> JSONResponse:
    n = await bump("payments")
    await asyncio.sleep(float(request.query_params.get("sleep", "0")))
    return JSONResponse(
        {"id": f"pay_{n}", "amount": payment.amount, "currency": payment.currency, "n": n},
        status_code=201,
        headers={"Location": f"/payments/pay_{n}", "X-Request-N": str(n)},
    )


async def raw(request: Request, background: BackgroundTasks) -> Response:
    n = await bump("raw")
    background.add_task(bump, "raw.background")
    response = Response(b"\\x00\\xff raw %d \\r\\n" % n, status_code=200, media_type="application/x-raw")
    response.raw_headers.append((b"set-cookie", b"a=%d" % n))
    response.raw_headers.append((b"set-cookie", b"b=%d" % n))
    response.raw_headers.append((b"x-latin", b"caf\\xe9"))
    return response


async def flaky(request: Request) -> JSONResponse:
    """First call answers 503, later ones 201."""
    n = await bump("flaky")
    if n == 1:
        return JSONResponse({"error": "down"}, status_code=503)
    return JSONResponse({"n": n}, status_code=201)


async def crashy(request: Request) -> JSONResponse:
    """First call raises (an unhandled exception → 500), later ones 201."""
    n = await bump("crashy")
    if n == 1:
        raise RuntimeError("boom")
    return JSONResponse({"n": n}, status_code=201)


async def declined(request: Request) -> None:
    await bump("declined")
    raise HTTPException(402, detail="card declined", headers={"X-Decline": "insufficient_funds"})


async def gone(request: Request) -> None:
    await bump("gone")
    raise ProblemDetail(404, "not-found", "Not found", "no such customer")


async def busy(request: Request) -> JSONResponse:
    n = await bump("busy")
    return JSONResponse({"n": n}, status_code=429, headers={"Retry-After": "1"})


async def optional(request: Request) -> JSONResponse:
    n = await bump("optional")
    return JSONResponse({"n": n}, status_code=201)


async def slow(request: Request) -> JSONResponse:
    started = await bump("slow.started")
    while FLAG and os.path.exists(FLAG):
        await asyncio.sleep(0.05)
    done = await bump("slow.done")
    return JSONResponse({"started": started, "done": done}, status_code=201)


router.add_api_route("/payments", create_payment, methods=["POST"], route_class_override=required)
router.add_api_route("/raw", raw, methods=["POST"], route_class_override=required)
router.add_api_route("/flaky", flaky, methods=["POST"], route_class_override=required)
router.add_api_route("/crashy", crashy, methods=["POST"], route_class_override=required)
router.add_api_route("/declined", declined, methods=["POST"], route_class_override=required)
router.add_api_route("/gone", gone, methods=["POST"], route_class_override=required)
router.add_api_route("/busy", busy, methods=["POST"], route_class_override=required)
router.add_api_route("/slow", slow, methods=["POST"], route_class_override=required)
router.add_api_route(
    "/guarded",
    create_payment,
    methods=["POST"],
    dependencies=[Depends(require_content_type("application/json"))],
    route_class_override=idempotent_route("Idempotency-Key", True, GuardedRoute),
)
app.include_router(router, prefix="/v1")
# directly on the app too, and optional
app.router.add_api_route(
    "/optional", optional, methods=["POST"], route_class_override=idempotent_route()
)
'''


def make_service(root: Path) -> Path:
    pkg = root / PKG
    (pkg / "runtime").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, pkg / "runtime" / src.name)
    (pkg / "runtime" / "__init__.py").touch()
    (pkg / "app.py").write_text(APP)
    return root


class Counts:
    def __init__(self, url: str) -> None:
        self.url = url

    def __getitem__(self, name: str) -> int:
        if self.url.startswith("redis://"):
            value = redis.Redis.from_url(self.url).get(name)
            return int(value or 0)
        with sqlite3.connect(self.url, timeout=30) as db:
            try:
                row = db.execute("SELECT n FROM counts WHERE name = ?", (name,)).fetchone()
            except sqlite3.OperationalError:
                return 0
        return int(row[0]) if row else 0


@contextmanager
def service(
    root: Path,
    store_url: str,
    counter: str,
    *,
    workers: int = 1,
    lock_timeout: float = 60,
    slow_flag: Path | None = None,
) -> Iterator[tuple[str, Any]]:
    env = {
        "IDEM_STORE_URL": store_url,
        "IDEM_COUNTER": counter,
        "IDEM_LOCK_TIMEOUT": str(lock_timeout),
        "IDEM_SLOW_FLAG": str(slow_flag or ""),
    }
    with uvicorn_server(f"{PKG}.app:app", cwd=root, env=env, workers=workers) as (base, proc):
        yield base, proc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Counts]]:
    root = make_service(tmp_path_factory.mktemp("idemsvc"))
    counter = str(root / "counts.db")
    with service(root, f"sqlite:///{root / 'state.db'}", counter) as (base, _):
        yield base, Counts(counter)


@pytest.fixture
def client(server: tuple[str, Counts]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server[0], timeout=20) as c:
        yield c


def key() -> str:
    return str(uuid.uuid4())


PAY = {"amount": 5000, "currency": "usd"}
VOLATILE = {b"date", b"server", b"x-served-by"}


def route_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    """Header pairs the route produced, in order (uvicorn's and the middleware's left out)."""
    return [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in VOLATILE]


def assert_replay(original: httpx.Response, replay: httpx.Response) -> None:
    assert replay.status_code == original.status_code
    assert replay.content == original.content
    assert route_headers(replay) == [*route_headers(original), (b"idempotent-replayed", b"true")]
    assert "idempotent-replayed" not in original.headers


def problem(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = json.loads(response.content)
    assert body["type"] == f"/problems/{kind}"
    assert body["status"] == status
    return body


# ------------------------------------------------------------------------------------------------


def test_first_call_then_byte_for_byte_replay(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    before = counts["payments"]
    first = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k})
    assert first.status_code == 201
    assert first.json()["amount"] == 5000
    for _ in range(2):
        again = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k})
        assert_replay(first, again)
    assert counts["payments"] == before + 1


def test_replay_keeps_raw_bytes_duplicate_headers_and_runs_background_once(
    client: httpx.Client, server: Any
) -> None:
    """Byte for byte but for `Set-Cookie`: a session goes to the first caller only."""
    counts: Counts = server[1]
    k = key()
    before, before_bg = counts["raw"], counts["raw.background"]
    first = client.post("/v1/raw", content=b"\x01\x02", headers={"Idempotency-Key": k})
    assert first.status_code == 200
    assert first.content.startswith(b"\x00\xff raw ")
    assert first.headers.get_list("set-cookie") == [
        f"a={before + 1}",
        f"b={before + 1}",
    ]
    replay = client.post("/v1/raw", content=b"\x01\x02", headers={"Idempotency-Key": k})
    assert replay.status_code == first.status_code and replay.content == first.content
    kept = [(k, v) for k, v in route_headers(first) if k != b"set-cookie"]
    assert route_headers(replay) == [*kept, (b"idempotent-replayed", b"true")]
    assert (b"x-latin", b"caf\xe9") in route_headers(replay)
    assert counts["raw"] == before + 1
    assert counts["raw.background"] == before_bg + 1


def test_quoted_and_bare_key_are_the_same_key(client: httpx.Client) -> None:
    k = key()
    first = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": f'"{k}"'})
    assert first.status_code == 201
    assert_replay(first, client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k}))
    # sf-string escapes
    k2 = 'a"b\\c-' + key()
    quoted = '"a\\"b\\\\c-' + k2.removeprefix('a"b\\c-') + '"'
    first = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": quoted})
    assert first.status_code == 201
    # the unescaped form is not a valid bare key ('"' and '\\' are not allowed bare)
    problem(
        client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k2}),
        400,
        "idempotency-key-invalid",
    )


def test_same_key_other_request_is_a_conflict(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    assert client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k}).status_code == 201
    before = counts["payments"]
    for url, body in (
        ("/v1/payments", {"amount": 9999, "currency": "usd"}),  # other body
        ("/v1/payments?x=1", PAY),  # other query
        ("/v1/raw", PAY),  # other path
    ):
        r = client.post(url, json=body, headers={"Idempotency-Key": k})
        body_json = problem(r, 422, "idempotency-conflict")
        assert body_json["title"] == "Idempotency key reused"
        assert body_json["instance"] == url.split("?")[0]
        assert "idempotent-replayed" not in r.headers
    assert counts["payments"] == before


def test_retry_while_in_flight_gets_409_then_the_replay(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    before = counts["payments"]
    results: list[httpx.Response] = []
    t = threading.Thread(
        target=lambda: results.append(
            client.post("/v1/payments?sleep=1.0", json=PAY, headers={"Idempotency-Key": k})
        )
    )
    t.start()
    deadline = time.monotonic() + 10
    while counts["payments"] == before and time.monotonic() < deadline:
        time.sleep(0.02)
    r = client.post("/v1/payments?sleep=1.0", json=PAY, headers={"Idempotency-Key": k})
    problem(r, 409, "idempotency-in-progress")
    assert r.headers["retry-after"] == "1"
    # a different body is a conflict even while in flight
    other = client.post(
        "/v1/payments?sleep=1.0", json={**PAY, "amount": 1}, headers={"Idempotency-Key": k}
    )
    problem(other, 422, "idempotency-conflict")
    t.join(20)
    assert results[0].status_code == 201
    assert_replay(
        results[0],
        client.post("/v1/payments?sleep=1.0", json=PAY, headers={"Idempotency-Key": k}),
    )
    assert counts["payments"] == before + 1


def test_key_required_and_optional(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    r = client.post("/v1/payments", json=PAY)
    body = problem(r, 400, "idempotency-key-missing")
    assert "Idempotency-Key" in body["detail"]
    before = counts["optional"]
    assert client.post("/optional").status_code == 201
    assert client.post("/optional").status_code == 201
    assert counts["optional"] == before + 2  # no key: not protected, runs each time
    k = key()
    first = client.post("/optional", headers={"Idempotency-Key": k})
    assert_replay(first, client.post("/optional", headers={"Idempotency-Key": k}))
    assert counts["optional"] == before + 3


@pytest.mark.parametrize(
    "value",
    ["x" * 256, '"' + "x" * 256 + '"', "", '""', '"abc', '"abc"x', "a b", "caf\u00e9"],
)
def test_invalid_keys_are_400(client: httpx.Client, value: str) -> None:
    headers = [("Idempotency-Key", value.encode("latin-1"))]
    r = client.post("/v1/payments", json=PAY, headers=headers)
    problem(r, 400, "idempotency-key-invalid")


def test_key_of_255_chars_and_repeated_header(client: httpx.Client) -> None:
    k = uuid.uuid4().hex + "y" * 223
    assert len(k) == 255
    assert client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k}).status_code == 201
    r = client.post(
        "/v1/payments",
        json=PAY,
        headers=[("Idempotency-Key", key()), ("Idempotency-Key", key())],
    )
    problem(r, 400, "idempotency-key-invalid")


def test_5xx_result_releases_the_claim(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    r = client.post("/v1/flaky", headers={"Idempotency-Key": k})
    assert r.status_code == 503 and "idempotent-replayed" not in r.headers
    ok = client.post("/v1/flaky", headers={"Idempotency-Key": k})
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers
    assert_replay(ok, client.post("/v1/flaky", headers={"Idempotency-Key": k}))
    assert counts["flaky"] == 2


def test_exception_releases_the_claim(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    # uvicorn drops the connection after an unhandled exception: don't reuse it
    r = client.post("/v1/crashy", headers={"Idempotency-Key": k, "Connection": "close"})
    assert r.status_code == 500
    ok = client.post("/v1/crashy", headers={"Idempotency-Key": k})
    assert ok.status_code == 201
    assert_replay(ok, client.post("/v1/crashy", headers={"Idempotency-Key": k}))
    assert counts["crashy"] == 2


def test_validation_failure_stores_nothing(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    before = counts["payments"]
    bad = client.post("/v1/payments", json={"amount": "lots"}, headers={"Idempotency-Key": k})
    problem(bad, 422, "validation-error")  # the app's validation answer, not ours
    assert counts["payments"] == before
    # same key, now a valid (different) body: a fresh execution, not a conflict
    ok = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k})
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers
    assert counts["payments"] == before + 1


def test_handler_4xx_is_stored_and_replayed(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    first = client.post("/v1/declined", headers={"Idempotency-Key": k})
    assert problem(first, 402, "http-402")["detail"] == "card declined"
    assert first.headers["x-decline"] == "insufficient_funds"
    assert_replay(first, client.post("/v1/declined", headers={"Idempotency-Key": k}))
    assert counts["declined"] == 1
    k = key()
    gone = client.post("/v1/gone", headers={"Idempotency-Key": k})
    assert problem(gone, 404, "not-found")["detail"] == "no such customer"
    assert_replay(gone, client.post("/v1/gone", headers={"Idempotency-Key": k}))
    assert counts["gone"] == 1


def test_guard_rejection_before_the_claim_stores_nothing(client: httpx.Client, server: Any) -> None:
    """idempotent_route(..., base=GuardedRoute): the 415 guard answers before any claim."""
    counts: Counts = server[1]
    k = key()
    before = counts["payments"]
    r = client.post(
        "/v1/guarded",
        content=json.dumps(PAY),
        headers={"Idempotency-Key": k, "Content-Type": "text/plain"},
    )
    problem(r, 415, "unsupported-media-type")
    ok = client.post("/v1/guarded", json=PAY, headers={"Idempotency-Key": k})
    assert ok.status_code == 201 and "idempotent-replayed" not in ok.headers
    assert_replay(ok, client.post("/v1/guarded", json=PAY, headers={"Idempotency-Key": k}))
    assert counts["payments"] == before + 1


def test_retry_later_statuses_are_not_stored(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    before = counts["busy"]
    for _ in range(2):
        r = client.post("/v1/busy", headers={"Idempotency-Key": k})
        assert r.status_code == 429 and "idempotent-replayed" not in r.headers
    assert counts["busy"] == before + 2


def test_keys_are_scoped_by_principal(client: httpx.Client, server: Any) -> None:
    counts: Counts = server[1]
    k = key()
    before = counts["payments"]
    alice = {"Idempotency-Key": k, "Authorization": "Bearer alice"}
    bob = {"Idempotency-Key": k, "Authorization": "Bearer bob"}
    key_user = {"Idempotency-Key": k, "X-API-Key": "sk_carol"}
    a = client.post("/v1/payments", json=PAY, headers=alice)
    b = client.post("/v1/payments", json={**PAY, "amount": 7}, headers=bob)  # no conflict
    c = client.post("/v1/payments", json=PAY, headers=key_user)
    anon = client.post("/v1/payments", json=PAY, headers={"Idempotency-Key": k})
    assert [x.status_code for x in (a, b, c, anon)] == [201] * 4
    assert counts["payments"] == before + 4
    assert_replay(a, client.post("/v1/payments", json=PAY, headers=alice))
    assert_replay(b, client.post("/v1/payments", json={**PAY, "amount": 7}, headers=bob))
    assert counts["payments"] == before + 4


# ------------------------------------------------------------------------------------------------
# 50 concurrent requests, one key, two worker processes


async def _burst(base: str, k: str, n: int) -> list[httpx.Response]:
    """n requests with one key: half at once, half spread over the next second (the handler
    takes 0.5 s), so both answers to a duplicate — 409 and the replay — occur."""
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as c:

        async def one(i: int) -> httpx.Response:
            await asyncio.sleep(0 if i < n // 2 else (i - n // 2) * 2 / n)
            return await c.post("/v1/payments?sleep=0.5", json=PAY, headers={"Idempotency-Key": k})

        return list(await asyncio.gather(*(one(i) for i in range(n))))


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_50_concurrent_same_key_run_once(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    root = make_service(tmp_path)
    if backend == "sqlite":
        store_url, counter = f"sqlite:///{tmp_path / 'state.db'}", str(tmp_path / "counts.db")
    else:
        store_url = counter = request.getfixturevalue("redis_url")
        redis.Redis.from_url(counter).flushdb()
    counts = Counts(counter)
    with service(root, store_url, counter, workers=2) as (base, _):
        k = key()
        responses = asyncio.run(_burst(base, k, 50))
        after = httpx.post(
            base + "/v1/payments?sleep=0.5", json=PAY, headers={"Idempotency-Key": k}, timeout=10
        )
    originals = [
        r for r in responses if r.status_code == 201 and "idempotent-replayed" not in r.headers
    ]
    replays = [r for r in responses if "idempotent-replayed" in r.headers]
    in_progress = [r for r in responses if r.status_code == 409]
    assert counts["payments"] == 1
    assert len(originals) == 1
    assert len(originals) + len(replays) + len(in_progress) == 50
    for r in in_progress:
        problem(r, 409, "idempotency-in-progress")
    for r in [*replays, after]:
        assert_replay(originals[0], r)
    workers = {r.headers["x-served-by"] for r in responses}
    print(
        f"\n[{backend}, 2 workers] 50 same-key requests: executions={counts['payments']} "
        f"original=1 replays={len(replays)} 409={len(in_progress)} served_by_pids={len(workers)}"
    )


# ------------------------------------------------------------------------------------------------
# SIGKILL in the middle of a handler


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_sigkill_mid_handler_then_retry_executes_once(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Server A is SIGKILLed while its handler runs; server B (the restarted process, started
    on the same store before the kill so that its start-up time does not hide the lock
    window) gets the retries: 409 while the dead claim lives, then one execution, then replays."""
    lock_timeout = 1.5
    root = make_service(tmp_path)
    if backend == "sqlite":
        store_url, counter = f"sqlite:///{tmp_path / 'state.db'}", str(tmp_path / "counts.db")
    else:
        store_url = counter = request.getfixturevalue("redis_url")
        redis.Redis.from_url(counter).flushdb()
    counts = Counts(counter)
    flag = tmp_path / "slow.flag"
    flag.touch()
    k = key()
    opts: dict[str, Any] = {"lock_timeout": lock_timeout, "slow_flag": flag}

    with (
        service(root, store_url, counter, **opts) as (base_a, proc_a),
        service(root, store_url, counter, **opts) as (base_b, _),
    ):
        errors: list[BaseException] = []

        def doomed() -> None:
            try:
                httpx.post(base_a + "/v1/slow", headers={"Idempotency-Key": k}, timeout=30)
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=doomed)
        t.start()
        deadline = time.monotonic() + 10
        while counts["slow.started"] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert counts["slow.started"] == 1
        time.sleep(lock_timeout)  # longer than the claim's first lifetime: the heartbeat works
        stop_process_group(proc_a, signal.SIGKILL)
        killed_at = time.monotonic()
        flag.unlink()  # from now on the handler finishes at once
        t.join(10)
        assert errors, "the in-flight request must have died with its server"
        assert counts["slow.done"] == 0

        statuses: list[int] = []
        while True:
            r = httpx.post(base_b + "/v1/slow", headers={"Idempotency-Key": k}, timeout=10)
            statuses.append(r.status_code)
            if r.status_code != 409:
                break
            problem(r, 409, "idempotency-in-progress")
            assert time.monotonic() - killed_at < lock_timeout + 5, "the claim never expired"
            time.sleep(0.1)
        recovered_after = time.monotonic() - killed_at
        assert statuses[0] == 409, "the dead worker's claim must hold the key until it expires"
        assert r.status_code == 201, r.text
        assert r.json() == {"started": 2, "done": 1}
        assert_replay(r, httpx.post(base_b + "/v1/slow", headers={"Idempotency-Key": k}))
    assert recovered_after >= lock_timeout * 2 / 3 - 0.05
    assert counts["slow.started"] == 2  # the killed attempt, and the one retry that ran
    assert counts["slow.done"] == 1  # completed exactly once

    if backend == "sqlite":  # a real restart on the same file: the stored result survives it
        with service(root, store_url, counter, **opts) as (base_c, _):
            assert_replay(r, httpx.post(base_c + "/v1/slow", headers={"Idempotency-Key": k}))
        assert counts["slow.done"] == 1
    print(
        f"\n[{backend}] SIGKILL mid-handler: {statuses.count(409)} retries got 409, then one "
        f"execution {recovered_after:.2f}s after the kill (lock timeout {lock_timeout}s); "
        f"then replays; completed executions=1"
    )


# ------------------------------------------------------------------------------------------------
# in process: the pure helpers, and an app without problems.py's handlers (fallback rendering)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("abc", "abc"),
        ('"abc"', "abc"),
        ('  "8e03978e-40d5-43e8-bc93-6894a57f9324"  ', "8e03978e-40d5-43e8-bc93-6894a57f9324"),
        ('"a b"', "a b"),
        ('"q\\"x\\\\y"', 'q"x\\y'),
        ("x" * 255, "x" * 255),
    ],
)
def test_parse_key_accepts(rt: Any, raw: str, expected: str) -> None:
    assert rt.idempotency.parse_idempotency_key(raw) == expected


@pytest.mark.parametrize(
    "raw", ["", " ", '""', '"abc', 'abc"', '"a\\nb"', '"abc";p=1', "a b", "x" * 256, "\u00e9"]
)
def test_parse_key_rejects(rt: Any, raw: str) -> None:
    with pytest.raises(ValueError):
        rt.idempotency.parse_idempotency_key(raw)


def test_principal_and_fingerprint(rt: Any) -> None:
    from starlette.requests import Request

    idem = rt.idempotency

    def scope_of(principal: Any, client: str = "192.0.2.1") -> str:
        request = Request(
            {"type": "http", "method": "POST", "path": "/", "headers": [], "client": (client, 1)}
        )
        if principal is not None:
            request.state.principal = principal
        return str(idem.principal_scope(request))

    # no verified principal (a public operation): the client address is the scope
    assert scope_of(None).startswith("public:") and "192.0.2.1" not in scope_of(None)
    assert scope_of(None) != scope_of(None, "192.0.2.2")
    assert scope_of(None, "2001:db8::1") == scope_of(None, "2001:db8::2")  # one /64
    assert scope_of(rt.security.Principal("x"), "192.0.2.2") == scope_of(rt.security.Principal("x"))
    alice = scope_of(rt.security.Principal("alice"))
    bob = scope_of(rt.security.Principal("bob"))
    assert len(alice) == 64 and alice != bob and "alice" not in alice
    assert scope_of(rt.security.Principal("alice", tier="pro")) == alice  # the id alone
    fp = idem.request_fingerprint("POST", "/p", b"a=1", b"{}")
    assert fp == idem.request_fingerprint("post", "/p", b"a=1", b"{}")
    others = [
        idem.request_fingerprint("PUT", "/p", b"a=1", b"{}"),
        idem.request_fingerprint("POST", "/q", b"a=1", b"{}"),
        idem.request_fingerprint("POST", "/p", b"a=2", b"{}"),
        idem.request_fingerprint("POST", "/p", b"a=1", b"{ }"),
        idem.request_fingerprint("POST", "/p", b"a=1{}", b""),
    ]
    assert len({fp, *others}) == 6


LONG_KEY = "f1e2d3c4-b5a6-4789-8abc-def012345678"


def test_fallback_problems_and_missing_install(rt: Any) -> None:
    """Without install_problem_handlers the runtime renders its own problems."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    idem = rt.idempotency
    app = FastAPI()
    calls: list[int] = []

    async def endpoint() -> JSONResponse:
        calls.append(1)
        await asyncio.sleep(0.2)
        return JSONResponse({"ok": True}, status_code=201)

    app.router.add_api_route(
        "/op", endpoint, methods=["POST"], route_class_override=idem.idempotent_route(required=True)
    )

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            with pytest.raises(RuntimeError, match="install_idempotency"):
                await c.post("/op", headers={"Idempotency-Key": LONG_KEY})
            idem.install_idempotency(app, "memory://", lock_timeout=5)
            missing = await c.post("/op")
            assert missing.status_code == 400
            assert missing.headers["content-type"] == "application/problem+json"
            assert missing.json()["type"] == "/problems/idempotency-key-missing"
            first, second = await asyncio.gather(
                c.post("/op", headers={"Idempotency-Key": LONG_KEY}),
                c.post("/op", headers={"Idempotency-Key": LONG_KEY}),
            )
            busy = second if second.status_code == 409 else first
            assert busy.status_code == 409 and busy.headers["retry-after"] == "1"
            assert busy.content == (
                b'{"type":"/problems/idempotency-in-progress",'
                b'"title":"Request in progress","status":409,"detail":"The original request with '
                b'this idempotency key is still being processed; retry later.","instance":"/op"}'
            )
            conflict = await c.post("/op", headers={"Idempotency-Key": LONG_KEY}, content=b"x")
            assert conflict.status_code == 422
            assert conflict.json()["type"] == "/problems/idempotency-conflict"
            replay = await c.post("/op", headers={"Idempotency-Key": LONG_KEY})
            assert replay.headers["idempotent-replayed"] == "true" and replay.json() == {"ok": True}
        assert len(calls) == 1

    asyncio.run(go())
