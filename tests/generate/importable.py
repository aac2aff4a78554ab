"""Generate a project from a spec and prove it is usable: the client imports (every module),
the server imports and serves under uvicorn on 127.0.0.1, `/openapi.json` and `/docs` answer.

A generated project that does not import is the worst outcome there is (`apiforge generate`
exited 0), so the tests of the spec defects that caused it and the shape table use these."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from generator.pipeline.generate import generate
from tests.server.conftest import serve

_IMPORT_ALL = """
import importlib, pkgutil, sys
sys.path.insert(0, sys.argv[1])
package = importlib.import_module(sys.argv[2])
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(module.name)
"""


def generate_project(
    spec_text: str, tmp_path: Path, prefix: str, caplog: pytest.LogCaptureFixture
) -> tuple[Path, Path, list[str]]:
    """(the spec's path, the output directory, the warnings generation gave)."""
    spec = tmp_path / f"{prefix}.yaml"
    spec.write_text(spec_text, encoding="utf-8")
    out = tmp_path / "out"
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        generate(str(spec), out, package_prefix=prefix, lint=False)
    return spec, out, [r.getMessage() for r in caplog.records]


def import_all(root: Path, package: str) -> None:
    """Import `package` (under `root`) and every module in it, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, str(root), package],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, f"{package} does not import:\n{proc.stderr[-3000:]}"


def mypy_strict(root: Path, package: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", package],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


@contextmanager
def served(out: Path, prefix: str, state: Path) -> Iterator[str]:
    """The generated server under uvicorn; its `/openapi.json` and `/docs` checked first."""
    import_all(out / "client", f"{prefix}_client")
    with serve(out / "server", f"{prefix}_server", state) as base:
        document = httpx.get(f"{base}/openapi.json", timeout=30)
        assert document.status_code == 200, document.text[:500]
        assert document.json()["paths"]
        docs = httpx.get(f"{base}/docs", timeout=30)
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
        yield base


def located(warnings: list[str], spec: Path, pointer: str, words: str) -> str:
    """The one warning that names `spec`:line:column and `pointer`, and says `words`."""
    found = [
        w
        for w in warnings
        if w.startswith(f"warning: {spec}:") and f"(#{pointer})" in w and words in w
    ]
    assert len(found) == 1, f"no single warning at #{pointer} saying {words!r} in:\n" + "\n".join(
        warnings
    )
    line = found[0].removeprefix(f"warning: {spec}:").split(":", 1)[0]
    assert line.isdigit() and int(line) > 1
    return found[0]
