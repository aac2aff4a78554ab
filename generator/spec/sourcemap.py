"""JSON pointer → line:column, computed only when a message needs a location.

A mapping entry is located at its key (where a reader's eye goes), a sequence item at its
first character. A pointer that does not exist is located at its nearest existing ancestor.
The map is built in one pass over the text and cached by content hash like parsed data.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

import yaml

from generator.spec.load import _YamlLoader, cache_get, cache_put

if TYPE_CHECKING:
    from generator.spec.load import Document

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_CACHE_KIND = "srcmap1"


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class SourceMap:
    def __init__(self, offsets: dict[str, int], text: bytes, line_starts: list[int] | None = None):
        self._offsets = offsets  # pointer → character offset
        self._line_starts = line_starts or _line_starts(text)

    @classmethod
    def for_document(cls, doc: Document) -> SourceMap:
        cached = cache_get(_CACHE_KIND, doc.digest)
        if cached is None:
            text = doc.text.decode("utf-8-sig")
            starts = _line_starts_str(text)
            offsets = _index_json(text) if doc.is_json else _index_yaml(text, starts)
            cached = (offsets, starts)
            if len(doc.text) >= 256 * 1024:
                cache_put(_CACHE_KIND, doc.digest, cached)
        return cls(cached[0], doc.text, cached[1])

    def locate(self, pointer: str) -> tuple[int, int]:
        while pointer and pointer not in self._offsets:
            pointer = pointer.rsplit("/", 1)[0]
        offset = self._offsets.get(pointer, 0)
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1


def _line_starts(text: bytes) -> list[int]:
    return _line_starts_str(text.decode("utf-8-sig", errors="replace"))


def _line_starts_str(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _index_json(text: str) -> dict[str, int]:
    """One pass over JSON tokens; a stack of (pointer, next array index or None)."""
    offsets: dict[str, int] = {"": 0}
    stack: list[list[object]] = []  # [pointer, index-or-None, pending key]
    expect_key = False
    for match in _JSON_TOKEN.finditer(text):
        tok = match.group()
        start = match.start()
        first = tok[0]
        if first in "{[":
            if stack:
                frame = stack[-1]
                if frame[1] is not None:  # inside an array: this container is an item
                    ptr = f"{frame[0]}/{frame[1]}"
                    offsets.setdefault(ptr, start)
                    frame[1] = int(frame[1]) + 1  # type: ignore[call-overload]
                else:
                    ptr = f"{frame[0]}/{frame[2]}"
            else:
                ptr = ""
            stack.append([ptr, 0 if first == "[" else None, ""])
            expect_key = first == "{"
        elif first in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif first == ",":
            expect_key = bool(stack) and stack[-1][1] is None
        elif first == ":":
            expect_key = False
        elif stack:
            frame = stack[-1]
            if expect_key and first == '"':
                key = escape(_json_string(tok))
                frame[2] = key
                offsets[f"{frame[0]}/{key}"] = start
            elif frame[1] is not None:  # a scalar array item
                offsets[f"{frame[0]}/{frame[1]}"] = start
                frame[1] = int(frame[1]) + 1  # type: ignore[call-overload]
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


def _index_yaml(text: str, line_starts: list[int]) -> dict[str, int]:
    try:
        root = yaml.compose(text, Loader=_YamlLoader)
    except yaml.YAMLError:
        return {"": 0}
    offsets: dict[str, int] = {"": 0}
    if root is None:
        return offsets
    last = len(line_starts) - 1

    def offset(mark: yaml.Mark) -> int:
        # libyaml's `index` counts differently from Python's str; line and column do not
        return line_starts[min(mark.line, last)] + mark.column

    # iterative walk; an alias repeats a node, so a node already on the path is not re-entered
    todo: list[tuple[yaml.Node, str, frozenset[int]]] = [(root, "", frozenset())]
    while todo:
        node, ptr, seen = todo.pop()
        if id(node) in seen:
            continue
        inner = seen | {id(node)}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                child = f"{ptr}/{escape(str(key_node.value))}"
                offsets.setdefault(child, offset(key_node.start_mark))
                if isinstance(value_node, yaml.CollectionNode):
                    todo.append((value_node, child, inner))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                child = f"{ptr}/{i}"
                offsets.setdefault(child, offset(item.start_mark))
                if isinstance(item, yaml.CollectionNode):
                    todo.append((item, child, inner))
    return offsets
