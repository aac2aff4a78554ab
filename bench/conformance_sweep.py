"""Conformance sweep: schemathesis, every check, against the mock-mode server of corpus specs.

For each spec: `apiforge server` (in-process), a verifier that lets every credential in
(conformance is about what operations answer once a caller is in), served under uvicorn on
127.0.0.1 with `APIFORGE_MOCK=1` and no handler written — every operation answers its
declared example or a value of its schema, through every pattern. Then `st run --checks all`
(examples, coverage and fuzzing phases; positive and negative data). Failures are counted by
check and by kind; `--docs` writes the table into docs/reliability.md.

    python bench/conformance_sweep.py                 # the default sample (see `sample`)
    python bench/conformance_sweep.py --only stripe   # specs whose path contains "stripe"
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.test_conformance import (  # noqa: E402
    _PREPARING,
    ST,
    TOKEN,
    Failure,
    _read_events,
    permissive_verifier,
)
from tests.server.conftest import generate, serve  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "conformance.json"
DOCS = ROOT / "docs" / "reliability.md"
SEED = 20261201
PACKAGE = "mock_srv"


@dataclass
class SpecRun:
    spec: str
    operations: int
    outcome: str = "ok"  # ok, generation failed, server failed, no checks
    cases: int = 0
    checks: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, object]] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""


def sample(corpus: Path, count: int) -> list[tuple[str, int]]:
    """`count` specs of 3 to 80 operations, spread evenly over the index (sorted by path),
    and every Swagger 2.0 spec of that size once 2.0 is read (`swagger2/`)."""
    rows = list(csv.DictReader((corpus / "INDEX.tsv").open(), delimiter="\t"))
    fitting = sorted(
        (r["path"], int(r["n_operations"] or 0))
        for r in rows
        if 3 <= int(r["n_operations"] or 0) <= 80
    )
    step = max(1, len(fitting) // count)
    chosen = fitting[::step][:count]
    swagger = sorted((corpus / "swagger2").glob("*.yaml"))
    small = [p for p in swagger if p.stat().st_size < 60_000][:6]
    return chosen + [(str(p.relative_to(corpus)), 0) for p in small]


def run_one(path: str, operations: int, corpus: Path, work: Path, examples: int) -> SpecRun:
    started = time.perf_counter()
    result = SpecRun(path, operations)
    spec = corpus / path
    project = work / "project"
    try:
        with _PREPARING:  # one generation at a time (see the lock's comment)
            plan, _report, _missing = generate(spec, project, PACKAGE)
    except Exception as exc:
        result.outcome, result.note = "generation failed", str(exc).splitlines()[0][:300]
        return result
    # the sweep's token in, anything else out (schemathesis's ignored_auth check tries both)
    verifier = permissive_verifier(plan).replace(
        "        return Principal(",
        f"        if {TOKEN!r} not in credential:\n            return None\n        return Principal(",
    )
    (project / PACKAGE / "verifier.py").write_text(verifier)
    events = work / "events.ndjson"
    env = {
        "APIFORGE_MOCK": "1",
        "APIFORGE_RATE_LIMIT_DEFAULT": "1000000/minute",
        "APIFORGE_MAX_BODY_BYTES": "1048576",
        # ignored_auth sends bad credentials on purpose: no brute-force bound on the sweep's IP
        "APIFORGE_AUTH_FAILURE_LIMIT": "",
    }
    try:
        with serve(project, PACKAGE, work / "state", env=env) as base:
            argv = [str(ST), "run", str(spec), "--url", base, "--checks", "all"]
            argv += ["--max-examples", str(examples), "--seed", str(SEED), "--no-shrink"]
            argv += ["--phases", "examples,coverage,fuzzing", "--workers", "2"]
            argv += ["--report", "ndjson", "--report-ndjson-path", str(events)]
            argv += ["--request-timeout", "10", "--warnings", "off", "--max-response-time", "10"]
            argv += ["--header", f"Authorization: Bearer {TOKEN}"]
            argv += ["--header", f"X-API-Key: {TOKEN}"]
            subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=work)
    except Exception as exc:
        result.outcome, result.note = "server failed", str(exc).splitlines()[0][:300]
        return result
    if not events.exists():
        result.outcome = "no checks"
        return result
    outcome = _read_events(Path(path).stem, events)
    result.cases, result.checks, result.by_check = outcome.cases, outcome.checks, outcome.by_check
    failures: list[Failure] = [*outcome.failures, *(f for f, _ in outcome.excluded)]
    result.failures = [
        {k: v for k, v in asdict(f).items() if k != "body"} | {"body": f.body[:500]}
        for f in failures
    ]
    result.outcome = "ok" if outcome.checks else "no checks"
    result.seconds = round(time.perf_counter() - started, 1)
    return result


def kind_of(failure: dict[str, object]) -> str:
    """A failure's kind: its check and, for status codes, whether the request was valid."""
    return f"{failure['check']} ({failure['mode']})"


