"""Whole-process time and peak memory of `apiforge diff` beside Optic's `optic diff`.

    .venv/bin/python bench/diff_bench.py [--reps 5] [--skip-install] [--optic-timeout 180]
                                         [--stripe-repo DIR]

The pairs: Stripe's published release v523 against the corpus's (v524: its previous
version, descriptions changed only) and v450 against it (a month of changes), both written from
a clone of stripe/openapi (`--stripe-repo`, as bench/diff_corpus.py does), GitHub Enterprise
2.22 against 3.1, and the planted-changes base spec of the tests against a variant (small).

apiforge runs cold (APIFORGE_NO_CACHE=1: every byte parsed, the source map built). Optic
(`@useoptic/optic` 1.0.9, installed with npm into bench/.peers/ with `ajv` pinned to 8.17.1:
without the pin its dependencies load two ajv versions and it fails on start) runs each pair
once per repetition, bounded by --optic-timeout. The tools run alternately, so a busy machine
hurts both alike; the paired ratio (peer / apiforge, repetition by repetition) is the figure to
quote. CPU time (user + system) is the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.diff_corpus import CORPUS, stripe_pairs  # noqa: E402
from bench.measure import Run, machine, run_once  # noqa: E402

PEERS = ROOT / "bench" / ".peers"
OPTIC = PEERS / "node_modules" / ".bin" / "optic"
PACKAGE = {
    "private": True,
    "dependencies": {"@useoptic/optic": "1.0.9"},
    "overrides": {"ajv": "8.17.1"},
}
CONSOLE_SCRIPT = "import sys; from generator.cli import run; sys.argv[0] = 'apiforge'; run()"


def install_optic() -> None:
    if OPTIC.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is not installed: install Node.js 20+ to run the comparison")
    PEERS.mkdir(parents=True, exist_ok=True)
    (PEERS / "package.json").write_text(json.dumps(PACKAGE), encoding="utf-8")
    print("installing @useoptic/optic 1.0.9 into bench/.peers ...", file=sys.stderr)
    subprocess.run([npm, "install", "--prefix", str(PEERS), "--no-audit", "--no-fund"], check=True)


def small_pair(folder: Path) -> tuple[Path, Path]:
    """The tests' base spec and a variant with a parameter's maxLength lowered."""
    base = ROOT / "tests" / "diff" / "base.yaml"
    new = folder / "small-new.yaml"
    new.write_text(
        base.read_text(encoding="utf-8").replace("maxLength: 200}", "maxLength: 100}", 1)
    )
    return base, new


def timed(argv: list[str], env: dict[str, str], timeout: float | None = None) -> Run | None:
    """One process, or None when it ran past `timeout` (killed)."""
    if timeout is None:
        return run_once(argv, env=env, cwd=str(ROOT))
    wrapped = ["timeout", "-s", "KILL", str(int(timeout)), *argv]
    found = run_once(wrapped, env=env, cwd=str(ROOT))
    return None if found.returncode in (124, 137, -9) else found


def optic_answers(old: Path, new: Path, env: dict[str, str], timeout: float) -> str:
    """ "" when Optic reports on the pair, else why not (it failed, or ran past `timeout`)."""
    try:
        proc = subprocess.run(
            [str(OPTIC), "diff", str(old), str(new), "--check"],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"killed after {timeout:.0f} s"
    if "Checks" in proc.stdout:
        return ""
    said = (proc.stdout + proc.stderr).strip().splitlines()
    return f"fails: {said[0][:60] if said else f'exit {proc.returncode}'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--skip-install", action="store_true", help="Only apiforge (no npm).")
    parser.add_argument("--optic-timeout", type=float, default=180)
    parser.add_argument("--stripe-repo", type=Path)
    args = parser.parse_args()
    if not args.skip_install:
        install_optic()
    folder = Path(tempfile.mkdtemp(prefix="diff-bench-"))
    ghes = "apisguru/github.com__ghes-{}__1.1.4.yaml"
    pairs = [small_pair(folder)]
    pairs += [(Path(a), CORPUS / b) for a, b in stripe_pairs(args.stripe_repo)[:1]]
    pairs += [(Path(a), CORPUS / b) for a, b in stripe_pairs(args.stripe_repo)[2:]]
    pairs.append((CORPUS / ghes.format("2.22"), CORPUS / ghes.format("3.1")))
    base = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    cold = {**base, "APIFORGE_NO_CACHE": "1", "NO_COLOR": "1"}
    node = {**base, "OPTIC_TELEMETRY_LEVEL": "off"}
    print(f"machine: {machine()}; load average before: {os.getloadavg()[0]:.1f}")
    print(
        "| pair | apiforge wall (median) | apiforge CPU | peak MB | optic wall | optic CPU | optic peak MB | CPU ratio optic/apiforge (median of pairs) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for old, new in pairs:
        ours: list[Run] = []
        theirs: list[Run | None] = []
        why = "" if args.skip_install else optic_answers(old, new, node, args.optic_timeout)
        python = ROOT / ".venv" / "bin" / "python"
        for _ in range(args.reps):
            argv = [str(python), "-c", CONSOLE_SCRIPT, "diff", str(old), str(new), "--no-config"]
            ours.append(timed(argv, cold) or Run(0, 0, -1))
            if not args.skip_install and not why and (not theirs or theirs[-1] is not None):
                theirs.append(
                    timed(
                        [str(OPTIC), "diff", str(old), str(new), "--check"],
                        node,
                        args.optic_timeout,
                    )
                )
        wall = statistics.median(r.seconds for r in ours)
        cpu = statistics.median(r.cpu_s for r in ours)
        peak = max(r.peak_mb for r in ours)
        name = f"{old.name} → {new.name}"
        done = [t for t in theirs if t is not None]
        if not args.skip_install and len(done) == len(theirs) and done:
            ratio = statistics.median(t.cpu_s / o.cpu_s for o, t in zip(ours, done, strict=False))
            optic = (
                f"{statistics.median(t.seconds for t in done):.2f} s | "
                f"{statistics.median(t.cpu_s for t in done):.2f} s | {max(t.peak_mb for t in done):.0f} | "
                f"{ratio:.1f}x"
            )
        elif why or theirs:
            optic = f"{why or f'killed after {args.optic_timeout:.0f} s'} | - | - | -"
        else:
            optic = "- | - | - | -"
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {peak:.0f} | {optic} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
