r"""Big YAML files read block by block: a changed line re-parses only its block.

A big spec is mostly a mapping of mappings (`paths:`, `components:` → `schemas:`, ...), so
its text splits at the lines that begin an entry: the top-level keys at column 0 and, in an
entry bigger than `BLOCK_SPLIT_BYTES` whose first line is `key:` alone, the keys of the
mapping below it (all at one column), recursively. Each block is parsed on its own by
`load_yaml` and cached by the hash of its text alone (marks are relative to its first line,
so a line inserted above it changes nothing), in one file per spec path; after an edit only
the blocks whose text changed are parsed again. The data is put together from the blocks'
(key, value) pairs, the source map from the blocks' own maps (`sourcemap._BlockIndex`).

Why that is exactly the whole parse. A block is accepted when, parsed on its own, it is a
mapping of exactly one entry whose key is a scalar (not `<<` or `=`) on its first line at
its column c; a header (`key:` and the blank and comment lines after it) must also have an
empty plain value. Then, by induction over the blocks in order: if every block before this
one parsed on its own, the whole parse reaches this block's first line in block context and
outside any scalar (an unclosed quote or bracket is an error at the end of a block read on
its own), with the mapping at column c open, or the header's value to come. The block's
tokens are then the same in both parses: they depend only on the indentation levels at c
and deeper, the same in both, and a token left of c would end the block's mapping, which
read on its own is an error ("expected '<document start>'"). The next block's key, at a
column <= c, ends whatever plain or block scalar is open, as the end of the text does.
What crosses blocks is checked on the whole text: no document marker or directive (`---`,
`...`, `%` at the start of a line), no line break libyaml counts that `\n` does not (a lone
CR, NEL, LS, PS: marks must be on the same lines), no anchor name defined twice and no alias
named like an anchor (names taken from the text, a superset of the real ones: so no alias
reaches into another block and no duplicate anchor goes unnoticed), and distinct pointer
tokens among a mapping's split keys (the blocks' maps never answer for the same pointer).
Keys equal as Python values (`1`, `1.0`) are put together as the whole parse does: the
first key kept, the last value. Anything else falls back to the whole parse, which also
gives the errors. `bench/yaml_equality.py --blocks` checks this on every YAML file of the
corpus, split small, and on random one-line edits of its big files.
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.spec.gc_pause import gc_paused
from generator.spec.pointers import pointer_token

if TYPE_CHECKING:
    from generator.spec.pyyaml_load import YamlTree

BLOCK_SPLIT_BYTES = 16 * 1024  # an entry bigger than this is split into the entries below it

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


def node_start(node: BlockLeaf | BlockSplit) -> int:
    return node.header.start if isinstance(node, BlockSplit) else node.start


def node_end(node: BlockLeaf | BlockSplit) -> int:
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
