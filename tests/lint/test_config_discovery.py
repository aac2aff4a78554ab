"""Configuration in the open: found from the spec's folder and the working directory up,
named in text and JSON output; unknown keys are located errors; Spectral's `rules:`
severities are read, a Spectral ruleset's top level is refused with a hint."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]


def lint(*args: str, cwd: Path) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["lint", *args])
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "api").mkdir()
    shutil.copy(ROOT / "specs" / "users.yaml", tmp_path / "api" / "users.yaml")
    return tmp_path


def test_the_working_directorys_file_is_found_and_named(project: Path) -> None:
    elsewhere = project.parent / f"{project.name}-specs"
    elsewhere.mkdir()
    shutil.copy(project / "api" / "users.yaml", elsewhere / "users.yaml")
    (project / ".apiforge.yaml").write_text("lint:\n  ignore: [rate-limit-headers-missing]\n")
    # a spec elsewhere, linted from the project: the working directory's file applies
    code, out, _ = lint(str(elsewhere / "users.yaml"), cwd=project / "api")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "configuration: ../.apiforge.yaml",
        "no findings (5 operations, 0 webhooks checked, 15 rules)",
    ]
    code, out, _ = lint("users.yaml", "--format", "json", cwd=project / "api")
    assert json.loads(out)["config"] == "../.apiforge.yaml"
    code, out, _ = lint("users.yaml", "--no-config", "--format", "json", cwd=project / "api")
    assert json.loads(out)["config"] is None


def test_spectral_rules_severities_are_read(project: Path) -> None:
    (project / ".apiforge.yaml").write_text(
        "lint:\n  rules:\n    rate-limit-headers-missing: hint\n    etag-missing: off\n"
    )
    code, out, _ = lint("api/users.yaml", "--fail-on", "warning", cwd=project)
    assert code == 0
    assert out.splitlines()[-1].startswith("4 findings: 4 infos")


def test_a_spectral_ruleset_top_level_is_refused_with_a_hint(project: Path) -> None:
    (project / ".apiforge.yaml").write_text(
        "extends: [spectral:oas]\nrules:\n  rate-limit-headers-missing: off\n"
    )
    code, _, err = lint("api/users.yaml", cwd=project)
    assert code == 2
    lines = err.splitlines()
    assert lines[0] == (
        "error: .apiforge.yaml:1:1: unknown top-level key 'extends': the settings go under `lint:` or `diff:`"
    )
    assert lines[1].startswith("hint: apiforge reads Spectral-style severities under `lint:`")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("lint:\n  fail-on: warning\n  selekt: [etag-missing]\n", ".apiforge.yaml:3:1"),
        ("lint:\n  rules:\n    etag-missing: loud\n", ".apiforge.yaml:3:1"),
        ("lint:\n  ignore-operations:\n    - path: /x\n      verbs: [get]\n", ".apiforge.yaml"),
    ],
)
def test_unknown_keys_and_values_are_located_errors(project: Path, text: str, where: str) -> None:
    (project / ".apiforge.yaml").write_text(text)
    code, _, err = lint("api/users.yaml", cwd=project)
    assert code == 2
    assert err.startswith(f"error: {where}: lint: "), err
    assert "Traceback" not in err
