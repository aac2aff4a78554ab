"""Optimistic concurrency (runtime/concurrency.py): ETag parsing and comparison, then the
contracts under uvicorn, and N concurrent writers on SQLite served by two worker processes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.runtime.server.conftest import RuntimeModules, app_package
from tests.support import uvicorn_server

PRECONDITION_FAILED = {
    "type": "/problems/precondition-failed",
    "title": "Precondition failed",
    "status": 412,
    "detail": "The resource was modified since you last fetched it. Re-fetch and retry.",
}


def make_request(method: str, headers: dict[str, str]) -> Any:
    from starlette.requests import Request

    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": method, "path": "/", "headers": raw})


# --- unit --------------------------------------------------------------------------------


def test_etag_makers(rt: RuntimeModules) -> None:
    c = rt.concurrency
    assert c.etag_for_version(42) == '"v42"'
    assert c.version_from_etag('"v42"') == 42
    assert c.version_from_etag('W/"v42"') is None
    assert c.version_from_etag('"abc"') is None
    tag = c.etag_for_content(b"hello")
    assert tag.startswith('"') and tag.endswith('"') and len(tag) == 34
    assert tag == c.etag_for_content(b"hello") != c.etag_for_content(b"hello!")


def test_parse_etag_lists(rt: RuntimeModules) -> None:
    c = rt.concurrency
    E = c.EntityTag
    assert c.parse_etag_list(" * ") is None
    assert c.parse_etag_list('"a", W/"b",  "c,d"') == [E("a"), E("b", weak=True), E("c,d")]
    assert c.parse_etag_list('"",W/"x"') == [E(""), E("x", weak=True)]
    assert str(E("b", weak=True)) == 'W/"b"'
    for bad in ["a", '"a" "b"', 'w/"a"', '"a', "", '"a b"', '*, "a"']:
        with pytest.raises(ValueError):
            c.parse_etag_list(bad)


def test_comparisons(rt: RuntimeModules) -> None:
    c = rt.concurrency
    E = c.EntityTag
    # RFC 9110 §8.8.3.2 table
    assert not c.strong_match(E("1", True), E("1", True)) and c.weak_match(
        E("1", True), E("1", True)
    )
    assert not c.strong_match(E("1", True), E("2", True)) and not c.weak_match(
        E("1", True), E("2", True)
    )
    assert not c.strong_match(E("1", True), E("1")) and c.weak_match(E("1", True), E("1"))
    assert c.strong_match(E("1"), E("1")) and c.weak_match(E("1"), E("1"))


def test_condition(rt: RuntimeModules) -> None:
    c = rt.concurrency
    cond = c.Condition.parse('"v1", "v2"')
    assert cond.matches('"v2"') and not cond.matches('"v3"') and not cond.matches(None)
    assert not c.Condition.parse('W/"v2"').matches('"v2"')
    assert c.Condition.parse('W/"v2"').matches('"v2"', weak=True)
    star = c.Condition.parse("*")
    assert star.any and star.matches('"v9"') and not star.matches(None)
    assert c.Condition.parse('"v7"').expected_version == 7
    assert c.Condition.parse('"v7", "v8"').expected_version is None
    assert star.expected_version is None
    with pytest.raises(rt.problems.ProblemDetail) as info:
        c.Condition.parse("garbage")
    assert info.value.status == 400


def test_evaluate_preconditions(rt: RuntimeModules) -> None:
    c = rt.concurrency
    PD = rt.problems.ProblemDetail

    def status(method: str, headers: dict[str, str], etag: str | None, **kw: Any) -> int:
        try:
            response = c.evaluate_preconditions(make_request(method, headers), etag, **kw)
        except PD as exc:
            return int(exc.status)
        return 200 if response is None else int(response.status_code)

    assert status("GET", {}, '"v1"') == 200
    assert status("GET", {"If-None-Match": '"v1"'}, '"v1"') == 304
    assert status("HEAD", {"If-None-Match": 'W/"v1"'}, '"v1"') == 304
    assert status("GET", {"If-None-Match": '"v0"'}, '"v1"') == 200
    assert status("GET", {"If-None-Match": "*"}, None) == 200
    assert status("PATCH", {}, '"v1"', require_if_match=True) == 428
    assert status("PATCH", {}, '"v1"') == 200
    assert status("PATCH", {"If-Match": '"v0"'}, '"v1"') == 412
    assert status("PATCH", {"If-Match": 'W/"v1"'}, '"v1"') == 412
    assert status("PATCH", {"If-Match": '"v0", "v1"'}, '"v1"', require_if_match=True) == 200
    assert status("DELETE", {"If-Match": "*"}, None) == 412
    assert status("PUT", {"If-None-Match": "*"}, '"v1"') == 412
    assert status("PUT", {"If-None-Match": "*"}, None) == 200
    response = c.evaluate_preconditions(make_request("GET", {"If-None-Match": '"v1"'}), '"v1"')
    assert response.headers["etag"] == '"v1"' and response.body == b""


def test_router_helpers(rt: RuntimeModules) -> None:
    c = rt.concurrency
    assert c.not_modified(make_request("GET", {}), '"v1"') is None
    assert c.not_modified(make_request("GET", {"If-None-Match": '"v2"'}), '"v1"') is None
    assert c.not_modified(make_request("GET", {"If-None-Match": '"v1"'}), '"v1"').status_code == 304
    assert c.require_if_match(make_request("PATCH", {}), required=False) is None
    with pytest.raises(rt.problems.ProblemDetail) as info:
        c.require_if_match(make_request("PATCH", {}), required=True)
    assert (info.value.status, info.value.kind) == (428, "precondition-required")
    cond = c.require_if_match(make_request("PATCH", {"If-Match": '"v3"'}))
    c.check_if_match(cond, '"v3"')
    c.check_if_match(None, '"v3"')
    with pytest.raises(rt.problems.ProblemDetail) as info:
        c.check_if_match(cond, '"v4"')
    assert (info.value.status, info.value.kind) == (412, "precondition-failed")


# --- functional: SQLite, two worker processes ----------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, httpx.Client]]:
    root = tmp_path_factory.mktemp("etag_srv")
    app_package(root, "etag_app")
    env = {
        "APIFORGE_STORE_URL": f"sqlite:///{root / 'data' / 'widgets.db'}",
        "APIFORGE_RATE_LIMIT_DEFAULT": "1000/minute",
        "APIFORGE_RATE_LIMIT_ANONYMOUS": "1000/minute",
        "TEST_PATCH_DELAY": "0.25",  # between a PATCH's read and its write: writers really race
    }
    with (
        uvicorn_server(
            "etag_app.app:create_app", cwd=root, env=env, workers=2, extra_args=["--factory"]
        ) as (base, _proc),
        httpx.Client(base_url=base) as client,
    ):
        yield base, client


@pytest.fixture
def server(served: tuple[str, httpx.Client]) -> httpx.Client:
    return served[1]


def test_get_etag_and_304(server: httpx.Client) -> None:
    r = server.put("/widgets/g1", json={"name": "g", "size": 1})
    assert r.status_code == 201 and r.headers["etag"] == '"v1"'
    r = server.get("/widgets/g1")
    assert (
        r.status_code == 200
        and r.headers["etag"] == '"v1"'
        and r.json() == {"name": "g", "size": 1}
    )
    for inm in ['"v1"', 'W/"v1"', '"v0", "v1"', "*"]:
        r = server.get("/widgets/g1", headers={"If-None-Match": inm})
        assert r.status_code == 304, inm
        assert r.content == b""
        assert r.headers["etag"] == '"v1"'
        assert "content-type" not in r.headers
        assert r.headers["x-ratelimit-limit"] == "1000"
    r = server.get("/widgets/g1", headers={"If-None-Match": '"v0"'})
    assert r.status_code == 200 and r.json() == {"name": "g", "size": 1}


def test_patch_preconditions(server: httpx.Client) -> None:
    server.put("/widgets/p1", json={"name": "p", "size": 1})
    r = server.patch("/widgets/p1", json={"size": 2})
    assert r.status_code == 428
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json() == {
        "type": "/problems/precondition-required",
        "title": "Precondition required",
        "status": 428,
        "detail": "This operation requires an If-Match header with the ETag you last fetched.",
        "instance": "/widgets/p1",
    }
    assert r.headers["ratelimit-policy"] == '"default";q=1000;w=60'  # errors carry the headers
    r = server.patch("/widgets/p1", json={"size": 2}, headers={"If-Match": '"v1"'})
    assert (
        r.status_code == 200
        and r.headers["etag"] == '"v2"'
        and r.json() == {"name": "p", "size": 2}
    )
    for stale in ['"v1"', 'W/"v2"', '"nonsense"']:
        r = server.patch("/widgets/p1", json={"size": 3}, headers={"If-Match": stale})
        assert r.status_code == 412, stale
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json() == {**PRECONDITION_FAILED, "instance": "/widgets/p1"}
    r = server.patch("/widgets/p1", json={"size": 3}, headers={"If-Match": "*"})
    assert r.status_code == 200 and r.headers["etag"] == '"v3"'
    r = server.patch("/widgets/p1", json={"size": 3}, headers={"If-Match": "not-a-tag"})
    assert r.status_code == 400 and r.json()["type"].endswith("/bad-request")


def test_put_if_none_match_star_and_delete(server: httpx.Client) -> None:
    r = server.put("/widgets/d1", json={"name": "d", "size": 1}, headers={"If-None-Match": "*"})
    assert r.status_code == 201
    r = server.put("/widgets/d1", json={"name": "d", "size": 1}, headers={"If-None-Match": "*"})
    assert r.status_code == 412
    r = server.put("/widgets/d1", json={"name": "d", "size": 1})
    assert r.status_code == 409 and r.json()["type"].endswith("/conflict")
    r = server.delete("/widgets/d1", headers={"If-Match": '"v7"'})
    assert r.status_code == 412 and r.json() == {**PRECONDITION_FAILED, "instance": "/widgets/d1"}
    r = server.delete("/widgets/d1", headers={"If-Match": '"v1"'})
    assert r.status_code == 204 and r.content == b""
    assert server.get("/widgets/d1").status_code == 404


async def _connections_on_both_workers(base: str, path: str, n: int) -> list[httpx.AsyncClient]:
    """n keep-alive connections, at least one on each worker process.

    The kernel picks the process that accepts a connection, so a burst of new connections can
    all land on one; a kept-alive connection stays with its process, so learn each one's
    process with a GET and keep opening connections until both are among them."""
    opened: list[httpx.AsyncClient] = []
    pid_of: dict[httpx.AsyncClient, str] = {}
    for _ in range(20):
        batch = [httpx.AsyncClient(base_url=base, timeout=30) for _ in range(n)]
        opened += batch
        answers = await asyncio.gather(*(c.get(path) for c in batch))
        for c, r in zip(batch, answers, strict=True):
            pid_of[c] = r.headers["x-worker-pid"]
        by_pid: dict[str, list[httpx.AsyncClient]] = {}
        for c, pid in pid_of.items():
            by_pid.setdefault(pid, []).append(c)
        if len(by_pid) == 2:
            first, second = by_pid.values()
            chosen = first[: n // 2] + second[: n - n // 2]
            chosen += [c for c in pid_of if c not in chosen][: n - len(chosen)]
            for c in opened:
                if c not in chosen:
                    await c.aclose()
            return chosen
    for c in opened:
        await c.aclose()
    raise AssertionError("20 bursts of connections never reached both worker processes")


def test_concurrent_writers_exactly_one_wins(served: tuple[str, httpx.Client]) -> None:
    """N PATCHes holding the same ETag, spread over both worker processes: one 2xx, N-1 412."""
    base, client = served
    n = 12
    path = "/widgets/race"
    assert client.put(path, json={"name": "r", "size": 0}).status_code == 201
    etag = client.get(path).headers["etag"]
    assert etag == '"v1"'

    async def race() -> list[httpx.Response]:
        writers = await _connections_on_both_workers(base, path, n)
        try:
            patches = [
                c.patch(path, json={"size": i + 1}, headers={"If-Match": etag})
                for i, c in enumerate(writers)
            ]
            return list(await asyncio.gather(*patches))
        finally:
            for c in writers:
                await c.aclose()

    responses = asyncio.run(race())
    assert len({r.headers["x-worker-pid"] for r in responses}) == 2
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [412] * (n - 1), statuses
    winner = next(r for r in responses if r.status_code == 200)
    assert winner.headers["etag"] == '"v2"'
    for r in responses:
        if r.status_code == 412:
            assert r.json() == {**PRECONDITION_FAILED, "instance": path}
    final = client.get(path)
    assert final.headers["etag"] == '"v2"' and final.json() == winner.json()
