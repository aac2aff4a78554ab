"""Warnings said once per change of the spec: a warning said on an earlier run for the same
spec content is not said again (the command ends with `N warnings as last time; -v to list`).
What was said is kept in the cache, keyed by the digest of every file of the spec; `-v`, or
`APIFORGE_REPEAT_WARNINGS=1`, says every warning every time."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable

_KIND = "warned1"


class Repeats:
    """The warnings of one command run, against what was said for the same spec before."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.before: set[str] = set()
        self.said: set[str] = set()
        self.repeated = 0

    def is_repeat(self, text: str) -> bool:
        """Whether `text`, a warning about the spec loaded last, was said on an earlier run
        for the same spec content (it is remembered either way)."""
        key = _spec_key()
        if key is None or os.environ.get("APIFORGE_REPEAT_WARNINGS"):
            return False
        if key != self.key:
            from generator.spec.cache import cache_get

            self.finish_key()
            self.key = key
            found = cache_get(_KIND, key)
            self.before = found if isinstance(found, set) else set()
        self.said.add(text)
        if text in self.before:
            self.repeated += 1
            return True
        return False

    def finish_key(self) -> None:
        if self.key is not None and not self.said <= self.before:
            from generator.spec.cache import cache_put

            cache_put(_KIND, self.key, self.before | self.said)
        self.key, self.before, self.said = None, set(), set()

    def finish(self, say: Callable[[str], None]) -> None:
        """Remember what was said; say how many warnings were held back."""
        self.finish_key()
        if self.repeated:
            plural = "s" if self.repeated != 1 else ""
            say(f"{self.repeated} warning{plural} as last time; -v to list")
        self.repeated = 0


def _spec_key() -> str | None:
    """The digest of every file of the spec loaded last, or None when there is none."""
    from generator.spec.located import _last

    if not _last:
        return None
    digests = sorted(f"{d.name}\0{d.digest}" for d in _last[0].documents)
    return hashlib.sha256("\0".join(digests).encode()).hexdigest()
