"""The text side of `apiforge lint --fix`: what every file format shares.

A fix never rewrites a file: it inserts text into the original, at places found through the
source map the loader already has (a node's key → line and column) and a look at the lines
around them. `generator.lint.fix_yaml` and `generator.lint.fix_json` know each format's
containers and how to write a value in the file's own style; this module has what they share:
the file's text and lines, the requests (which keys go into which container), the edits and
applying them, and where a node of the old text is in the new one.

An edit is an insertion (`start == end`) except where a container cannot grow without it:
an empty flow collection (`headers: {}`, `"parameters": []`) becomes a block, and a non-empty
flow collection or a one-line JSON document grows inside its line.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add
from typing import Any

from generator.spec.load import Document

Rank = Callable[[Any], Any]  # a key's place in its container (new and existing keys alike)


class CannotFix(Exception):
    """This container cannot be changed by inserting text (an alias, a scalar, a shape the
    source map and the text disagree on): the fix that needs it is not made."""


@dataclass(slots=True)
class Entry:
    """A key (or, for a sequence, None) and its value, going into a container."""

    key: Any
    value: Any


@dataclass(slots=True)
class Request:
    """What goes into one container of the original text."""

    pointer: str  # the container's JSON pointer (it exists in the original text)
    sequence: bool  # True: `entries` are items appended to a sequence
    rank: Rank | None  # None: new keys go last (YAML) or first (JSON)
    entries: list[Entry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Check:
    """A stretch of the new text to parse on its own, and what it must read as: the local
    proof that an insertion landed where it was meant to (`generator.lint.fix_files`).

    In JSON the stretch is the edit's own text, parsed as what it is (`form`); where it goes
    needs no proof there: before a member the source map placed, or in place of `{}`.

    The stretch starts at `window`, an offset of the old text (the line of the entry before
    the new ones, or of the container's own key), or where the edit's text starts (None),
    and ends at `end`, an offset in the edit's text. It must read as the entries `keys` of
    the container at `pointer` (its items, for a sequence), under the container's own key
    when `wrap`. `window == FULL`: only a parse of the whole file proves this edit."""

    window: int | None
    end: int
    pointer: str
    keys: tuple[Any, ...]
    wrap: bool = False
    sequence: bool = False
    offset: int = 0  # where this check's own text starts in the edit's (edits are merged)
    # "yaml": the stretch as above; "json-members": the edit's text is members (or items)
    # with a comma after each; "json-container": it is the whole object (or array)
    form: str = "yaml"


FULL = -1


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace `old[start:end]` by `text` (an insertion when start == end). `nodes` are the
    pointers of the inserted nodes and their offsets in `text`, to locate them later;
    `checks`, how to prove it (YAML: see `Check`)."""

    start: int
    end: int
    text: str
    nodes: tuple[tuple[str, int], ...] = ()
    checks: tuple[Check, ...] = ()


class SourceText:
    """A document's text as the fixes see it: decoded, its lines, its line ending."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        raw = doc.text
        self.bom = raw.startswith(b"\xef\xbb\xbf")
        self.text = raw.decode("utf-8-sig")
        self.starts = line_starts(self.text)
        first = self.text.find("\n")
        self.crlf = first > 0 and self.text[first - 1] == "\r"
        text = self.text
        odd = any(c in text for c in "\x85\u2028\u2029")
        if odd or ("\r" in text and text.count("\r") != text.count("\r\n")):
            raise CannotFix(f"{doc.name} has line breaks other than LF and CRLF")

    def eol(self, offset: int) -> str:
        """The line ending of the line that holds `offset` (the file's, at its end)."""
        end = self.text.find("\n", offset)
        if end == -1:
            return "\r\n" if self.crlf else "\n"
        return "\r\n" if end > 0 and self.text[end - 1] == "\r" else "\n"

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based line and column, as the source map gives them."""
        return self.starts[line - 1] + column - 1

    def line_index(self, offset: int) -> int:
        """The 0-based index of the line that holds `offset`."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line(self, index: int) -> str:
        """Line `index` (0-based) without its line ending."""
        start = self.starts[index]
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def line_end(self, index: int) -> int:
        """The offset just past line `index`'s line ending (the next line's start)."""
        return self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)

    def locate(self, pointer: str) -> int | None:
        """The offset the source map gives the node at `pointer`, or None when the text has
        no such node."""
        return self.doc.offset(pointer, self.starts)


def line_starts(text: str) -> list[int]:
    """The offset each line starts at (a text that ends with a line ending has no line
    after it)."""
    starts = list(accumulate(map(add, map(len, text.split("\n")), repeat(1)), initial=0))
    starts.pop()  # one past the end
    if len(starts) > 1 and starts[-1] == len(text):
        starts.pop()
    return starts


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with every edit made (edits do not overlap)."""
    parts: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < at:
            raise CannotFix("overlapping edits")
        parts.append(text[at : edit.start])
        parts.append(edit.text)
        at = edit.end
    parts.append(text[at:])
    return "".join(parts)


class Shift:
    """Where an offset of the old text is in the new one, after `edits`."""

    def __init__(self, edits: list[Edit]) -> None:
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        self._starts = [e.start for e in ordered]
        self._ends = [e.end for e in ordered]
        delta = 0
        self._deltas: list[int] = []  # the shift after each edit
        for e in ordered:
            delta += len(e.text) - (e.end - e.start)
            self._deltas.append(delta)

    def __call__(self, offset: int) -> int:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0:
            return offset
        start, end = self._starts[i], self._ends[i]
        if start != end and offset < end:  # in a replaced span: where its new text starts
            return start + (self._deltas[i - 1] if i else 0)
        return offset + self._deltas[i]  # (text inserted at `offset` goes before it)


def rank_order(rank: Rank | None, new_key: Any, existing: list[tuple[Any, int]]) -> int | None:
    """The index in `existing` (keys in text order, with their offsets) of the first key
    that `rank` places after `new_key`; None when there is none (or no `rank`)."""
    if rank is None:
        return None
    mine = rank(new_key)
    for i, (key, _) in enumerate(existing):
        if rank(key) > mine:
            return i
    return None


def ranked(request: Request) -> list[Entry]:
    """The new entries in the order they are written: by rank when the container has one
    (a sequence's items keep theirs: the data has them in that order)."""
    rank = request.rank
    if rank is None or request.sequence:
        return list(request.entries)
    return sorted(request.entries, key=lambda e: rank(e.key))
