"""The writer's bookkeeping of paths, done with strings (pathlib was ~0.04 s of a Stripe
regeneration): which paths it accepts, the tree's top-level names, and which files on disk
are stale generated files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.render.writer import (
    MARKER,
    GeneratedFile,
    stale_files,
    tree_roots,
    write_tree,
)


@pytest.mark.parametrize(
    "path",
    ["", "/abs.py", "a/../b.py", "..", "a//b.py", "a/", "./a.py", "a/.", "a/./b.py", "/"],
)
def test_a_path_not_relative_and_normalised_is_refused(path: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="relative and normalised"):
        write_tree([GeneratedFile(path, "x = 1\n")], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_normalised_paths_are_written(tmp_path: Path) -> None:
    files = [GeneratedFile("pkg/sub/a.py", "a = 1\n"), GeneratedFile("top.py", "b = 2\n")]
    report = write_tree(files, tmp_path / "out")
    assert sorted(report.written) == ["pkg/sub/a.py", "top.py"]
    assert tree_roots(files) == ["pkg/", "top.py"]
    assert tree_roots([GeneratedFile("README.md", ""), GeneratedFile("a/b/c.txt", "")]) == ["a/"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_stale_files_are_the_generated_ones_no_longer_produced_in_path_order(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    generated = f"# {MARKER} from spec.yaml: do not edit\n"
    for rel in ("a/b.py", "a-b/c.py", "a/z/deep.py", "kept.py", "top.py"):
        _write(out / rel, generated)
    _write(out / "mine.py", "# hand-written\n")
    _write(out / "a" / "__pycache__" / "b.py", generated)  # never looked at
    _write(tmp_path / "elsewhere" / "gen.py", generated)
    os.symlink(tmp_path / "elsewhere", out / "linked")  # a linked folder is not walked
    assert stale_files(out, {"kept.py"}) == ["a/b.py", "a/z/deep.py", "a-b/c.py", "top.py"]
    assert stale_files(out, {"kept.py", "a/b.py", "a/z/deep.py", "a-b/c.py", "top.py"}) == []
    assert stale_files(tmp_path / "missing", set()) == []
