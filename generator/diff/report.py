"""Reporters of a diff: text (people: grouped by level, a summary line), JSON (machines;
stable shape `apiforge-diff/1`, docs/diff.md), SARIF 2.1.0 (locations in the new file, related
locations in the old), GitHub workflow annotations, and a Markdown changelog for release
notes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from generator import __version__
from generator.diff.engine import DiffResult
from generator.diff.kinds import LEVELS, all_kinds, kinds_by_id
from generator.diff.model import Located
from generator.lint.report import (
    SARIF_SCHEMA,
    artifact_uri,
    dumps,
    escape_data,
    escape_property,
)

JSON_FORMAT = "apiforge-diff/1"
DOCS_URI = "docs/diff/{id}.md"
FORMATS = ("text", "json", "sarif", "github", "markdown")
_COLOURS = {"breaking": "\x1b[31m", "warning": "\x1b[33m", "compatible": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
_TITLES = {
    "breaking": "Breaking changes",
    "warning": "Warnings",
    "compatible": "Compatible changes",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _place(file: str, line: int, column: int) -> str:
    return f"{file}:{line}:{column}" if file else "-"


def summary_line(result: DiffResult) -> str:
    counts = ", ".join(f"{result.count(level)} {level}" for level in LEVELS)
    text = (
        f"{_plural(len(result.changes), 'change')} ({counts}); client version bump: {result.bump}"
    )
    extra = []
    if result.acknowledged:
        extra.append(f"{len(result.acknowledged)} acknowledged in the spec")
    if result.suppressed:
        extra.append(f"{result.suppressed} suppressed by configuration")
    return text + (f"; {', '.join(extra)}" if extra else "")


def render_text(result: DiffResult, colour: bool = False) -> str:
    def paint(text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if colour else text

    lines: list[str] = []
    for level in LEVELS:
        group = [c for c in result.changes if c.level == level]
        if not group:
            continue
        lines.append(paint(f"{_TITLES[level]} ({len(group)})", _BOLD + _COLOURS[level]))
        for c in group:
            lines.append(f"  {paint(c.kind, _DIM)}  {c.message}")
            lines.append(
                f"    new: {_place(c.new_file, c.new_line, c.new_column)}"
                f"  old: {_place(c.old_file, c.old_line, c.old_column)}"
            )
            if len(c.operations) > 1 or (c.operations and c.change.model):
                shown = ", ".join(c.operations[:5])
                more = f" and {len(c.operations) - 5} more" if len(c.operations) > 5 else ""
                lines.append(f"    reaches: {shown}{more}")
            for effect in c.client[:5]:
                lines.append(f"    client: {effect}")
            if len(c.client) > 5:
                lines.append(f"    client: … and {len(c.client) - 5} more")
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def _change_json(c: Located) -> dict[str, Any]:
    return {
        "kind": c.kind,
        "level": c.level,
        "message": c.message,
        "new": {
            "file": c.new_file,
            "line": c.new_line,
            "column": c.new_column,
            "pointer": c.new_pointer,
        },
        "old": {
            "file": c.old_file,
            "line": c.old_line,
            "column": c.old_column,
            "pointer": c.old_pointer,
        },
        "operations": list(c.operations),
        "client": list(c.client),
    }


def json_data(result: DiffResult) -> dict[str, Any]:
    def spec(api: Any) -> dict[str, Any]:
        return {"root": api.root, "title": api.title, "version": api.version}

    return {
        "format": JSON_FORMAT,
        "tool": {"name": "apiforge", "version": __version__},
        "old": spec(result.old),
        "new": spec(result.new),
        "summary": {
            "changes": len(result.changes),
            **{level: result.count(level) for level in LEVELS},
            "acknowledged": len(result.acknowledged),
            "suppressed": result.suppressed,
            "bump": result.bump,
        },
        "changes": [_change_json(c) for c in result.changes],
        "acknowledged": [_change_json(c) for c in result.acknowledged],
    }


def render_json(result: DiffResult) -> str:
    return dumps(json_data(result)) + "\n"


_SARIF_LEVEL = {"breaking": "error", "warning": "warning", "compatible": "note"}


def _physical(file: str, line: int, column: int) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": artifact_uri(file)},
        "region": {"startLine": max(line, 1), "startColumn": max(column, 1)},
    }


def sarif_data(result: DiffResult) -> dict[str, Any]:
    kinds = list(all_kinds())
    index = {k.id: i for i, k in enumerate(kinds)}
    results = []
    for c in result.changes:
        entry: dict[str, Any] = {
            "ruleId": c.kind,
            "ruleIndex": index[c.kind],
            "level": _SARIF_LEVEL[c.level],
            "message": {"text": c.message},
            "locations": [{"physicalLocation": _physical(c.new_file, c.new_line, c.new_column)}]
            if c.new_file
            else [],
            "properties": {"pointer": c.new_pointer, "client": list(c.client)},
        }
        if c.old_file:
            entry["relatedLocations"] = [
                {
                    "id": 1,
                    "physicalLocation": _physical(c.old_file, c.old_line, c.old_column),
                    "message": {"text": f"before: #{c.old_pointer}"},
                }
            ]
        results.append(entry)
    rules = [
        {
            "id": k.id,
            "name": "".join(w.capitalize() for w in k.id.split("-")),
            "shortDescription": {"text": k.summary.replace("`", "")},
            "help": {"text": f"{k.summary.replace('`', '')}. See {DOCS_URI.format(id=k.id)}."},
            "defaultConfiguration": {"level": _SARIF_LEVEL[k.level]},
            "properties": {"tags": ["api", "openapi", "diff", *([k.pattern] if k.pattern else [])]},
        }
        for k in kinds
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "apiforge-diff",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render_sarif(result: DiffResult) -> str:
    return dumps(sarif_data(result)) + "\n"


_GITHUB_COMMAND = {"breaking": "error", "warning": "warning", "compatible": "notice"}


def render_github(result: DiffResult) -> str:
    lines = []
    for c in result.changes:
        place = (
            f"file={escape_property(c.new_file)},line={c.new_line},col={c.new_column},"
            if c.new_file
            else ""
        )
        text = c.message + "".join(f"\nclient: {e}" for e in c.client[:5])
        lines.append(
            f"::{_GITHUB_COMMAND[c.level]} {place}title={escape_property(c.kind)}::"
            f"{escape_data(text)}"
        )
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def render_markdown(result: DiffResult) -> str:
    """A changelog section for the client's release notes."""
    old, new = result.old, result.new
    lines = [
        f"## {new.title} {new.version}",
        "",
        f"Changes from {old.version} to {new.version}: client version bump **{result.bump}**.",
        "",
    ]
    for level in LEVELS:
        group = [c for c in result.changes if c.level == level]
        if not group:
            continue
        lines.append(f"### {_TITLES[level]}")
        lines.append("")
        for c in group:
            summary = kinds_by_id()[c.kind].summary
            lines.append(
                f"- {_md(c.message)} ([{c.kind}]({DOCS_URI.format(id=c.kind)}): {summary})"
            )
            for effect in c.client[:5]:
                lines.append(f"  - client: `{effect}`")
        lines.append("")
    if not result.changes:
        lines += ["No change a client can see.", ""]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


RENDERERS: dict[str, Callable[[DiffResult], str]] = {
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "markdown": render_markdown,
}


def render(result: DiffResult, fmt: str, colour: bool = False) -> str:
    return render_text(result, colour) if fmt == "text" else RENDERERS[fmt](result)


def render_kinds(fmt: str = "text") -> str:
    kinds = all_kinds()
    if fmt == "json":
        data = [
            {"id": k.id, "level": k.level, "pattern": k.pattern, "summary": k.summary}
            for k in kinds
        ]
        return json.dumps(data, indent=2) + "\n"
    width = max(len(k.id) for k in kinds)
    return "".join(f"{k.id.ljust(width)}  {k.level.ljust(10)}  {k.summary}\n" for k in kinds)
