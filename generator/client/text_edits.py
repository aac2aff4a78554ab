"""Edits of a Python module's text at the positions `ast` gives: the rest of the text
(descriptions, formatting) stays byte for byte."""

from __future__ import annotations

import ast

__all__ = ["Edits"]


class Edits:
    """Replacements of (line, start byte, end byte) spans of one module's text."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        """`first_line`: the line number `ast` gives the first line of `text` (a segment of
        the module it parsed, which starts at the start of a line)."""
        self.lines = text.encode("utf-8", "surrogatepass").split(b"\n")
        self.edits: list[tuple[int, int, int, int, str]] = []  # start line/col, end line/col
        self.first = first_line

    def replace(self, node: ast.expr | ast.stmt, new: str) -> None:
        assert node.end_lineno is not None and node.end_col_offset is not None
        first = self.first
        self.edits.append(
            (
                node.lineno - first,
                node.col_offset,
                node.end_lineno - first,
                node.end_col_offset,
                new,
            )
        )

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """The text of `node` (`ast.get_source_segment`, which splits the whole text again
        at every call: seconds on a big module)."""
        assert node.end_lineno is not None and node.end_col_offset is not None
        start, end = node.lineno - self.first, node.end_lineno - self.first
        if start == end:
            return self.lines[start][node.col_offset : node.end_col_offset].decode()
        parts = [
            self.lines[start][node.col_offset :],
            *self.lines[start + 1 : end],
            self.lines[end][: node.end_col_offset],
        ]
        return b"\n".join(parts).decode("utf-8", "surrogatepass")

    def lines_of(self, node: ast.stmt) -> str:
        """The whole lines of the statement `node` (a top-level one: from its first column),
        its trailing comment (`# type: ignore[...]`) included."""
        assert node.end_lineno is not None
        lines = self.lines[node.lineno - self.first : node.end_lineno - self.first + 1]
        return b"\n".join(lines).decode("utf-8", "surrogatepass")

    def rename_class(self, node: ast.ClassDef, new: str) -> None:
        """The name in `class Name(...)` (a class without decorators) made `new`."""
        line = node.lineno - self.first
        start = self.lines[line].index(b"class ", node.col_offset) + len(b"class ")
        end = start + len(node.name.encode())
        self.edits.append((line, start, line, end, new))

    def insert_after(self, node: ast.expr, new: str) -> None:
        assert node.end_lineno is not None and node.end_col_offset is not None
        line, col = node.end_lineno - self.first, node.end_col_offset
        self.edits.append((line, col, line, col, new))

    def append_line(self, node: ast.stmt, new: str) -> None:
        """`new` on a line of its own after the statement `node`."""
        assert node.end_lineno is not None
        line = node.end_lineno - self.first
        end = len(self.lines[line])
        self.edits.append((line, end, line, end, "\n" + new))

    def apply(self) -> str:
        lines = self.lines
        for start, start_col, end, end_col, new in sorted(self.edits, reverse=True):
            head = lines[start][:start_col]
            tail = lines[end][end_col:]
            lines[start : end + 1] = [head + new.encode() + tail]
        return b"\n".join(lines).decode("utf-8", "surrogatepass")