_ANSWER_TYPE = re.compile(
    r'"(?:type|errorCode|code)":\s*"(?:https://apiforge\.dev/problems/)?([a-z-]+)"'
)


def answer_of(failure: dict[str, object]) -> str:
    """What the server answered: its status and, for an error, the problem type the body
    names (in a problem, or under the spec's own error view): `422 validation-error`."""
    found = _ANSWER_TYPE.search(str(failure.get("body") or ""))
    status = failure.get("status")
    return (
        f"{status} {found.group(1)}"
        if found and isinstance(status, int) and status >= 400
        else str(status)
    )


def write_docs(runs: list[SpecRun], examples: int) -> str:
    ok = [r for r in runs if r.outcome == "ok"]
    kinds: Counter[str] = Counter()
    for run in ok:
        kinds.update(kind_of(f) for f in run.failures)
    lines = [
        "## Conformance sweep (mock mode, corpus specs)",
        "",
        "`bench/conformance_sweep.py`: for each spec, the generated server with no handler "
        "written, under `APIFORGE_MOCK=1` (every operation answers its declared example or a "
        "value of its schema, through every pattern) and a verifier that lets the sweep's "
        "token in and nothing else (for `ignored_auth`); schemathesis `st run --checks all` (examples, coverage, fuzzing; "
        f"`--max-examples {examples}`, fixed seed). Distinct failures (operation, check, "
        "message) per spec.",
        "",
        f"Specs: {len(runs)}; run: {len(ok)}; "
        f"not run: {', '.join(f'{r.spec} ({r.outcome}: {r.note})' for r in runs if r not in ok) or 'none'}.",
        f"Checks run: {sum(r.checks for r in ok):,} over {sum(r.cases for r in ok):,} test cases.",
        "",
        "| spec | operations | cases | checks | distinct failures |",
        "|---|---:|---:|---:|---:|",
    ]
    for run in runs:
        if run.outcome == "ok":
            lines.append(
                f"| {run.spec} | {run.operations or '?'} | {run.cases} | {run.checks} "
                f"| {len(run.failures)} |"
            )
    lines += ["", "Failures by kind:", "", "| check (request) | failures |", "|---|---:|"]
    lines += [f"| {k} | {n} |" for k, n in kinds.most_common()]
    answers: Counter[tuple[str, str]] = Counter()
    for run in ok:
        answers.update((kind_of(f), answer_of(f)) for f in run.failures)
    lines += ["", "The same failures by the server's answer (status, problem type):", ""]
    lines += ["| check (request) | answer | failures |", "|---|---|---:|"]
    lines += [
        f"| {k} | {a} | {n} |" for (k, a), n in sorted(answers.items(), key=lambda i: (-i[1], i[0]))
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--count", type=int, default=30, help="OpenAPI 3 specs in the sample")
    parser.add_argument("--only", default=None, help="only specs whose path contains this")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-examples", type=int, default=4)
    parser.add_argument("--docs", action="store_true", help="update docs/reliability.md")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    specs = sample(corpus, args.count)
    if args.only:
        specs = [s for s in specs if args.only in s[0]]
    with (
        tempfile.TemporaryDirectory(prefix="apiforge-conformance-") as tmp,
        ThreadPoolExecutor(max_workers=args.jobs) as pool,
    ):
        futures = [
            pool.submit(run_one, p, n, corpus, Path(tmp) / re.sub(r"\W", "_", p), args.max_examples)
            for p, n in specs
        ]
        runs = []
        for future in futures:
            run = future.result()
            runs.append(run)
            print(
                f"{run.spec}: {run.outcome} {run.checks} checks, "
                f"{len(run.failures)} failures ({run.seconds}s) {run.note}",
                flush=True,
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    section = write_docs(runs, args.max_examples)
    print(section)
    if args.docs:
        text = DOCS.read_text()
        head, marker, tail = text.partition("## Conformance sweep (mock mode, corpus specs)")
        rest = tail.partition("\n## ")[2] if marker else ""
        DOCS.write_text(head.rstrip() + "\n\n" + section + ("\n## " + rest if rest else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
