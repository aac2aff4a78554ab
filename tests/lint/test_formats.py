"""`stylish`, `junit` and `gitlab` reports: the shapes other tools read."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]
USERS = "specs/users.yaml"
BARE = "specs/bare.yaml"


def lint(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["lint", *args, "--no-config"])
    return result.exit_code, result.stdout


def test_stylish_groups_by_file_and_counts() -> None:
    code, out = lint(USERS, BARE, "--format", "stylish", "--fail-on", "error")
    lines = out.splitlines()
    assert lines[0] == USERS and BARE in lines
    assert lines[1].split()[:3] == ["81:9", "warning", "rate-limit-headers-missing"]
    assert lines[-1] == "✖ 52 problems (4 errors, 46 warnings, 2 infos)"
    assert code == 1  # 4 errors


def test_junit_is_one_failing_case_per_finding() -> None:
    _, out = lint(USERS, "--format", "junit")
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and root.get("failures") == "4"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == USERS
    cases = suite.findall("testcase")
    assert len(cases) == 4
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("type") == "warning"
    assert cases[0].get("line") == "81"


def test_gitlab_code_quality_issues_have_stable_fingerprints() -> None:
    _, out = lint(BARE, "--format", "gitlab")
    issues = json.loads(out)
    assert len(issues) == 48
    assert {i["severity"] for i in issues} == {"major", "minor", "info"}
    first = issues[0]
    assert set(first) == {"description", "check_name", "fingerprint", "severity", "location"}
    assert first["location"] == {"path": BARE, "lines": {"begin": 47}}
    assert len({i["fingerprint"] for i in issues}) == 48
    _, again = lint(BARE, "--format", "gitlab")
    assert again == out
