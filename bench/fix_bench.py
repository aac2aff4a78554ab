"""Whole-process time of `apiforge lint SPEC --fix` beside `apiforge lint SPEC`.

    .venv/bin/python bench/fix_bench.py [--reps 10] [SPEC ...]

For each spec (default: the Stripe and GitHub specs of ../shared/corpus), cold
(`APIFORGE_NO_CACHE=1`: every byte parsed) and warm (a private parse and source-map cache,
filled by one untimed run of each command): each repetition copies the spec afresh to a
temporary folder (`--fix` changes it) and runs `lint` and `lint --fix` on the copy, in turn,
so that a busy machine slows both alike. Prints the median wall time of each, and the median
of the per-repetition ratios (`--fix` / `lint`). Peak memory is each process's maximum RSS
(`os.wait4`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT_SPECS = [
    CORPUS / "stripe" / "spec3.2023-09-12.yaml",
    CORPUS / "github" / "api.github.com.2022-06-11.json",
]


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB) of one process; its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed")
    return elapsed, int(usage.ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", type=Path, default=DEFAULT_SPECS)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    base["NO_COLOR"] = "1"
    print("| spec | cache | `lint` s | `lint --fix` s | ratio | peak MiB (lint / fix) |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            copy = Path(tmp) / spec.name
            for mode in ("cold", "warm"):
                env = dict(base)
                if mode == "cold":
                    env["APIFORGE_NO_CACHE"] = "1"
                else:
                    env["APIFORGE_CACHE_DIR"] = str(Path(tmp) / "cache")
                lint = [sys.executable, "-m", "generator.cli", "lint", str(copy), "--no-config"]
                runs: dict[str, list[tuple[float, int]]] = {"lint": [], "fix": []}
                for rep in range(args.reps + 1):  # the first of each: not counted
                    for name, argv in (("lint", lint), ("fix", [*lint, "--fix"])):
                        shutil.copyfile(spec, copy)
                        result = measure(argv, env)
                        if rep:
                            runs[name].append(result)
                lint_s = statistics.median(t for t, _ in runs["lint"])
                fix_s = statistics.median(t for t, _ in runs["fix"])
                ratio = statistics.median(
                    f[0] / ln[0] for f, ln in zip(runs["fix"], runs["lint"], strict=True)
                )
                peak = (max(m for _, m in runs["lint"]), max(m for _, m in runs["fix"]))
                print(
                    f"| {spec.name} | {mode} | {lint_s:.2f} | {fix_s:.2f} | {ratio:.2f}x "
                    f"| {peak[0] // 1024} / {peak[1] // 1024} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
