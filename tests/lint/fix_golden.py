"""Golden files of `apiforge lint --fix`: each folder of tests/lint/fixtures/fix/ is a case,
its `openapi.*` files the specs to fix (YAML 3.1, JSON 3.0; a spec may `$ref` other files of
the folder), and its `fixed/` folder every file the fixes change, as they must read after.

A case named after a rule fixes that rule only (`--select`); `select.txt` names the rules
otherwise; else every rule runs. `make golden` (or `python -m tests.lint.fix_golden`)
rewrites the `fixed/` folders; a diff there is a product change.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.lint.config import LintConfig
from generator.lint.fix import FixResult, fix_spec
from generator.lint.registry import rules_by_id

CASES = Path(__file__).parent / "fixtures" / "fix"


def case_names() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


def specs(case: str) -> list[str]:
    return sorted(p.name for p in (CASES / case).glob("openapi.*"))


def config(case: str) -> LintConfig:
    listed = CASES / case / "select.txt"
    if listed.is_file():
        return LintConfig(select=frozenset(listed.read_text().split()))
    if case in rules_by_id():
        return LintConfig(select=frozenset({case}))
    return LintConfig()


def inputs(case: str) -> dict[str, bytes]:
    """The case's files before: every file but `fixed/` and `select.txt`."""
    root = CASES / case
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != "fixed" and p.name != "select.txt"
    }


@contextmanager
def copied(case: str) -> Iterator[Path]:
    """The case's input files in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / case
        for rel, data in inputs(case).items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        yield folder


def changed(folder: Path, before: dict[str, bytes]) -> dict[str, bytes]:
    return {
        rel: (folder / rel).read_bytes()
        for rel in before
        if (folder / rel).read_bytes() != before[rel]
    }


def fix_case(folder: Path, case: str) -> list[FixResult]:
    """Fix every spec of the case in `folder` (a copy), one after the other."""
    return [fix_spec(str(folder / spec), config(case), write=True) for spec in specs(case)]


def produce(case: str) -> dict[str, bytes]:
    """The files the case's fixes change, as they read after."""
    before = inputs(case)
    with copied(case) as folder:
        fix_case(folder, case)
        return changed(folder, before)


def golden(case: str) -> dict[str, bytes]:
    root = CASES / case / "fixed"
    if not root.is_dir():
        return {}
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def main() -> None:
    for case in case_names():
        target = CASES / case / "fixed"
        if target.exists():
            shutil.rmtree(target)
        for rel, data in produce(case).items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"tests/lint/fixtures/fix/{case}/fixed/{rel}")


if __name__ == "__main__":
    main()
