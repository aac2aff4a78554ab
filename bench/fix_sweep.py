"""`apiforge lint --fix` on every spec of ../shared/corpus, each in a temporary copy.

    .venv/bin/python bench/fix_sweep.py [--jobs 1] [--only SUBSTRING] [--results FILE]

For each spec of the corpus's INDEX.tsv (or those whose path contains `--only`), in `--jobs`
worker processes:

1. copy the spec's files (the root and every file its `$ref`s reach) into a temporary folder;
2. lint the copy and validate it (the findings per rule, the validation errors: before);
3. `apiforge lint SPEC --fix --no-config --format json` on it, as a user runs it (its own
   process, no cache), timed: exit 0 or 1 is a fix, 2 a clear error (then plain `lint` must
   fail the same way: a spec apiforge cannot read), anything else or a traceback a crash;
4. the same command again: it must change nothing (idempotent);
5. lint and validate the fixed copy (after), and compare every file with its original:
   `git diff --no-index --minimal` counts the inserted and deleted lines; every deleted line must be
   an empty flow collection that opened (`headers: {}` → `headers:`) or a line that only grew
   (a flow collection or a one-line JSON document, text inserted inside it).

Prints the totals (findings before → after per rule, the share of diff lines that are
insertions, specs valid before and not after, crashes, non-idempotent specs, time) as the
Markdown docs/lint.md quotes, and writes every spec's record to bench/results/fix_sweep.json
(fix_sweep.subset.json with `--only`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "fix_sweep.json"
SUBSET_RESULTS = ROOT / "bench" / "results" / "fix_sweep.subset.json"
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass
class Record:
    path: str
    status: str = ""  # ok | clear error | crash
    detail: str = ""
    files: int = 0  # files the spec is made of
    changed: int = 0  # files the fix changed
    seconds: float = 0.0
    before: dict[str, int] = field(default_factory=dict)  # findings per rule
    after: dict[str, int] = field(default_factory=dict)
    fixed: int = 0  # findings the report says it fixed
    unfixed: int = 0  # findings a fix exists for that it could not make
    errors_before: int | None = None  # validation errors (None: not validated)
    errors_after: int | None = None
    idempotent: bool | None = None
    inserted: int = 0  # diff lines
    deleted: int = 0
    opened: int = 0  # deleted lines that were empty flow collections now opened
    grew: int = 0  # deleted lines that only grew (text inserted inside the line)
    other: int = 0  # any other deleted line: must be 0


def spec_files(spec: Path) -> list[Path]:
    """The spec's root and every file its `$ref`s reach (as validation follows them)."""
    from generator.spec import load_spec
    from generator.spec.validate import collect_errors

    loaded = load_spec(str(spec))
    collect_errors(loaded.resolver)
    return sorted({Path(d.name).resolve() for d in loaded.resolver.documents if d.path})


def counts(spec: Path) -> tuple[dict[str, int], int]:
    """Findings per rule and validation errors of a spec, read afresh."""
    from generator.lint.engine import lint
    from generator.spec import load_spec
    from generator.spec.validate import collect_errors

    loaded = load_spec(str(spec))
    findings = Counter(f.rule for f in lint(loaded, locate=False).findings)
    return dict(findings), len(collect_errors(loaded.resolver))


def _run(spec: Path, cwd: Path) -> tuple[int, dict[str, Any] | None, str, float]:
    env = {**os.environ, "APIFORGE_NO_CACHE": "1", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    out = cwd / ".report.json"
    start = time.perf_counter()
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "generator.cli", "lint", str(spec.relative_to(cwd))),
            *("--fix", "--no-config", "--format", "json", "--fail-on", "never"),
            *("--output", str(out)),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    seconds = time.perf_counter() - start
    report = json.loads(out.read_text()) if out.is_file() else None
    if out.is_file():
        out.unlink()
    return proc.returncode, report, proc.stderr, seconds


def grew(old: str, new: str) -> bool:
    """`new` is `old` with text inserted into it (`old` a subsequence, greedily matched)."""
    if len(new) < len(old):
        return False
    j = 0
    for char in old:
        j = new.find(char, j)
        if j < 0:
            return False
        j += 1
    return True


def opened(old: str, new: str) -> bool:
    old, new = old.rstrip("\r\n"), new.rstrip("\r\n")
    for empty in ("{}", "[]"):
        if old.endswith(": " + empty) and new == old[: -len(empty) - 1].rstrip():
            return True
        if old.rstrip(",").endswith(empty) and new == old.rstrip(",")[:-1]:
            return True
    return False


def compare(old: Path, new: Path, record: Record) -> None:
    """Count the diff's lines, and sort every deleted line: opened, grew, or other."""
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--minimal", "-U0", "--", str(old), str(new)],
        capture_output=True,
        text=True,
    )
    body = proc.stdout.split("\n")
    i = 0
    while i < len(body):
        if not body[i].startswith("@@"):
            i += 1
            continue
        i += 1
        minus, plus = [], []
        while i < len(body) and body[i][:1] in ("-", "+", "\\"):
            if body[i].startswith("-"):
                minus.append(body[i][1:])
            elif body[i].startswith("+"):
                plus.append(body[i][1:])
            i += 1
        record.inserted += len(plus)
        record.deleted += len(minus)
        for line in minus:  # its new form is one of the hunk's added lines
            if any(opened(line, new) for new in plus):
                record.opened += 1
            elif any(grew(line, new) for new in plus if len(new) >= len(line)):
                record.grew += 1
            else:
                record.other += 1


