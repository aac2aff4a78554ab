"""What the last run wrote into an output tree (`WrittenIndex`), as git's index knows a work
tree: each generated file's output key (`writer._output_key`: everything its final bytes are
made from) with its size and modification time once written. A file still at that size and
time has those bytes, so a regeneration neither reads it from the cache, renders it nor
compares it with the disk: on Stripe ~300 cache reads and ~300 comparisons per tree.

Like git, only a file whose modification time was settled when the index was recorded is
trusted: one modified within `SETTLED_NS` of that look (or since) is read and compared."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

_KIND = "written1"
# how long after a modification time a file counts as settled: beyond any file system's
# timestamp granularity (2 s on FAT), so an edit in the same tick as a look is never missed
SETTLED_NS = 2_000_000_000


class WrittenIndex:
    """The index of one output directory (kept in the cache; empty when caching is off)."""

    def __init__(self, out_dir: Path) -> None:
        from generator.spec.load import cache_dir, cache_get

        self.out = out_dir
        self.store: str | None = None
        self.entries: dict[str, tuple[str, int, int]] = {}  # path → (key, size, mtime_ns)
        self.trusted_before = 0  # modification times before this were settled at the look
        if cache_dir() is None:
            return
        material = f"{_KIND}\0{out_dir.resolve()}"
        self.store = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
        found = cache_get(_KIND, self.store)
        if (
            isinstance(found, tuple)
            and len(found) == 2
            and isinstance(found[0], int)
            and isinstance(found[1], dict)
        ):
            self.trusted_before, self.entries = found[0] - SETTLED_NS, found[1]

    def unchanged(self, path: str, key: str) -> bool:
        """Whether the file at `path` has the bytes `key` names: the index says so, and the
        file is at the size and modification time it had then, settled before that look."""
        entry = self.entries.get(path)
        if entry is None or entry[0] != key:
            return False
        try:
            stat = os.stat(self.out / path)
        except OSError:
            return False
        return (
            stat.st_size == entry[1]
            and stat.st_mtime_ns == entry[2]
            and stat.st_mtime_ns < self.trusted_before
        )

    def record(self, keys: Mapping[str, str], on_disk: Iterable[str]) -> None:
        """Once the tree is written: each file of `on_disk` (which has the bytes its key in
        `keys` names) as it is now. The index is replaced: it holds this run's files only."""
        if self.store is None:
            return
        from generator.spec.load import cache_put

        looked = time.time_ns()  # (before the stats: a file modified meanwhile is not settled)
        entries: dict[str, tuple[str, int, int]] = {}
        for path in on_disk:
            key = keys.get(path)
            if key is None:
                continue
            try:
                stat = os.stat(self.out / path)
            except OSError:
                continue
            entries[path] = (key, stat.st_size, stat.st_mtime_ns)
        cache_put(_KIND, self.store, (looked, entries))


__all__ = ["SETTLED_NS", "WrittenIndex"]
