"""Whole-process time and peak memory of `apiforge lint` beside Spectral and Redocly.

    .venv/bin/python bench/lint_bench.py [--reps 5] [--skip-install] [SPEC ...]

Installs @stoplight/spectral-cli and @redocly/cli with npm into bench/.peers/ (git-ignored)
on first use, then runs every tool on every spec in turn (alternating, so a busy machine hurts
all tools alike), several repetitions, and prints a table of medians. Peak memory is each
process's maximum resident set size, read with os.wait4 (no psutil).

apiforge is measured twice: cold (APIFORGE_NO_CACHE=1: every byte parsed, the source map built)
and warm (a parse/source-map cache, filled by one untimed run, in a private cache folder).
Spectral runs the pattern ruleset from ../shared/bench/spectral-patterns.yaml; Redocly runs its
default (recommended) ruleset — neither checks exactly what apiforge checks; see
docs/performance.md.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / ".peers"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
RULESET = SHARED / "bench" / "spectral-patterns.yaml"
DEFAULT_SPECS = [
    CORPUS / "github" / "api.github.com.2022-06-11.json",
    CORPUS / "stripe" / "spec3.2023-09-12.yaml",
]
PACKAGES = ["@stoplight/spectral-cli@6.16.3", "@redocly/cli@2.77.0"]


@dataclass
class Tool:
    name: str
    argv: list[str]  # "{spec}" is replaced
    env: dict[str, str]


def install_peers() -> None:
    bins = PEERS / "node_modules" / ".bin"
    if (bins / "spectral").exists() and (bins / "redocly").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is not installed: install Node.js 20+ to run the comparison")
    PEERS.mkdir(parents=True, exist_ok=True)
    print(f"installing {' '.join(PACKAGES)} into {PEERS.relative_to(ROOT)} ...", file=sys.stderr)
    subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(PEERS),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            *PACKAGES,
        ],
        check=True,
    )


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB, exit code) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, int(usage.ru_maxrss), proc.returncode


def tools(cache_dir: Path, with_peers: bool) -> list[Tool]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    base["NO_COLOR"] = "1"
    # an installed apiforge has its bytecode compiled (pip does it); without it every run
    # compiles the modules again (~0.1 s)
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    apiforge = [  # this checkout's code (the `apiforge` script may be another checkout's)
        str(ROOT / ".venv" / "bin" / "python"),
        "-m",
        "generator.cli",
        "lint",
        "{spec}",
        "--format",
        "json",
        "--no-config",
    ]
    found = [
        Tool("apiforge (cold)", apiforge, {**base, "APIFORGE_NO_CACHE": "1"}),
        Tool("apiforge (warm)", apiforge, {**base, "APIFORGE_CACHE_DIR": str(cache_dir)}),
    ]
    if with_peers:
        bins = PEERS / "node_modules" / ".bin"
        node_env = {**base, "REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"}
        found += [
            Tool(
                "spectral",
                [str(bins / "spectral"), "lint", "-r", str(RULESET), "-f", "json", "{spec}"],
                node_env,
            ),
            Tool(
                "redocly", [str(bins / "redocly"), "lint", "--format", "json", "{spec}"], node_env
            ),
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", type=Path, default=DEFAULT_SPECS)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--skip-install", action="store_true", help="Only apiforge (no npm).")
    args = parser.parse_args()
    if not args.skip_install:
        install_peers()
    with tempfile.TemporaryDirectory(prefix="apiforge-bench-cache-") as tmp:
        cache = Path(tmp)
        all_tools = tools(cache, with_peers=not args.skip_install)
        warm = next(t for t in all_tools if t.name == "apiforge (warm)")
        results: dict[tuple[str, str], list[tuple[float, int, int]]] = {}
        for spec in args.specs:
            measure([a.replace("{spec}", str(spec)) for a in warm.argv], warm.env)  # fill the cache
            for rep in range(args.reps):
                for tool in all_tools:
                    argv = [a.replace("{spec}", str(spec)) for a in tool.argv]
                    results.setdefault((spec.name, tool.name), []).append(measure(argv, tool.env))
                print(f"{spec.name}: repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    print(f"| spec | tool | median s | min s | max s | peak RSS MiB | exit | n={args.reps} |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for spec in args.specs:
        rows = {t: v for (s, t), v in results.items() if s == spec.name}
        peers = [
            statistics.median(r[0] for r in v)
            for t, v in rows.items()
            if not t.startswith("apiforge")
        ]
        best_peer = min(peers) if peers else None
        for tool, runs in rows.items():
            times = [r[0] for r in runs]
            median = statistics.median(times)
            ratio = (
                f"{best_peer / median:.2f}x vs best peer"
                if best_peer and tool.startswith("apiforge")
                else ""
            )
            print(
                f"| {spec.name} | {tool} | {median:.2f} | {min(times):.2f} | {max(times):.2f} | "
                f"{statistics.median(r[1] for r in runs) / 1024:.0f} | {runs[-1][2]} | {ratio} |"
            )


if __name__ == "__main__":
    main()
