"""From a fix plan to files: the edits of each file, proof that the new text reads back as
the plan's data, the unified diff, where things are in the new text, and the atomic write.

Nothing is written unless every changed file of the spec parses back to exactly the data the
plan made (the original data plus the additions, compared value by value); then each file
is written to a temporary file beside it and renamed over it, all files of a spec after all
their temporary files are complete, and only if no file changed since it was read.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.ir import Where
from generator.lint.fix_json import JsonFile, json_edits
from generator.lint.fix_plan import FixPlan, member
from generator.lint.fix_text import (
    FULL,
    CannotFix,
    Check,
    Edit,
    Shift,
    SourceText,
    apply_edits,
    line_starts,
)
from generator.lint.fix_yaml import YamlFile, yaml_edits
from generator.spec.load import Document, parse_document

_REPORT = "nothing was written; please report this with the spec (or `--diff` output)"


@dataclass(slots=True)
class FileChange:
    """One file of the spec and what the fixes make of it."""

    doc: Document
    src: SourceText
    edits: list[Edit]
    new: str
    nodes: dict[str, int] = field(default_factory=dict)  # a new node → its offset in `new`
    renumber: dict[str, int] = field(default_factory=dict)  # JSON sequence → items put first

    @property
    def name(self) -> str:
        return self.doc.name

    def new_bytes(self) -> bytes:
        return (b"\xef\xbb\xbf" if self.src.bom else b"") + self.new.encode("utf-8")


def plan_changes(plan: FixPlan) -> list[FileChange]:
    """The new text of every file the plan changes (in the order the spec reads them)."""
    changes = []
    for name, doc in plan.documents.items():
        requests = [
            r for (doc_name, _), r in plan.requests.items() if doc_name == name and r.entries
        ]
        if not requests:
            continue
        file = plan.text_file(doc)
        placed: list[tuple[Edit, int]] = []
        renumber = {}
        for request in requests:
            node = plan.get(Where(doc.name, request.pointer))
            try:
                if isinstance(file, JsonFile):
                    found = json_edits(file, request, node)
                    if request.sequence:
                        renumber[request.pointer] = len(request.entries)
                else:
                    assert isinstance(file, YamlFile)
                    found = yaml_edits(file, request, node)
            except CannotFix as exc:  # the plan checked every container: not expected
                raise ApiforgeError(
                    Problem(f"cannot write the fixes into #{request.pointer}: {exc}", doc.name),
                    _REPORT,
                ) from None
            depth = request.pointer.count("/")
            placed.extend((edit, depth) for edit in found)
        edits = _merge(placed)
        new = apply_edits(file.src.text, edits)
        shift = Shift(edits)
        nodes: dict[str, int] = {}
        for edit in edits:
            at = shift(edit.start) - (len(edit.text) if edit.start == edit.end else 0)
            for pointer, offset in edit.nodes:
                nodes.setdefault(pointer, at + offset)
        changes.append(FileChange(doc, file.src, edits, new, nodes, renumber))
    return changes


def _merge(placed: list[tuple[Edit, int]]) -> list[Edit]:
    """One edit per offset: insertions at the same place go deepest container first (its
    entries end where the shallower container's new keys begin)."""
    by_start: dict[tuple[int, int], list[tuple[Edit, int]]] = {}
    for edit, depth in placed:
        by_start.setdefault((edit.start, edit.end), []).append((edit, depth))
    merged = []
    for (start, end), group in by_start.items():
        if len(group) == 1:
            merged.append(group[0][0])
            continue
        if start != end:
            raise ApiforgeError(Problem(f"two fixes replace the same text ({_REPORT})"))
        group.sort(key=lambda pair: -pair[1])
        text, nodes, checks = "", list[tuple[str, int]](), list[Check]()
        for edit, _ in group:
            nodes.extend((p, len(text) + o) for p, o in edit.nodes)
            checks.extend(
                replace(c, offset=c.offset + len(text), end=c.end + len(text)) for c in edit.checks
            )
            text += edit.text
        merged.append(Edit(start, end, text, tuple(nodes), tuple(checks)))
    return merged


# --- proof --------------------------------------------------------------------------------


def verify(changes: list[FileChange], *, keep_cache: bool) -> None:
    """Prove that every new text reads as the data the plan made, or raise (and nothing is
    written). A YAML file is proven edit by edit (`local_proof`) when it can be; a JSON
    file, or a YAML file whose edits cannot all be proven so, is parsed whole and compared.
    `keep_cache`: a whole parse's result goes into the parse caches (`--fix`: the next run
    reads this text)."""
    for change in changes:
        doc = change.doc
        if local_proof(change):
            continue
        try:
            parsed = parse_document(
                doc.name, doc.path if keep_cache else None, change.new_bytes()
            ).data
        except ApiforgeError as exc:
            raise ApiforgeError(
                Problem(f"the fixed text does not parse: {exc.problems[0].message}", doc.name),
                _REPORT,
            ) from None
        if not same_data(parsed, doc.data):
            raise ApiforgeError(
                Problem("the fixed text does not read back as the fixes meant", doc.name),
                _REPORT,
            )


def local_proof(change: FileChange) -> bool:
    """Whether every edit of a YAML file is proven by parsing only the stretch around it:
    the entry before the new ones (or the container's key line) and the new entries. That
    stretch must read as those entries of the planned data: the new ones are what they
    should be, at the level they should be, and the entry before them ends where they begin.
    The entry after them is where the parser itself placed it (the source map), and the text
    after it is unchanged. False when a stretch cannot show it (a flow collection, an alias
    to outside the stretch, a stretch too long to be worth it): then the whole file is parsed.
    """
    from generator.spec.load import gc_paused, load_yaml_all

    if change.doc.is_json:
        return _json_proof(change)
    shift = Shift(change.edits)
    new = change.new
    windows: list[tuple[str, Check]] = []
    total = 0
    for edit in change.edits:
        start = shift(edit.start) - (len(edit.text) if edit.start == edit.end else 0)
        for check in edit.checks:
            if check.window == FULL:
                return False
            first = start + check.offset if check.window is None else shift(check.window)
            last = start + check.end
            total += last - first
            windows.append((new[first:last], check))
    if not windows or total > len(new) // 2:
        return False
    texts = list(dict.fromkeys(text for text, _ in windows))  # the same text reads the same
    stream = "".join(text if i == 0 else "---\n" + text for i, text in enumerate(texts))
    try:
        with gc_paused():
            parsed = load_yaml_all(stream)
    except Exception:  # e.g. an alias whose anchor is outside the stretch
        return False
    if len(parsed) != len(texts):
        return False
    read = dict(zip(texts, parsed, strict=True))
    data = change.doc.data
    return all(same_data(read[text], _expected(data, check)) for text, check in windows)


def _json_proof(change: FileChange) -> bool:
    """Every JSON edit's text parses as the members (or the container) it should be. Where
    it goes needs no parse: before a member the source map placed, at the start of its line
    with a comma after each new member, or in place of an empty `{}`/`[]`."""
    data = change.doc.data
    for edit in change.edits:
        for check in edit.checks:
            text = edit.text[check.offset : check.end]
            if check.form == "json-members":
                text = text.strip()
                if not text.endswith(","):
                    return False
                text = (
                    ("[" if check.sequence else "{") + text[:-1] + ("]" if check.sequence else "}")
                )
            elif check.form != "json-container":
                return False
            try:
                value = json.loads(text)
            except ValueError:
                return False
            if not same_data(value, _expected(data, check)):
                return False
    return True


def _expected(data: Any, check: Check) -> Any:
    """What a check's stretch must read as, from the planned data."""
    container = _at(data, check.pointer)
    if check.sequence:
        expected: Any = [container[i] for i in check.keys]
    else:
        expected = {k: container[k] for k in check.keys}
    if check.wrap:
        head, _, token = check.pointer.rpartition("/")
        parent = _at(data, head)
        token = token.replace("~1", "/").replace("~0", "~")
        key = next(k for k in parent if str(k) == token)
        expected = {key: expected}
    return expected


def _at(data: Any, pointer: str) -> Any:
    node = data
    for raw in pointer.split("/")[1:] if pointer else ():
        token = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[member(node, token)]
    return node


def same_data(a: Any, b: Any) -> bool:
    """Equal data, NaN equal to NaN (which `==` says it is not)."""
    if a == b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_data(x, y) for x, y in zip(a, b, strict=True))
    return isinstance(a, float) and math.isnan(a) and math.isnan(b)


