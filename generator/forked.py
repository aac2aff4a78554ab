"""Work handed to a forked process, so that it runs on another core while this one goes on.

The child only ever speeds things up: `result()` is None when it failed, died or could not
start, and the caller then does the same work itself, meeting any error exactly where a run
without the child would. So nothing the child raises has to travel back.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """`fn(*args)` running in a forked child (it sees this process's memory as it was at
    the fork: the parsed spec is not copied). Start it with `Forked.start`."""

    def __init__(self, process: Any, conn: Any) -> None:
        self._process = process
        self._conn = conn
        self._done = False

    @classmethod
    def start(cls, fn: Callable[..., T], *args: Any) -> Forked[T] | None:
        """None when this platform cannot fork (the caller does the work itself)."""
        if "fork" not in multiprocessing.get_all_start_methods():
            return None
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
        process.start()
        child.close()
        return cls(process, parent)

    def result(self) -> T | None:
        """Wait for the child: its return value, or None when it failed."""
        if self._done:
            return None
        self._done = True
        try:
            ok, value = self._conn.recv()
        except (EOFError, OSError):
            ok, value = False, None
        finally:
            self._conn.close()
            self._process.join()
        return value if ok else None

    def cancel(self) -> None:
        """Stop the child if it still runs; its result is not wanted."""
        if self._done:
            return
        self._done = True
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._conn.close()


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send((True, fn(*args)))
    except BaseException:  # the parent does the work again and meets the error itself
        conn.send((False, None))
    finally:
        conn.close()
