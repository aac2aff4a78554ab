"""Reporters: findings as text (people), JSON (machines; stable shape, docs/lint.md), SARIF
2.1.0 (code scanning) and GitHub workflow annotations."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from generator import __version__
from generator.lint.engine import Finding, LintResult
from generator.lint.model import Rule
from generator.lint.registry import all_rules

JSON_FORMAT = "apiforge-lint/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS_URI = "docs/rules/{id}.md"

_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(result: LintResult) -> str:
    api = result.api
    checked = (
        f"{_plural(len(api.operations), 'operation')}, {_plural(len(api.webhooks), 'webhook')}"
    )
    if not result.findings:
        return f"no findings ({checked} checked, {len(result.rules_run)} rules)"
    counts = ", ".join(
        _plural(result.count(s), s) for s in ("error", "warning", "info") if result.count(s)
    )
    text = f"{_plural(len(result.findings), 'finding')}: {counts} ({checked} checked)"
    if result.suppressed:
        text += f"; {result.suppressed} suppressed by configuration"
    return text


def render_text(result: LintResult, colour: bool = False) -> str:
    """`file:line:col  severity  rule  message`, one group per file, then a summary."""

    def paint(text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if colour else text

    lines: list[str] = []
    current: str | None = None
    width = max((len(f"{f.file}:{f.line}:{f.column}") for f in result.findings), default=0)
    for f in result.findings:
        if current is not None and f.file != current:
            lines.append("")
        current = f.file
        where = f"{f.file}:{f.line}:{f.column}".ljust(width)
        severity = paint(f.severity.ljust(7), _COLOURS[f.severity])
        lines.append(f"{paint(where, _BOLD)}  {severity}  {paint(f.rule, _DIM)}  {f.message}")
    if lines:
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def _operation_json(f: Finding) -> dict[str, Any] | None:
    op = f.operation
    if op is None:
        return None
    return {"id": op.id, "method": op.method.upper(), "path": op.path}


def json_data(result: LintResult) -> dict[str, Any]:
    api = result.api
    return {
        "format": JSON_FORMAT,
        "tool": {"name": "apiforge", "version": __version__},
        "spec": {
            "root": api.root,
            "title": api.title,
            "version": api.version,
            "openapi": api.openapi,
        },
        "summary": {
            "findings": len(result.findings),
            "error": result.count("error"),
            "warning": result.count("warning"),
            "info": result.count("info"),
            "suppressed": result.suppressed,
            "operations": len(api.operations),
            "webhooks": len(api.webhooks),
        },
        "rules": list(result.rules_run),
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity,
                "message": f.message,
                "file": f.file,
                "line": f.line,
                "column": f.column,
                "pointer": f.pointer,
                "operation": _operation_json(f),
                "webhook": f.webhook,
            }
            for f in result.findings
        ],
    }


def render_json(result: LintResult) -> str:
    return json.dumps(json_data(result), indent=2, ensure_ascii=False) + "\n"


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _artifact_uri(file: str) -> str:
    path = PurePosixPath(file.replace("\\", "/"))
    if path.is_absolute():
        return "file://" + quote(str(path))
    return quote(str(path))


def _fingerprint(f: Finding) -> str:
    op = f.operation
    key = "\x00".join(
        [f.rule, f.file, f.pointer, f"{op.method} {op.path}" if op else "", f.webhook or ""]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": "".join(w.capitalize() for w in rule.id.split("-")),
        "shortDescription": {"text": rule.summary.replace("`", "")},
        "fullDescription": {"text": rule.summary.replace("`", "")},
        "help": {
            "text": f"{rule.summary.replace('`', '')}. See {DOCS_URI.format(id=rule.id)}.",
            "markdown": f"{rule.summary}. See [{DOCS_URI.format(id=rule.id)}]({DOCS_URI.format(id=rule.id)}).",
        },
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["api", "openapi", rule.pattern]},
    }


def sarif_data(result: LintResult) -> dict[str, Any]:
    rules = list(all_rules())
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in result.findings:
        location: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": {"uri": _artifact_uri(f.file)},
                "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
            }
        }
        op = f.operation
        if op is not None:
            name = f"webhook {f.webhook} {op.method.upper()}" if f.webhook else op.label
            location["logicalLocations"] = [
                {"name": op.id, "fullyQualifiedName": name, "kind": "function"}
            ]
        entry: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [location],
            "partialFingerprints": {"apiforgeFinding/v1": _fingerprint(f)},
            "properties": {"pointer": f.pointer},
        }
        results.append(entry)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "apiforge",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_sarif_rule(r) for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def render_sarif(result: LintResult) -> str:
    return json.dumps(sarif_data(result), indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: LintResult) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    lines = [
        f"::{_GITHUB_COMMAND[f.severity]} file={_escape_property(f.file)},line={f.line},"
        f"col={f.column},title={_escape_property(f.rule)}::{_escape_data(f.message)}"
        for f in result.findings
    ]
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[LintResult], str]] = {
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
}
FORMATS = ("text", "json", "sarif", "github")


def render(result: LintResult, fmt: str, colour: bool = False) -> str:
    return render_text(result, colour) if fmt == "text" else RENDERERS[fmt](result)


def render_rules(fmt: str = "text") -> str:
    rules = all_rules()
    if fmt == "json":
        data = [
            {"id": r.id, "severity": r.severity, "pattern": r.pattern, "summary": r.summary}
            for r in rules
        ]
        return json.dumps(data, indent=2) + "\n"
    width = max(len(r.id) for r in rules)
    return "".join(f"{r.id.ljust(width)}  {r.severity.ljust(7)}  {r.summary}\n" for r in rules)
