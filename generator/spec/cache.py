"""The on-disk cache every stage shares: content-addressed entries by kind and digest under
`cache_dir()` (`APIFORGE_CACHE_DIR`, off with `APIFORGE_NO_CACHE`), kept under a size limit
by `prune_cache`, and `remembered` for a value kept both in memory and on disk."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

from generator.spec.gc_pause import gc_paused

T = TypeVar("T")
_PRUNE_EVERY_SECONDS = 3600


def cache_dir() -> Path | None:
    """Where parsed specs and source maps are kept, or None when caching is off."""
    if os.environ.get("APIFORGE_NO_CACHE"):
        return None
    base = os.environ.get("APIFORGE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "apiforge"


def cache_get(kind: str, digest: str) -> Any | None:
    import pickle

    root = cache_dir()
    if root is None:
        return None
    path = root / kind / f"{digest}.pickle"
    try:
        with open(path, "rb") as fh, gc_paused():
            value = pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
        return None
    mark_used(path)
    return value


def mark_used(path: Path) -> None:
    """A cache entry's modification time is its last use: `prune_cache` keeps the recent."""
    with suppress(OSError):
        os.utime(path)


def cache_has(kind: str, digest: str) -> bool:
    """Whether `cache_get(kind, digest)` would find an entry (without reading it)."""
    root = cache_dir()
    return root is not None and (root / kind / f"{digest}.pickle").exists()


def cache_put(kind: str, digest: str, value: Any) -> None:
    import pickle

    root = cache_dir()
    if root is None:
        return
    folder = root / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{digest}.pickle")
    except OSError:
        pass  # a cache that cannot be written is only slower


def remembered(
    memo: dict[str, T], kind: str, key: str, of: type[T], make: Callable[[], T | None]
) -> T | None:
    """`memo[key]`, else the disk cache's entry `kind`/`key` (when it is an `of`), else
    `make()` — kept in both (None, "cannot be made", is not kept)."""
    known = memo.get(key)
    if known is not None:
        return known
    hit = cache_get(kind, key)
    if isinstance(hit, of):
        memo[key] = hit
        return hit
    made = make()
    if made is not None:
        cache_put(kind, key, made)
        memo[key] = made
    return made


def cache_limit() -> int:
    """The most bytes the cache may hold (`APIFORGE_CACHE_MAX_MB`, default 512)."""
    try:
        return max(0, int(float(os.environ.get("APIFORGE_CACHE_MAX_MB", "512")) * 1024 * 1024))
    except ValueError:
        return 512 * 1024 * 1024


def prune_cache(*, force: bool = False) -> None:
    """Keep the cache under `cache_limit()`: every entry is content-addressed, so an edited spec
    leaves the old entries behind (about 8 MB per regeneration of Stripe). When the total is
    over the limit, the least recently used files go (a hit refreshes a file's modification
    time) until it is under 80% of it; temporary files a killed writer left behind go too.
    Looks at most once an hour (`<cache>/.pruned`), unless `force`. Another process reading
    a file being removed still reads it whole (POSIX), and a missing entry is only a miss."""
    root = cache_dir()
    if root is None or not root.is_dir():
        return
    stamp = root / ".pruned"
    now = time.time()
    with suppress(FileNotFoundError):  # no stamp yet: look now
        if not force and now - stamp.stat().st_mtime < _PRUNE_EVERY_SECONDS:
            return
    with suppress(OSError):
        stamp.touch()
    entries: list[tuple[float, int, str]] = []
    for folder, folders, names in os.walk(root):
        if folder == str(root) and "mock" in folders:
            folders.remove("mock")  # `apiforge mock`'s projects: whole, removed when stale
        for name in names:
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            if name.endswith(".tmp") and now - info.st_mtime > _PRUNE_EVERY_SECONDS:
                with suppress(OSError):
                    os.remove(path)
            elif path != str(stamp):
                entries.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in entries)
    limit = cache_limit()
    if total <= limit:
        return
    for _, size, path in sorted(entries):
        if total <= limit * 0.8:
            break
        with suppress(OSError):
            os.remove(path)
            total -= size
