"""Helpers for testing templates/server/runtime the way a generated server uses it.

`server_runtime_pkg(tmp_path, name)` (function and fixture) copies the runtime into
`tmp_path/<name>/runtime/` as a package, so tests can import `<name>.runtime.<module>` or put an
app module beside it (`tmp_path/<name>/app.py`) and serve it with `tests.support.uvicorn_server`.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import fresh_database, uvicorn_server

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"
HERE = Path(__file__).resolve().parent


def copy_server_runtime(tmp_path: Path, name: str) -> Path:
    """Copy the server runtime into `tmp_path/<name>/runtime/`; return the package dir."""
    pkg = tmp_path / name
    runtime = pkg / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, runtime / src.name)
    (runtime / "__init__.py").touch()
    return pkg


@pytest.fixture
def server_runtime_pkg() -> Callable[[Path, str], Path]:
    """The `copy_server_runtime(tmp_path, name) -> package dir` helper, as a fixture."""
    return copy_server_runtime


class RuntimeModules:
    """The runtime imported in-process from a fresh package copy: `rt.problems`, `rt.ratelimit`…"""

    def __init__(self, package: str) -> None:
        self.package = package

    def __getattr__(self, module: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.runtime.{module}")

    def app_module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.{name}")


@pytest.fixture(scope="session")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuntimeModules]:
    """The runtime (and the test app `patterns_app.py`) as an importable package."""
    root = tmp_path_factory.mktemp("rt_pkg")
    package = "rt_" + uuid.uuid4().hex[:8]
    pkg = copy_server_runtime(root, package)
    shutil.copy2(HERE / "patterns_app.py", pkg / "app.py")
    sys.path.insert(0, str(root))
    try:
        yield RuntimeModules(package)
    finally:
        sys.path.remove(str(root))


def app_package(tmp_path: Path, name: str = "patterns_pkg") -> Path:
    """A package with the runtime and the test app (`<name>.app:app`) in `tmp_path`."""
    pkg = copy_server_runtime(tmp_path, name)
    shutil.copy2(HERE / "patterns_app.py", pkg / "app.py")
    return pkg


@contextmanager
def served_app(root: Path, name: str, env: dict[str, str]) -> Iterator[str]:
    """The test app in a package of its own under `root`, served by one uvicorn worker on
    127.0.0.1 with `env`; yields its base URL."""
    app_package(root, name)
    app = f"{name}.app:create_app"
    with uvicorn_server(app, cwd=root, env=env, extra_args=["--factory"]) as (base, _):
        yield base


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The store of a shared-transaction test: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    else:
        admin: str = request.getfixturevalue("postgres_url")
        yield fresh_database(admin, "tx_" + uuid.uuid4().hex[:10])
