"""One contract suite for every IdempotencyStore: memory, SQLite and a real Redis."""

from __future__ import annotations

import asyncio
import importlib
import shutil
import sys
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"


def copy_runtime(dest: Path, package: str) -> Path:
    """Copy templates/server/runtime into dest/<package>/runtime/ as generation does."""
    pkg = dest / package
    (pkg / "runtime").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, pkg / "runtime" / src.name)
    (pkg / "runtime" / "__init__.py").touch()
    return pkg


_lock = threading.Lock()


@pytest.fixture(scope="module")
def store_mod(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("idem_store_rt")
    package = "idem_store_rt_" + uuid.uuid4().hex[:8]
    copy_runtime(root, package)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(f"{package}.runtime.idempotency_store")
    finally:
        sys.path.remove(str(root))


@pytest.fixture(scope="module")
def stores_mod(store_mod: ModuleType) -> ModuleType:
    """The same runtime's `stores` module, which opens a store by URL."""
    return importlib.import_module(store_mod.__name__.rpartition(".")[0] + ".stores")


StoreFactory = Callable[[], Any]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(
    request: pytest.FixtureRequest, store_mod: ModuleType, stores_mod: ModuleType, tmp_path: Path
) -> StoreFactory:
    """A factory of store instances sharing one backing (one dict, one file, one prefix):
    several instances stand for several worker processes."""
    kind = request.param
    if kind == "memory":
        shared = store_mod.MemoryIdempotencyStore()
        return lambda: shared
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'idem.db'}"
        return lambda: stores_mod.open_idempotency_store(url)
    redis_url = request.getfixturevalue("redis_url")
    prefix = f"t:{uuid.uuid4().hex}:"
    return lambda: stores_mod.open_idempotency_store(redis_url, redis_prefix=prefix)


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def response(mod: ModuleType) -> Any:
    # bytes no text codec would keep: NUL, 0xff, CR/LF; duplicate and latin-1 headers
    return mod.StoredResponse(
        201,
        (
            (b"content-type", b"application/json"),
            (b"set-cookie", b"a=1"),
            (b"set-cookie", b"b=2"),
            (b"x-latin", b"caf\xe9"),
        ),
        b'{"id": 1}\x00\xff\r\n',
    )


SCOPE = "a" * 64
FP = "f" * 64


