"""Warnings that name the spec node they are about, as `file:line:column (#pointer)`.

Rendering happens after loading, from the IR, which records `Where` (file and JSON pointer)
but not lines: lines come from the source map of the last spec `load_spec` read, built only
when a warning is actually given. A node of a file that spec did not read (a plan built from
a hand-made `Api`) is named by file and pointer alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from generator.errors import Problem
from generator.ir import Where
from generator.log import logger

if TYPE_CHECKING:
    import logging

    from generator.spec.refs import Resolver

_WARNING = 30  # logging.WARNING (`logging` is imported only when something is said)
_last: list[Resolver] = []  # the resolver of the spec loaded last (one at most)
_said: set[str] = set()  # the warnings given since then: a plan made twice says each once
# what `recorded()` collects, per thread: (where or None, level, message)
Said = tuple[Where | None, int, str]
_recording = threading.local()


def remember(resolver: Resolver) -> None:
    """Locate later warnings in the files `resolver` read (`load_spec` calls this)."""
    _last[:] = [resolver]
    _said.clear()


def problem_at(where: Where, message: str) -> Problem:
    """`message` about the node at `where`, with its line when the loaded spec has the file."""
    for resolver in _last:
        if any(doc.name == where.file for doc in resolver.documents):
            try:
                return resolver.problem(message, where)
            except Exception:  # a pointer the source map cannot follow: file and pointer only
                break
    return Problem(message, file=where.file, pointer=where.pointer)


def warn_at(where: Where, message: str) -> None:
    """Say `message` as a warning that names `where` (file:line:column and pointer), once
    per loaded spec."""
    recorder: list[Said] | None = getattr(_recording, "said", None)
    if recorder is not None:
        recorder.append((where, _WARNING, message))
        return
    text = problem_at(where, message).render()
    if text not in _said:
        _said.add(text)
        logger().warning("warning: %s", text)


def _collect(said: list[Said]) -> Callable[[logging.LogRecord], bool]:
    """A filter for the apiforge logger that takes this thread's records (a plain warning, no
    `Where`) into `said` instead of letting them through."""
    thread = threading.get_ident()

    def take(record: logging.LogRecord) -> bool:
        # another thread's, or an inner `recorded()`'s (its filter, later in the list, takes it)
        if record.thread != thread or getattr(_recording, "said", None) is not said:
            return True
        said.append((None, record.levelno, record.getMessage()))
        return False

    return take


def recording_complete() -> bool:
    """Whether `recorded()` would see every warning: a logger that drops warnings before its
    filters (its level, `logging.disable`) would leave them out of what is kept."""
    log = logger()
    return log.isEnabledFor(_WARNING) and not log.disabled


@contextmanager
def recorded() -> Iterator[list[Said]]:
    """Collect, instead of saying, the warnings this thread gives meanwhile — `warn_at`'s with
    their `Where`, so `replay` looks their lines up again (a plan kept between runs says
    them where the node is now) — for `replay` to say them."""
    said: list[Said] = []
    collect = _collect(said)
    outer = getattr(_recording, "said", None)
    _recording.said = said
    log = logger()
    log.addFilter(collect)
    try:
        yield said
    finally:
        log.removeFilter(collect)
        _recording.said = outer


def replay(said: Sequence[Said]) -> None:
    """Say what `recorded()` collected, as it would have been said."""
    for where, level, message in said:
        if where is not None:
            warn_at(where, message)
        else:
            logger().log(level, "%s", message)


__all__ = ["Said", "problem_at", "recorded", "recording_complete", "remember", "replay", "warn_at"]
