"""Building `/openapi.json` when the models nest deeper than Python's default recursion limit.

pydantic derives a model's JSON schema recursively, some 30 to 50 frames per level of nesting:
models nested 30 to 45 levels deep (inline objects in objects, or a long chain of components)
pass Python's default limit of 1,000 frames, and `/openapi.json` — with `/docs` and every tool
that reads it — would answer 500 although the server validates those models fine. The build is
tried again with more room, in steps, up to a bound the thread's C stack still takes; the
limit is restored afterwards (it is process-wide, for the fraction of a second the build takes
once: the document is cached).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Python frames allowed per retry; 60 levels of nesting need under 3,000
_LIMITS = (3_000, 6_000)


def with_room(build: Callable[[], T]) -> T:
    """`build()`, retried with a higher recursion limit when it recurses too deep."""
    try:
        return build()
    except RecursionError:
        pass
    previous = sys.getrecursionlimit()
    try:
        for limit in _LIMITS[:-1]:
            sys.setrecursionlimit(max(previous, limit))
            try:
                return build()
            except RecursionError:
                continue
        sys.setrecursionlimit(max(previous, _LIMITS[-1]))
        return build()
    finally:
        sys.setrecursionlimit(previous)