# --- where nodes are in the new text ------------------------------------------------------


class NewTextMap:
    """A source map of a changed file's new text: a node the fixes added is where they wrote
    it; any other is where the old text had it, moved by the edits before it."""

    def __init__(self, change: FileChange, old: Any) -> None:
        self._old = old  # the document's source map of the old text (or None: the document)
        self._change = change
        self._shift = Shift(change.edits)
        self._starts = line_starts(change.new)

    def locate(self, pointer: str) -> tuple[int, int]:
        change = self._change
        probe = pointer
        while probe:
            at = change.nodes.get(probe)
            if at is not None:
                return self._line_column(at)
            probe = probe.rsplit("/", 1)[0]
        line, column = self._old.locate(self._old_pointer(pointer))
        src = change.src
        return self._line_column(self._shift(src.offset(line, column)))

    def _old_pointer(self, pointer: str) -> str:
        """`pointer` in the old text's terms: JSON items put first moved the others on."""
        if not self._change.renumber:
            return pointer
        tokens = pointer.split("/")
        for i in range(len(tokens) - 1, 0, -1):
            head = "/".join(tokens[:i])
            put_first = self._change.renumber.get(head)
            if put_first and tokens[i].isdigit():
                tokens[i] = str(int(tokens[i]) - put_first)
        return "/".join(tokens)

    def _line_column(self, offset: int) -> tuple[int, int]:
        import bisect

        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


