"""`apiforge diff` over every provider with more than one version in ../shared/corpus, and
Stripe's published releases (from a clone of stripe/openapi, given with --stripe-repo): no
crash, and the changes found by kind. With --optic (after `bench/diff_bench.py` installed
the peer), the same pairs through `optic diff`, and a table of where the two agree by kind.

    .venv/bin/python bench/diff_corpus.py [--stripe-repo DIR] [--optic] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"
DATA = ROOT / "bench" / ".peers" / "data"

_GHES = "apisguru/github.com__ghes-{}__1.1.4.yaml"
_OAI = (
    "api-with-examples",
    "callback-example",
    "link-example",
    "petstore",
    "petstore-expanded",
    "uspto",
)
# (old, new): versions of one API, the older first
PAIRS: list[tuple[str, str]] = [
    (_GHES.format("2.18"), _GHES.format("2.20")),
    (_GHES.format("2.20"), _GHES.format("2.22")),
    (_GHES.format("2.22"), _GHES.format("3.1")),
    ("apisguru/googleapis.com__compute__v1.yaml", "apisguru/googleapis.com__compute__alpha.yaml"),
    ("apisguru/twilio.com__twilio_sync_v1__1.29.2.yaml", "twilio/twilio_sync_v1.json"),
    ("apisguru/adyen.com__TransferService__2.yaml", "adyen/TransferService-v4.json"),
    *[(f"oai/spec-repo/_archive_pass/{n}.yaml", f"oai/spec-repo/v3.0/{n}.yaml") for n in _OAI],
    *[(f"oai/spec-repo/v3.0/{n}.yaml", f"oai/learn/v3.0/{n}.yaml") for n in _OAI],
    *[
        (f"oai/spec-repo/v3.1/{n}.yaml", f"oai/learn/v3.1/{n}.yaml")
        for n in ("non-oauth-scopes", "webhook-example")
    ],
]
STRIPE_NEW = "stripe/spec3.2023-09-12.yaml"  # release v524 of stripe/openapi
STRIPE_RELEASES = ("v523", "v505", "v450")  # the one before, a week before, a month before


def stripe_pairs(repo: Path | None) -> list[tuple[str, str]]:
    """Stripe's earlier releases, written to bench/.peers/data/ from a clone of its repo."""
    if repo is None:
        return []
    DATA.mkdir(parents=True, exist_ok=True)
    pairs = []
    for tag in STRIPE_RELEASES:
        out = DATA / f"stripe-{tag}.yaml"
        if not out.exists():
            text = subprocess.run(
                ["git", "show", f"{tag}:openapi/spec3.yaml"],
                cwd=repo,
                capture_output=True,
                check=True,
            ).stdout
            out.write_bytes(text)
        pairs.append((str(out), STRIPE_NEW))
    return pairs


def run_apiforge(old: Path, new: Path) -> tuple[dict[str, object] | None, float, str]:
    """`apiforge diff --format json`'s report (None when it failed), seconds, and the error's
    last line."""
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator.cli",
            "diff",
            str(old),
            str(new),
            "--format",
            "json",
            "--no-config",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
        return None, took, (proc.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(proc.stdout), took, ""


def ours(old: Path, new: Path) -> tuple[Counter[str], float, str]:
    """Kinds found (by level), seconds, and an error line if it failed."""
    data, took, error = run_apiforge(old, new)
    if data is None:
        return Counter(), took, error
    changes: list[dict[str, str]] = data["changes"]  # type: ignore[assignment]
    return Counter(f"{c['level']}:{c['kind']}" for c in changes), took, ""


def optic(old: Path, new: Path) -> tuple[dict[str, int] | None, float]:
    """Optic's counts of changed operations and failed checks, or None when it failed."""
    binary = ROOT / "bench" / ".peers" / "node_modules" / ".bin" / "optic"
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [str(binary), "diff", str(old), str(new), "--check", "--json"],
            capture_output=True,
            text=True,
            timeout=180,
            env={"OPTIC_TELEMETRY_LEVEL": "off", "PATH": "/usr/bin:/bin:/usr/local/bin"},
        )
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start
    took = time.perf_counter() - start
    try:
        data = json.loads(proc.stdout[proc.stdout.index("{") :])
    except ValueError:
        return None, took
    failed = [c for c in data.get("results", []) if not c.get("passed", True)]
    return {
        "failed_checks": len(failed),
        "breaking": sum(1 for c in failed if c.get("severity") == 0),
    }, took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stripe-repo", type=Path)
    parser.add_argument("--optic", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pairs = [(CORPUS / a, CORPUS / b) for a, b in PAIRS]
    pairs += [(Path(a), CORPUS / b) for a, b in stripe_pairs(args.stripe_repo)]
    rows = []
    crashes = 0
    for old, new in pairs:
        kinds, took, error = ours(old, new)
        crashes += bool(error)
        row = {
            "old": str(old.relative_to(CORPUS)) if old.is_relative_to(CORPUS) else old.name,
            "new": str(new.relative_to(CORPUS)),
            "seconds": round(took, 2),
            "error": error,
            "kinds": dict(sorted(kinds.items())),
        }
        if args.optic:
            row["optic"], row["optic_seconds"] = optic(old, new)
        rows.append(row)
        levels = Counter(k.split(":")[0] for k in kinds.elements())
        print(
            f"{row['old']} → {row['new']}: {took:.2f} s, "
            + (
                f"ERROR {error}"
                if error
                else ", ".join(f"{n} {lv}" for lv, n in sorted(levels.items())) or "no change"
            )
            + (f"; optic {row['optic']} in {row['optic_seconds']:.1f} s" if args.optic else ""),
            flush=True,
        )
    print(f"{len(pairs)} pairs, {crashes} failed")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
