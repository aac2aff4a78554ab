"""JSON pointer → line:column, computed only when a message needs a location.

A mapping entry is located at its key (where a reader's eye goes), a sequence item at its
first character. A pointer that does not exist is located at its nearest existing ancestor.

A JSON map is built in one pass over the text. A YAML map comes from the node tree the
document was constructed from (`Document._yaml_tree`), so the text is parsed once: when the
map is not going to be cached, only the pointers asked for are looked up in the tree (with
exactly the answers the whole map would give); otherwise the whole map is built and cached
by content hash like parsed data. Only a document whose data came from the parse cache, with
no cached map, is composed again. A big YAML file read block by block (`blocks.BlockLayout`)
gets its map from its blocks' maps, each made once per block text and cached like the
blocks' data, so an edit re-maps only the blocks it changed.
"""

from __future__ import annotations

import bisect
import codecs
import marshal
import os
import re
import select
import signal
import weakref
from collections.abc import Callable
from contextlib import suppress
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING, Any

from generator.spec.blocks import BlockLayout, BlockLeaf, BlockSplit
from generator.spec.cache import cache_dir, cache_get, cache_put
from generator.spec.fast_yaml import RymlTree, Unlocatable, json_tree
from generator.spec.gc_pause import gc_paused

if TYPE_CHECKING:  # PyYAML is imported when a map is made with it, not for every lint
    import yaml

    from generator.spec.load import Document
    from generator.spec.pyyaml_load import YamlTree

# One token per match, after the commas, colons and whitespace before it (possessive, so the
# search never backtracks): a string (group 1) that is a key when a colon follows (group 2,
# which also takes a string or bare scalar value: nothing to locate in an object's values),
# an opening bracket (3), a closing one (4), or a bare scalar (5). `lastindex` says which.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_BARE = r'[^\s{}\[\]:,"]++'
_JSON_TOKEN = re.compile(
    rf"[\s,:]*+(?:({_STRING})(\s*+:\s*+(?:{_STRING}|{_BARE})?)?|([{{\[])|([}}\]])|({_BARE}))"
)
_ODD_TILDE = re.compile("~(?![01])")  # a `~` that is not an escape (RFC 6901)
_CACHE_KIND = "srcmap1"
_CACHE_MIN_BYTES = 256 * 1024
_BLOCK_MAPS_KIND = "ymaps1"  # per file: {block hash: its pickled map}; see `_BlockIndex`


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class SourceMap:
    def __init__(
        self,
        offsets: dict[str, int],
        text: bytes,
        line_starts: list[int] | None = None,
        lookup: Callable[[str], int | None] | None = None,
        blocks: _BlockIndex | None = None,
        index: _RymlIndex | None = None,
    ):
        self._offsets = offsets  # pointer → character offset
        self._blocks = blocks  # when set, it answers instead (a document read by blocks)
        # when set, it answers (`lookup` is its `get`), and `locate` in bytes, so the lines of
        # the whole text are not counted unless something needs character offsets
        self._index = index
        self._text = text
        self._starts = line_starts or ([0] if blocks is not None else None)
        self._lookup = lookup or (index.get if index is not None else offsets.get)

    @property
    def _line_starts(self) -> list[int]:
        if self._starts is None:
            index = self._index
            self._starts = index.line_starts if index is not None else _line_starts(self._text)
        return self._starts

    @classmethod
    def for_document(cls, doc: Document) -> SourceMap:
        if doc._blocks is not None:
            with gc_paused():
                index = _BlockIndex(doc._blocks)
            doc._blocks = None  # the index keeps what it needs
            return cls({}, doc.text, blocks=index)
        cacheable = doc.cached and len(doc.text) >= _CACHE_MIN_BYTES and cache_dir() is not None
        cached = cache_get(_CACHE_KIND, doc.digest) if cacheable else None
        if cached is None:
            tree = doc._yaml_tree
            doc._yaml_tree = None  # the map keeps what it needs
            with gc_paused():
                if isinstance(tree, RymlTree):
                    if not cacheable:
                        return cls({}, doc.text, index=_RymlIndex(tree))
                    tree = None  # the whole map: composed by PyYAML
                if doc.is_json and not cacheable:
                    found = json_tree(doc.text.removeprefix(codecs.BOM_UTF8))
                    if found is not None:
                        return cls({}, doc.text, index=_RymlIndex(found, data=doc.data))
                text = doc.text.decode("utf-8-sig")
                starts = _line_starts_str(text)
                if tree is not None and not cacheable:
                    return cls({}, doc.text, starts, _TreeIndex(tree, starts).get)
                offsets = _index_json(text) if doc.is_json else _index_yaml(text, starts, tree)
            cached = (offsets, starts)
            if cacheable:
                cache_put(_CACHE_KIND, doc.digest, cached)
        return cls(cached[0], doc.text, cached[1])

    def offset(self, pointer: str, line_starts: list[int]) -> int | None:
        """The character offset (in the text without its BOM) of the node at `pointer`
        itself, or None when there is none (no ancestor instead). `line_starts`: the text's,
        for a map put together from blocks."""
        if self._blocks is not None:
            return self._blocks.offset(pointer, line_starts)
        return self._lookup(pointer)

    def locate(self, pointer: str) -> tuple[int, int]:
        if self._blocks is not None:
            return self._blocks.locate(pointer)
        if self._index is not None:
            found = self._index.locate(pointer)
            if found is not None:
                return found
        lookup = self._lookup
        offset = lookup(pointer)
        while offset is None and pointer:
            pointer = pointer.rsplit("/", 1)[0]
            offset = lookup(pointer)
        if offset is None:
            offset = 0
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1


