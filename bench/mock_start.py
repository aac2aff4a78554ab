"""`apiforge mock SPEC`: the time from the command to the first answer.

    .venv/bin/python bench/mock_start.py [--repeat 5] [SPEC ...]

For each spec (default: specs/acme.yaml) a cache of its own is filled by one cold start
(printed), then `--repeat` warm starts are timed: from starting the process to the first
200 of `GET /healthz` on 127.0.0.1 (polled every 20 ms). Prints each run, the median, and the
machine's load (`uptime`) before and after: figures taken while other work loads the machine
are slower than on an idle one.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def start_once(spec: str, cache: str, timeout: float) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator.cli", "mock", spec, "--port", "0"],
        cwd=ROOT,
        env={**os.environ, "APIFORGE_CACHE_DIR": cache},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r" on (http://\S+): ", line)
        if not match:
            raise RuntimeError(f"no banner: {line!r}")
        while time.perf_counter() - started < timeout:
            try:
                if httpx.get(match.group(1) + "/healthz", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        raise RuntimeError("no answer in time")
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=[str(ROOT / "specs" / "acme.yaml")])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    print("load before:", os.getloadavg())
    for spec in args.specs:
        with tempfile.TemporaryDirectory(prefix="apiforge-mock-bench-") as cache:
            cold = start_once(spec, cache, args.timeout)
            warm = [start_once(spec, cache, args.timeout) for _ in range(args.repeat)]
        runs = ", ".join(f"{t:.2f}" for t in warm)
        print(
            f"{Path(spec).name}: cold {cold:.2f} s; warm median {statistics.median(warm):.2f} s "
            f"({runs})"
        )
    print("load after:", os.getloadavg())


if __name__ == "__main__":
    main()
