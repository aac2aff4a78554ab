"""Prove a change leaves `apiforge lint` output alone: every corpus spec, every report format.

    .venv/bin/python bench/lint_equality.py --record FILE [--checkout DIR] [--only SUB]
    .venv/bin/python bench/lint_equality.py --against FILE [--checkout DIR] [--only SUB]

Runs `python -m generator.cli lint SPEC --format F --no-config` cold (`APIFORGE_NO_CACHE=1`),
one process per spec and format, with a checkout's own code and `.venv` (`--checkout`, this
one by default), on every spec of ../shared/corpus (INDEX.tsv, then the Swagger 2.0 ones in
swagger2/SOURCES.swagger2.tsv), from the corpus folder with the spec's relative path (so no
checkout's path is in the output). Each run is recorded as its exit code and the SHA-256 of
its stdout and its stderr. `--record FILE` writes that record (e.g. of the code before a
change, from a copy of its tree); `--against FILE` compares this run with it and prints every
spec and format whose exit code, stdout or stderr differs: exit status 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from corpus_sweep import index  # every corpus spec, Swagger 2.0 ones included

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
FORMATS = ("text", "json", "sarif")


def run_one(checkout: Path, corpus: Path, spec: str, fmt: str) -> list[object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    env.update(APIFORGE_NO_CACHE="1", NO_COLOR="1", PYTHONPATH=str(checkout))
    argv = [str(checkout / ".venv" / "bin" / "python"), "-m", "generator.cli", "lint", spec]
    proc = subprocess.run(
        [*argv, "--format", fmt, "--no-config"],
        cwd=corpus,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    digest = [hashlib.sha256(s).hexdigest() for s in (proc.stdout, proc.stderr)]
    return [proc.returncode, *digest]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--only", default="", help="only specs whose path contains this")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--record", type=Path, help="write the results to this JSON file")
    what.add_argument("--against", type=Path, help="compare with a recorded JSON file")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    specs = [s for s in index(args.corpus) if args.only in s]
    formats = args.formats.split(",")
    start = time.monotonic()
    results: dict[str, dict[str, list[object]]] = {}
    for n, spec in enumerate(specs, 1):
        results[spec] = {fmt: run_one(checkout, args.corpus, spec, fmt) for fmt in formats}
        if n % 20 == 0:
            print(f"{n}/{len(specs)} specs, {time.monotonic() - start:.0f} s", file=sys.stderr)
    exits: dict[int, int] = {}
    for runs in results.values():
        for code, *_ in runs.values():
            exits[int(code)] = exits.get(int(code), 0) + 1  # type: ignore[call-overload]
    print(f"{len(specs)} specs x {len(formats)} formats; exit codes {sorted(exits.items())}")
    if args.record:
        args.record.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        return
    recorded = json.loads(args.against.read_text())
    differ = [
        (spec, fmt)
        for spec, runs in results.items()
        for fmt, run in runs.items()
        if recorded.get(spec, {}).get(fmt) != run
    ]
    for spec, fmt in differ:
        was, now = recorded.get(spec, {}).get(fmt), results[spec][fmt]
        print(f"DIFFERS: {spec} --format {fmt}: {was} -> {now}")
    compared = sum(len(r) for r in results.values())
    print(f"{compared - len(differ)} of {compared} runs identical (exit code, stdout, stderr)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