def _line_starts(text: bytes) -> list[int]:
    return _line_starts_str(text.decode("utf-8-sig", errors="replace"))


def _line_starts_str(text: str) -> list[int]:
    """The offset each line starts at: 0, then one past every newline."""
    lengths = map(len, text.split("\n"))
    starts = list(accumulate(map(add, lengths, repeat(1)), initial=0))
    starts.pop()  # the end of the last line
    return starts


def _index_json(text: str) -> dict[str, int]:
    """One pass over JSON tokens, with the enclosing containers on a stack."""
    offsets: dict[str, int] = {"": 0}
    stack: list[tuple[str, int, str]] = []  # the enclosing containers' (ptr, index, key)
    ptr = ""  # the current container's pointer
    index = -2  # the next item's index in an array; -1 in an object; -2 outside the root
    key = ""  # in an object, the last key (escaped)
    setdefault = offsets.setdefault
    for match in _JSON_TOKEN.finditer(text):
        kind = match.lastindex
        if kind == 2 and index == -1:  # a key
            tok = match.group(1)
            key = tok[1:-1] if "\\" not in tok else _json_string(tok)
            if "~" in key or "/" in key:
                key = escape(key)
            offsets[f"{ptr}/{key}"] = match.start(1)
        elif kind == 3:  # { or [
            if index >= 0:  # inside an array: this container is an item
                child = f"{ptr}/{index}"
                setdefault(child, match.start(3))
                index += 1
            elif index == -1:
                child = f"{ptr}/{key}"
            else:
                child = ""
            stack.append((ptr, index, key))
            ptr, key = child, ""
            index = 0 if match.group(3) == "[" else -1
        elif kind == 4:  # } or ]
            if stack:
                ptr, index, key = stack.pop()
            else:
                index = -2
        elif kind is not None and index >= 0:  # a string or bare scalar array item
            offsets[f"{ptr}/{index}"] = match.start(1 if kind == 2 else kind)
            index += 1
    return offsets


def _json_string(tok: str) -> str:
    if "\\" not in tok:
        return tok[1:-1]
    import json

    try:
        value = json.loads(tok)
    except ValueError:
        return tok[1:-1]
    return value if isinstance(value, str) else tok[1:-1]


