"""A warning is said once per change of the spec: the same spec again gets a count instead,
a changed spec (or `-v`) gets every warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

SPEC = """\
openapi: 3.1.0
info: {title: Gaps, version: "1"}
paths:
  /items:
    post:
      operationId: addItem
      requestBody:
        content:
          application/json: {schema: {type: object}}
          application/xml: {schema: {type: object}}
      responses:
        "201": {description: added}
"""
WARNING = "request body `application/xml` is not offered: the method sends `application/json`"


def client(spec: Path, out: Path, *flags: str) -> list[str]:
    result = CliRunner().invoke(main, ["client", *flags, str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return result.stderr.splitlines()


def test_said_once_per_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("APIFORGE_REPEAT_WARNINGS", raising=False)
    spec = tmp_path / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    first = client(spec, tmp_path / "c")
    assert [line for line in first if WARNING in line] == [line for line in first if "warn" in line]
    assert len(first) == 1
    again = client(spec, tmp_path / "c")
    assert again == ["1 warning as last time; -v to list"]
    assert [WARNING in line for line in client(spec, tmp_path / "c", "-v")] == [True]
    spec.write_text(SPEC.replace("title: Gaps", "title: Gaps again"), encoding="utf-8")
    assert [WARNING in line for line in client(spec, tmp_path / "c")] == [True]


def test_every_time_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("APIFORGE_REPEAT_WARNINGS", "1")
    spec = tmp_path / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    for _ in range(2):
        assert [WARNING in line for line in client(spec, tmp_path / "c")] == [True]
