"""A whole YAML document read with rapidyaml (C++): the data and source map `load.load_yaml`
gives, about four times faster, for the documents it can prove it reads the same way.

How. rapidyaml parses the text into its own tree (escapes, folding and block scalars already
applied), and `_ryml_data` (C) makes the Python data from that tree in one walk: mappings,
sequences, strings, and for each plain scalar its YAML 1.2 core-schema meaning
(`yaml12.resolve_plain`). It reads rapidyaml's node array as the pinned version lays it out;
with another version, or where the extension was not built (no C compiler at install),
PyYAML reads everything.

What is not read here (None: the caller parses with PyYAML): texts that may hold anchors or
aliases, tags, merge keys, explicit `?` keys, document markers or directives, tabs, line
breaks other than `\\n`/`\\r\\n`, or no line break at the end (rapidyaml then adds one to
a last block scalar); texts rapidyaml rejects (PyYAML then gives the error); a root that is
not a mapping; and what `_ryml_data` refuses (duplicate keys, which PyYAML keeps the last of
and the source map answers differently for; a node with an alias, anchor or tag; nesting
past the recursion limit). The text checks are a superset, so they also refuse texts that
only look like they have those things.

The source map is looked up in rapidyaml's tree, only for the pointers asked: a mapping entry
is located at its key, a sequence item at its first character, as PyYAML's marks say (a
scalar's address in the parsed buffer is its offset; a flow collection's bracket is the first
thing before its first item). A node whose mark cannot be derived that way (an empty key or
item, a block scalar, a block sequence or an empty collection as a sequence item, a comment
after a bracket) raises `Unlocatable`, and the caller makes the whole map the usual way. JSON
documents get their source map the same way (`json_tree`), as `_index_json` would give it.

`bench/yaml_equality.py --fast` checks data and every pointer of the source map against the
PyYAML path on every YAML file of the corpus.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import accumulate, repeat
from itertools import count as count_up
from operator import add
from typing import Any

from generator.spec import yaml12

try:
    from generator.spec import _ryml_data  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install): PyYAML reads YAML
    _ryml_data = None

# the bytes a plain scalar that is not a str can hold, for `_ryml_data`
_NOT_STR_BYTES = bytes(chr(byte) in yaml12.NOT_STR_CHARS for byte in range(256))
# what may come before a tag (`!`) or an explicit key (`?`) on its line: where a node starts
_NODE_START = re.compile(rb"(?:[ ]*(?:-[ ]+)*|.*(?::[ ]+|[\[{,][ ]*))\Z", re.S)
_MERGE_KEY = re.compile(rb"<<[ ]*:")
_CHUNK = 1024  # bytes of text whose line breaks `RymlTree.line_column` counts at once
_KEY_TABLE_MIN = 32  # children of a mapping worth a table of its keys (`RymlTree._find_key`)


def _refused(body: bytes) -> bool:
    """Whether the text may hold what this reader does not take (see the module docstring):
    a superset, so a description that merely looks so is refused too."""
    from generator.spec.blocks import anchor_names, blockable

    if b"\t" in body or _MERGE_KEY.search(body) or not blockable(body):
        return True  # tabs: rapidyaml and libyaml differ on some; `\n` lines: libyaml's
    if not body.endswith(b"\n"):
        return True  # a block scalar at the very end: rapidyaml adds the missing line break
    if any(_starts_a_line(body, mark) for mark in (b"---", b"...", b"%")):
        return True  # document markers (or what starts like one) and directives
    for sign in (b"!", b"?"):
        at = body.find(sign)
        while at != -1:
            line = body.rfind(b"\n", 0, at) + 1
            after = body[at + 1 : at + 2]
            if _NODE_START.match(body, line, at) and (sign == b"!" or after in b" \r\n"):
                return True
            at = body.find(sign, at + 1)
    return bool(anchor_names(body, b"&"))  # an anchor (aliases: `_ryml_data` refuses them)


def _starts_a_line(body: bytes, mark: bytes) -> bool:
    """Whether a line of `body` starts with `mark`. Each `mark` found is looked at: they are
    rare, and `find` skips ahead fast for them, where `b"\\n%" in body` went byte by byte
    through the whole text (~10 ms of a 4 MB spec, three times)."""
    at = body.find(mark)
    while at != -1:
        if at == 0 or body[at - 1] == 0x0A:
            return True
        at = body.find(mark, at + 1)
    return False


# a node's type bits (as rapidyaml's has_key, is_map, is_seq test them) and "no node", as
# the pinned rapidyaml has them: `_rapidyaml` checks them against it
_BITS: dict[str, int] = _ryml_data.BITS if _ryml_data is not None else {}
_NONE: int = _ryml_data.NONE if _ryml_data is not None else -1
_KEY, _MAP, _SEQ = _BITS.get("KEY", 0), _BITS.get("MAP", 0), _BITS.get("SEQ", 0)
_KEY_PLAIN, _VAL_PLAIN = _BITS.get("KEY_PLAIN", 0), _BITS.get("VAL_PLAIN", 0)
_KEY_QUOTED = _BITS.get("KEY_SQUO", 0) | _BITS.get("KEY_DQUO", 0)
_VAL_QUOTED = _BITS.get("VAL_SQUO", 0) | _BITS.get("VAL_DQUO", 0)


@functools.cache
def _rapidyaml() -> Any:
    """rapidyaml's module, imported when first needed (~17 ms: a JSON spec's lint needs it
    only in the child that makes its source map meanwhile), or None: not installed (a
    platform without a wheel), `_ryml_data` not built, or a rapidyaml whose node array is
    not the one `_ryml_data` reads. PyYAML and whole source maps then do everything."""
    if _ryml_data is None:
        return None
    try:
        import ryml  # type: ignore[import-untyped]
        from ryml import _ryml  # noqa: F401  (`_TreeCalls` calls it)
    except ImportError:
        return None
    if (
        ryml.version != _ryml_data.RAPIDYAML
        or ryml.NONE != _NONE
        or any(getattr(ryml, name) != bits for name, bits in _BITS.items())
    ):
        return None
    return ryml


class Unlocatable(Exception):
    """This node's PyYAML mark is not derivable from the rapidyaml tree."""


