"""Work in a forked process: its value, or None when it failed (the caller redoes it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from generator.forked import Forked

ROOT = Path(__file__).resolve().parents[1]


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def _fails() -> None:
    raise ValueError("in the child")


def _exits() -> None:
    os._exit(3)  # dies without a word


def test_the_value_comes_back_from_another_process() -> None:
    child = Forked.start(_pid_and, 21)
    assert child is not None
    pid, value = child.result() or (os.getpid(), 0)
    assert value == 42 and pid != os.getpid()
    assert child.result() is None  # once


def test_a_failure_or_a_dead_child_is_none() -> None:
    for fn in (_fails, _exits):
        child = Forked.start(fn)
        assert child is not None
        assert child.result() is None


def test_cancel_stops_a_child_that_still_runs() -> None:
    child = Forked.start(time.sleep, 30)
    assert child is not None
    started = time.monotonic()
    child.cancel()
    assert time.monotonic() - started < 10
    assert child.result() is None


def test_output_is_written_once(tmp_path: Path) -> None:
    """What this process printed before the fork is not printed again by the child; what the
    child prints is not lost."""
    script = (
        "from generator.forked import Forked\n"
        "print('before')\n"  # still in the buffer: stdout is a pipe
        "child = Forked.start(print, 'from the child')\n"
        "assert child is not None\n"
        "child.result()\n"
        "print('after')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
    ).stdout
    assert out == "before\nfrom the child\nafter\n"


def _acquires(module: object, name: str) -> bool:
    return bool(getattr(module, name).acquire(timeout=5))


def test_a_child_does_not_inherit_a_lock_held_by_another_thread() -> None:
    """The formatter's and the settings' locks are made anew in a child: one held by a
    thread of the parent at the fork (a formatting thread) would never be released there."""
    from generator.render import writer
    from generator.server import settings as server_settings

    for module, name in ((writer, "_ruff_lock"), (server_settings, "_settings_lock")):
        with getattr(module, name):  # held, as by a thread the child will not have
            child = Forked.start(_acquires, module, name)
            assert child is not None
            assert child.result() is True, name
