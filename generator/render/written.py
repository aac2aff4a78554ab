"""What the last run wrote into an output tree (`WrittenIndex`), as git's index knows a work
tree: each generated file's output key (`writer._output_key`: everything its final bytes are
made from) with its size and modification time once written. A file still at that size and
time has those bytes, so a regeneration neither reads it from the cache, renders it nor
compares it with the disk: on Stripe ~300 cache reads and ~300 comparisons per tree.

Like git, only a file whose modification time was settled when the index was recorded is
trusted: one modified within `SETTLED_NS` of that look (or since) is read and compared."""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

_KIND = "written2"
# how long after a modification time a file counts as settled: beyond any file system's
# timestamp granularity (2 s on FAT), so an edit in the same tick as a look is never missed
SETTLED_NS = 2_000_000_000

Stamp = tuple[int, int]  # a file's size and modification time (ns)


def stamp(stat: os.stat_result) -> Stamp:
    return stat.st_size, stat.st_mtime_ns


def seen_settled(stat: os.stat_result, seen: Stamp, looked: int) -> bool:
    """Whether a file now at `stat` is as a look at time `looked` (ns) saw it (`seen`), and
    was already settled then: what was read of it then is what it holds (git's rule for its
    index). A file modified within `SETTLED_NS` of the look may have changed in the same
    clock tick, unseen."""
    return stamp(stat) == seen and stat.st_mtime_ns < looked - SETTLED_NS


class WrittenIndex:
    """The index of one output directory (kept in the cache; empty when caching is off),
    read when first asked."""

    def __init__(self, out_dir: Path) -> None:
        from generator.spec.load import cache_dir

        self.out = out_dir
        self.store: str | None = None
        if cache_dir() is not None:
            material = f"{_KIND}\0{out_dir.resolve()}"
            self.store = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    @functools.cached_property
    def _last(self) -> tuple[int, dict[str, tuple[str, Stamp]]]:
        """When the last run looked, and each file's (output key, stamp) then."""
        from generator.spec.load import cache_get

        found = cache_get(_KIND, self.store) if self.store is not None else None
        if (
            isinstance(found, tuple)
            and len(found) == 2
            and isinstance(found[0], int)
            and isinstance(found[1], dict)
        ):
            return found
        return 0, {}

    def unchanged(self, path: str, key: str) -> bool:
        """Whether the file at `path` has the bytes `key` names: the index says so, and the
        file is as the last run saw it, settled before that look."""
        looked, entries = self._last
        entry = entries.get(path)
        if entry is None or entry[0] != key:
            return False
        try:
            return seen_settled(os.stat(self.out / path), entry[1], looked)
        except OSError:
            return False

    def record(self, keys: Mapping[str, str], on_disk: Iterable[str]) -> None:
        """Once the tree is written: each file of `on_disk` (which has the bytes its key in
        `keys` names) as it is now. The index is replaced: it holds this run's files only."""
        if self.store is None:
            return
        from generator.spec.load import cache_put

        looked = time.time_ns()  # (before the stats: a file modified meanwhile is not settled)
        entries: dict[str, tuple[str, Stamp]] = {}
        for path in on_disk:
            key = keys.get(path)
            if key is None:
                continue
            try:
                entries[path] = (key, stamp(os.stat(self.out / path)))
            except OSError:
                continue
        cache_put(_KIND, self.store, (looked, entries))


__all__ = ["SETTLED_NS", "Stamp", "WrittenIndex", "seen_settled", "stamp"]
