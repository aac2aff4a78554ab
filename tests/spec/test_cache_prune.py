"""The cache stays under its size limit: least recently used entries go first."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.spec.load import cache_get, cache_put, prune_cache

ROOT = Path(__file__).resolve().parents[2]
KB = 1024


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(root))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    monkeypatch.setenv("APIFORGE_CACHE_MAX_MB", str(10 / 1024))  # 10 KB
    return root


def _entry(root: Path, kind: str, name: str, size: int, age: float) -> Path:
    path = root / kind / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_over_the_limit_the_least_recently_used_go_until_under_80_percent(cache: Path) -> None:
    # 5 x 3 KB = 15 KB over a 10 KB limit: down to at most 8 KB, the two newest stay
    paths = [_entry(cache, f"kind{i % 2}", f"{i}.pickle", 3 * KB, age=100 - i) for i in range(5)]
    prune_cache()
    assert [p.exists() for p in paths] == [False, False, False, True, True]


def test_under_the_limit_nothing_goes(cache: Path) -> None:
    paths = [_entry(cache, "out1", f"{i}.pickle", 3 * KB, age=1000 * i) for i in range(3)]
    prune_cache()
    assert all(p.exists() for p in paths)


def test_a_hit_makes_an_entry_recent(cache: Path) -> None:
    cache_put("models4", "used", "x" * 4 * KB)
    used = cache / "models4" / "used.pickle"
    then = time.time() - 10_000
    os.utime(used, (then, then))  # written long ago ...
    newer = [_entry(cache, "out1", f"{i}.pickle", 3 * KB, age=100) for i in range(3)]
    assert cache_get("models4", "used") == "x" * 4 * KB  # ... but read now
    prune_cache()
    assert used.exists()
    assert sum(p.exists() for p in newer) == 1  # 4 + 3 KB <= 8 KB


def test_once_an_hour_unless_forced(cache: Path) -> None:
    cache.mkdir()
    prune_cache()  # the first look: nothing to do, but the stamp is set
    paths = [_entry(cache, "out1", f"{i}.pickle", 4 * KB, age=10 * i) for i in range(4)]
    prune_cache()
    assert all(p.exists() for p in paths)
    prune_cache(force=True)
    assert [p.exists() for p in paths] == [True, True, False, False]


def test_temporary_files_a_killed_writer_left_go(cache: Path) -> None:
    stale = _entry(cache, "out1", ".abc.123.tmp", 10, age=2 * 3600)
    fresh = _entry(cache, "out1", ".def.456.tmp", 10, age=5)  # maybe being written now
    prune_cache()
    assert not stale.exists() and fresh.exists()


def test_no_cache_means_nothing_is_touched(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [_entry(cache, "out1", f"{i}.pickle", 6 * KB, age=i) for i in range(3)]
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    prune_cache(force=True)
    assert all(p.exists() for p in paths)


def test_every_command_prunes_after_it_ran_even_one_that_exits_1(
    cache: Path, tmp_path: Path
) -> None:
    old = [_entry(cache, "out1", f"{i}.pickle", 6 * KB, age=10_000 - i) for i in range(3)]
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /charges:\n    post:\n"
        "      operationId: createCharge\n      responses:\n        '201': {description: ok}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "lint", str(spec), "--fail-on", "warning"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.returncode == 1, proc.stderr  # findings
    assert not old[0].exists()
    assert sum(f.stat().st_size for f in cache.rglob("*.pickle")) <= 8 * KB
    assert (cache / ".pruned").exists()
