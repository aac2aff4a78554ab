"""`apiforge inspect` on the big real specs: whole-process wall time and peak memory,
cold (no parse cache), a user's first run (the cache on, empty) and warm (the cache as the
previous run left it)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import machine, run_once, summarize

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
SPECS = {
    "GitHub (3.6 MB JSON)": CORPUS / "github" / "api.github.com.2022-06-11.json",
    "Stripe (4.2 MB YAML)": CORPUS / "stripe" / "spec3.2023-09-12.yaml",
}
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))


def main() -> None:
    cache = tempfile.mkdtemp(prefix="apiforge-bench-cache-")
    cmd = [sys.executable, "-m", "generator.cli", "inspect", "--format", "json"]
    print(f"apiforge inspect, {REPEAT} runs each, median; machine: {machine()}\n")
    print(
        "| spec | cold (no cache) | first run (empty cache) | warm (parse cache) | peak memory |"
        "\n|---|---|---|---|---|"
    )
    for label, spec in SPECS.items():
        cold = summarize(
            [
                run_once(
                    [*cmd, str(spec)], env={**os.environ, "APIFORGE_NO_CACHE": "1"}, cwd=str(ROOT)
                )
                for _ in range(REPEAT)
            ]
        )
        first = summarize(
            [
                run_once(
                    [*cmd, str(spec)],
                    env={**os.environ, "APIFORGE_CACHE_DIR": tempfile.mkdtemp(dir=cache)},
                    cwd=str(ROOT),
                )
                for _ in range(REPEAT)
            ]
        )
        warm_env = {**os.environ, "APIFORGE_CACHE_DIR": cache}
        run_once([*cmd, str(spec)], env=warm_env, cwd=str(ROOT))  # fill the cache
        warm = summarize(
            [run_once([*cmd, str(spec)], env=warm_env, cwd=str(ROOT)) for _ in range(REPEAT)]
        )
        assert cold.ok and first.ok and warm.ok, label
        peak = max(cold.peak_mb, first.peak_mb, warm.peak_mb)
        print(
            f"| {label} | {cold.median_s:.2f} s | {first.median_s:.2f} s "
            f"| {warm.median_s:.2f} s | {peak:.0f} MB |"
        )


if __name__ == "__main__":
    main()
