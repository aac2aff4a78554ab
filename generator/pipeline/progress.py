"""What a long `apiforge generate` shows while it runs (on a terminal, or piped as in CI):
its stages and counts."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import IO


class Progress:
    """Stages and counts on `stream` (stderr), one line per stage, once the run has taken
    longer than `delay` seconds (`APIFORGE_PROGRESS_DELAY`; default 1 on a terminal, 2
    otherwise, so CI logs show what a long run is doing); a quick run sees nothing, and
    `APIFORGE_NO_PROGRESS=1` (or `--quiet`) turns it off."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        enabled: bool | None = None,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            terminal = self.stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
        if enabled is None:
            enabled = not os.environ.get("APIFORGE_NO_PROGRESS")
        self.enabled = enabled
        if delay is None:
            default = 1.0 if terminal else 2.0
            try:
                delay = float(os.environ.get("APIFORGE_PROGRESS_DELAY", default))
            except ValueError:
                delay = default
        self.delay = delay
        self.clock = clock
        self.start = clock()
        self.shown = False  # whether anything was printed yet
        self._current: str | None = None
        self._printed: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if self.enabled:
            self._timer = threading.Timer(delay, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def stage(self, text: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._current = text
        if self.clock() - self.start >= self.delay:
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            text = self._current
            if text is None or text == self._printed:
                return
            self._printed = text
            self.shown = True
            elapsed = self.clock() - self.start
            try:
                self.stream.write(f"apiforge: {text} ({elapsed:.1f}s)\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def finish(self, text: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.enabled and self.shown:
            with self._lock:
                self._current = None
            try:
                self.stream.write(f"apiforge: {text} in {self.clock() - self.start:.1f}s\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass
