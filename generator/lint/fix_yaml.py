"""YAML for `apiforge lint --fix`: find a container in the original text and write new
entries into it, in the file's own style.

A block mapping's entries are where the source map puts their keys; each is checked against
the text (the key is written there, at the entries' column), so a merge key, an alias or a
shape the two disagree on is refused (`CannotFix`) instead of guessed. A new entry goes
before the first existing entry that ranks after it (so `409` lands between `404` and `500`,
above the comments that belong to `500`), or after the last entry's last line. Indentation,
sequence indentation, the quote character and blank lines between entries follow the file.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import yaml

from generator.lint.fix_text import (
    FULL,
    CannotFix,
    Check,
    Edit,
    Entry,
    Request,
    SourceText,
    rank_order,
    ranked,
)

_SQ = re.compile(r"'(?:[^']|'')*'")
_DQ = re.compile(r'"(?:[^"\\\r\n]|\\.)*"')
_PLAIN_KEY = re.compile(r"([^\r\n#'\"{}\[\],&*!|>%@`?][^\r\n]*?)[ \t]*:(?=[ \t\r\n]|$)")
_COLON = re.compile(r"[ \t]*:(?=[ \t\r\n]|$)")
_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)[ \t]*")
_KEEP = re.compile(r"(?:^|[ \t:-])[|>][1-9]?\+")
_KEEP_ANYWHERE = re.compile(r"[ \t:-][|>][1-9]?\+")
_STR_TAG = "tag:yaml.org,2002:str"
# the longest entry parsed again to prove that new entries begin where it ends; past it, the
# parser's own position of what follows is the proof
WINDOW_LIMIT = 2 * 1024
_resolver = yaml.resolver.Resolver()


@dataclass(frozen=True, slots=True)
class YamlStyle:
    unit: int  # the indentation step
    seq_indent: bool  # `key:` then `  - item` (True) or `- item` at the key's column
    quote: str  # the quote character strings that need one get

    @classmethod
    def detect(cls, src: SourceText) -> YamlStyle:
        steps: Counter[int] = Counter()
        seq: Counter[bool] = Counter()
        quotes: Counter[str] = Counter()
        previous: tuple[int, bool] | None = None  # (indent, ends with ':') of the last line
        for index in range(min(len(src.starts), 4000)):
            line = src.line(index)
            stripped = line.lstrip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            indent = len(line) - len(stripped)
            if previous is not None and previous[1]:
                if stripped.startswith("- ") or stripped == "-":
                    seq[indent > previous[0]] += 1
                elif indent > previous[0]:
                    steps[indent - previous[0]] += 1
            match = re.search(r":[ \t]+(['\"])", stripped)
            if match:
                quotes[match.group(1)] += 1
            previous = (indent, stripped.rstrip().endswith(":"))
        unit = steps.most_common(1)[0][0] if steps else 2
        return cls(
            unit=unit if 1 < unit <= 8 else 2,
            seq_indent=seq[True] >= seq[False],
            quote=quotes.most_common(1)[0][0] if quotes else "'",
        )


# --- writing values ------------------------------------------------------------------


def scalar(value: Any, style: YamlStyle, flow: bool = False, quote: bool = False) -> str:
    """A scalar as YAML writes it: plain when that reads back as the same string (and not
    `quote`: a `$ref`, quoted as specs write them), else in the file's quote character."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    text = str(value)
    if not quote and _plain_ok(text, flow):
        return text
    if style.quote == '"' or "\n" in text or not text.isprintable():
        import json

        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"


def _plain_ok(text: str, flow: bool) -> bool:
    if not text or text != text.strip() or not text.isprintable():
        return False
    if text[0] in "-?:,[]{}#&*!|>'\"%@`" or ": " in text or " #" in text or text.endswith(":"):
        return False
    if flow and any(c in text for c in ",[]{}"):
        return False
    tag: str = _resolver.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG


def _flow(value: Any, style: YamlStyle, quote: bool = False) -> str:
    if isinstance(value, dict):
        inner = ", ".join(
            f"{scalar(k, style, True)}: {_flow(v, style, k == '$ref')}" for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, style) for v in value) + "]"
    return scalar(value, style, True, quote)


