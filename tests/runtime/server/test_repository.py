"""The versioned repository (runtime/repository.py) on memory and SQLite."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.server.conftest import RuntimeModules
from tests.support import fresh_database

Factory = Callable[[], Any]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_repo(request: pytest.FixtureRequest, rt: RuntimeModules, tmp_path: Path) -> Factory:
    """Repositories over one backing; for SQLite each call opens a new connection pair, as
    another worker process would."""
    if request.param == "memory":
        shared = rt.repository.MemoryRepository()
        return lambda: shared
    if request.param == "postgres":
        admin: str = request.getfixturevalue("postgres_url")
        url = fresh_database(admin, "repo_" + uuid.uuid4().hex[:10])
    else:
        url = f"sqlite:///{tmp_path / 'sub' / 'repo.db'}"
    return lambda: rt.stores.open_repository(url, "widgets")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_crud_and_versions(rt: RuntimeModules, make_repo: Factory) -> None:
    repo = make_repo()
    R = rt.repository

    async def scenario() -> None:
        assert await repo.get("a") is None
        assert await repo.create("a", {"n": 1, "tags": ["x"]}) == 1
        got = await repo.get("a")
        assert got == R.Versioned({"n": 1, "tags": ["x"]}, 1)
        value, version = got  # a plain (value, version) pair
        assert (value, version) == ({"n": 1, "tags": ["x"]}, 1)
        value["n"] = 99  # a copy: the stored value does not change
        assert (await repo.get("a")).value == {"n": 1, "tags": ["x"]}
        assert await repo.update("a", {"n": 2}, expected_version=1) == 2
        assert await repo.get("a") == R.Versioned({"n": 2}, 2)
        with pytest.raises(R.VersionConflict) as info:
            await repo.update("a", {"n": 3}, expected_version=1)
        assert (info.value.expected, info.value.current) == (1, 2)
        assert (info.value.status, info.value.kind) == (412, "precondition-failed")
        with pytest.raises(R.KeyExists) as exists:
            await repo.create("a", {})
        assert exists.value.status == 409
        with pytest.raises(R.VersionConflict):
            await repo.delete("a", expected_version=1)
        await repo.delete("a", expected_version=2)
        assert await repo.get("a") is None
        with pytest.raises(R.VersionConflict) as gone:
            await repo.update("a", {}, expected_version=2)
        assert gone.value.current is None
        with pytest.raises(TypeError, match="JSON"):
            await repo.create("b", {"when": object()})
        with pytest.raises(TypeError, match="JSON"):
            await repo.create("b", float("nan"))
        assert await repo.get("b") is None
        for scalar in ["text", 3, None, [1, 2], True]:
            await repo.create(f"s{scalar!r}", scalar)
            assert (await repo.get(f"s{scalar!r}")).value == scalar
        await repo.close()

    run(scenario())


def test_list_orders_filters_and_pages(make_repo: Factory) -> None:
    repo = make_repo()

    async def scenario() -> None:
        for key in ["b2", "a1", "b1", "c1", "b3", "b%", "b_"]:
            await repo.create(key, {"k": key})
        keys = [r.key for r in await repo.list()]
        assert keys == sorted(keys) and len(keys) == 7
        assert [r.key for r in await repo.list(prefix="b")] == ["b%", "b1", "b2", "b3", "b_"]
        assert [r.key for r in await repo.list(prefix="b%")] == ["b%"]  # no LIKE wildcards
        page1 = await repo.list(prefix="b", limit=2)
        page2 = await repo.list(prefix="b", limit=2, after=page1[-1].key)
        assert [r.key for r in page1 + page2] == ["b%", "b1", "b2", "b3"]
        first = page1[0]
        assert (first.value, first.version) == ({"k": "b%"}, 1)
        await repo.close()

    run(scenario())


def test_concurrent_updates_one_winner(make_repo: Factory) -> None:
    """asyncio tasks on one repository: of N updates from version 1, exactly one wins."""
    repo = make_repo()
    R_conflicts: list[BaseException] = []

    async def scenario() -> list[Any]:
        await repo.create("k", {"v": 0})
        try:
            results = await asyncio.gather(
                *(repo.update("k", {"v": i}, expected_version=1) for i in range(20)),
                return_exceptions=True,
            )
        finally:
            await repo.close()  # (a pool left open when its loop ends would wait for it)
        return list(results)

    results = run(scenario())
    wins = [r for r in results if r == 2]
    R_conflicts = [r for r in results if isinstance(r, Exception)]
    assert len(wins) == 1 and len(R_conflicts) == 19
    assert all(type(e).__name__ == "VersionConflict" for e in R_conflicts)


def test_separate_connections_race_on_sqlite(rt: RuntimeModules, tmp_path: Path) -> None:
    """Several repositories on one file (as in several workers), in threads: one winner."""
    url = f"sqlite:///{tmp_path / 'race.db'}"
    run(rt.stores.open_repository(url, "w").create("k", {"v": 0}))
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def writer(i: int) -> None:
        repo = rt.stores.open_repository(url, "w")
        barrier.wait()
        try:
            run(repo.update("k", {"v": i}, expected_version=1))
            outcomes.append("won")
        except rt.repository.VersionConflict:
            outcomes.append("conflict")
        finally:
            run(repo.close())

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 5 + ["won"]
    assert run(rt.stores.open_repository(url, "w").get("k")).version == 2


def test_namespaces_are_separate(rt: RuntimeModules, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ns.db'}"
    users = rt.stores.open_repository(url, "users")
    orders = rt.stores.open_repository(url, "orders")

    async def scenario() -> None:
        await users.create("1", {"name": "u"})
        await orders.create("1", {"total": 5})
        assert (await users.get("1")).value == {"name": "u"}
        assert [r.value for r in await orders.list()] == [{"total": 5}]

    run(scenario())


def test_open_repository_urls(rt: RuntimeModules, tmp_path: Path) -> None:
    R, open_repository = rt.repository, rt.stores.open_repository
    assert isinstance(open_repository("memory://"), R.MemoryRepository)
    repo = open_repository(f"sqlite:///{tmp_path / 'x.db'}")
    assert isinstance(repo, R.SQLiteRepository) and repo.namespace == "default"
    with pytest.raises(ValueError, match="memory://, sqlite:///FILE and postgresql://"):
        open_repository("redis://127.0.0.1:6379/0")
    assert isinstance(
        open_repository("postgresql://u@127.0.0.1:1/db"), rt.postgres.PostgresRepository
    )


def test_postgres_database_at_version_2_migrates(rt: RuntimeModules, postgres_url: str) -> None:
    """A database migrated by a server without the repository's table gets it at start-up."""
    url = fresh_database(postgres_url, "repo_mig_" + uuid.uuid4().hex[:8])
    S = rt.schema

    async def scenario() -> tuple[int, Any]:
        import psycopg

        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert await S.migrate_postgres(conn, S.POSTGRES_MIGRATIONS[:2]) == 2
        repo = rt.stores.open_repository(url, "widgets")
        try:
            await repo.create("a", {"n": 1})
            found = await repo.get("a")
        finally:
            await repo.close()
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            cur = await conn.execute("SELECT version FROM apiforge_schema_version")
            version = (await cur.fetchone())[0]
        return version, found

    version, found = run(scenario())
    assert version == len(rt.schema.POSTGRES_MIGRATIONS) == 3
    assert found == rt.repository.Versioned({"n": 1}, 1)
