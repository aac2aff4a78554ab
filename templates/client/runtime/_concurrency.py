"""Optimistic concurrency: read, change, write with `If-Match`, and again on 412.

Public API:

- `read_modify_write(read, apply, write, *, max_attempts=5) -> R`
  - `read() -> (value, etag)`: fetch the current representation and its ETag;
  - `apply(value) -> change`: compute the update from what was read (it is called again on
    every attempt, with fresh data, so it must not depend on a stale copy);
  - `write(change, etag) -> R`: send the update with `If-Match: etag`.
  On `PreconditionFailed` (412: someone else wrote in between) it starts again from `read`,
  at most `max_attempts` times in all, then re-raises the last 412. A read that returns no
  ETag raises `APIError`: without one the write could not be conditional.
- `async_read_modify_write(read, apply, write, *, max_attempts=5) -> R`: the same with async
  `read` and `write` (`apply` stays a plain function).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from ._errors import APIError, PreconditionFailed

V = TypeVar("V")
C = TypeVar("C")
R = TypeVar("R")

DEFAULT_MAX_ATTEMPTS = 5


def _require_etag(etag: str | None) -> str:
    if not etag:
        raise APIError("the read returned no ETag, so the write cannot use If-Match")
    return etag


def _check_attempts(max_attempts: int) -> None:
    if max_attempts < 1:
        raise ValueError("max_attempts must be >= 1")


def read_modify_write(
    read: Callable[[], tuple[V, str | None]],
    apply: Callable[[V], C],
    write: Callable[[C, str], R],
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> R:
    """Apply `apply` to the current value and write it back conditionally (see module doc)."""
    _check_attempts(max_attempts)
    for attempt in range(1, max_attempts + 1):
        value, etag = read()
        change = apply(value)
        try:
            return write(change, _require_etag(etag))
        except PreconditionFailed:
            if attempt == max_attempts:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


async def async_read_modify_write(
    read: Callable[[], Awaitable[tuple[V, str | None]]],
    apply: Callable[[V], C],
    write: Callable[[C, str], Awaitable[R]],
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> R:
    """Async `read_modify_write`."""
    _check_attempts(max_attempts)
    for attempt in range(1, max_attempts + 1):
        value, etag = await read()
        change = apply(value)
        try:
            return await write(change, _require_etag(etag))
        except PreconditionFailed:
            if attempt == max_attempts:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
