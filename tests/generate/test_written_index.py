"""The last run's index of what it wrote (`generator.render.written.WrittenIndex`): a file
still at the size and modification time it had once written, settled before that run looked,
is trusted to have the bytes of its output key — neither read from the cache, rendered nor
compared. Anything else is read and compared as before."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from generator.pipeline.generate import generate
from generator.render.written import WrittenIndex

pytestmark = pytest.mark.usefixtures("private_cache")  # (conftest.py)


def _age(tree: Path, seconds: float = 60) -> None:
    """Every file under `tree` modified `seconds` ago: settled."""
    then = time.time() - seconds
    for path in tree.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def test_an_index_trusts_only_what_it_saw_settled(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("old.py", "fresh.py", "edited.py", "gone.py"):
        (out / name).write_text(f"# {name}\n")
    _age(out)
    (out / "fresh.py").write_text("# fresh.py, just now\n")  # not settled at the look
    keys = {name: f"key of {name}" for name in ("old.py", "fresh.py", "edited.py", "gone.py")}
    WrittenIndex(out).record(keys, keys)
    (out / "edited.py").write_text("# edited by hand\n")
    (out / "gone.py").unlink()
    index = WrittenIndex(out)
    assert index.unchanged("old.py", "key of old.py")
    assert not index.unchanged("old.py", "another key")  # what it should have now differs
    assert not index.unchanged("fresh.py", "key of fresh.py")
    assert not index.unchanged("edited.py", "key of edited.py")
    assert not index.unchanged("gone.py", "key of gone.py")
    assert not index.unchanged("new.py", "key of new.py")


def test_no_index_without_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    (tmp_path / "a.py").write_text("a\n")
    _age(tmp_path)
    WrittenIndex(tmp_path).record({"a.py": "k"}, ["a.py"])
    assert not WrittenIndex(tmp_path).unchanged("a.py", "k")


def test_a_regeneration_trusts_settled_files_and_restores_an_edited_one(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, alone = tmp_path / "out", tmp_path / "alone"
    generate(str(spec), out)
    _age(out)
    generate(str(spec), out)  # the index now sees every file settled
    client = next(p for p in sorted((out / "client").rglob("*.py")) if "resources" in p.parts)
    server = out / "server" / "acme_payments_api_server" / "interfaces.py"
    for path in (client, server):
        path.write_text(path.read_text() + "# edited by hand\n")
    reads: list[str] = []
    from generator.spec import load

    real = load.cache_get

    def counting(kind: str, digest: str) -> object:
        if kind == "out1":
            reads.append(digest)
        return real(kind, digest)

    monkeypatch.setattr(load, "cache_get", counting)
    result = generate(str(spec), out)
    monkeypatch.undo()
    for path in (client, server):
        assert "# edited by hand" not in path.read_text()
    written = {p.kind: p.report for p in result.products}
    assert all(r is not None and len(r.unchanged) > 20 for r in written.values())
    assert len(reads) <= 4  # the server's edited file (the child's reads are not seen here)
    shutil.rmtree(alone, ignore_errors=True)
    generate(str(spec), alone)
    assert _tree(out) == _tree(alone)


def _tree(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
