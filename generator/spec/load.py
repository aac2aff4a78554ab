"""Reading one spec file: bytes → JSON-like data, with clear errors and a parse cache.

YAML is read with PyYAML's safe loader (the C one when available) with the YAML 1.2 core
schema's resolution (`yaml12`: `no` is a string, there are no dates), faster and only once:
libyaml composes the node tree
(with the implicit-tag resolution memoised), a tight loop constructs the plain str/map/seq
nodes and hands every other tag to PyYAML's own `SafeConstructor`, and the node tree is kept
so the source map is built from the same parse, lazily, when a message needs a location.
`bench/yaml_equality.py` proves the data equal to `yaml.load(..., Yaml12Loader)` (PyYAML's
own construction) and, but for documented differences, to ruamel.yaml's 1.2 reading over the
whole corpus. Parsing runs with the cyclic garbage collector paused: it only allocates
acyclic data, and collections over the growing tree were most of PyYAML's time. Big files
are cached by content hash: the Stripe YAML takes ~0.6 s to parse and 0.05 s to unpickle.
A big YAML file with a path is read block by block instead (`load_yaml_blocks`), each block
cached by its own text, so an edited file re-parses only the blocks the edit touched.
Most whole files are read by rapidyaml (`fast_yaml`); PyYAML's reader is in `pyyaml_load`,
imported only when it reads something.
"""

from __future__ import annotations

import codecs
import functools
import gc
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from generator.errors import ApiforgeError, Problem
from generator.spec.fast_yaml import RymlTree, load_fast

# `hashlib` and `pickle` are imported where they are used: a cold lint needs neither, and
# importing them was ~45M instructions (~0.01 s) of every run

if TYPE_CHECKING:
    from generator.spec.pyyaml_load import YamlTree