def _index_yaml(text: str, line_starts: list[int], tree: YamlTree | None = None) -> dict[str, int]:
    import yaml

    from generator.spec.pyyaml_load import YamlTree, _YamlLoader

    if tree is None:
        try:
            root = yaml.compose(text, Loader=_YamlLoader)
        except yaml.YAMLError:
            return {"": 0}
        if root is None:
            return {"": 0}
        tree = YamlTree(root, {})
    offsets: dict[str, int] = {"": 0}
    setdefault = offsets.setdefault
    last = len(line_starts) - 1
    entries = tree.entries
    mapping, sequence = yaml.MappingNode, yaml.SequenceNode

    # Depth first, last child first; a mapping entry is located at its key, a sequence item
    # at its first character (libyaml's `index` counts differently from Python's str; line
    # and column do not). An alias repeats a node: a node already on the path (`open`) is not
    # re-entered. A `None` on the stack closes the node below it.
    todo: list[tuple[yaml.Node, str] | None] = [(tree.root, "")]
    open_: set[yaml.Node] = set()
    path: list[yaml.Node] = []
    while todo:
        entry = todo.pop()
        if entry is None:
            open_.discard(path.pop())
            continue
        node, ptr = entry
        if node in open_:
            continue
        open_.add(node)
        path.append(node)
        todo.append(None)
        if node.__class__ is mapping:
            for key_node, value_node in entries(node):
                key = key_node.value
                if key.__class__ is not str:
                    key = str(key)
                if "~" in key or "/" in key:
                    key = escape(key)
                child = f"{ptr}/{key}"
                mark = key_node.start_mark
                line = mark.line
                setdefault(child, line_starts[line if line < last else last] + mark.column)
                cls = value_node.__class__
                if cls is mapping or cls is sequence:
                    todo.append((value_node, child))
        elif node.__class__ is sequence:
            for i, item in enumerate(node.value):
                child = f"{ptr}/{i}"
                mark = item.start_mark
                line = mark.line
                setdefault(child, line_starts[line if line < last else last] + mark.column)
                cls = item.__class__
                if cls is mapping or cls is sequence:
                    todo.append((item, child))
    return offsets


class _RymlIndex:
    """`_TreeIndex`'s answers (`_index_json`'s for JSON, given its `data`) from the tree
    rapidyaml parsed (`fast_yaml.RymlTree`); for a node it cannot locate, the whole map is
    made the usual way once (YAML composed by PyYAML) and answers instead."""

    def __init__(
        self, tree: RymlTree, line_starts: list[int] | None = None, data: Any = None
    ) -> None:
        self._tree: RymlTree | None = tree  # None once the whole map answers instead
        self._source = tree
        self._line_starts = line_starts
        self._data = data  # JSON: what `json` read, to see duplicate keys
        self._instead: Callable[[str], int | None] | None = None

    @property
    def line_starts(self) -> list[int]:
        """The text's, in characters (made when first needed)."""
        if self._line_starts is None:
            self._line_starts = _line_starts_str(self._source.text)
        return self._line_starts

    def get(self, pointer: str) -> int | None:
        if self._tree is not None:
            try:
                if not _plain_tokens(pointer):
                    return None  # not a token the whole map has (`~2`, ...)
                return self._tree.offset(pointer, self.line_starts, self._data)
            except Unlocatable:
                self._fall_back()
        assert self._instead is not None
        return self._instead(pointer)

    def locate(self, pointer: str) -> tuple[int, int] | None:
        """`SourceMap.locate`'s answer for `pointer` (its node, or the nearest ancestor's),
        counted in bytes; None once the whole map answers instead (in characters)."""
        tree = self._tree
        if tree is None:
            return None
        try:
            while not _plain_tokens(pointer):  # its ancestors' tokens are some of its own
                pointer = pointer.rsplit("/", 1)[0]
            at = tree.byte_offset(pointer, self._data)
            while at is None and pointer:
                pointer = pointer.rsplit("/", 1)[0]
                at = tree.byte_offset(pointer, self._data)
        except Unlocatable:
            self._fall_back()
            return None
        return tree.line_column(at or 0)

    def _fall_back(self) -> None:
        """The whole map answers from now on: this tree cannot locate some node."""
        import yaml

        from generator.spec.pyyaml_load import YamlTree, _YamlLoader

        assert self._tree is not None
        text = self._tree.text
        self._tree = None
        if self._data is not None:
            self._instead = _index_json(text).get
        else:
            root = yaml.compose(text, Loader=_YamlLoader)  # it parsed: it composes
            assert root is not None
            self._instead = _TreeIndex(YamlTree(root, {}), self.line_starts).get


def _plain_tokens(pointer: str) -> bool:
    """Whether every token of `pointer` is written as the whole map writes it (not `~2`):
    every `~` after the first `/` starts `~0` or `~1`, so unescaping and escaping again gives
    each token back."""
    first = pointer.find("/")
    return first == -1 or "~" not in pointer or _ODD_TILDE.search(pointer, first) is None