def sweep_one(path: str, corpus: Path) -> Record:
    from generator.errors import ApiforgeError

    record = Record(path)
    source = corpus / path
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        try:
            files = spec_files(source)
        except (ApiforgeError, RecursionError) as exc:
            files = [source.resolve()]
            record.detail = str(exc).splitlines()[0][:200]
        record.files = len(files)
        top = Path(os.path.commonpath([str(f.parent) for f in files]))
        for f in files:
            dest = base / f.relative_to(top)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
        spec = base / source.resolve().relative_to(top)
        with suppress(ApiforgeError, RecursionError):  # (the fix says what is wrong)
            record.before, record.errors_before = counts(spec)
        code, report, stderr, record.seconds = _run(spec, base)
        if code == 2 and "Traceback" not in stderr and stderr.startswith("error: "):
            record.status = "clear error"
            record.detail = stderr.splitlines()[0][:200]
            return record
        if code not in (0, 1) or report is None or "Traceback" in stderr:
            record.status, record.detail = "crash", stderr[-400:]
            return record
        record.fixed = report["summary"].get("fixed", 0)
        record.unfixed = len(report.get("unfixed", []))
        record.changed = len(report.get("changed", []))
        code2, report2, _, _ = _run(spec, base)
        record.idempotent = code2 in (0, 1) and report2 is not None and not report2["changed"]
        record.after, record.errors_after = counts(spec)
        for f in files:
            compare(f, base / f.relative_to(top), record)
        record.status = "ok"
    return record


def summary(records: list[Record]) -> str:
    from generator.lint.fix import fixable_rules
    from generator.lint.registry import all_rules

    ok = [r for r in records if r.status == "ok"]
    lines = [
        f"{len(records)} specs: {len(ok)} fixed, "
        f"{sum(r.status == 'clear error' for r in records)} clear errors (specs apiforge "
        f"cannot read), {sum(r.status == 'crash' for r in records)} crashes",
        "",
        "| rule | findings before | after `--fix` |",
        "|---|---:|---:|",
    ]
    fixable = set(fixable_rules())
    total_before = total_after = 0
    for rule in all_rules():
        before = sum(r.before.get(rule.id, 0) for r in ok)
        after = sum(r.after.get(rule.id, 0) for r in ok)
        total_before += before
        total_after += after
        mark = "" if rule.id in fixable else " (no fix)"
        lines.append(f"| `{rule.id}`{mark} | {before:,} | {after:,} |")
    lines.append(f"| **all** | **{total_before:,}** | **{total_after:,}** |")
    inserted = sum(r.inserted for r in ok)
    deleted = sum(r.deleted for r in ok)
    share = inserted / (inserted + deleted) if inserted + deleted else 1.0
    broke = [r.path for r in ok if r.errors_before == 0 and r.errors_after]
    worse = [
        r.path
        for r in ok
        if r.errors_before is not None and (r.errors_after or 0) > r.errors_before
    ]
    lines += [
        "",
        f"- diff lines: {inserted:,} inserted, {deleted:,} deleted "
        f"({share:.4%} insertions); deleted lines: {sum(r.opened for r in ok)} empty flow "
        f"collections opened, {sum(r.grew for r in ok)} lines grown in place, "
        f"{sum(r.other for r in ok)} other",
        f"- files changed: {sum(r.changed for r in ok):,} in {sum(bool(r.changed) for r in ok)} "
        f"specs; findings the fixes resolved: {sum(r.fixed for r in ok):,}; "
        f"could not be fixed: {sum(r.unfixed for r in ok)}",
        f"- valid before and not after: {len(broke)} {broke or ''}".rstrip(),
        f"- more validation errors after than before: {len(worse)} {worse or ''}".rstrip(),
        f"- valid before: {sum(r.errors_before == 0 for r in ok)}; after: "
        f"{sum(r.errors_after == 0 for r in ok)}",
        f"- idempotent (a second `--fix` changes nothing): "
        f"{sum(bool(r.idempotent) for r in ok)} of {len(ok)}",
        f"- time of `--fix` (whole process, no cache): {sum(r.seconds for r in records):.0f} s "
        f"in all, the longest {max((r.seconds for r in records), default=0):.1f} s",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    if shutil.which("git") is None:
        sys.exit("git is needed to compare the files")
    index = (args.corpus / "INDEX.tsv").read_text().splitlines()[1:]
    paths = [line.split("\t")[0] for line in index if line and args.only in line.split("\t")[0]]
    out = args.results or (SUBSET_RESULTS if args.only else RESULTS)
    records: list[Record] = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(sweep_one, p, args.corpus): p for p in paths}
        for future in as_completed(futures):
            try:
                record = future.result()
            except Exception as exc:  # the bench's own failure, reported as a crash
                record = Record(futures[future], "crash", repr(exc)[:400])
            records.append(record)
            flag = "" if record.status == "ok" and not record.other else "  <--"
            print(
                f"{record.status:11} {record.seconds:6.2f}s +{record.inserted} "
                f"-{record.deleted} {record.path}{flag}",
                file=sys.stderr,
            )
    records.sort(key=lambda r: r.path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(r) for r in records], indent=1) + "\n")
    print(summary(records))


if __name__ == "__main__":
    main()
