"""Whole-process time and peak memory of `apiforge lint` beside Spectral and Redocly.

    .venv/bin/python bench/lint_bench.py [--reps 5] [--skip-install] [--baseline DIR] [SPEC ...]

Installs @stoplight/spectral-cli and @redocly/cli with npm into bench/.peers/ (git-ignored)
on first use, then runs every tool on every spec in turn (alternating, so a busy machine hurts
all tools alike), several repetitions, and prints a table of medians. Peak memory is each
process's maximum resident set size, and CPU time its user + system time, read with os.wait4
(no psutil).

Then the paired figures: in each repetition a tool ran right after the one before it, so the
ratio of two tools' times is taken repetition by repetition (machine load drifts; a pair sees
the same load), and its median is printed, by CPU time and by wall time: how many times faster
apiforge is than each peer, and, with `--baseline DIR` (another checkout of apiforge, e.g. of
main, with its own `.venv`), than that code. The load average (`os.getloadavg`) before and
after is printed too: on a shared machine, CPU time is the steadier figure.

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
    cwd: Path = ROOT


@dataclass
class Run:
    wall: float  # seconds
    cpu: float  # user + system seconds
    peak_kib: int
    exit: int


def install_peers(peers: tuple[str, ...] = ("spectral", "redocly")) -> None:
    bins = PEERS / "node_modules" / ".bin"
    if all((bins / peer).exists() for peer in peers):
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


def measure(tool: Tool, spec: Path) -> Run:
    """One process of `tool` on `spec`: its times, peak RSS and exit code."""
    argv = [a.replace("{spec}", str(spec)) for a in tool.argv]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=tool.env, cwd=tool.cwd
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(elapsed, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss), proc.returncode)


# what the `apiforge` script runs; `-m generator.cli` would also import runpy (~9 ms)
CONSOLE_SCRIPT = "import sys; from generator.cli import run; sys.argv[0] = 'apiforge'; run()"


def apiforge_argv(checkout: Path) -> list[str]:
    """`apiforge lint SPEC --format json` with `checkout`'s code (run from it: the `apiforge`
    script may point at another checkout)."""
    python = checkout / ".venv" / "bin" / "python"
    return [str(python), "-c", CONSOLE_SCRIPT, "lint", "{spec}", "--format", "json", "--no-config"]


def tools(cache_dir: Path, peers: list[str], baseline: Path | None = None) -> list[Tool]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    base["NO_COLOR"] = "1"
    # an installed apiforge has its bytecode compiled (pip does it); without it every run
    # compiles the modules again (~0.1 s)
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    apiforge = apiforge_argv(ROOT)
    cold = {**base, "APIFORGE_NO_CACHE": "1"}
    found = [
        Tool("apiforge (cold)", apiforge, cold),
        Tool("apiforge (warm)", apiforge, {**base, "APIFORGE_CACHE_DIR": str(cache_dir)}),
    ]
    if baseline is not None:
        found.append(Tool("baseline (cold)", apiforge_argv(baseline), cold, baseline))
    if peers:
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
    return [t for t in found if not _peer(t.name) or t.name in peers]


def paired(runs: dict[str, list[Run]], fast: str, slow: str) -> str:
    """Median, over repetitions, of `slow`'s time over `fast`'s: by CPU, by wall."""
    pairs = list(zip(runs[fast], runs[slow], strict=True))
    cpu = statistics.median(b.cpu / a.cpu for a, b in pairs)
    wall = statistics.median(b.wall / a.wall for a, b in pairs)
    return f"| {fast} | {slow} | {cpu:.1f}x | {wall:.1f}x |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", type=Path, default=DEFAULT_SPECS)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--skip-install", action="store_true", help="Only apiforge (no npm).")
    parser.add_argument(
        "--peers",
        default="spectral,redocly",
        help="Which peers (comma-separated; Spectral takes 10-30 s a run on the big specs).",
    )
    parser.add_argument(
        "--baseline", type=Path, help="Another apiforge checkout (with .venv) to pair against."
    )
    args = parser.parse_args()
    if not args.skip_install:
        install_peers(tuple(args.peers.split(",")))
    load_before = os.getloadavg()
    results: dict[str, dict[str, list[Run]]] = {}
    with tempfile.TemporaryDirectory(prefix="apiforge-bench-cache-") as tmp:
        peers = [] if args.skip_install else args.peers.split(",")
        all_tools = tools(Path(tmp), peers, args.baseline)
        warm = next(t for t in all_tools if t.name == "apiforge (warm)")
        for spec in args.specs:
            measure(warm, spec)  # fills the cache
            for tool in all_tools:
                measure(tool, spec)  # a warm-up: compiled bytecode, files in the page cache
            runs = results[spec.name] = {t.name: [] for t in all_tools}
            for rep in range(args.reps):
                for tool in all_tools:
                    runs[tool.name].append(measure(tool, spec))
                print(f"{spec.name}: repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    load_after = os.getloadavg()
    print(
        f"| spec | tool | median wall s | median CPU s | min wall s | max wall s | peak RSS MiB "
        f"| exit | n={args.reps} |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for spec, runs in results.items():
        peers = [statistics.median(r.wall for r in v) for t, v in runs.items() if _peer(t)]
        best_peer = min(peers) if peers else None
        for name, found in runs.items():
            walls = [r.wall for r in found]
            median = statistics.median(walls)
            ratio = (
                f"{best_peer / median:.2f}x vs best peer" if best_peer and not _peer(name) else ""
            )
            print(
                f"| {spec} | {name} | {median:.2f} | {statistics.median(r.cpu for r in found):.2f} "
                f"| {min(walls):.2f} | {max(walls):.2f} "
                f"| {statistics.median(r.peak_kib for r in found) / 1024:.0f} "
                f"| {found[-1].exit} | {ratio} |"
            )
    print()
    print("Paired, repetition by repetition (median of the ratios):")
    print()
    print("| spec | apiforge | faster than | by CPU | by wall |")
    print("|---|---|---|---:|---:|")
    for spec, runs in results.items():
        for fast in ("apiforge (cold)", "apiforge (warm)"):
            for slow in (t for t in runs if _peer(t) or t == "baseline (cold)"):
                if fast == "apiforge (warm)" and slow == "baseline (cold)":
                    continue
                print(f"| {spec} " + paired(runs, fast, slow))
    print()
    before = "/".join(f"{x:.1f}" for x in load_before)
    after = "/".join(f"{x:.1f}" for x in load_after)
    print(f"load average (1/5/15 min): {before} before, {after} after")


def _peer(tool: str) -> bool:
    return not tool.startswith(("apiforge", "baseline"))


if __name__ == "__main__":
    main()