class _TreeIndex:
    """The whole map's answers, for the pointers asked: `get(pointer)` is what
    `_index_yaml(text, line_starts, tree).get(pointer)` would be.

    That walk is depth first, last child first, and keeps the first offset it meets for a
    pointer, so here too: among the nodes a pointer's parent can be (duplicate keys, keys
    that print alike, aliases), the first met in that order that has the last token wins,
    with its first entry of that token. A node on its own path is not re-entered."""

    def __init__(self, tree: YamlTree, line_starts: list[int]) -> None:
        self._tree = tree
        self._line_starts = line_starts
        self._tables: dict[yaml.Node, dict[str, list[tuple[int, yaml.Node]]]] = {}
        self._found: dict[str, int | None] = {"": 0}

    def get(self, pointer: str) -> int | None:
        found = self._found
        if pointer in found:
            return found[pointer]
        offset = None
        if pointer.startswith("/"):
            root = self._tree.root
            offset = self._find(root, pointer[1:].split("/"), 0, (root,))
        found[pointer] = offset
        return offset

    def _find(
        self, node: yaml.Node, tokens: list[str], depth: int, path: tuple[yaml.Node, ...]
    ) -> int | None:
        import yaml

        entries = self._table(node).get(tokens[depth])
        if not entries:
            return None
        if depth == len(tokens) - 1:
            return entries[0][0]
        for _, child in reversed(entries):
            cls = child.__class__
            if (cls is yaml.MappingNode or cls is yaml.SequenceNode) and child not in path:
                offset = self._find(child, tokens, depth + 1, (*path, child))
                if offset is not None:
                    return offset
        return None

    def _table(self, node: yaml.Node) -> dict[str, list[tuple[int, yaml.Node]]]:
        """A node's entries by pointer token: (offset, value node), in order."""
        import yaml

        table = self._tables.get(node)
        if table is None:
            table = {}
            starts, last = self._line_starts, len(self._line_starts) - 1
            if node.__class__ is yaml.MappingNode:
                for key_node, value_node in self._tree.entries(node):
                    key = key_node.value
                    token = escape(key if key.__class__ is str else str(key))
                    mark = key_node.start_mark
                    at = starts[min(mark.line, last)] + mark.column
                    table.setdefault(token, []).append((at, value_node))
            elif node.__class__ is yaml.SequenceNode:
                for i, item in enumerate(node.value):
                    mark = item.start_mark
                    table[str(i)] = [(starts[min(mark.line, last)] + mark.column, item)]
            self._tables[node] = table
        return table


class _BlockIndex:
    """The whole map's answers for a document read block by block: `offset(pointer)` is what
    `_index_yaml` gives for the whole text and tree, and `locate` what `SourceMap.locate`
    gives with that map, without the whole text's lines.

    Each block's own map (`_index_yaml` of its text: pointers from its key down, offsets
    from its first line) is made from the block's tree when it was parsed in this process,
    by composing the block's text otherwise, and cached per file by the block's hash; a
    pointer is answered by the one block its tokens lead to (the split keys of a mapping
    are distinct pointer tokens), from that block's first line. The two agree: a block's
    marks are the whole parse's, less its first line, and the whole map's depth-first walk
    visits the nodes of one block together and in the block's own order, so where aliases
    or duplicate keys make a pointer ambiguous, the block's map picks what the whole one
    does."""

    def __init__(self, layout: BlockLayout) -> None:
        import pickle  # here: a cold lint does not need it

        self._layout = layout
        self._maps: dict[bytes, dict[str, int]] = {}
        self._starts: dict[bytes, list[int]] = {}
        name = layout.cache_name
        cached = cache_get(_BLOCK_MAPS_KIND, name) if name is not None else None
        packed: dict[bytes, bytes] = cached if isinstance(cached, dict) else {}
        keep: dict[bytes, bytes] = {}
        body = layout.body
        line = previous = 0
        for leaf in layout.leaves:
            line += body.count(b"\n", previous, leaf.start)
            previous = leaf.start
            leaf.line = line
            blob = keep.get(leaf.key) or packed.get(leaf.key)
            if blob is None:
                chunk = layout.leaf_text(leaf)
                starts = self._starts[leaf.key] = _line_starts_str(chunk)
                offsets = self._maps[leaf.key] = _index_yaml(chunk, starts, leaf.tree)
                blob = pickle.dumps(offsets, protocol=pickle.HIGHEST_PROTOCOL)
            keep[leaf.key] = blob
            leaf.tree = None
        self._packed = keep
        if name is not None and keep.keys() != packed.keys():
            cache_put(_BLOCK_MAPS_KIND, name, keep)

    def find(self, pointer: str) -> tuple[BlockLeaf, int] | None:
        """The block that has `pointer`, and its offset in that block (None for "")."""
        import pickle  # here: a cold lint does not need it

        if pointer[:1] != "/":
            return None
        tokens = pointer[1:].split("/")
        last = len(tokens) - 1
        children = self._layout.root
        for depth, token in enumerate(tokens):
            node = children.get(token)
            if node is None:
                return None
            leaf: BlockLeaf
            if node.__class__ is BlockSplit:
                assert isinstance(node, BlockSplit)
                if depth < last:
                    children = node.children
                    continue
                leaf, rel = node.header, "/" + token
            else:
                assert isinstance(node, BlockLeaf)
                leaf, rel = node, "/" + "/".join(tokens[depth:])
            offsets = self._maps.get(leaf.key)
            if offsets is None:
                offsets = self._maps[leaf.key] = pickle.loads(self._packed[leaf.key])
            offset = offsets.get(rel)
            return None if offset is None else (leaf, offset)
        return None

    def offset(self, pointer: str, line_starts: list[int]) -> int | None:
        """The whole map's offset for `pointer`, given the whole text's line starts."""
        if not pointer:
            return 0
        found = self.find(pointer)
        return None if found is None else line_starts[found[0].line] + found[1]

    def locate(self, pointer: str) -> tuple[int, int]:
        found = self.find(pointer)
        while found is None and pointer:
            pointer = pointer.rsplit("/", 1)[0]
            found = self.find(pointer)
        if found is None:
            return 1, 1  # offset 0, as the whole map has for ""
        leaf, offset = found
        starts = self._starts.get(leaf.key)
        if starts is None:
            starts = self._starts[leaf.key] = _line_starts_str(self._layout.leaf_text(leaf))
        line = bisect.bisect_right(starts, offset)
        return leaf.line + line, offset - starts[line - 1] + 1


