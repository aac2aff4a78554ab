"""The rate limiter alone: CPU and wall time per hit on Redis — one script call per request,
auto-pipelined calls, auto-pipelined calls with leases (the default) — and in memory, with N
requests of one caller in flight at once.

    .venv/bin/python bench/ratelimit_redis_bench.py [--concurrency 16] [--hits 4000] [--repeat 5]

Starts a throwaway redis-server on 127.0.0.1, makes the generated server's `RateLimiter`
(templates/server/runtime/ratelimit.py) with a limit no run reaches, and has `--concurrency`
asyncio tasks call `limiter.hit` until `--hits` hits are done; the ways alternate in every
repetition. Prints the medians of this process's CPU µs per hit (what a worker pays; Redis' own
CPU is not counted) and wall µs per hit, the mean pipeline size, script calls per hit, and
`uptime`. A limit no run reaches is where leases help most: near a limit they shrink to one
unit (tests/runtime/server/test_ratelimit.py shows both). The server
benchmark (bench/server_bench.py) measures the same change inside a whole request.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.runtime.server.conftest import RuntimeModules, copy_server_runtime  # noqa: E402
from tests.support import redis_server  # noqa: E402


def make_request(client: str) -> Any:
    from starlette.requests import Request

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "client": (client, 1)}
    return Request(scope)


MODES = {
    "direct": "Redis, one script call per request",
    "pipelined": "Redis, auto-pipelined (lease 1)",
    "leased": "Redis, auto-pipelined + leases (32, the default)",
    "memory": "memory (one process)",
}


async def run(ratelimit: Any, url: str, hits: int, concurrency: int, mode: str) -> dict[str, float]:
    limiter = ratelimit.RateLimiter(
        storage_url="memory://" if mode == "memory" else url,
        default="1000000/hour",
        key_prefix=f"b{uuid.uuid4().hex}",
        lease=32 if mode == "leased" else 1,
    )
    one_trip = limiter._one_trip or ratelimit._OneTripSlidingWindow.__new__(
        ratelimit._OneTripSlidingWindow
    )
    if mode == "memory":  # no script calls to count
        one_trip.calls = one_trip.batches = 0
    if mode == "direct":  # one script call per request, as before auto-pipelining
        script = one_trip._script

        async def direct(keys: list[str], args: list[int]) -> Any:
            return await script(keys, args)

        one_trip._call = direct
    request = make_request("10.0.0.1")
    await limiter.hit(request)  # connection open, script loaded
    left = hits

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            assert (await limiter.hit(request)) is not None

    batches, calls = one_trip.batches, one_trip.calls
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await limiter.storage.reset()
    size = (one_trip.calls - calls) / max(1, one_trip.batches - batches)
    return {
        "cpu_us": cpu / hits * 1e6,
        "wall_us": wall / hits * 1e6,
        "batch": size,
        "calls_per_hit": (one_trip.calls - calls) / hits,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--hits", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="rl_bench"))
    copy_server_runtime(folder, "rl_bench_pkg")
    sys.path.insert(0, str(folder))
    rt = RuntimeModules("rl_bench_pkg")
    print(
        "uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    )
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with redis_server() as url:
        for _ in range(args.repeat):
            for mode in MODES:
                results[mode].append(
                    asyncio.run(run(rt.ratelimit, url, args.hits, args.concurrency, mode))
                )
    print(
        "uptime after: ", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    )
    print(f"{args.hits} hits, {args.concurrency} in flight, {args.repeat} alternating repetitions")
    print(
        "| limiter | CPU µs/hit (median) | wall µs/hit (median) | mean pipeline | script calls/hit |"
    )
    print("|---|---:|---:|---:|---:|")
    for mode, name in MODES.items():
        runs = results[mode]
        cpu = statistics.median(r["cpu_us"] for r in runs)
        wall = statistics.median(r["wall_us"] for r in runs)
        batch = statistics.median(r["batch"] for r in runs) if mode != "direct" else 1.0
        calls = 1.0 if mode == "direct" else statistics.median(r["calls_per_hit"] for r in runs)
        print(f"| {name} | {cpu:.0f} | {wall:.0f} | {batch:.1f} | {calls:.3f} |")


if __name__ == "__main__":
    main()