def _escape(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


class _Lines:
    """Block lines being written, and where each new node starts (line, column)."""

    def __init__(self, style: YamlStyle) -> None:
        self.style = style
        self.lines: list[str] = []
        self.nodes: list[tuple[str, int, int]] = []

    def entry(self, key: Any, value: Any, col: int, pointer: str) -> None:
        style, pad = self.style, " " * col
        self.nodes.append((pointer, len(self.lines), col))
        head = f"{pad}{scalar(key, style)}:"
        if isinstance(value, dict) and value:
            self.lines.append(head)
            for k, v in value.items():
                self.entry(k, v, col + style.unit, f"{pointer}/{_escape(k)}")
        elif isinstance(value, list) and value:
            self.lines.append(head)
            self.items(value, col + (style.unit if style.seq_indent else 0), pointer, 0)
        else:
            self.lines.append(f"{head} {_flow(value, style, key == '$ref')}")

    def items(self, values: list[Any], col: int, pointer: str, first: int) -> None:
        for i, value in enumerate(values, first):
            at = f"{pointer}/{i}"
            if isinstance(value, dict) and value:
                start = len(self.lines)
                for k, v in value.items():
                    self.entry(k, v, col + 2, f"{at}/{_escape(k)}")
                self.lines[start] = " " * col + "- " + self.lines[start][col + 2 :]
                self.nodes.append((at, start, col + 2))
            else:
                self.nodes.append((at, len(self.lines), col + 2))
                self.lines.append(" " * col + "- " + _flow(value, self.style))


# --- finding a container in the text ---------------------------------------------------


@dataclass(slots=True)
class _Container:
    kind: str  # "block", "empty" (a null value: nothing written yet), "flow"
    key_line: int  # the line of the container's key (-1 for the document)
    key_col: int
    child_col: int  # where entries (or a sequence's dashes) are written
    value_at: int  # a flow collection's opening bracket; the offset after the key's `:`


class YamlFile:
    def __init__(self, src: SourceText) -> None:
        self.src = src
        self.text = src.text
        self.style = YamlStyle.detect(src)
        self._indents: dict[int, int | None] = {}
        self._aliases: set[str] | None = None
        self._containers: dict[tuple[str, bool], _Container] = {}
        self._entries: dict[str, list[tuple[Any, int]]] = {}

    def indent(self, index: int) -> int | None:
        """The column of line `index`'s first character, or None for a blank or comment line."""
        found = self._indents.get(index, -1)
        if found != -1:
            return found
        line = self.src.line(index)
        stripped = line.lstrip(" ")
        value = (
            None if not stripped.strip() or stripped.startswith("#") else len(line) - len(stripped)
        )
        self._indents[index] = value
        return value

    def _next_content(self, index: int) -> int | None:
        for j in range(index + 1, len(self.src.starts)):
            if self.indent(j) is not None:
                return j
        return None

    def _aliased(self, name: str) -> bool:
        if self._aliases is None:
            self._aliases = set(re.findall(r"(?:^|[\s\[{,:-])\*([^\s,\[\]{}]+)", self.text))
        return name in self._aliases

    def key_at(self, at: int) -> tuple[str, int] | None:
        """The key written at offset `at` and the offset just past its `:`."""
        text = self.text
        if at >= len(text):
            return None
        first = text[at]
        if first in "'\"":
            match = (_SQ if first == "'" else _DQ).match(text, at)
            if match is None:
                return None
            token = match.group()
            key = token[1:-1].replace("''", "'") if first == "'" else yaml.safe_load(token)
            colon = _COLON.match(text, match.end())
            if colon is None or not isinstance(key, str):
                return None
            return key, colon.end()
        plain = _PLAIN_KEY.match(text, at)
        if plain is None:
            return None
        return plain.group(1), plain.end()

    def container(self, pointer: str, sequence: bool) -> _Container:
        """The container at `pointer` as the text writes it (found once)."""
        found = self._containers.get((pointer, sequence))
        if found is None:
            found = self._containers[(pointer, sequence)] = self._container(pointer, sequence)
        return found

    def _container(self, pointer: str, sequence: bool) -> _Container:
        src, text = self.src, self.text
        if not pointer:
            first = self._next_content(-1)
            if first is None:
                raise CannotFix("an empty document")
            start = src.starts[first] + (self.indent(first) or 0)
            if text[start] in "{[":
                return _Container("flow", -1, -1, 0, start)
            return _Container("block", -1, -1, self.indent(first) or 0, start)
        at = src.locate(pointer)
        if at is None:
            raise CannotFix(f"#{pointer} is not in the text")
        found = self.key_at(at)
        token = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
        if found is None or found[0] != token:
            raise CannotFix(f"#{pointer}: the text does not have that key there")
        key_line = src.line_index(at)
        key_col = at - src.starts[key_line]
        value_at = found[1]
        i = value_at
        while True:
            while i < len(text) and text[i] in " \t":
                i += 1
            anchor = _ANCHOR.match(text, i) if i < len(text) and text[i] == "&" else None
            if anchor is None:
                break
            if self._aliased(anchor.group(1)):
                raise CannotFix(f"#{pointer} is a YAML anchor that aliases repeat")
            i = anchor.end()
        char = text[i] if i < len(text) else "\n"
        if char in "{[":
            return _Container("flow", key_line, key_col, key_col, i)
        if char not in "\r\n#":
            if char == "*":
                raise CannotFix(
                    f"#{pointer} is a YAML alias (`{text[i:].split(None, 1)[0]}`): a fix there "
                    "would change every place that repeats it; write it out, or use a $ref"
                )
            raise CannotFix(f"#{pointer} is a scalar, not a mapping the fix can add to")
        below = self._next_content(key_line)
        if below is not None:
            col = self.indent(below) or 0
            dash = self.src.line(below)[col : col + 2] in ("- ", "-")
            if col > key_col or (sequence and dash and col == key_col):
                if dash != sequence:
                    raise CannotFix(f"#{pointer} is not the kind of collection expected")
                return _Container("block", key_line, key_col, col, value_at)
        unit = self.style.unit
        child = key_col + (unit if not sequence or self.style.seq_indent else 0)
        return _Container("empty", key_line, key_col, child, value_at)

    def entries(self, pointer: str, box: _Container, keys: list[Any]) -> list[tuple[Any, int]]:
        """The original keys of a block mapping with the offset of each key, in text order
        (found once: what is added later is not in the original text)."""
        known = self._entries.get(pointer)
        if known is None:
            known = self._entries[pointer] = self._find_entries(pointer, box, keys)
        return known

    def _find_entries(
        self, pointer: str, box: _Container, keys: list[Any]
    ) -> list[tuple[Any, int]]:
        src = self.src
        found = []
        for key in keys:
            at = src.locate(f"{pointer}/{_escape(key)}")
            if at is None or src.line_index(at) <= box.key_line:
                raise CannotFix(f"#{pointer}/{key} is not written in this mapping")
            line = src.line_index(at)
            written = self.key_at(at)
            if at - src.starts[line] != box.child_col or written is None or written[0] != str(key):
                raise CannotFix(f"#{pointer}/{key}: the text does not have that key there")
            found.append((key, at))
        found.sort(key=lambda pair: pair[1])
        return found

    def end_of(self, line: int, child_col: int) -> int:
        """The offset just past the last line that belongs to the entry on `line`."""
        last = line
        keep = bool(_KEEP.search(self.src.line(line)))
        for j in range(line + 1, len(self.src.starts)):
            col = self.indent(j)
            if col is None:
                continue
            text = self.src.line(j)
            if col > child_col or (col == child_col and text[col : col + 2] in ("- ", "-")):
                last = j
                keep = keep or bool(_KEEP.search(text))
                continue
            break
        if keep:  # a `|+` block scalar keeps the blank lines after it: stay after them
            while last + 1 < len(self.src.starts) and not self.src.line(last + 1).strip():
                last += 1
        return self.src.line_end(last)

    def last_item(self, pointer: str, box: _Container, count: int) -> int:
        """The line of the last of a block sequence's `count` original items (its dash)."""
        if count < 1:
            raise CannotFix(f"#{pointer}: a sequence without items the text does not show")
        at = self.src.locate(f"{pointer}/{count - 1}")
        if at is None or self.src.line_index(at) <= box.key_line:
            raise CannotFix(f"#{pointer}: its last item is not in the text")
        dash = self.src.line_index(at)
        if self.indent(dash) != box.child_col or self.src.line(dash)[box.child_col] != "-":
            raise CannotFix(f"#{pointer}: its items are not where the text has them")
        return dash

    def next_is_node(self, pointer: str, at: int) -> bool:
        """Whether the first line with content at or after offset `at` is where the source
        map puts a node that follows the container at `pointer` (the next key of it or of
        one of its ancestors), or the end of the document: then text inserted at `at`
        cannot be inside the container's last entry."""
        src = self.src
        line = src.line_index(at) if at < len(self.text) else len(src.starts)
        if line < len(src.starts) and src.starts[line] != at:
            return False
        while line < len(src.starts) and self.indent(line) is None:
            line += 1
        if line >= len(src.starts):
            return True
        col = self.indent(line) or 0
        offset = src.starts[line] + col
        key = self.key_at(offset)
        probe = pointer
        while probe and key is not None:
            head = probe.rpartition("/")[0]
            where = src.locate(probe)
            if where is None:
                return False
            if where - src.starts[src.line_index(where)] == col:
                return src.locate(f"{head}/{_escape(key[0])}") == offset
            probe = head
        return False

    def above(self, offset: int, floor: int, column: int) -> int:
        """Where an entry inserted before the key at `offset` goes: before the comment lines
        right above that key that are not right of `column` (deeper lines may be a block
        scalar's text), below line `floor`."""
        line = self.src.line_index(offset)
        while line - 1 > floor:
            above = self.src.line(line - 1)
            stripped = above.lstrip(" ")
            if not stripped.startswith("#") or len(above) - len(stripped) > column:
                break
            line -= 1
        return self.src.starts[line]


# --- the edits for one request -----------------------------------------------------------


def yaml_edits(file: YamlFile, request: Request, node: Any) -> list[Edit]:
    """The edits that write `request.entries` into the container at `request.pointer`;
    `node` is that container's data now (the entries already in it)."""
    box = file.container(request.pointer, request.sequence)
    if box.kind == "flow":
        return _flow_edits(file, request, box, node)
    if request.sequence:
        return _sequence_edits(file, request, box, node)
    added = {e.key for e in request.entries}
    keys = [k for k in (node or {}) if k not in added]
    if box.kind == "empty":
        if keys:
            raise CannotFix(f"#{request.pointer} has entries the text does not show")
        entries = ranked(request)
        check = _wrapped(file, box, request.pointer, tuple(e.key for e in entries), False)
        return [_block_edit(file, entries, box, request.pointer, _after_key(file, box), check)]
    existing = file.entries(request.pointer, box, keys)
    if not existing and box.key_line >= 0:
        raise CannotFix(f"#{request.pointer}: no entries found")
    separated = _separated(file, existing, box)
    groups: dict[int | None, list[Entry]] = {}
    for entry in ranked(request):
        groups.setdefault(rank_order(request.rank, entry.key, existing), []).append(entry)
    edits = []
    src = file.src
    for index, entries in groups.items():
        new_keys = tuple(e.key for e in entries)
        if index is None:
            last_key, last_at = existing[-1]
            at = file.end_of(src.line_index(last_at), box.child_col)
            window = src.starts[src.line_index(last_at)]
            check = Check(window, 0, request.pointer, (last_key, *new_keys))
            if at - window > WINDOW_LIMIT:  # a long last entry: the entry after proves it
                proven = file.next_is_node(request.pointer, at)
                check = Check(None if proven else FULL, 0, request.pointer, new_keys)
            edits.append(
                _block_edit(file, entries, box, request.pointer, at, check, before=separated)
            )
            continue
        at = file.above(existing[index][1], box.key_line, box.child_col)
        if index:
            prev_key, prev_at = existing[index - 1]
            window = src.starts[src.line_index(prev_at)]
            check = Check(window, 0, request.pointer, (prev_key, *new_keys))
            if at - window > WINDOW_LIMIT:  # the parser put the next key right after
                check = Check(None, 0, request.pointer, new_keys)
        elif box.key_line >= 0:
            check = Check(src.starts[box.key_line], 0, request.pointer, new_keys, wrap=True)
        else:
            check = Check(None, 0, request.pointer, new_keys)
        edits.append(_block_edit(file, entries, box, request.pointer, at, check, after=separated))
    return edits


def _after_key(file: YamlFile, box: _Container) -> int:
    return file.src.line_end(box.key_line)


def _wrapped(
    file: YamlFile, box: _Container, pointer: str, keys: tuple[Any, ...], sequence: bool
) -> Check:
    """The check of entries written right below the container's own key line."""
    return Check(file.src.starts[box.key_line], 0, pointer, keys, wrap=True, sequence=sequence)


def _separated(file: YamlFile, existing: list[tuple[Any, int]], box: _Container) -> bool:
    """Whether blank lines separate the mapping's entries (then new ones get one too)."""
    if len(existing) < 2:
        return False
    previous = existing[0][1]
    for _, at in existing[1:]:
        start = file.above(at, box.key_line, box.child_col)
        line = file.src.line_index(start)
        if line == 0 or file.src.line(line - 1).strip():
            return False
        if _KEEP_ANYWHERE.search(file.text, previous, start):  # a `|+` scalar's own lines
            return False
        previous = at
    return True


def _block_edit(
    file: YamlFile,
    entries: list[Entry],
    box: _Container,
    pointer: str,
    at: int,
    check: Check,
    *,
    before: bool = False,
    after: bool = False,
) -> Edit:
    lines = _Lines(file.style)
    for entry in entries:
        if before:
            lines.lines.append("")
        lines.entry(entry.key, entry.value, box.child_col, f"{pointer}/{_escape(entry.key)}")
        if after:
            lines.lines.append("")
    return _edit(file, at, lines, check)


def _sequence_edits(file: YamlFile, request: Request, box: _Container, node: Any) -> list[Edit]:
    items = node if isinstance(node, list) else []
    first = len(items) - len(request.entries)
    values = [e.value for e in request.entries]
    lines = _Lines(file.style)
    lines.items(values, box.child_col, request.pointer, first)
    indexes = tuple(range(first, first + len(values)))
    if box.kind == "empty":
        if first:
            raise CannotFix(f"#{request.pointer} has items the text does not show")
        check = _wrapped(file, box, request.pointer, indexes, True)
        return [_edit(file, _after_key(file, box), lines, check)]
    dash = file.last_item(request.pointer, box, first)
    check = Check(file.src.starts[dash], 0, request.pointer, (first - 1, *indexes), sequence=True)
    return [_edit(file, file.end_of(dash, box.child_col), lines, check)]


def _edit(file: YamlFile, at: int, lines: _Lines, check: Check) -> Edit:
    src = file.src
    eol = src.eol(at - 1 if at else 0)
    offsets = [0]
    for line in lines.lines:
        offsets.append(offsets[-1] + len(line) + len(eol))
    body = eol.join(lines.lines) + eol
    lead = 0
    if at == len(src.text) and src.text and not src.text.endswith("\n"):
        body, lead = eol + body[: -len(eol)], len(eol)  # the last line had no line ending
    nodes = tuple((ptr, lead + offsets[line] + col) for ptr, line, col in lines.nodes)
    return Edit(at, at, body, nodes, (replace(check, end=len(body)),))


# --- flow collections ------------------------------------------------------------------


def flow_end(text: str, start: int) -> int:
    """The offset of the bracket that closes the flow collection opening at `start`."""
    depth = 0
    i = start
    prev = ""  # the last character that is not a space
    while i < len(text):
        char = text[i]
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i
        elif char in "'\"" and prev in "{[,:?":
            match = (_SQ if char == "'" else re.compile(r'"(?:[^"\\]|\\.)*"', re.S)).match(text, i)
            if match is None:
                break
            i = match.end()
            prev = char
            continue
        elif char == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            i = len(text) if end == -1 else end
            continue
        if not char.isspace():
            prev = char
        i += 1
    raise CannotFix("a flow collection that does not close")


def _flow_edits(file: YamlFile, request: Request, box: _Container, node: Any) -> list[Edit]:
    text, src = file.text, file.src
    close = flow_end(text, box.value_at)
    last = close - 1
    while last > box.value_at and text[last].isspace():
        last -= 1
    empty = last == box.value_at
    rest = text[close + 1 : src.line_end(src.line_index(close))].strip()
    same_line = src.line_index(close) == box.key_line
    if empty and same_line and box.key_line >= 0 and (not rest or rest.startswith("#")):
        # `headers: {}` becomes `headers:` with the entries below it
        unit = file.style.unit
        child = box.key_col + (unit if not request.sequence or file.style.seq_indent else 0)
        block = _Container("empty", box.key_line, box.key_col, child, box.value_at)
        lines = _Lines(file.style)
        if request.sequence:
            lines.items([e.value for e in request.entries], child, request.pointer, 0)
        else:
            for entry in ranked(request):
                lines.entry(
                    entry.key, entry.value, child, f"{request.pointer}/{_escape(entry.key)}"
                )
        start = box.value_at
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        keys = tuple(range(len(request.entries)))
        if not request.sequence:
            keys = tuple(e.key for e in ranked(request))
        check = _wrapped(file, block, request.pointer, keys, request.sequence)
        return [Edit(start, close + 1, ""), _edit(file, _after_key(file, block), lines, check)]
    style = file.style
    parts: list[str] = []
    nodes: list[tuple[str, int]] = []
    lead = "" if empty else " " if text[last] == "," else ", "
    length = len(lead)
    count = len(node) - len(request.entries) if isinstance(node, list) else 0
    for n, entry in enumerate(ranked(request)):
        if request.sequence:
            piece = _flow(entry.value, style)
            nodes.append((f"{request.pointer}/{count + n}", length))
        else:
            piece = f"{scalar(entry.key, style, True)}: {_flow(entry.value, style)}"
            nodes.append((f"{request.pointer}/{_escape(entry.key)}", length))
        parts.append(piece)
        length += len(piece) + 2
    inserted = lead + ", ".join(parts)
    full = Check(FULL, 0, request.pointer, ())  # a flow collection grows inside its lines
    return [Edit(last + 1, last + 1, inserted, tuple(nodes), (full,))]