class LocatedAhead:
    """A big JSON document's locations, made by a forked child on the other core while this
    process builds the IR and runs the rules: the child parses rapidyaml's tree of the text
    (~0.03 s of a cold GitHub lint, about as long as `json` took to read it), waits for the
    pointers, and answers them as this document's `SourceMap.locate` would (it is that map,
    made in the child). Pointers may be sent early (`ask`: lint, after each rule), so the
    child locates them while the rules still run.

    Only ever a speed-up, as `generator.forked`'s children: no fork, a child that died, gave
    no answer in time or a bad one, and `locate_all` is None — the caller locates itself.
    The child ends when it has answered, when this process closes the pipe (`cancel`, or
    this process ending), or on any error of its own."""

    MIN_BYTES = 1024 * 1024  # smaller texts parse in less than the fork costs (~2-5 ms)

    def __init__(self, pid: int, ask: int, answers: int, seconds: float) -> None:
        self._pid = pid
        self._ask = ask  # write end: the pointers
        self._answers = answers  # read end: their locations
        self._seconds = seconds  # how long to wait for the child at most
        self._open = [ask, answers]  # the ends still to close
        self._asked: list[str] = []  # the pointers sent, in order: the child answers those
        # `cancel`, also when this is dropped unasked (an error before the findings)
        self._stop = weakref.finalize(self, _stop, pid, self._open)

    @classmethod
    def start(cls, doc: Document) -> LocatedAhead | None:
        """None when it would not pay or cannot run: not JSON, small, a map that will be
        cached (it is built whole then), or no `os.fork` on this platform."""
        if (
            not doc.is_json
            or len(doc.text) < cls.MIN_BYTES
            or (doc.cached and cache_dir() is not None)
            or not hasattr(os, "fork")
        ):
            return None
        ask_r, ask_w = os.pipe()
        answers_r, answers_w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (ask_r, ask_w, answers_r, answers_w):
                os.close(fd)
            return None
        if pid == 0:  # the child: never returns
            os.close(ask_w)
            os.close(answers_r)
            _answer(doc, ask_r, answers_w)
        os.close(ask_r)
        os.close(answers_w)
        return cls(pid, ask_w, answers_r, 10 + len(doc.text) / 1e6)

    def ask(self, pointers: list[str]) -> None:
        """Send `pointers` now, to be located while this process goes on; `locate_all` gives
        their answers. A pipe that fails stops the child (`locate_all` is None then)."""
        if self._ask not in self._open:
            return
        try:
            _write_all(self._ask, _frame(pointers), self._seconds)
        except OSError:
            self.cancel()
            return
        self._asked.extend(pointers)

    def locate_all(self, pointers: list[str]) -> list[tuple[int, int]] | None:
        """`SourceMap.locate` of each pointer, from the child; None when it did not answer."""
        if self._ask not in self._open:
            return None  # a failed `ask`
        try:
            sent = set(self._asked)
            rest = [p for p in dict.fromkeys(pointers) if p not in sent]
            if rest:
                self.ask(rest)
                if self._ask not in self._open:
                    return None
            self._open.remove(self._ask)
            os.close(self._ask)  # the child reads to the end of the pointers
            chunks = []
            while select.select([self._answers], [], [], self._seconds)[0]:
                chunk = os.read(self._answers, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            else:
                return None  # no answer in time (`cancel` stops the child)
            found = marshal.loads(b"".join(chunks))
            if not isinstance(found, list) or len(found) != len(self._asked):
                return None
            places = dict(zip(self._asked, found, strict=True))
            return [(int(places[p][0]), int(places[p][1])) for p in pointers]
        except (OSError, ValueError, EOFError, TypeError, IndexError):
            return None
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Stop the child (if it still runs) and let its resources go; idempotent."""
        self._stop()


def _stop(pid: int, fds: list[int]) -> None:
    """`LocatedAhead.cancel`: close the pipes' ends still open, end and reap the child."""
    for fd in fds:
        with suppress(OSError):
            os.close(fd)
    fds.clear()
    with suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with suppress(OSError):
        os.waitpid(pid, 0)


def _answer(doc: Document, ask: int, answers: int) -> None:
    """The child's work (see `LocatedAhead`); ends the process."""
    status = 1
    try:
        source_map = SourceMap.for_document(doc)
        _walk_ahead(source_map, doc.data, ask)
        found: list[tuple[int, int]] = []
        while (batch := _read_frame(ask)) is not None:  # each as soon as it is sent
            found.extend(map(source_map.locate, marshal.loads(batch)))
        _write_all(answers, marshal.dumps(found), None)
        status = 0
    finally:  # nothing of the parent's (atexit handlers, buffered output) runs here
        os._exit(status)


def _walk_ahead(source_map: SourceMap, data: Any, ask: int) -> None:
    """Until pointers come, locate each operation's `responses`: lint's findings are nearly all
    on an operation or one of its responses (GitHub's: 1,046 of 1,047), and the tree keeps
    every walk (`RymlTree._walk`), so they cost a third of the time when asked. Without it
    the child located GitHub's findings in ~30 ms, ~12 ms after the rules were done."""
    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, dict):
        return
    guesses = (
        f"/paths/{escape(path)}/{escape(method)}/responses"
        for path, item in paths.items()
        if isinstance(item, dict)
        for method, operation in item.items()
        if isinstance(operation, dict) and "responses" in operation
    )
    for i, pointer in enumerate(guesses):
        if i % 16 == 0 and select.select([ask], [], [], 0)[0]:
            return  # the first pointers (or the end of them) have come
        source_map.locate(pointer)


