"""Lint rules from plugins, found by entry point (`apiforge.rules`): the example plugin in
docs/plugin-example, made discoverable as an installed distribution is (a `.dist-info` with
its `entry_points.txt`, written from its own pyproject.toml), in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "plugin-example"


def installed(site: Path, entry_points: dict[str, str]) -> Path:
    """`site` holding the example as pip installs it: its package and its dist-info."""
    dist = site / "apiforge_example_rules-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: apiforge-example-rules\nVersion: 0.1.0\n"
    )
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (dist / "entry_points.txt").write_text(f"[apiforge.rules]\n{lines}")
    return site


def apiforge(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(EXAMPLE), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_example_plugin_s_rule_runs_with_apiforge_s(tmp_path: Path) -> None:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    site = installed(tmp_path, project["project"]["entry-points"]["apiforge.rules"])
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n"
        "  /a: {get: {summary: Listed, responses: {'200': {description: ok}}}}\n"
        "  /b: {get: {operationId: getB, responses: {'200': {description: ok}}}}\n"
    )
    listed = apiforge(site, "rules")
    assert "operation-summary-missing" in listed.stdout, listed.stderr
    done = apiforge(site, "lint", str(spec), "--format", "json", "--no-config")
    findings = json.loads(done.stdout)["findings"]
    mine = [f for f in findings if f["rule"] == "operation-summary-missing"]
    assert [f["operation"]["id"] for f in mine] == ["getB"]
    off = apiforge(site, "lint", str(spec), "--ignore", "operation-summary-missing", "--no-config")
    assert "operation-summary-missing" not in off.stdout


def test_a_broken_plugin_is_one_clear_error(tmp_path: Path) -> None:
    site = installed(tmp_path, {"broken": "no_such_module_here:RULES"})
    done = apiforge(site, "rules")
    assert done.returncode == 2
    assert done.stderr.startswith("error: the lint plugin 'broken' (no_such_module_here:RULES)")