def load_fast(text: str, body: bytes | None = None) -> tuple[Any, RymlTree] | None:
    """`load.load_yaml(text)`'s data and a tree for its source map, or None when this reader
    does not take the text (see the module docstring). `body`: `text` in UTF-8, when the
    caller has it already."""
    if _rapidyaml() is None:
        return None
    if body is None:
        body = text.encode("utf-8")
    if _refused(body):
        return None
    buffer = bytearray(body)
    lines = _chunk_lines(body)
    try:
        tree = _parse(buffer, lines[-1])
    except Exception:  # PyYAML gives the error, or reads what rapidyaml would not
        return None
    root = tree.root_id()
    if tree.is_stream(root):
        if tree.num_children(root) != 1:
            return None
        root = tree.first_child(root)
    if not tree.is_map(root):
        return None
    try:
        data = _ryml_data.data(
            int(tree.this), tree.size(), root, yaml12.resolve_plain, _NOT_STR_BYTES
        )
    except (_ryml_data.Refused, RecursionError):
        return None
    return data, RymlTree(tree, buffer, body, text, root, lines)


def json_tree(text: str | bytes) -> RymlTree | None:
    """rapidyaml's tree of a JSON document (a mapping; its text, or its UTF-8 bytes without a
    byte order mark), for its source map; None when rapidyaml does not read it."""
    if _rapidyaml() is None:
        return None
    body = text.encode("utf-8") if isinstance(text, str) else text
    buffer = bytearray(body)
    lines = _chunk_lines(body)
    try:
        tree = _parse(buffer, lines[-1])
    except Exception:
        return None
    root = tree.root_id()
    if not tree.is_map(root):
        return None
    return RymlTree(tree, buffer, body, text if isinstance(text, str) else None, root, lines)


def _parse(buffer: bytearray, lines: int) -> Any:
    """rapidyaml's tree of the text in `buffer` (parsed in place), which has `lines` line
    breaks. Its node array is made that big at once, about one node a line in a spec (for
    a pretty-printed JSON text, a few more): grown from empty, it doubled a dozen times,
    copying itself each time, and the big specs parsed in twice the time."""
    ryml = _rapidyaml()
    tree = ryml.Tree()
    tree.reserve(lines + 16)
    with _stderr_silenced():  # rapidyaml prints its parse errors to stderr
        ryml.parse_in_place(buffer, tree)
    return tree