def test_claim_then_existing_in_progress(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        assert await store.get(SCOPE, "k") is None
        first = await store.claim(SCOPE, "k", FP, 30)
        assert isinstance(first, store_mod.Claimed) and first.token
        second = await store.claim(SCOPE, "k", "other", 30)
        assert isinstance(second, store_mod.Existing)
        rec = second.record
        assert (rec.state, rec.fingerprint, rec.token, rec.response) == (
            "in_progress",
            FP,
            first.token,
            None,
        )
        import time

        assert time.time() + 25 < rec.expires_at <= time.time() + 31
        await store.aclose()

    run(go())


def test_keys_are_scoped(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        a = await store.claim(SCOPE, "k", FP, 30)
        b = await store.claim("b" * 64, "k", FP, 30)
        c = await store.claim(SCOPE, "k2", FP, 30)
        assert all(isinstance(x, store_mod.Claimed) for x in (a, b, c))
        await store.aclose()

    run(go())


def test_claim_race_has_one_winner(make_store: StoreFactory, store_mod: ModuleType) -> None:
    """40 claims at once through 4 store instances (4 connections / clients): one winner."""

    async def go() -> None:
        stores = [make_store() for _ in range(4)]
        results = await asyncio.gather(
            *(stores[i % 4].claim(SCOPE, "race", FP, 30) for i in range(40))
        )
        winners = [r for r in results if isinstance(r, store_mod.Claimed)]
        assert len(winners) == 1
        assert all(r.record.token == winners[0].token for r in results if r is not winners[0])
        for s in stores:
            await s.aclose()

    run(go())


def test_complete_and_replay_data(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        claimed = await store.claim(SCOPE, "k", FP, 30)
        resp = response(store_mod)
        assert await store.complete(SCOPE, "k", resp, 3600, token=claimed.token)
        for rec in (await store.get(SCOPE, "k"), (await store.claim(SCOPE, "k", FP, 30)).record):
            assert rec.state == "completed" and rec.fingerprint == FP
            assert rec.response == resp  # status, every header pair in order, body bytes
        other = make_store()  # another process sees the same
        assert (await other.get(SCOPE, "k")).response == resp
        # a completed record is not released, not completed twice
        assert not await store.release(SCOPE, "k", token=claimed.token)
        assert not await store.release(SCOPE, "k")
        assert not await store.complete(SCOPE, "k", resp, 3600, token=claimed.token)
        assert (await store.get(SCOPE, "k")).state == "completed"
        await store.aclose()
        await other.aclose()

    run(go())


def test_release_frees_the_key(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        claimed = await store.claim(SCOPE, "k", FP, 30)
        assert not await store.release(SCOPE, "k", token="not-the-owner")
        assert isinstance(await store.claim(SCOPE, "k", FP, 30), store_mod.Existing)
        assert await store.release(SCOPE, "k", token=claimed.token)
        assert await store.get(SCOPE, "k") is None
        again = await store.claim(SCOPE, "k", "new-fp", 30)
        assert isinstance(again, store_mod.Claimed) and again.token != claimed.token
        assert (await store.get(SCOPE, "k")).fingerprint == "new-fp"
        assert await store.release(SCOPE, "k")  # token=None: whoever holds it
        await store.aclose()

    run(go())


def test_wrong_token_cannot_complete(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        await store.claim(SCOPE, "k", FP, 30)
        assert not await store.complete(SCOPE, "k", response(store_mod), 60, token="nope")
        assert (await store.get(SCOPE, "k")).state == "in_progress"
        await store.aclose()

    run(go())


def test_abandoned_claim_expires(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        dead = await store.claim(SCOPE, "k", FP, 0.3)
        assert isinstance(await store.claim(SCOPE, "k", FP, 0.3), store_mod.Existing)
        await asyncio.sleep(0.45)
        assert await store.get(SCOPE, "k") is None
        live = await store.claim(SCOPE, "k", FP, 30)
        assert isinstance(live, store_mod.Claimed)
        # the dead owner's late writes are refused
        assert not await store.complete(SCOPE, "k", response(store_mod), 60, token=dead.token)
        assert not await store.release(SCOPE, "k", token=dead.token)
        assert not await store.extend(SCOPE, "k", 30, token=dead.token)
        assert await store.complete(SCOPE, "k", response(store_mod), 60, token=live.token)
        await store.aclose()

    run(go())


def test_extend_keeps_a_live_claim(make_store: StoreFactory, store_mod: ModuleType) -> None:
    async def go() -> None:
        store = make_store()
        claimed = await store.claim(SCOPE, "k", FP, 0.4)
        for _ in range(3):
            await asyncio.sleep(0.2)
            assert await store.extend(SCOPE, "k", 0.4, token=claimed.token)
        assert isinstance(await store.claim(SCOPE, "k", FP, 0.4), store_mod.Existing)
        assert await store.complete(SCOPE, "k", response(store_mod), 60, token=claimed.token)
        assert not await store.extend(SCOPE, "k", 0.4, token=claimed.token)  # completed
        await store.aclose()

    run(go())


def test_completed_result_expires_after_ttl(
    make_store: StoreFactory, store_mod: ModuleType
) -> None:
    async def go() -> None:
        store = make_store()
        claimed = await store.claim(SCOPE, "k", FP, 30)
        assert await store.complete(SCOPE, "k", response(store_mod), 0.3, token=claimed.token)
        assert (await store.get(SCOPE, "k")).state == "completed"
        await asyncio.sleep(0.45)
        assert await store.get(SCOPE, "k") is None
        assert isinstance(await store.claim(SCOPE, "k", FP, 30), store_mod.Claimed)
        await store.aclose()

    run(go())


def test_open_store_by_url(store_mod: ModuleType, stores_mod: ModuleType, tmp_path: Path) -> None:
    assert isinstance(
        stores_mod.open_idempotency_store("memory://"), store_mod.MemoryIdempotencyStore
    )
    sqlite = stores_mod.open_idempotency_store(f"sqlite:///{tmp_path / 'x.db'}")
    assert isinstance(sqlite, store_mod.SQLiteIdempotencyStore)
    redis = stores_mod.open_idempotency_store("redis://127.0.0.1:1/0")
    assert isinstance(redis, store_mod.RedisIdempotencyStore)
    with pytest.raises(ValueError):
        stores_mod.open_idempotency_store("mysql://x")
