"""Work handed to a forked process, so that it runs on another core while this one goes on.

The child only ever speeds things up: `result()` is None when it failed, died or could not
start, and the caller then does the same work itself, meeting any error exactly where a run
without the child would. So nothing the child raises has to travel back.

A plain `os.fork` and a pipe: `multiprocessing` would add ~0.01 s of imports to every run
that forks (a regeneration's start), for nothing its fork start method does beyond this.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """`fn(*args)` running in a forked child (it sees this process's memory as it was at
    the fork: the parsed spec is not copied). Start it with `Forked.start`."""

    def __init__(self, pid: int, reader: int) -> None:
        self._pid = pid
        self._reader = reader
        self._done = False

    @classmethod
    def start(cls, fn: Callable[..., T], *args: Any) -> Forked[T] | None:
        """None when this platform cannot fork (the caller does the work itself)."""
        if not hasattr(os, "fork"):
            return None
        _flush_std_streams()  # else what they hold would be written twice
        reader, writer = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # pragma: no cover - the child; its work is seen through result()
            os.close(reader)
            _child(writer, fn, args)
        os.close(writer)
        return cls(pid, reader)

    def result(self) -> T | None:
        """Wait for the child: its return value, or None when it failed."""
        if self._done:
            return None
        self._done = True
        try:
            with os.fdopen(self._reader, "rb") as pipe:
                payload = pipe.read()  # until the child closes its end
        except OSError:
            payload = b""
        _, status = os.waitpid(self._pid, 0)
        if not payload or os.waitstatus_to_exitcode(status) != 0:
            return None
        try:
            ok, value = pickle.loads(payload)
        except Exception:  # a truncated or foreign message: as if it had failed
            return None
        return value if ok else None

    def cancel(self) -> None:
        """Stop the child if it still runs; its result is not wanted."""
        if self._done:
            return
        self._done = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.waitpid(self._pid, 0)
        os.close(self._reader)


def _child(writer: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Run `fn`, send (ok, value) and leave without running the parent's exit handlers."""
    code = 0
    try:
        try:
            payload = pickle.dumps((True, fn(*args)), pickle.HIGHEST_PROTOCOL)
        except BaseException:  # the parent does the work again and meets the error itself
            payload = pickle.dumps((False, None))
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(payload)
    except BaseException:
        code = 1
    finally:
        _flush_std_streams()
        os._exit(code)


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed or detached: nothing to write
            stream.flush()