def _chunk_lines(body: bytes) -> list[int]:
    """How many line breaks `body` has before each `_CHUNK` bytes (and in all: the last),
    for `RymlTree.line_column`."""
    size = len(body)
    counts = map(body.count, repeat(b"\n"), range(0, size, _CHUNK), count_up(_CHUNK, _CHUNK))
    return list(accumulate(counts, initial=0))


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 pointed at /dev/null (process-wide, for the parse's few ms)."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _address(view: Any) -> int:
    """The address of the first byte of a buffer (a memoryview rapidyaml gave)."""
    try:
        return int(_ryml_data.address(view))
    except (TypeError, BufferError):
        raise Unlocatable("no buffer") from None


class _TreeCalls:
    """A rapidyaml tree's methods (`calls.type(node)` is `tree.type(node)`), about four times
    cheaper a call: the wrapper `ryml.Tree.type` calls `_ryml.Tree_type(tree, node)`, and
    SWIG then looks up the tree's `this` attribute by name on every call; given `this`
    itself, it does not (rapidyaml is pinned in pyproject.toml). A locate walks thousands
    of nodes."""

    def __init__(self, tree: Any) -> None:
        self._tree = tree  # owns the C++ tree
        self._this = tree.this

    def __getattr__(self, name: str) -> Any:
        direct = getattr(_rapidyaml()._ryml, "Tree_" + name, None)
        # (a binding without that function: the wrapper's method, as before)
        call = functools.partial(direct, self._this) if direct else getattr(self._tree, name)
        setattr(self, name, call)  # found directly from now on
        return call


class RymlTree:
    """A document rapidyaml parsed: the tree (and the buffer its scalars point into) for the
    source map, and the checks `load_fast` runs on the JSON data."""

    def __init__(
        self,
        tree: Any,
        buffer: bytearray,
        body: bytes,
        text: str | None,
        root: int,
        chunk_lines: list[int] | None = None,
    ):
        self.tree = _TreeCalls(tree)
        self.buffer = buffer  # parsed in place: the tree's scalars are views of it
        self.body = body
        self._text = text  # None: decoded from `body` when asked
        self.root = root
        self._base = _address(buffer)
        self._ascii = body.isascii()
        self._byte_lines: list[int] | None = None  # for non-ASCII texts: bytes → characters
        self._walked: dict[str, tuple[int, Any]] = {}  # see `_walk`
        self._sizes: dict[int, int] = {}
        self._keys: dict[int, dict[bytes, int] | None] = {}  # see `_find_key`
        self._chunk_lines = chunk_lines  # line breaks before each `_CHUNK` bytes (`_chunk_lines`)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.body.decode("utf-8")
        return self._text

    # --- source map ---------------------------------------------------------------------

    def offset(self, pointer: str, line_starts: list[int], data: Any = None) -> int | None:
        """The character offset PyYAML's mark gives the node at `pointer` (None: no such
        node); `Unlocatable` when it cannot be told from this tree. `line_starts`: the
        text's, in characters. With `data` (what `json` read of the same text), a mapping
        on the way with duplicate keys is `Unlocatable` too (`load_fast` refuses those)."""
        at = self.byte_offset(pointer, data)
        return None if at is None else self._characters(at, line_starts)

    def byte_offset(self, pointer: str, data: Any = None) -> int | None:
        """`offset`'s answer in bytes of `body` (`data`: the same on every call)."""
        if pointer == "":
            return 0
        if not pointer.startswith("/"):
            return None
        node = self._walk(pointer, data)[0]
        return None if node == -1 else self._start(node)

    def _walk(self, pointer: str, data: Any) -> tuple[int, Any]:
        """The tree node at `pointer` (-1: none) and what `data` has there. Each pointer's
        walk is kept: findings share long prefixes (`/paths/~1repos~1{owner}/get/...`)."""
        walked = self._walked
        found = walked.get(pointer)
        if found is not None:
            return found
        # where each token still to walk starts (its "/"), the last token's first, up to
        # the longest prefix already walked
        stops = []
        at = len(pointer)
        while True:
            at = pointer.rfind("/", 0, at)
            stops.append(at)
            if at == 0:
                node, below = self.root, data
                break
            known = walked.get(pointer[:at])
            if known is not None:
                node, below = known
                break
        for i in reversed(range(len(stops))):
            end = stops[i - 1] if i else len(pointer)
            if node != -1:
                node, below = self._step(node, below, pointer[stops[i] + 1 : end])
            walked[pointer[:end]] = (node, below)
        return node, below

    def _step(self, node: int, data: Any, token: str) -> tuple[int, Any]:
        """The child of `node` that the pointer token `token` names, and `data`'s there."""
        tree = self.tree
        if data is not None and len(data) != self._size(node):
            raise Unlocatable("duplicate keys")
        kind = tree.type(node)  # one call (rapidyaml's are ~1 us each) for is_map and is_seq
        if kind & _MAP:
            key = token.replace("~1", "/").replace("~0", "~") if "~" in token else token
            child = self._find_key(node, key.encode("utf-8"))
            if data is not None:
                data = data.get(key) if isinstance(data, dict) else None
        elif kind & _SEQ and token.isascii() and token.isdigit() and token == str(int(token)):
            position = int(token)
            child = tree.child(node, position) if position < self._size(node) else -1
            if data is not None:
                data = data[position] if isinstance(data, list) and child != -1 else None
        else:
            return -1, None
        if child < 0 or child == _NONE:
            return -1, None
        if data is not None and not isinstance(data, (dict, list)):
            data = None  # a scalar: nothing below it to check
        return child, data

    def _find_key(self, node: int, key: bytes) -> int:
        """`tree.find_child(node, key)`. A big mapping (`/paths`) gets a table of its keys
        once: rapidyaml compares key by key, and the entries of a big mapping lie far apart
        in its node array (each one's subtree in between), so that was a cache miss a key."""
        if self._size(node) < _KEY_TABLE_MIN:
            return int(self.tree.find_child(node, key))
        table = self._keys.get(node, ...)
        if table is ...:
            table = self._keys[node] = self._key_table(node)
        if table is None:  # a child without a key: as rapidyaml finds it
            return int(self.tree.find_child(node, key))
        return table.get(key, -1)

    def _key_table(self, node: int) -> dict[bytes, int] | None:
        """The children of mapping `node` by key, the first of equal keys (as `find_child`
        finds it); None when a child has no key text."""
        tree = self.tree
        table: dict[bytes, int] = {}
        child = tree.first_child(node)
        while child != _NONE:
            view = tree.key(child) if tree.type(child) & _KEY else None
            if view is None:
                return None
            table.setdefault(bytes(view), child)
            child = tree.next_sibling(child)
        return table

    def _size(self, node: int) -> int:
        """How many children `node` has (rapidyaml counts them one by one)."""
        size = self._sizes.get(node)
        if size is None:
            size = self._sizes[node] = self.tree.num_children(node)
        return size

    def line_column(self, at: int) -> tuple[int, int]:
        """1-based line and column (in characters) of the byte offset `at`: the line breaks
        before it are counted from those of whole chunks of the text, counted once, so a few
        hundred findings need no table of every line."""
        body = self.body
        chunks = self._chunk_lines
        if chunks is None:
            chunks = self._chunk_lines = _chunk_lines(body)
        first = at // _CHUNK
        line = chunks[first] + body.count(b"\n", first * _CHUNK, at)
        start = body.rfind(b"\n", 0, at) + 1
        column = at - start if self._ascii else len(body[start:at].decode("utf-8"))
        return line + 1, column + 1

    def _start(self, node: int) -> int:
        """The byte offset of PyYAML's mark for `node`: its key when it has one."""
        tree = self.tree
        kind = tree.type(node)
        if kind & _KEY:
            return self._scalar_start(tree.key(node), kind & _KEY_QUOTED, kind & _KEY_PLAIN)
        if tree.is_container(node):
            if tree.num_children(node) == 0:
                raise Unlocatable("an empty collection as a sequence item")
            first = self._start(tree.first_child(node))
            if not tree.is_flow(node):
                if tree.is_seq(node):
                    raise Unlocatable("a block sequence as a sequence item")
                return first  # a block mapping starts at its first key
            # a flow collection starts at its bracket: the first thing before its first item
            # that is not white space (a comment in between: not told here)
            at = first - 1
            while at >= 0 and self.buffer[at] in b" \t\r\n":
                at -= 1
            if at < 0 or self.buffer[at] != (ord("[") if tree.is_seq(node) else ord("{")):
                raise Unlocatable("a flow collection with a comment before its first item")
            return at
        return self._scalar_start(tree.val(node), kind & _VAL_QUOTED, kind & _VAL_PLAIN)

    def _scalar_start(self, view: Any, quoted: int, plain: int) -> int:
        if view is None or not (quoted or plain) or (plain and len(view) == 0):
            raise Unlocatable("an empty plain scalar or a block scalar")
        at = _address(view) - self._base - (1 if quoted else 0)  # a quoted one: its quote
        if not 0 <= at < len(self.buffer) or (quoted and self.buffer[at] not in b"'\""):
            raise Unlocatable("a scalar rapidyaml filtered outside the text")
        return at

    def _characters(self, at: int, line_starts: list[int]) -> int:
        """A byte offset of the text as a character offset (`line_starts`: the text's)."""
        if self._ascii:
            return at
        if self._byte_lines is None:  # as `sourcemap._line_starts_str`, in bytes
            lengths = map(len, self.body.split(b"\n"))
            self._byte_lines = list(accumulate(map(add, lengths, repeat(1)), initial=0))
        line = bisect.bisect_right(self._byte_lines, at) - 1
        start = self._byte_lines[line]
        return line_starts[line] + len(self.body[start:at].decode("utf-8"))


def _text(view: Any) -> str:
    return "" if view is None else str(view, "utf-8")