def use_new_text(changes: list[FileChange]) -> None:
    """Make each changed document answer `locate` for its new text."""
    for change in changes:
        doc = change.doc
        old = doc._source_map
        if old is None:
            from generator.spec.sourcemap import SourceMap

            old = SourceMap.for_document(doc)
        doc._source_map = NewTextMap(change, old)


# --- the diff -------------------------------------------------------------------------------


def unified_diff(change: FileChange, context: int = 3) -> str:
    """The unified diff of one file, made from its edits (not by comparing texts)."""
    src = change.src
    old_lines = src.text.splitlines(keepends=True)
    blocks = _line_blocks(change)
    if not blocks:
        return ""
    name = _diff_name(change.name)
    out = [f"--- {name}\n", f"+++ {'b/' + name[2:] if name.startswith('a/') else name}\n"]
    delta = 0  # new line number minus old, before the current block
    i = 0
    while i < len(blocks):
        j = i
        while j + 1 < len(blocks) and blocks[j + 1][0] - (blocks[j][0] + len(blocks[j][1])) <= (
            2 * context
        ):
            j += 1
        first = max(blocks[i][0] - context, 0)
        last = min(blocks[j][0] + len(blocks[j][1]) + context, len(old_lines))
        body: list[str] = []
        at = first
        added = removed = 0
        hunk_delta = delta
        for a, old, new in blocks[i : j + 1]:
            body.extend(" " + line for line in old_lines[at:a])
            body.extend("-" + line for line in old)
            body.extend("+" + line for line in new)
            added += len(new)
            removed += len(old)
            at = a + len(old)
        body.extend(" " + line for line in old_lines[at:last])
        old_count = last - first
        new_count = old_count - removed + added
        out.append(f"@@ -{_range(first, old_count)} +{_range(first + hunk_delta, new_count)} @@\n")
        out.extend(_terminated(line) for line in body)
        delta += added - removed
        i = j + 1
    return "".join(out)


def _range(start: int, count: int) -> str:
    return f"{start + 1 if count else start},{count}"


