"""Reporters: findings as text (people), JSON (machines; stable shape, docs/lint.md), SARIF
2.1.0 (code scanning) and GitHub workflow annotations."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from json.encoder import encode_basestring
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from generator import __version__
from generator.lint.engine import LintResult
from generator.lint.formats import render_gitlab, render_junit, render_stylish
from generator.lint.model import Finding, Rule
from generator.lint.registry import all_rules
from generator.lint.rule_docs import help_command, help_uri

if TYPE_CHECKING:
    from generator.lint.run import LintRun

JSON_FORMAT = "apiforge-lint/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(result: LintResult) -> str:
    api = result.api
    checked = (
        f"{_plural(len(api.operations), 'operation')}, {_plural(len(api.webhooks), 'webhook')}"
    )
    known = f"; {result.baselined} known in the baseline" if result.baselined else ""
    if not result.findings:
        return f"no findings ({checked} checked, {len(result.rules_run)} rules){known}"
    counts = ", ".join(
        _plural(result.count(s), s) for s in ("error", "warning", "info") if result.count(s)
    )
    text = f"{_plural(len(result.findings), 'finding')}: {counts} ({checked} checked)"
    if result.suppressed:
        text += f"; {result.suppressed} suppressed by configuration"
    return text + known


def config_line(sources: list[str]) -> str:
    """Which configuration file the run used."""
    return f"configuration: {', '.join(sources)}" if sources else "configuration: none found"


def render_text(result: LintResult, colour: bool = False, config: str | None = None) -> str:
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
    found = sorted({f.rule for f in result.findings})
    if found:
        lines.append(pages_line(found))
    if config:
        lines.append(config_line([config]))
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def pages_line(rule_ids: list[str]) -> str:
    """Where the page of each rule found is: the command, or the URLs."""
    uris = [help_uri(r) for r in rule_ids]
    if all(uris):
        return "rule pages: " + ", ".join(u for u in uris if u)
    return f"rule pages: {help_command('RULE')} ({', '.join(rule_ids)})"


def _operation_json(f: Finding) -> dict[str, Any] | None:
    op = f.operation
    if op is None:
        return None
    return {"id": op.id, "method": op.method.upper(), "path": op.path}


def json_data(result: LintResult) -> dict[str, Any]:
    data = _json_head(result)
    data["findings"] = [
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
            "help": help_command(f.rule),
            "url": help_uri(f.rule),
        }
        for f in result.findings
    ]
    return data


def _json_head(result: LintResult, config: str | None = None) -> dict[str, Any]:
    """`json_data` up to its findings (the last key)."""
    api = result.api
    return {
        "format": JSON_FORMAT,
        "tool": {"name": "apiforge", "version": __version__},
        "config": config,
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
            "baselined": result.baselined,
            "operations": len(api.operations),
            "webhooks": len(api.webhooks),
        },
        "rules": list(result.rules_run),
    }


def render_json(result: LintResult, config: str | None = None) -> str:
    """`dumps(json_data(result))` and a line break. The findings, most of a big report
    (GitHub's 2,000), are written one template each, without the dicts `json_data` makes
    for them and the general writer's walk over those (~3x faster); what they share (their
    rule, file and operation: GitHub's have 8 rules, 1 file, 800 operations) is encoded once."""
    head = dumps({**_json_head(result, config), "findings": []})
    if not result.findings:
        return head + "\n"
    strings, operations = _Encoded(), _OperationsJson()
    findings = ",".join(
        [
            _FINDING
            % (
                strings[f.rule],
                strings[f.severity],
                encode_basestring(f.message),
                strings[f.file],
                f.line,
                f.column,
                encode_basestring(f.pointer),
                "null" if (op := f.operation) is None else operations[op.id, op.method, op.path],
                "null" if f.webhook is None else encode_basestring(f.webhook),
                strings[help_command(f.rule)],
                "null" if (uri := help_uri(f.rule)) is None else strings[uri],
            )
            for f in result.findings
        ]
    )
    return head.removesuffix("[]\n}") + "[" + findings + "\n  ]\n}\n"


# a finding as `dumps` writes it as an item of the report's `findings`, and its operation
_FINDING = (
    '\n    {\n      "rule": %s,\n      "severity": %s,\n      "message": %s,\n      "file": %s,'
    '\n      "line": %d,\n      "column": %d,\n      "pointer": %s,\n      "operation": %s,'
    '\n      "webhook": %s,\n      "help": %s,\n      "url": %s\n    }'
)
_OPERATION = '{\n        "id": %s,\n        "method": %s,\n        "path": %s\n      }'


class _Encoded(dict[str, str]):
    """Strings as JSON, each encoded when first asked for."""

    def __missing__(self, text: str) -> str:
        encoded = self[text] = encode_basestring(text)
        return encoded


class _OperationsJson(dict[tuple[str, str, str], str]):
    """`_OPERATION` of each (id, method, path), written when first asked for."""

    def __missing__(self, key: tuple[str, str, str]) -> str:
        op_id, method, path = key
        encoded = self[key] = _OPERATION % (
            encode_basestring(op_id),
            encode_basestring(method.upper()),
            encode_basestring(path),
        )
        return encoded


def dumps(value: Any) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, byte for byte, faster: `indent`
    makes `json` use its pure-Python encoder (~0.03 s for GitHub's 2,000 findings); here
    the strings, most of the work, are written by its C function."""
    out: list[str] = []
    _dump(value, out, "\n")
    return "".join(out)


def _dump(value: Any, out: list[str], newline: str) -> None:
    """Write `value` at the depth whose lines start with `newline`, as `json` would; the
    strings, numbers and nulls of a container without a call each (most of a report)."""
    if isinstance(value, dict):
        items: Any = value.items()
        opening, closing = "{", "}"
    elif isinstance(value, (list, tuple)):
        items = value
        opening, closing = "[", "]"
    else:
        out.append(_scalar(value))
        return
    if not value:
        out.append(opening + closing)
        return
    inner = newline + "  "
    head, later = opening + inner, "," + inner
    for entry in items:
        if opening == "{":
            key, item = entry
            if not isinstance(key, str):  # an int, float, bool or None key: as `json` does
                if key is not None and not isinstance(key, (int, float)):
                    raise TypeError(f"keys must be str, int, float, bool or None, not {key!r}")
                key = json.dumps(key)
            head += encode_basestring(key) + ": "
        else:
            item = entry
        cls = item.__class__
        if cls is str:
            out.append(head + encode_basestring(item))
        elif item is None:
            out.append(head + "null")
        elif cls is int:
            out.append(head + int.__repr__(item))
        else:
            out.append(head)
            _dump(item, out, inner)
        head = later
    out.append(newline + closing)


def _scalar(value: Any) -> str:
    if value.__class__ is str:
        return str(encode_basestring(value))
    if value.__class__ is int:
        return int.__repr__(value)
    return json.dumps(value)  # true, false, null, floats, str and int subclasses: `json`'s


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(file: str) -> str:
    path = PurePosixPath(file.replace("\\", "/"))
    if path.is_absolute():
        return "file://" + quote(str(path))
    return quote(str(path))


def _fingerprint(f: Finding) -> str:
    import hashlib  # here: a cold lint does not need it

    op = f.operation
    key = "\x00".join(
        [f.rule, f.file, f.pointer, f"{op.method} {op.path}" if op else "", f.webhook or ""]
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": rule.id,
        "name": "".join(w.capitalize() for w in rule.id.split("-")),
        "shortDescription": {"text": rule.summary.replace("`", "")},
        "fullDescription": {"text": rule.summary.replace("`", "")},
        "help": {
            "text": f"{rule.summary.replace('`', '')}. The rule's page: {help_command(rule.id)}.",
            "markdown": f"{rule.summary}. The rule's page: `{help_command(rule.id)}`.",
        },
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": ["api", "openapi", rule.pattern]},
    }
    uri = help_uri(rule.id)
    if uri is not None:
        data["helpUri"] = uri
    return data


def sarif_data(result: LintResult | None) -> dict[str, Any]:
    rules = list(all_rules())
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for f in result.findings if result is not None else ():
        location: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(f.file)},
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
    return dumps(sarif_data(result)) + "\n"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def render_github(result: LintResult) -> str:
    """GitHub Actions workflow commands: one annotation per finding."""
    lines = [
        f"::{_GITHUB_COMMAND[f.severity]} file={escape_property(f.file)},line={f.line},"
        f"col={f.column},title={escape_property(f.rule)}::{escape_data(f.message)}"
        for f in result.findings
    ]
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[LintResult], str]] = {
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "stylish": render_stylish,
    "junit": render_junit,
    "gitlab": lambda result: render_gitlab(result, _fingerprint),
}
_NO_JUNIT = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<testsuites name="apiforge lint" tests="0" failures="0">\n</testsuites>\n'
)
FORMATS = ("text", "json", "sarif", "github", "stylish", "junit", "gitlab")


def render(result: LintResult, fmt: str, colour: bool = False, config: str | None = None) -> str:
    if fmt == "text":
        return render_text(result, colour, config)
    if fmt == "json":
        return render_json(result, config)
    return RENDERERS[fmt](result)


def render_rules(fmt: str = "text") -> str:
    """Every rule: id, default severity, whether `lint --fix` fixes it, summary."""
    from generator.lint.registry import all_fixes

    rules = all_rules()
    fixes = all_fixes()
    if fmt == "json":
        data = [
            {
                "id": r.id,
                "severity": r.severity,
                "pattern": r.pattern,
                "summary": r.summary,
                "fix": r.id in fixes,
            }
            for r in rules
        ]
        return json.dumps(data, indent=2) + "\n"
    width = max(len(r.id) for r in rules)
    return "".join(
        f"{r.id.ljust(width)}  {r.severity.ljust(7)}  {'fix' if r.id in fixes else '   '}  "
        f"{r.summary}\n"
        for r in rules
    )


# --- a run: several specs, and what --fix / --diff did ------------------------------------


def render_run(run: LintRun, fmt: str, colour: bool = False) -> str:
    """The report of a run. One spec linted (no fix) reads exactly as `render` has it."""
    results = run.results
    if run.mode == "lint" and len(run.specs) == 1 and len(results) == 1:
        return render(results[0], fmt, colour, config=_sources(run)[0] if _sources(run) else None)
    if fmt == "json":
        return dumps(run_json(run)) + "\n"
    if fmt == "sarif":
        data = sarif_data(_merged(results)) if results else sarif_data(None)
        return dumps(data) + "\n"
    if fmt in ("stylish", "junit", "gitlab"):
        if not results:  # every spec failed to read: said on stderr
            return {"stylish": "no problems\n", "gitlab": "[]\n"}.get(fmt, _NO_JUNIT)
        return RENDERERS[fmt](_merged(results))
    if fmt == "github":
        merged = _merged(results)
        lines = render_github(merged).splitlines()[:-1] if results else []
        lines.extend(run_summary(run))
        return "\n".join(lines) + "\n"
    return run_text(run, colour)


def _sources(run: LintRun) -> list[str]:
    """The configuration files the run's specs used, each once."""
    found = (s.config.source for s in run.specs if s.config is not None and s.config.source)
    return list(dict.fromkeys(x for x in found if x))


def _merged(results: list[LintResult]) -> LintResult:
    """One result holding the findings of several (the first one's API for the header)."""
    findings = tuple(f for r in results for f in r.findings)
    rules = tuple(dict.fromkeys(rule for r in results for rule in r.rules_run))
    suppressed = sum(r.suppressed for r in results)
    baselined = sum(r.baselined for r in results)
    return LintResult(results[0].api, findings, rules, suppressed, baselined)


def _fix_word(run: LintRun) -> str:
    return "fixed" if run.mode == "fix" else "fix"


def run_text(run: LintRun, colour: bool = False) -> str:
    """Fixes (with --fix/--diff), then the findings left, one group per file, then what
    could not be fixed and the summary."""

    def paint(text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if colour else text

    rows: list[tuple[str, str, str, str, str]] = []  # (where, severity, rule, message, style)
    for fixed in run.fixes:
        for fix in fixed.fixes:
            many = f" ({fix.findings} findings)" if fix.findings > 1 else ""
            where = f"{fix.where.file}:{fix.line}:{fix.column}"
            rows.append((where, _fix_word(run), fix.rule, fix.message + many, "\x1b[32m"))
    findings = [f for r in run.results for f in r.findings]
    width = max((len(r[0]) for r in rows), default=0)
    width = max([width, *(len(f"{f.file}:{f.line}:{f.column}") for f in findings)])
    lines = []
    for where, word, rule, message, style in rows:
        lines.append(
            f"{paint(where.ljust(width), _BOLD)}  {paint(word.ljust(7), style)}  {paint(rule, _DIM)}  {message}"
        )
    if rows and findings:
        lines.append("")
    current: str | None = None
    for f in findings:
        if current is not None and f.file != current:
            lines.append("")
        current = f.file
        where = f"{f.file}:{f.line}:{f.column}".ljust(width)
        severity = paint(f.severity.ljust(7), _COLOURS[f.severity])
        lines.append(f"{paint(where, _BOLD)}  {severity}  {paint(f.rule, _DIM)}  {f.message}")
    unfixed = [u for fixed in run.fixes for u in fixed.unfixed]
    if unfixed:
        lines.append("")
        located = {(f.rule, f.file, f.pointer, f.message): f for f in findings}
        for u in unfixed:
            key = (u.finding.rule, u.finding.file, u.finding.pointer, u.finding.message)
            left = located.get(key)
            where = (
                f"{left.file}:{left.line}:{left.column}"
                if left
                else f"{u.finding.file}#{u.finding.pointer}"
            )
            lines.append(
                f"{paint(where.ljust(width), _BOLD)}  not fixed  {paint(u.finding.rule, _DIM)}  {u.reason}"
            )
    if lines:
        lines.append("")
    found = sorted({f.rule for f in findings})
    if found:
        lines.append(pages_line(found))
    if _sources(run):
        lines.append(config_line(_sources(run)))
    lines.extend(run_summary(run))
    return "\n".join(lines) + "\n"


def run_summary(run: LintRun) -> list[str]:
    """What was fixed (per rule) and what is left, across the run's specs."""
    lines = []
    if run.mode != "lint":
        counts: Counter[str] = Counter()
        files: list[str] = []
        for fixed in run.fixes:
            counts.update(fixed.fixed_by_rule())
            files.extend(c.name for c in fixed.changes)
        total = sum(counts.values())
        word = "fixed" if run.mode == "fix" else "would fix"
        unfixed = sum(len(fixed.unfixed) for fixed in run.fixes)
        if total:
            per_rule = ", ".join(
                f"{n} {rule}" for rule, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            )
            lines.append(
                f"{word} {_plural(total, 'finding')} in {_plural(len(files), 'file')}: {per_rule}"
            )
        elif not unfixed:
            lines.append("nothing to fix")
        if unfixed:
            lines.append(
                f"{_plural(unfixed, 'finding')} could not be fixed (see `not fixed` above)"
            )
    results = run.results
    if len(results) == 1:
        lines.append(summary_line(results[0]))
    elif results:
        merged = _merged(results)
        operations = sum(len(r.api.operations) for r in results)
        webhooks = sum(len(r.api.webhooks) for r in results)
        checked = f"{_plural(len(results), 'spec')}: {_plural(operations, 'operation')}, {_plural(webhooks, 'webhook')}"
        baselined = sum(r.baselined for r in results)
        known = f"; {baselined} known in the baseline" if baselined else ""
        if not merged.findings:
            lines.append(f"no findings ({checked} checked){known}")
        else:
            counts_text = ", ".join(
                _plural(merged.count(s), s) for s in ("error", "warning", "info") if merged.count(s)
            )
            text = f"{_plural(len(merged.findings), 'finding')}: {counts_text} ({checked} checked)"
            if merged.suppressed:
                text += f"; {merged.suppressed} suppressed by configuration"
            lines.append(text + known)
    if run.errors:
        lines.append(f"{_plural(len(run.errors), 'spec')} could not be read or written (see above)")
    return lines


def run_json(run: LintRun) -> dict[str, Any]:
    """The JSON shape of one spec (`json_data`), for several specs and fixes: `spec` is the
    first spec, `specs` all of them, `summary` sums them; with --fix/--diff, `fixes`,
    `unfixed`, `changed` and `summary.fixed` are added."""
    results = run.results
    if results:
        data = json_data(_merged(results))
        data["config"] = ", ".join(_sources(run)) or None
        data["summary"]["operations"] = sum(len(r.api.operations) for r in results)
        data["summary"]["webhooks"] = sum(len(r.api.webhooks) for r in results)
    else:
        data = {
            "format": JSON_FORMAT,
            "tool": {"name": "apiforge", "version": __version__},
            "config": None,
            "spec": None,
            "summary": {
                "findings": 0,
                "error": 0,
                "warning": 0,
                "info": 0,
                "suppressed": 0,
                "operations": 0,
                "webhooks": 0,
            },
            "rules": [],
            "findings": [],
        }
    data["specs"] = [
        {
            "root": r.api.root,
            "title": r.api.title,
            "version": r.api.version,
            "openapi": r.api.openapi,
        }
        for r in results
    ]
    if run.mode != "lint":
        fixes: list[dict[str, Any]] = [
            {
                "rule": fix.rule,
                "message": fix.message,
                "file": fix.where.file,
                "line": fix.line,
                "column": fix.column,
                "pointer": fix.where.pointer,
                "findings": fix.findings,
            }
            for fixed in run.fixes
            for fix in fixed.fixes
        ]
        data["summary"]["fixed"] = sum(sum(f.fixed_by_rule().values()) for f in run.fixes)
        data["fixes"] = fixes
        data["unfixed"] = [
            {
                "rule": u.finding.rule,
                "file": u.finding.file,
                "pointer": u.finding.pointer,
                "message": u.finding.message,
                "reason": u.reason,
            }
            for fixed in run.fixes
            for u in fixed.unfixed
        ]
        data["changed"] = [c.name for fixed in run.fixes for c in fixed.changes]
    return data
