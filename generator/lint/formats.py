"""Report formats for other tools' habits: `stylish` (ESLint's and Spectral's terminal
output), `junit` (JUnit XML, for CI test report views) and `gitlab` (GitLab's Code Quality
report, a JSON array). Each takes one result (several specs' findings merged)."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import groupby

from generator.lint.engine import LintResult
from generator.lint.model import Finding


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_stylish(result: LintResult) -> str:
    """Findings grouped under their file, `line:col  severity  rule  message`, then a
    count."""
    lines: list[str] = []
    for file, group in groupby(result.findings, key=lambda f: f.file):
        found = list(group)
        width = max(len(f"{f.line}:{f.column}") for f in found)
        lines.append(file)
        for f in found:
            where = f"{f.line}:{f.column}".ljust(width)
            lines.append(f"  {where}  {f.severity.ljust(7)}  {f.rule}  {f.message}")
        lines.append("")
    counts = ", ".join(_plural(result.count(s), s) for s in ("error", "warning", "info"))
    total = len(result.findings)
    lines.append(f"✖ {_plural(total, 'problem')} ({counts})" if total else "no problems")
    return "\n".join(lines) + "\n"


def render_junit(result: LintResult) -> str:
    """One test suite per file, one failing test case per finding."""
    # imported here: `xml.sax.saxutils` brings `urllib.request`, `http.client` and `email`
    # with it: importing what `apiforge diff` needs took 0.88 times the CPU time without it
    # (~0.05 s; 15 paired whole-process runs), and `lint` imports this module too
    from xml.sax.saxutils import escape, quoteattr

    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    total = len(result.findings)
    out.append(f'<testsuites name="apiforge lint" tests="{total}" failures="{total}">')
    for file, group in groupby(result.findings, key=lambda f: f.file):
        found = list(group)
        out.append(
            f'  <testsuite name={quoteattr(file)} tests="{len(found)}" '
            f'failures="{len(found)}" errors="0">'
        )
        for f in found:
            name = f"{f.rule} #{f.pointer}"
            out.append(
                f"    <testcase classname={quoteattr(file)} name={quoteattr(name)} "
                f'file={quoteattr(file)} line="{f.line}">'
            )
            out.append(
                f"      <failure type={quoteattr(f.severity)} message={quoteattr(f.message)}>"
                f"{escape(f'{f.file}:{f.line}:{f.column} {f.severity} {f.rule}: {f.message}')}"
                "</failure>"
            )
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


#: apiforge's severities in GitLab Code Quality's.
_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render_gitlab(result: LintResult, fingerprint: Callable[[Finding], str]) -> str:
    """GitLab Code Quality: `[{description, check_name, fingerprint, severity, location}]`
    (`fingerprint`: the same stable one SARIF's results carry)."""
    issues = [
        {
            "description": f.message,
            "check_name": f.rule,
            "fingerprint": fingerprint(f),
            "severity": _GITLAB_SEVERITY[f.severity],
            "location": {"path": f.file, "lines": {"begin": f.line}},
        }
        for f in result.findings
    ]
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
