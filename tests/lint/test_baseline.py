"""`lint --baseline FILE`: known findings are written once, by a fingerprint that survives
edits that move them, and later runs report and fail on only the new ones."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]

NEW_OPERATION = """\
  /v1/extra:
    post:
      operationId: makeExtra
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object}
      responses:
        "201":
          description: made
"""


def lint(*args: str, cwd: Path) -> tuple[int, str, str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["lint", *args, "--no-config"])
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    folder = tmp_path / "api"
    folder.mkdir()
    target = folder / "users.yaml"
    shutil.copy(ROOT / "specs" / "users.yaml", target)
    return target


def test_known_findings_pass_and_new_ones_fail(spec: Path, tmp_path: Path) -> None:
    code, out, err = lint(str(spec), "--fail-on", "warning", cwd=tmp_path)
    assert code == 1 and out.splitlines()[-1].startswith("4 findings")

    code, out, err = lint(
        "api/users.yaml", "--baseline", "baseline.json", "--fail-on", "warning", cwd=tmp_path
    )
    assert code == 0, err
    assert err.strip() == "wrote the baseline baseline.json: 4 findings"
    assert out.splitlines()[-1].endswith("; 4 known in the baseline")
    saved = json.loads((tmp_path / "baseline.json").read_text())
    assert saved["format"] == "apiforge-baseline/1"
    assert {e["file"] for e in saved["findings"]} == {"api/users.yaml"}

    # lines move (a comment on top) and a new operation brings new findings
    text = spec.read_text()
    text = "# edited\n" + text.replace("\npaths:\n", "\npaths:\n" + NEW_OPERATION, 1)
    spec.write_text(text)
    code, out, err = lint(
        "users.yaml", "--baseline", "../baseline.json", "--fail-on", "warning", cwd=spec.parent
    )
    assert code == 1, err
    found = [line for line in out.splitlines() if "warning" in line and "users.yaml:" in line]
    assert found and all("POST /v1/extra" in line for line in found), out
    assert out.splitlines()[-1].endswith("; 4 known in the baseline")
    assert json.loads((tmp_path / "baseline.json").read_text()) == saved  # read, not written

    code, out, err = lint(
        "users.yaml", "--baseline", "../baseline.json", "--write-baseline", cwd=spec.parent
    )
    assert code == 0 and "wrote the baseline" in err
    code, out, _ = lint(
        "users.yaml",
        "--baseline",
        "../baseline.json",
        "--format",
        "json",
        "--fail-on",
        "warning",
        cwd=spec.parent,
    )
    data = json.loads(out)
    assert code == 0 and data["findings"] == [] and data["summary"]["baselined"] > 4


def test_a_broken_baseline_is_one_located_line(spec: Path, tmp_path: Path) -> None:
    (tmp_path / "baseline.json").write_text("[]")
    code, _, err = lint(str(spec), "--baseline", str(tmp_path / "baseline.json"), cwd=tmp_path)
    assert code == 2
    assert err.startswith(f"error: {tmp_path / 'baseline.json'}: not an apiforge baseline")
