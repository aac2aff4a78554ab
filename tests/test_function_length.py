"""No function of the generator or of a runtime a generated project carries grows past 80 lines
(its `def` line to its last, a nested function counted in its parent too): a longer one is
split by concern when it grows. A function found is printed with its place and length."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80


def function_lengths(root: Path) -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function and method under `root`."""
    found: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((lines, f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"))
    return found


def test_the_measure_counts_def_to_last_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    x = 1\n\n    return x\n")
    assert [lines for lines, _ in function_lengths(tmp_path)] == [4]


def test_no_function_over_the_limit() -> None:
    roots = [ROOT / "generator", ROOT / "templates" / "server", ROOT / "templates" / "client"]
    long = sorted(
        (entry for root in roots for entry in function_lengths(root) if entry[0] > LIMIT),
        reverse=True,
    )
    assert long == []
