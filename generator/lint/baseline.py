"""`apiforge lint --baseline FILE`: adopt the linter on a spec that has many findings today.

The first run (or `--write-baseline`) writes every current finding into FILE, by a stable
fingerprint; later runs report, and fail on, only the findings that are not in it. A
fingerprint is the rule, the spec file relative to the baseline's folder, the JSON pointer,
and the operation (method and path) or webhook: not the line (edits above a finding move it)
nor the message (its wording may improve). A finding fixed since leaves its entry unused;
`--write-baseline` drops those.

FILE is JSON (`apiforge-baseline/1`): `findings` is a sorted list of
`{fingerprint, rule, file, pointer}` (the last three for a reader; only the fingerprint is
compared). A fingerprint listed twice covers two findings.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.lint.model import Finding
from generator.lint.run import LintRun

FORMAT = "apiforge-baseline/1"


@dataclass(frozen=True, slots=True)
class BaselineOutcome:
    """What the baseline did: `written` (its findings) or `known` (findings it covered)."""

    path: Path
    written: int | None
    known: int


def fingerprint(f: Finding, folder: Path) -> str:
    where = Path(os.path.relpath(Path(f.file).absolute(), folder.absolute())).as_posix()
    op = f.operation
    key = "\0".join(
        (f.rule, where, f.pointer, f"{op.method.upper()} {op.path}" if op else "", f.webhook or "")
    )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _entries(run: LintRun, folder: Path) -> list[dict[str, Any]]:
    entries = [
        {
            "fingerprint": fingerprint(f, folder),
            "rule": f.rule,
            "file": Path(os.path.relpath(Path(f.file).absolute(), folder.absolute())).as_posix(),
            "pointer": f.pointer,
        }
        for r in run.results
        for f in r.findings
    ]
    return sorted(entries, key=lambda e: (e["file"], e["pointer"], e["rule"], e["fingerprint"]))


def write(run: LintRun, path: Path) -> int:
    """Write every finding of `run` into the baseline at `path`; how many."""
    entries = _entries(run, path.parent)
    text = json.dumps({"format": FORMAT, "findings": entries}, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ApiforgeError(Problem(f"cannot write the baseline {path}: {exc.strerror}")) from None
    return len(entries)


def read(path: Path) -> Counter[str]:
    """The fingerprints of the baseline at `path` (with their counts)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        problem = Problem(f"cannot read the baseline: {exc.strerror}", file=str(path))
        raise ApiforgeError(problem) from None
    except ValueError as exc:
        raise ApiforgeError(
            Problem(f"the baseline is not JSON: {exc}", file=str(path)),
            "write it again with --write-baseline",
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ApiforgeError(
            Problem(f"not an apiforge baseline (expected format {FORMAT!r})", file=str(path)),
            "write it again with --write-baseline",
        )
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise ApiforgeError(Problem("`findings` is not a list", file=str(path)))
    return Counter(
        e["fingerprint"]
        for e in entries
        if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)
    )


def apply(run: LintRun, path: Path, *, rewrite: bool = False) -> tuple[LintRun, BaselineOutcome]:
    """`run` without the findings the baseline at `path` knows; the baseline is written
    first when it does not exist yet, or with `rewrite`."""
    written = None
    if rewrite or not path.exists():
        written = write(run, path)
    known = read(path)
    folder = path.parent
    covered = 0
    specs = []
    for spec in run.specs:
        result = spec.result
        if result is None:
            specs.append(spec)
            continue
        kept = []
        for f in result.findings:
            key = fingerprint(f, folder)
            if known[key] > 0:
                known[key] -= 1
                covered += 1
            else:
                kept.append(f)
        baselined = len(result.findings) - len(kept)
        specs.append(
            replace(spec, result=replace(result, findings=tuple(kept), baselined=baselined))
        )
    return replace(run, specs=tuple(specs)), BaselineOutcome(path, written, covered)
