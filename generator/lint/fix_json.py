"""JSON for `apiforge lint --fix`: write new members into an object (or items into an
array) of the original text, in the file's indentation and separators.

A JSON object cannot grow at its end without a comma on its last member's line, so a new
member goes on lines of its own *before* an existing one: the first that ranks after it (so
`409` lands before `500`), else the object's first member (the document's last one, so that
`openapi` stays first). An empty `{}` or `[]` opens into
lines (that one line changes); a file without line breaks (minified) gets its new members
inside its one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from generator.lint.fix_text import (
    CannotFix,
    Check,
    Edit,
    Entry,
    Request,
    SourceText,
    rank_order,
    ranked,
)

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_COLON = re.compile(r"\s*:\s*")
_PLAIN_NAME = re.compile(r'[^"\\\x00-\x1f\x7f-\uffff]*\Z')


@dataclass(frozen=True, slots=True)
class JsonStyle:
    unit: str | None  # one level of indentation; None: the file has no line breaks
    colon: str  # ": " or ":"
    comma: str  # ", " or "," between members on one line

    @classmethod
    def detect(cls, src: SourceText) -> JsonStyle:
        text = src.text
        sample = text[:4000]
        colon = ": " if '": ' in sample else ":"
        if len(src.starts) < 2:
            return cls(None, colon, ", " if '", "' in sample else ",")
        second = src.line(1)
        unit = second[: len(second) - len(second.lstrip(" \t"))] or "  "
        return cls(unit, colon, ", ")


def _escape(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


class JsonFile:
    def __init__(self, src: SourceText) -> None:
        self.src = src
        self.text = src.text
        self.style = JsonStyle.detect(src)
        self._openings: dict[str, int] = {}
        self._written: dict[tuple[str, str], str] = {}

    def _key_at(self, at: int, expected: str | None = None) -> tuple[str, int] | None:
        """The member name written at `at` and the offset after its colon (`expected`: the
        name it should be, checked without decoding when it has nothing to escape)."""
        if expected is not None and _PLAIN_NAME.match(expected):
            quoted = f'"{expected}"'
            if self.text.startswith(quoted, at):
                colon = _COLON.match(self.text, at + len(quoted))
                if colon is not None and ":" in colon.group():
                    return expected, colon.end()
                return None
        match = _STRING.match(self.text, at)
        if match is None:
            return None
        try:
            key = json.loads(match.group())
        except ValueError:
            return None
        colon = _COLON.match(self.text, match.end())
        if colon is None or ":" not in colon.group():
            return None
        return key, colon.end()

    def opening(self, pointer: str) -> int:
        """The offset of the `{` or `[` of the container at `pointer`."""
        found = self._openings.get(pointer)
        if found is None:
            found = self._openings[pointer] = self._opening(pointer)
        return found

    def _opening(self, pointer: str) -> int:
        text = self.text
        if not pointer:
            at = len(text) - len(text.lstrip())
            if not text[at : at + 1] == "{":
                raise CannotFix("the document is not an object")
            return at
        found_at = self.src.locate(pointer)
        token = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
        found = self._key_at(found_at, token) if found_at is not None else None
        if found is None or found[0] != token:
            raise CannotFix(f"#{pointer}: the text does not have that member there")
        start = found[1]
        if text[start : start + 1] not in ("{", "["):
            raise CannotFix(f"#{pointer} is not an object or array")
        return start

    def member_at(self, pointer: str, key: Any, sequence: bool) -> int:
        """The offset of an original member's name (or item) of the container at `pointer`,
        checked against the text. A JSON object's members are in the data in the text's
        order, so only the one a new member goes before is looked up."""
        at = self.src.locate(f"{pointer}/{_escape(key)}")
        if at is None:
            raise CannotFix(f"#{pointer}/{key} is not in the text")
        if not sequence:
            written = self._key_at(at, str(key))
            if written is None or written[0] != str(key):
                raise CannotFix(f"#{pointer}/{key}: the text does not have that member there")
        return at

    def render(self, entry: Entry, sequence: bool, indent: str, compact: bool = False) -> str:
        """One member (or item) as the file writes it, its first line not indented
        (`compact`: on one line, as an object written on one line has its members)."""
        style = self.style
        if style.unit is None or compact:
            value = json.dumps(
                entry.value, ensure_ascii=False, separators=(style.comma, style.colon)
            )
        else:  # the same value at the same indentation is written once (shared $refs)
            key = (json.dumps(entry.value, ensure_ascii=False, sort_keys=False), indent)
            value = self._written.get(key) or ""
            if not value:
                eol = "\r\n" if self.src.crlf else "\n"
                value = _pretty(entry.value, style.unit, indent, style.colon, eol)
                self._written[key] = value
        if sequence:
            return value
        return json.dumps(str(entry.key), ensure_ascii=False) + style.colon + value


def _pretty(value: Any, unit: str, indent: str, colon: str, eol: str) -> str:
    """`json.dumps(value, indent=unit)` with `eol` line endings, its lines after the first
    indented by `indent` (json's own indenting encoder is pure Python and slower)."""
    if isinstance(value, dict) and value:
        inner = indent + unit
        members = [
            inner
            + json.dumps(str(k), ensure_ascii=False)
            + colon
            + _pretty(v, unit, inner, colon, eol)
            for k, v in value.items()
        ]
        return "{" + eol + ("," + eol).join(members) + eol + indent + "}"
    if isinstance(value, list) and value:
        inner = indent + unit
        items = [inner + _pretty(v, unit, inner, colon, eol) for v in value]
        return "[" + eol + ("," + eol).join(items) + eol + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def json_edits(file: JsonFile, request: Request, node: Any) -> list[Edit]:
    """The edits that write `request.entries` into the object (or array) at
    `request.pointer`; `node` is its data now (the new entries already in it)."""
    src, text, style = file.src, file.text, file.style
    opening = file.opening(request.pointer)
    if request.sequence:
        count = len(node) - len(request.entries) if isinstance(node, list) else 0
        keys: list[Any] = list(range(count))
    else:
        added = {e.key for e in request.entries}
        keys = [k for k in (node or {}) if k not in added]
    if not keys:
        return [_open_empty(file, request, opening)]
    existing = [(k, 0) for k in keys]  # in the text's order (offsets: when needed)
    # a member that ranks last goes first (the document's own: before its last member, so
    # that `openapi` stays the first thing a reader, or a tool sniffing the file, sees)
    last = len(existing) - 1 if not request.pointer and not request.sequence else 0
    groups: dict[int, list[Entry]] = {}
    for entry in ranked(request):
        index = None if request.sequence else rank_order(request.rank, entry.key, existing)
        groups.setdefault(last if index is None else index, []).append(entry)
    edits = []
    for index, entries in groups.items():
        at = file.member_at(request.pointer, keys[index], request.sequence)
        if at <= opening:
            raise CannotFix(f"#{request.pointer}/{keys[index]} is not inside its object")
        line = src.line_index(at)
        start = src.starts[line]
        pointers = [_pointer(request, e, n) for n, e in enumerate(entries)]
        if style.unit is not None and not text[start:at].strip():
            indent = text[start:at]
            eol = src.eol(at)
            parts, nodes, length = [], [], 0
            for entry, ptr in zip(entries, pointers, strict=True):
                piece = indent + file.render(entry, request.sequence, indent) + "," + eol
                nodes.append((ptr, length + len(indent)))
                parts.append(piece)
                length += len(piece)
            body = "".join(parts)
            check = _members_check(request, entries, body)
            edits.append(Edit(start, start, body, tuple(nodes), check))
        else:  # on one line with what follows it
            parts, nodes, length = [], [], 0
            for entry, ptr in zip(entries, pointers, strict=True):
                piece = file.render(entry, request.sequence, "", compact=True)
                piece += "," + style.comma.lstrip(",")
                nodes.append((ptr, length))
                parts.append(piece)
                length += len(piece)
            body = "".join(parts)
            check = _members_check(request, entries, body)
            edits.append(Edit(at, at, body, tuple(nodes), check))
    return edits


def _members_check(
    request: Request, entries: list[Entry], body: str, form: str = "json-members"
) -> tuple[Check]:
    """How to prove an edit: its text, parsed as members (or as the whole container), must
    be `entries` of the planned data."""
    if request.sequence:  # a sequence's new items are all in one edit, first
        keys: tuple[Any, ...] = tuple(range(len(entries)))
    else:
        keys = tuple(e.key for e in entries)
    return (Check(None, len(body), request.pointer, keys, sequence=request.sequence, form=form),)


def _pointer(request: Request, entry: Entry, n: int) -> str:
    if request.sequence:
        return f"{request.pointer}/{n}"
    return f"{request.pointer}/{_escape(entry.key)}"


def _open_empty(file: JsonFile, request: Request, opening: int) -> Edit:
    """`{}` (or `[]`) with the entries in it: on lines of their own when the file has lines."""
    src, text, style = file.src, file.text, file.style
    close = opening + 1
    while close < len(text) and text[close].isspace():
        close += 1
    if close >= len(text) or text[close] not in "}]":
        raise CannotFix(f"#{request.pointer}: members the data does not show")
    entries = ranked(request)
    pointers = [_pointer(request, e, n) for n, e in enumerate(entries)]
    if style.unit is None:
        parts = [file.render(e, request.sequence, "") for e in entries]
        nodes, length = [], 1
        for ptr, part in zip(pointers, parts, strict=True):
            nodes.append((ptr, length))
            length += len(part) + 1
        body = text[opening] + ",".join(parts) + text[close]
        check = _members_check(request, entries, body, "json-container")
        return Edit(opening, close + 1, body, tuple(nodes), check)
    line = src.line_index(opening)
    start = src.starts[line]
    base = text[start : start + len(text[start:opening]) - len(text[start:opening].lstrip())]
    indent = base + style.unit
    eol = src.eol(opening)
    body = text[opening] + eol
    nodes = []
    for n, (entry, ptr) in enumerate(zip(entries, pointers, strict=True)):
        nodes.append((ptr, len(body) + len(indent)))
        body += indent + file.render(entry, request.sequence, indent)
        body += ("," if n + 1 < len(entries) else "") + eol
    body += base + text[close]
    check = _members_check(request, entries, body, "json-container")
    return Edit(opening, close + 1, body, tuple(nodes), check)
