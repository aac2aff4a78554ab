"""The "apiforge" logger: what apiforge cannot support or carry over is said on it as a
warning, never dropped silently (`apiforge` shows it on stderr).

Every module asks `logger()` for it, so `logging` is imported when something first needs it,
not at start-up: a cold lint that warns of nothing does without it (~3 ms). What sets the
logger up (the CLI's handler) is given to `on_first_use` for the same reason.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

NAME = "apiforge"
_setups: list[Callable[[logging.Logger], None]] = []  # to do before its first use


def logger() -> logging.Logger:
    """The "apiforge" logger, set up by what `on_first_use` was given."""
    import logging

    log = logging.getLogger(NAME)
    while _setups:
        _setups.pop(0)(log)
    return log


def on_first_use(setup: Callable[[logging.Logger], None]) -> None:
    """Have `setup` done to the logger before it says anything: now when `logging` is
    imported already (someone may hold the logger), else on the first `logger()`."""
    _setups.append(setup)
    if "logging" in sys.modules:
        logger()


def shutdown() -> None:
    """`logging.shutdown()` (its handlers flushed and closed), if `logging` was imported."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.shutdown()