# moved to `pyyaml_load` (imported only when PyYAML reads something); still found here
_MOVED = frozenset({"load_yaml", "load_yaml_all", "YamlTree", "Yaml12Loader", "_YamlLoader"})


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        from generator.spec import pyyaml_load

        return getattr(pyyaml_load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


T = TypeVar("T")
MAX_SPEC_BYTES = int(os.environ.get("APIFORGE_MAX_SPEC_BYTES", 32 * 1024 * 1024))
CACHE_MIN_BYTES = 256 * 1024  # smaller files parse faster than a cache lookup pays off
_PRUNE_EVERY_SECONDS = 3600
# whether a big file's parse (a YAML one block by block) and source map go through the cache:
# what a regeneration after an edit reads back fastest (and what keys its models cache:
# `Document.entry_digest`). `read_whole` turns it off where it does not pay (`lint`)
_CACHED_READS: ContextVar[bool] = ContextVar("cached_reads", default=True)
_CACHE_VERSION = "2"  # 2: YAML 1.2 core schema (1: PyYAML's 1.1 resolution)


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


@dataclass(eq=False)
class Document:
    """One parsed file. `name` is how messages show it (the path as given)."""

    name: str
    path: Path | None  # None for stdin
    text: bytes
    data: Any
    is_json: bool
    _source_map: Any = field(default=None, repr=False)
    # a forked child making the source map meanwhile (`sourcemap.LocatedAhead`), until asked
    _ahead: Any = field(default=None, repr=False)
    # the YAML node tree this document was constructed from (see `YamlTree`), kept until the
    # source map is built from it; None for JSON, cached parses and after that
    _yaml_tree: Any = field(default=None, repr=False)
    # for a big YAML file read block by block (see `BlockLayout`), where its blocks are: the
    # source map is put together from the blocks' own maps instead of `_yaml_tree`
    _blocks: BlockLayout | None = field(default=None, repr=False)
    # whether the cache may serve and keep its source map (False: read whole, `read_whole`)
    cached: bool = True

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of the text, the key of what is cached about it: made when first asked
        (a cold lint never asks; it is ~0.03 s of a 4 MB file)."""
        import hashlib

        return hashlib.sha256(self.text).hexdigest()

    def entry_digest(self, token: str) -> str | None:
        """SHA-256 of the text of the top-level entry `token` (`components`, ...), when this
        document was read block by block: that text alone made its data (`data[token]`), so
        an equal digest means equal data. None for a document read whole, or no such entry."""
        import hashlib

        layout = self._blocks
        entry = layout.root.get(token) if layout is not None else None
        if layout is None or entry is None:
            return None
        return hashlib.sha256(layout.body[_start(entry) : _end(entry)]).hexdigest()

    def entry_blocks(self, token: str | None = None) -> dict[str, tuple[bytes, memoryview]] | None:
        """(SHA-256, text) of each top-level entry (`token` None), or of each entry of the
        top-level entry `token` (`paths`), by pointer token, when this document was read
        block by block and split there: as with `entry_digest`, equal text means equal data.
        None for a document read whole, or an entry not split. (The texts are views of the
        document's: not copied.)"""
        layout = self._blocks
        if layout is None:
            return None
        level = layout.root
        if token is not None:
            entry = level.get(token)
            if not isinstance(entry, BlockSplit):
                return None
            level = entry.children
        body = memoryview(layout.body)
        return {t: (node.key, body[_start(node) : _end(node)]) for t, node in level.items()}

    def locate_ahead(self) -> None:
        """Have the source map made by a forked child while this process goes on, when that
        pays (a big JSON text, no cache: `sourcemap.LocatedAhead`); `locate_all` asks it."""
        from generator.spec.sourcemap import LocatedAhead

        if self._ahead is None and self._source_map is None:
            self._ahead = LocatedAhead.start(self)

    def locate_all(self, pointers: list[str]) -> list[tuple[int, int]]:
        """`locate` of each pointer, answered by the child `locate_ahead` started if it can."""
        ahead, self._ahead = self._ahead, None
        found = ahead.locate_all(pointers) if ahead is not None else None
        return found if found is not None else [self.locate(p) for p in pointers]

    def locate(self, pointer: str) -> tuple[int, int]:
        """1-based line and column of the node at `pointer` (or its nearest ancestor)."""
        from generator.spec.sourcemap import SourceMap

        if self._ahead is not None:  # asked one by one: the map is made here after all
            self._ahead.cancel()
            self._ahead = None
        if self._source_map is None:
            self._source_map = SourceMap.for_document(self)
        result: tuple[int, int] = self._source_map.locate(pointer)
        return result

    def offset(self, pointer: str, line_starts: list[int]) -> int | None:
        """The character offset of the node at `pointer` itself (None: no such node), for
        callers that edit the text; `line_starts` are the text's (see `SourceMap.offset`)."""
        from generator.spec.sourcemap import SourceMap

        if self._source_map is None:
            self._source_map = SourceMap.for_document(self)
        result: int | None = self._source_map.offset(pointer, line_starts)
        return result


def read_source(source: str) -> tuple[str, Path | None, bytes]:
    """Read a spec path (or "-" for stdin, or `REF:PATH` from git: `gitref`), refusing what
    cannot be a spec."""
    if source == "-":
        return "<stdin>", None, sys.stdin.buffer.read(MAX_SPEC_BYTES + 1)
    path = Path(source)
    if not path.exists():
        from generator.spec import gitref

        text = gitref.read(source)
        if text is not None:
            return source, None, text
        raise ApiforgeError(Problem(f"no such file: {source}"), "check the path to the spec")
    if path.is_dir():
        raise ApiforgeError(
            Problem(f"{source} is a directory"), "point at the spec's root file (e.g. openapi.yaml)"
        )
    size = path.stat().st_size
    if size > MAX_SPEC_BYTES:
        raise ApiforgeError(
            Problem(
                f"{source} is {size / 1e6:.1f} MB, over the {MAX_SPEC_BYTES / 1e6:.0f} MB limit"
            ),
            "split the spec into files joined by $ref, or raise APIFORGE_MAX_SPEC_BYTES",
        )
    try:
        return source, path, path.read_bytes()
    except OSError as exc:
        raise ApiforgeError(Problem(f"cannot read {source}: {exc.strerror}")) from None


def parse_document(name: str, path: Path | None, text: bytes) -> Document:
    if len(text) > MAX_SPEC_BYTES:
        raise ApiforgeError(Problem(f"{name} is over the {MAX_SPEC_BYTES / 1e6:.0f} MB limit"))
    if not text.strip():
        raise ApiforgeError(
            Problem("the file is empty", file=name),
            "an OpenAPI document starts with `openapi: 3.1.0`",
        )
    if b"\x00" in text:
        raise ApiforgeError(
            Problem("the file is binary, not YAML or JSON (it contains NUL bytes)", file=name)
        )
    try:
        decoded = text.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = text[: exc.start].count(b"\n") + 1
        raise ApiforgeError(
            Problem(f"not UTF-8 text (byte {exc.start})", file=name, line=line),
            "save the spec as UTF-8",
        ) from None
    is_json = decoded.lstrip().startswith(("{", "["))
    body = text[3:] if text.startswith(codecs.BOM_UTF8) else text
    cached = len(text) >= CACHE_MIN_BYTES and cache_dir() is not None
    data = blocks = None
    tree: YamlTree | RymlTree | None = None
    whole = cached and not _CACHED_READS.get()  # (`read_whole`)
    if whole:
        if is_json:
            data = _parse_json(name, decoded)
        else:
            fast = _read_fast(decoded, body)
            if fast is not None:
                data, tree = fast
        cached = data is None  # what PyYAML reads: cached, as below
    digest = ""
    if cached:
        import hashlib

        digest = hashlib.sha256(text).hexdigest()
        data = cache_get("parse" + _CACHE_VERSION, digest)
    if data is None:
        if is_json:
            data = _parse_json(name, decoded)
        else:
            loaded = _load_by_blocks(text, digest, path) if cached else None
            if loaded is not None:  # the blocks' cache serves this file, whole or changed
                data, blocks = loaded
            else:  # (rapidyaml refused it already when read whole)
                data, tree = _parse_yaml_tree(name, decoded, body, fast=not whole)
        if cached and blocks is None:
            cache_put("parse" + _CACHE_VERSION, digest, data)
    doc = Document(
        name=name,
        path=path,
        text=text,
        data=data,
        is_json=is_json,
        cached=cached,
        _yaml_tree=tree,
        _blocks=blocks,
    )
    if digest:
        doc.digest = digest  # made already: not again
    return doc


@contextmanager
def read_whole() -> Iterator[None]:
    """Documents `json` or rapidyaml read are read whole, with no cache: reading them again
    is as fast as reading a cache (Stripe's 4 MB YAML ~0.1 s), and filling it on a first
    read cost more than the read (its blocks read by PyYAML, its whole source map made:
    Stripe's first lint 1.1 s instead of 0.35, GitHub's 0.8 instead of 0.45). What PyYAML
    must read still goes through the cache."""
    token = _CACHED_READS.set(False)
    try:
        yield
    finally:
        _CACHED_READS.reset(token)


def load_document(source: str) -> Document:
    name, path, text = read_source(source)
    return parse_document(name, path, text)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building big, acyclic data (a parsed spec,
    its IR, a source map): its collections re-scan everything built so far, again and again,
    and were most of a big spec's load time (4 of 5 s for the Stripe YAML).

    On the way out, what was built is moved straight to the oldest generation (a freeze and
    unfreeze: nothing is scanned, nothing is left out of later full collections), so the
    young-generation collections that follow do not scan it all again either. Nesting is
    fine; the collector's previous state returns."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # leave someone else's frozen objects frozen
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _parse_json(name: str, text: str) -> Any:
    try:
        with gc_paused():
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiforgeError(
            Problem(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno, column=exc.colno),
            "fix the syntax at that position",
        ) from None
    except RecursionError:
        raise ApiforgeError(Problem("JSON nested too deeply to read", file=name)) from None


def _read_fast(text: str, body: bytes | None) -> tuple[Any, RymlTree] | None:
    """rapidyaml's reading of a whole YAML text (`fast_yaml.load_fast`), unless
    `APIFORGE_YAML_READER=pyyaml`; None when PyYAML must read it."""
    if os.environ.get("APIFORGE_YAML_READER", "") == "pyyaml":
        return None
    with gc_paused():
        return load_fast(text, body)


def _parse_yaml(name: str, text: str) -> Any:
    return _parse_yaml_tree(name, text)[0]


def _parse_yaml_tree(
    name: str, text: str, body: bytes | None = None, *, fast: bool = True
) -> tuple[Any, YamlTree | RymlTree | None]:
    """A whole YAML document: rapidyaml when it takes the text (`fast_yaml`), else PyYAML.
    `body`: the text in UTF-8 when the caller has it (no byte order mark). `fast=False`:
    rapidyaml was asked already and refused it."""
    read = _read_fast(text, body) if fast else None
    if read is not None:
        return read
    import yaml

    from generator.spec.pyyaml_load import load_yaml

    try:
        with gc_paused():
            return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise ApiforgeError(
            Problem(
                f"invalid YAML: {what}",
                file=name,
                line=mark.line + 1 if mark else 0,
                column=mark.column + 1 if mark else 0,
            ),
            "fix the syntax at that position",
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ApiforgeError(
            Problem(
                f"invalid YAML: {exc.reason} (character {exc.character!r})",
                file=name,
                line=line,
                column=column,
            ),
            "remove or escape the control character",
        ) from None
    except yaml.YAMLError as exc:
        raise ApiforgeError(Problem(f"invalid YAML: {exc}", file=name)) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a timestamp like 25:00:00
        raise ApiforgeError(
            Problem(f"invalid YAML value: {exc}", file=name),
            "quote the value so YAML reads it as a string",
        ) from None
    except RecursionError:
        raise ApiforgeError(Problem("YAML nested too deeply to read", file=name)) from None


# --- Big YAML files block by block: a changed line re-parses only its block ---------------
#
# A big spec is mostly a mapping of mappings (`paths:`, `components:` → `schemas:`, ...), so
# its text splits at the lines that begin an entry: the top-level keys at column 0 and, in an
# entry bigger than `BLOCK_SPLIT_BYTES` whose first line is `key:` alone, the keys of the
# mapping below it (all at one column), recursively. Each block is parsed on its own by
# `load_yaml` and cached by the hash of its text alone (marks are relative to its first line,
# so a line inserted above it changes nothing), in one file per spec path; after an edit only
# the blocks whose text changed are parsed again. The data is put together from the blocks'
# (key, value) pairs, the source map from the blocks' own maps (`sourcemap._BlockIndex`).
#
# Why that is exactly the whole parse. A block is accepted when, parsed on its own, it is a
# mapping of exactly one entry whose key is a scalar (not `<<` or `=`) on its first line at
# its column c; a header (`key:` and the blank and comment lines after it) must also have an
# empty plain value. Then, by induction over the blocks in order: if every block before this
# one parsed on its own, the whole parse reaches this block's first line in block context and
# outside any scalar (an unclosed quote or bracket is an error at the end of a block read on
# its own), with the mapping at column c open, or the header's value to come. The block's
# tokens are then the same in both parses: they depend only on the indentation levels at c
# and deeper, the same in both, and a token left of c would end the block's mapping, which
# read on its own is an error ("expected '<document start>'"). The next block's key, at a
# column <= c, ends whatever plain or block scalar is open, as the end of the text does.
# What crosses blocks is checked on the whole text: no document marker or directive (`---`,
# `...`, `%` at the start of a line), no line break libyaml counts that `\n` does not (a lone
# CR, NEL, LS, PS: marks must be on the same lines), no anchor name defined twice and no alias
# named like an anchor (names taken from the text, a superset of the real ones: so no alias
# reaches into another block and no duplicate anchor goes unnoticed), and distinct pointer
# tokens among a mapping's split keys (the blocks' maps never answer for the same pointer).
# Keys equal as Python values (`1`, `1.0`) are put together as the whole parse does: the
# first key kept, the last value. Anything else falls back to the whole parse, which also
# gives the errors. `bench/yaml_equality.py --blocks` checks this on every YAML file of the
# corpus, split small, and on random one-line edits of its big files.

BLOCK_SPLIT_BYTES = 16 * 1024  # an entry bigger than this is split into the entries below it
_BLOCKS_KIND = "yblocks1"  # per file: {block hash: its entry}; see `_BlockReader`

_PLAIN_KEY = rb"[\w$/.](?:[^:\n]|:(?![ \t\r\n]))*?"
_QUOTED_KEY = rb"'(?:[^'\n]|'')*'|\"(?:[^\"\\\n]|\\.)*\""
_NEXT_CONTENT = re.compile(rb"\n[ ]*(?=[^ \r\n#])")  # the next line not blank or a comment
_LINE_AT_0 = re.compile(rb"\n[^ \r\n#]")  # a line at column 0, not blank or a comment
_ANCHOR_NAME = re.compile(rb"[0-9A-Za-z_-]+")  # what libyaml reads after `&` or `*`
# what may follow an anchor's or alias's name (else libyaml fails: "did not find expected
# alphabetic or numeric character"), b"" being the end of the text
_AFTER_NAME = frozenset(
    (b"", b" ", b"\t", b"\r", b"\n", b"?", b":", b",", b"]", b"}", b"%", b"@", b"`")
)


@functools.cache
def _key_lines(column: int) -> re.Pattern[bytes]:
    """A newline, then a line that begins with a simple key at `column` (`key:` and a space
    or the end of the line). Only where blocks may start: parsing decides what they are."""
    return re.compile(
        rb"\n {%d}(?:%s|%s)[ \t]*:(?:[ \t]|\r?$)" % (column, _PLAIN_KEY, _QUOTED_KEY), re.M
    )


@functools.cache
def _header_line(column: int) -> re.Pattern[bytes]:
    """A line that is a key at `column` and nothing else (its value is the lines below)."""
    return re.compile(
        rb" {%d}(?:%s|%s)[ \t]*:(?:[ \t]+#[^\n]*)?[ \t]*\r?$" % (column, _PLAIN_KEY, _QUOTED_KEY),
        re.M,
    )


def _blocks_salt() -> str:
    # PyYAML's version from its dist-info folder: importing it (~0.03 s) for its
    # `__version__` was most of an unchanged regeneration's read, where no block is parsed
    from generator.installed import installed_version

    return f"{_CACHE_VERSION}/{installed_version('yaml', 'PyYAML')}/{BLOCK_SPLIT_BYTES}"


def pointer_token(key: str) -> str:
    """A mapping key as a JSON pointer token."""
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def unescape(token: str) -> str:
    """A JSON pointer token as the mapping key it names (`pointer_token` undone)."""
    return token.replace("~1", "/").replace("~0", "~")


MISSING: Any = object()  # what `node_at` gives for a pointer to nothing


def node_at(data: Any, pointer: str) -> Any:
    """The node at the JSON pointer `pointer` ("" or "/a/0/b") of `data`, or `MISSING`."""
    node = data
    for raw in pointer[1:].split("/") if pointer else ():
        token = unescape(raw)
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node


@dataclass(eq=False, slots=True)
class BlockLeaf:
    """A block parsed on its own: bytes `start:end` of the text (after a BOM), its key's
    pointer token ("" for the blank and comment lines before the first
    key), and its node tree when it was parsed in this process (for its source map)."""

    start: int
    end: int
    key: bytes
    token: str
    tree: YamlTree | None = None
    line: int = -1  # the line it starts, once the source map needs it


@dataclass(eq=False, slots=True)
class BlockSplit:
    """An entry split into its header (`key:`) and the entries of the mapping below it."""

    key: bytes
    header: BlockLeaf
    children: dict[str, BlockLeaf | BlockSplit]  # by pointer token, in order

    @property
    def token(self) -> str:
        return self.header.token


@dataclass(eq=False)
class BlockLayout:
    """Where the blocks of a document read block by block are (for its `SourceMap`)."""

    body: bytes  # the text without its BOM: what `BlockLeaf` offsets are in
    root: dict[str, BlockLeaf | BlockSplit]  # the top-level entries by pointer token
    leaves: list[BlockLeaf]  # every block parsed on its own, in the text's order
    parsed: int = 0  # how many blocks were parsed for this read (the others were cached)
    cache_name: str | None = None  # where the blocks' source maps are cached

    def leaf_text(self, leaf: BlockLeaf) -> str:
        return self.body[leaf.start : leaf.end].decode("utf-8")


def _start(node: BlockLeaf | BlockSplit) -> int:
    return node.header.start if isinstance(node, BlockSplit) else node.start


def _end(node: BlockLeaf | BlockSplit) -> int:
    while isinstance(node, BlockSplit):
        node = next(reversed(node.children.values())) if node.children else node.header
    return node.end


class _Unblockable(Exception):
    """Reading this text block by block is not provably the same as reading it whole."""


def blockable(body: bytes) -> bool:
    """Whether `body` (UTF-8, no BOM) has no line break libyaml counts that `\\n` does not (a
    lone CR, NEL, LS, PS: a block's marks must be on the same lines as in the whole text).
    Document markers and directives are looked for with the top-level keys."""
    for char in ("\x85", "\u2028", "\u2029"):
        encoded = char.encode()
        if encoded[-1:] in body and encoded in body:  # one byte first: `find` is fast for it
            return False
    return b"\r" not in body or body.count(b"\r") == body.count(b"\r\n")


def load_yaml_blocks(
    text: bytes, digest: str, cached: dict[Any, Any] | None = None
) -> tuple[Any, BlockLayout, dict[Any, Any]] | None:
    """`load_yaml(text.decode("utf-8-sig"))[0]`, read block by block, the blocks that have an
    entry in `cached` (what a previous call returned) not parsed again; with the layout and
    the entries to keep. `digest` is the text's own hash (the document's cache key).

    None when the text cannot be read that way: `load_yaml` must read it whole."""
    body = text[3:] if text.startswith(codecs.BOM_UTF8) else text
    reader = _BlockReader(body, cached or {})
    try:
        with gc_paused():
            data, root = reader.root(digest)
    except _Unblockable:
        return None
    except Exception:
        if cached:  # an entry the cache spoiled: read without it
            return load_yaml_blocks(text, digest, None)
        raise
    used = reader.used
    if cached is not None and not reader.parsed and used.keys() == cached.keys():
        used = cached  # nothing new to keep
    return data, BlockLayout(body, root, reader.leaves, reader.parsed), used


def _load_by_blocks(text: bytes, digest: str, path: Path | None) -> tuple[Any, BlockLayout] | None:
    """A big YAML file read block by block, its blocks' cache kept per file."""
    import hashlib

    if path is None or cache_dir() is None:
        return None
    name = hashlib.sha256(f"{_blocks_salt()}\0{path.resolve()}".encode()).hexdigest()
    cached = cache_get(_BLOCKS_KIND, name)
    cached = cached if isinstance(cached, dict) else None
    loaded = load_yaml_blocks(text, digest, cached)
    if loaded is None:
        return None
    data, layout, entries = loaded
    if entries is not cached:
        cache_put(_BLOCKS_KIND, name, entries)
    layout.cache_name = name
    return data, layout


class _BlockReader:
    """One read block by block. Entries, by block hash (the root's by the file's digest):

    - ("L", pickled (key, value), key line, key column, key token, value is empty): a block
      parsed on its own (key line -1: blank and comment lines only);
    - ("S", children's column, header end, children's starts, hashes of header and
      children): an entry split into its header and children (offsets from its start);
    - ("R", end of the lines before the first key, top-level entries' starts, hashes of
      those lines and the entries): the document.

    An entry is only made for a block that passed every check, so a cached one is trusted.
    """

    def __init__(self, body: bytes, cached: dict[Any, Any]) -> None:
        self.body = body
        self.cached = cached
        self.used: dict[Any, Any] = {}
        self.leaves: list[BlockLeaf] = []
        self.parsed = 0  # blocks parsed in this call
        # blocks parsed in this call whose (key, value) is not used yet
        self.fresh: dict[bytes, tuple[Any, Any]] = {}
        self.tags: dict[str, str] = {}  # plain scalars' implicit tags, for all the blocks

    def entry(self, key: Any) -> Any:
        found = self.used.get(key)
        return self.cached.get(key) if found is None else found

    def root(self, digest: str) -> tuple[dict[Any, Any], dict[str, BlockLeaf | BlockSplit]]:
        body = self.body
        root_key = "R" + digest
        entry = self.entry(root_key)
        made = entry is None
        if made:
            if not blockable(body) or _anchors_may_cross(body):
                raise _Unblockable("line breaks or anchors")
            starts = []
            lines = [0] if body[:1] not in b" \r\n#" else []  # at column 0, not comments
            lines += [m.start() + 1 for m in _LINE_AT_0.finditer(body)]
            key_line = _key_lines(0)
            for at in lines:
                if body.startswith((b"---", b"...", b"%"), at):
                    raise _Unblockable("a document marker or directive")
                if (
                    key_line.match(body, at - 1)
                    if at
                    else key_line.match(b"\n" + _first_line(body))
                ):
                    starts.append(at)
            if not starts:
                raise _Unblockable("no top-level key")
            entry = ("R", starts[0], tuple(starts), None)
        _, prefix_end, starts, keys = entry
        new_keys: list[bytes] = []
        if prefix_end:
            prefix, _, _ = self.leaf(0, prefix_end, 0, keys[0] if keys else None, "prefix")
            new_keys.append(prefix.key)
        data: dict[Any, Any] = {}
        children: dict[str, BlockLeaf | BlockSplit] = {}
        ends = (*starts[1:], len(body))
        offset = len(new_keys)
        for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
            node, key, value = self.block(start, end, 0, keys[offset + i] if keys else None)
            if node.token in children:
                raise _Unblockable("two top-level keys alike")
            children[node.token] = node
            new_keys.append(node.key)
            data[key] = value
        self.used[root_key] = ("R", prefix_end, starts, tuple(new_keys))
        return data, children

    def block(
        self, start: int, end: int, column: int, key: bytes | None
    ) -> tuple[BlockLeaf | BlockSplit, Any, Any]:
        import hashlib

        if key is None:
            key = hashlib.sha256(self.body[start:end]).digest()
        entry = self.entry(key)
        if entry is None and end - start > BLOCK_SPLIT_BYTES:
            entry = self.split(start, end, column)
        if entry is None or entry[0] != "S":
            return self.leaf(start, end, column, key, "entry")
        _, inner, header_end, starts, keys = entry
        header, name, _ = self.leaf(
            start, start + header_end, column, keys[0] if keys else None, "header"
        )
        value: dict[Any, Any] = {}
        children: dict[str, BlockLeaf | BlockSplit] = {}
        new_keys = [header.key]
        ends = (*starts[1:], end - start)
        for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
            node, k, v = self.block(start + a, start + b, inner, keys[i + 1] if keys else None)
            if node.token in children:
                raise _Unblockable("two keys alike")
            children[node.token] = node
            new_keys.append(node.key)
            value[k] = v
        self.used[key] = ("S", inner, header_end, starts, tuple(new_keys))
        return BlockSplit(key, header, children), name, value

    def split(self, start: int, end: int, column: int) -> tuple[Any, ...] | None:
        """An entry for splitting the entry at `body[start:end]`, when its first line is a
        `key:` alone and the next lines that are not blank or comments are keys at a column
        right of it (whether that is what they are, parsing them decides)."""
        body = self.body
        newline = body.find(b"\n", start, end)
        if newline == -1 or not _header_line(column).match(body, start, newline):
            return None
        below = _NEXT_CONTENT.search(body, newline, end)
        if below is None:
            return None
        inner = below.end() - below.start() - 1
        if inner <= column:
            return None
        starts = [m.start() + 1 for m in _key_lines(inner).finditer(body, below.start(), end)]
        if not starts or starts[0] != below.start() + 1:
            return None
        return ("S", inner, starts[0] - start, tuple(s - start for s in starts), None)

    def leaf(
        self, start: int, end: int, column: int, key: bytes | None, role: str
    ) -> tuple[BlockLeaf, Any, Any]:
        import hashlib
        import pickle

        body = self.body
        if key is None:
            key = hashlib.sha256(body[start:end]).digest()
        entry = self.entry(key)
        tree = None
        if entry is None or entry[0] != "L":
            entry, tree = self.parse(start, end, key)
        _, payload, line, col, token, empty = entry
        if role == "prefix":
            if line != -1:
                raise _Unblockable("not only blank and comment lines before the first key")
        elif line != 0 or col != column or (role == "header" and not empty):
            raise _Unblockable("not an entry of the mapping")
        fresh = self.fresh.pop(key, None)
        pair = fresh if fresh is not None else pickle.loads(payload)
        self.used[key] = entry
        leaf = BlockLeaf(start, end, key, token, tree)
        self.leaves.append(leaf)
        return leaf, pair[0], pair[1]

    def parse(self, start: int, end: int, key: bytes) -> tuple[tuple[Any, ...], YamlTree | None]:
        import pickle

        from yaml.nodes import MappingNode, ScalarNode

        from generator.spec.pyyaml_load import _MAP, _MERGE, _NULL, _VALUE, load_yaml

        try:
            data, tree = load_yaml(self.body[start:end].decode("utf-8"), self.tags)
        except Exception:  # not UTF-8 or not YAML: the whole parse says what is wrong
            raise _Unblockable("does not parse on its own") from None
        self.parsed += 1
        if tree is None:  # blank and comment lines only
            pair: tuple[Any, Any] = (None, None)
            entry: tuple[Any, ...] = ("L", pickle.dumps(pair), -1, -1, "", False)
            self.fresh[key] = pair
            return entry, None
        root = tree.root
        if root.__class__ is not MappingNode or root.tag != _MAP or not isinstance(data, dict):
            raise _Unblockable("not a mapping")
        entries = tree.entries(root)
        if len(entries) != 1 or len(data) != 1:
            raise _Unblockable("not one entry")
        key_node, value_node = entries[0]
        if key_node.__class__ is not ScalarNode or key_node.tag in (_MERGE, _VALUE):
            raise _Unblockable("not a simple key")
        empty = (
            value_node.__class__ is ScalarNode
            and value_node.tag == _NULL
            and value_node.value == ""
        )
        pair = next(iter(data.items()))
        try:
            payload = pickle.dumps(pair, protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:  # nested too deeply to cache
            raise _Unblockable("too deep") from None
        mark = key_node.start_mark
        entry = (
            "L",
            payload,
            mark.line,
            mark.column,
            pointer_token(key_node.value),
            empty,
        )
        self.fresh[key] = pair
        return entry, tree


def _first_line(body: bytes) -> bytes:
    """The first line of `body`, without its newline."""
    end = body.find(b"\n")
    return body if end == -1 else body[:end]


def _anchors_may_cross(body: bytes) -> bool:
    """Whether an anchor might be defined twice or used by an alias (so maybe from another
    block), judged by names: wherever `&` or `*` follows a character that cannot end a name
    (where a token can start), the name after it, if what follows the name can. A superset
    of the real anchors and aliases, so False is safe; anchors nothing refers to, `&lt;` and
    `**bold**` in descriptions pass."""
    anchors = anchor_names(body, b"&")
    if not anchors:
        return False
    return len(set(anchors)) < len(anchors) or not set(anchors).isdisjoint(anchor_names(body, b"*"))


def anchor_names(body: bytes, sign: bytes) -> list[bytes]:
    """The anchor (`sign` `&`) or alias (`*`) names written in a YAML text, in order."""
    found = []
    at = body.find(sign)
    while at != -1:
        match = _ANCHOR_NAME.match(body, at + 1)
        if (
            match is not None
            and (at == 0 or not _ANCHOR_NAME.match(body, at - 1, at))
            and body[match.end() : match.end() + 1] in _AFTER_NAME
        ):
            found.append(match.group())
        at = body.find(sign, at + 1)
    return found