def _frame(pointers: list[str]) -> bytes:
    """A batch of pointers on the pipe: its length (4 bytes), then its marshal data."""
    data = marshal.dumps(pointers)
    return len(data).to_bytes(4, "big") + data


def _read_frame(fd: int) -> bytes | None:
    """The next `_frame`'s data; None at the end of the pipe."""
    head = _read_exactly(fd, 4)
    return None if head is None else _read_exactly(fd, int.from_bytes(head, "big"))


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes of `fd`; None when it ends first (EOFError when it ends midway)."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            if data:
                raise EOFError("the pipe ended midway through a batch")
            return None
        data += chunk
    return data


def ask_ahead(doc: Document, pointers: list[str]) -> None:
    """Send `pointers` to `doc`'s forked child now, if it has one (`Document.locate_ahead`),
    for `Document.locate_all` to ask again later: they are located meanwhile."""
    if doc._ahead is not None:
        doc._ahead.ask(pointers)


def _write_all(fd: int, data: bytes, seconds: float | None) -> None:
    """All of `data` to the pipe `fd`; OSError when it takes over `seconds` (a child that
    stopped reading)."""
    view = memoryview(data)
    while view:
        if seconds is not None and not select.select([], [fd], [], seconds)[1]:
            raise OSError("the pipe took nothing in time")
        # at most PIPE_BUF bytes: what select promised will not block
        view = view[os.write(fd, view[: select.PIPE_BUF]) :]