def _terminated(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def _diff_name(name: str) -> str:
    name = name.replace(os.sep, "/")
    return name if name.startswith("/") else "a/" + name


def _line_blocks(change: FileChange) -> list[tuple[int, list[str], list[str]]]:
    """The edits as whole lines: (first old line, the old lines, the new lines). Edits that
    touch one line (two insertions into one flow mapping) make one block."""
    src = change.src
    text = src.text
    groups: list[tuple[int, int, list[Edit]]] = []  # (first offset, end offset, edits)
    for edit in sorted(change.edits, key=lambda e: (e.start, e.end)):
        start, end = edit.start, edit.end
        at_line_start = start == len(text) or src.starts[src.line_index(start)] == start
        tail_ok = start < len(text) or text.endswith("\n")
        if start == end and at_line_start and tail_ok and edit.text.endswith("\n"):
            a = b = start  # lines inserted between lines
        else:
            line = src.line_index(min(start, len(text) - 1))
            a = src.starts[line]
            b = src.line_end(src.line_index(end - 1) if end > start else line)
        if groups and (a < groups[-1][1] or (a == b and a < groups[-1][1])):
            first, last, edits = groups.pop()
            groups.append((first, max(last, b), [*edits, edit]))
        else:
            groups.append((a, b, [edit]))
    blocks = []
    for a, b, edits in groups:
        parts, at = [], a
        for edit in edits:
            parts.append(text[at : edit.start])
            parts.append(edit.text)
            at = edit.end
        parts.append(text[at:b])
        first = src.line_index(a) if a < len(text) else len(text.splitlines())
        blocks.append(
            (first, text[a:b].splitlines(keepends=True), "".join(parts).splitlines(keepends=True))
        )
    return blocks


# --- writing ---------------------------------------------------------------------------------


def write_atomically(changes: list[FileChange]) -> None:
    """Write every changed file of one spec, all or none: each to a temporary file in its
    own directory; when all are complete and no file changed since it was read, each is
    renamed over its file (a rename is atomic: a reader sees the old file or the new one,
    never half of one). Should a rename fail, the files already renamed get their old text
    back (kept as hard links until the end). An error before the renames changes nothing."""
    staged: list[tuple[str, str]] = []  # (temporary file, the file it replaces)
    kept: list[tuple[str, str]] = []  # (the old file's link, the file)
    done: list[int] = []
    try:
        for change in changes:
            staged.append((_stage(change), os.path.realpath(str(change.doc.path))))
        for _, real in staged:
            kept.append((_keep(real), real))
        for i, (tmp, real) in enumerate(staged):
            try:
                os.replace(tmp, real)
            except OSError as exc:
                raise ApiforgeError(
                    Problem(f"cannot write the fixed file: {exc.strerror}", real),
                    "the spec's other files were put back as they were",
                ) from None
            done.append(i)
    except BaseException as exc:
        for i in reversed(done):  # put back what was already renamed
            old, real = kept[i]
            with suppress(OSError):
                os.replace(old, real)
        if isinstance(exc, OSError):
            raise ApiforgeError(Problem(f"cannot write the fixed spec: {exc}")) from None
        raise
    finally:
        for tmp, _ in staged:
            with suppress(OSError):
                os.unlink(tmp)
        for old, _ in kept:
            with suppress(OSError):
                os.unlink(old)


def _stage(change: FileChange) -> str:
    """The new text in a temporary file beside the file (same mode), checked to be still
    what was read."""
    path = change.doc.path
    if path is None:
        raise ApiforgeError(Problem("standard input cannot be fixed in place"), "use --diff")
    real = os.path.realpath(path)
    folder, base = os.path.split(real)
    writable = os.stat(real).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    if not writable or not os.access(real, os.W_OK):  # (root may write, but it says no)
        raise ApiforgeError(
            Problem("the file is read-only: nothing was written", change.name),
            "make it writable (chmod u+w), or see the fix with --diff",
        )
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".apiforge", dir=folder)
    except OSError as exc:
        raise ApiforgeError(
            Problem(f"cannot write the fixed file: {exc.strerror}", change.name),
            "check the directory's permissions",
        ) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(change.new_bytes())
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(os.stat(real).st_mode))
        if Path(real).read_bytes() != change.doc.text:
            raise ApiforgeError(
                Problem("the file changed while it was being fixed", change.name),
                "run the command again",
            )
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise ApiforgeError(
                Problem(f"cannot write the fixed file: {exc.strerror}", change.name)
            ) from None
        raise
    return tmp


def _keep(real: str) -> str:
    """A second name for the file's old text, to put it back if a later rename fails."""
    folder, base = os.path.split(real)
    for n in range(100):
        old = os.path.join(folder, f".{base}.{os.getpid()}.{n}.apiforge-old")
        try:
            os.link(real, old)
            return old
        except FileExistsError:
            continue
        except OSError:  # no hard links here: a copy
            import shutil

            shutil.copy2(real, old)
            return old
    raise ApiforgeError(Problem(f"cannot write {real}: too many leftover temporary files"))
