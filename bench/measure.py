"""Whole-process measurement shared by the benchmarks: wall time and peak memory of one
command, taken from the kernel's accounting of that very child (os.wait4)."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mb: float
    returncode: int
    cpu_s: float = 0.0  # user + system, the child's and those of the processes it waited for


def run_once(
    cmd: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> Run:
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env) if env else None,
        cwd=cwd,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Run(elapsed, usage.ru_maxrss / 1024, proc.returncode, cpu)


@dataclass(frozen=True)
class Summary:
    median_s: float
    peak_mb: float
    ok: bool
    runs: int


def summarize(runs: Sequence[Run], ok_codes: tuple[int, ...] = (0,)) -> Summary:
    return Summary(
        median_s=statistics.median(r.seconds for r in runs),
        peak_mb=max(r.peak_mb for r in runs),
        ok=all(r.returncode in ok_codes for r in runs),
        runs=len(runs),
    )


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(
                line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem_gb:.0f} GiB"
