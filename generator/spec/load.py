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
A big YAML file with a path is read block by block instead (`blocks.load_yaml_blocks`), each
block cached by its own text, so an edited file re-parses only the blocks the edit touched.
Most whole files are read by rapidyaml (`fast_yaml`); PyYAML's reader is in `pyyaml_load`,
imported only when it reads something. The cache, JSON pointers and the block reader have
modules of their own (`cache`, `pointers`, `blocks`); their names are still found here.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.errors import ApiforgeError, Problem
from generator.spec import blocks
from generator.spec.blocks import BlockLayout as BlockLayout
from generator.spec.blocks import BlockLeaf as BlockLeaf
from generator.spec.blocks import BlockSplit as BlockSplit
from generator.spec.blocks import anchor_names as anchor_names
from generator.spec.blocks import blockable as blockable
from generator.spec.blocks import load_yaml_blocks as load_yaml_blocks
from generator.spec.blocks import node_end, node_start
from generator.spec.cache import cache_dir as cache_dir
from generator.spec.cache import cache_get as cache_get
from generator.spec.cache import cache_has as cache_has
from generator.spec.cache import cache_limit as cache_limit
from generator.spec.cache import cache_put as cache_put
from generator.spec.cache import mark_used as mark_used
from generator.spec.cache import prune_cache as prune_cache
from generator.spec.cache import remembered as remembered
from generator.spec.fast_yaml import RymlTree, load_fast
from generator.spec.gc_pause import gc_paused as gc_paused
from generator.spec.pointers import MISSING as MISSING
from generator.spec.pointers import node_at as node_at
from generator.spec.pointers import pointer_token as pointer_token
from generator.spec.pointers import unescape as unescape

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


MAX_SPEC_BYTES = int(os.environ.get("APIFORGE_MAX_SPEC_BYTES", 32 * 1024 * 1024))
CACHE_MIN_BYTES = 256 * 1024  # smaller files parse faster than a cache lookup pays off
# whether a big file's parse (a YAML one block by block) and source map go through the cache:
# what a regeneration after an edit reads back fastest (and what keys its models cache:
# `Document.entry_digest`). `read_whole` turns it off where it does not pay (`lint`)
_CACHED_READS: ContextVar[bool] = ContextVar("cached_reads", default=True)
_CACHE_VERSION = "2"  # 2: YAML 1.2 core schema (1: PyYAML's 1.1 resolution)


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
        return hashlib.sha256(layout.body[node_start(entry) : node_end(entry)]).hexdigest()

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
        return {t: (node.key, body[node_start(node) : node_end(node)]) for t, node in level.items()}

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


_BLOCKS_KIND = "yblocks1"  # per file: {block hash: its entry}; see `_BlockReader`


def _blocks_salt() -> str:
    # PyYAML's version from its dist-info folder: importing it (~0.03 s) for its
    # `__version__` was most of an unchanged regeneration's read, where no block is parsed
    from generator.installed import installed_version

    return f"{_CACHE_VERSION}/{installed_version('yaml', 'PyYAML')}/{blocks.BLOCK_SPLIT_BYTES}"


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
