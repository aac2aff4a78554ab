"""Fixtures the cache tests share (`test_render_cache`, `test_plan_cache`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ACME = Path(__file__).resolve().parents[2] / "specs" / "acme.yaml"


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, caching on."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(cache))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    return cache


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A copy of acme.yaml (same file name, so the same markers) that a test may edit."""
    folder = tmp_path / "spec"
    folder.mkdir()
    shutil.copy(ACME, folder / "acme.yaml")
    return folder / "acme.yaml"


@pytest.fixture
def one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """`generate` does all its work in this process (no forked helper can start, as on a
    platform without fork): for tests that watch what the planners and renderers do."""
    from generator.forked import Forked

    monkeypatch.setattr(Forked, "start", classmethod(lambda cls, *args: None))
