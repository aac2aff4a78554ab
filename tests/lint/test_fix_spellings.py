"""`lint --fix` on every way real specs spell what it edits: status codes quoted and as YAML
integers (`200:`), `default` responses, JSON, YAML flow style, and YAML anchors (refused with a
located reason, never a wrong edit). Each fix must leave no finding it could fix, and change
nothing but additions (the data before is a subset of the data after)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.spec.load import parse_document

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
ASANA = CORPUS / "apisguru" / "asana.com__1.0.yaml"
ADYEN = CORPUS / "adyen" / "TransferService-v4.json"

needs_corpus = pytest.mark.skipif(not ASANA.exists(), reason="the corpus of real specs is absent")


def lint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", "lint", *args, "--format", "json"],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "APIFORGE_NO_CACHE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def data_of(path: Path) -> Any:
    return parse_document(path.name, path, path.read_bytes()).data


def contains(before: Any, after: Any) -> bool:
    """Whether `after` holds all of `before` (additions only)."""
    if isinstance(before, dict):
        return isinstance(after, dict) and all(
            k in after and contains(v, after[k]) for k, v in before.items()
        )
    if isinstance(before, list):
        return isinstance(after, list) and all(
            contains(b, a) for b, a in zip(before, after, strict=False)
        )
    return bool(before == after)


def fix_clean(spec: Path) -> dict[str, Any]:
    """Fix `spec` in place; the report of the fix. Asserts a lint afterwards finds nothing
    fixable and that the fix only added."""
    before = data_of(spec)
    fixed = lint(str(spec), "--fix", "--fail-on", "never", cwd=spec.parent)
    assert fixed.returncode == 0, fixed.stderr
    report: dict[str, Any] = json.loads(fixed.stdout)
    after = lint(str(spec), "--fail-on", "never", cwd=spec.parent)
    left = json.loads(after.stdout)["findings"]
    assert left == [], left[:3]
    assert contains(before, data_of(spec))
    return report


@needs_corpus
@pytest.mark.parametrize("spelling", ["quoted", "integer"])
def test_status_codes_quoted_or_integers(tmp_path: Path, spelling: str) -> None:
    """Asana's spec quotes its codes; the same spec with `200:` (YAML integers, as other
    specs write them) is fixed as completely."""
    text = ASANA.read_text(encoding="utf-8")
    if spelling == "integer":
        text, count = re.subn(r'(?m)^(\s+)"([1-5][0-9]{2})":', r"\1\2:", text)
        assert count > 500
    spec = tmp_path / "asana.yaml"
    spec.write_text(text, encoding="utf-8")
    fix_clean(spec)
    if spelling == "integer":  # the codes stay integers: nothing is rewritten
        assert 200 in data_of(spec)["paths"]["/attachments/{attachment_gid}"]["get"]["responses"]


@needs_corpus
def test_json(tmp_path: Path) -> None:
    spec = tmp_path / "transfers.json"
    spec.write_bytes(ADYEN.read_bytes())
    fix_clean(spec)
    json.loads(spec.read_text(encoding="utf-8"))  # still JSON


FLOW = """\
openapi: 3.1.0
info: {title: Flow, version: "1"}
paths:
  /things:
    post:
      operationId: makeThing
      requestBody: {required: true, content: {application/json: {schema: {type: object}}}}
      responses: {201: {description: made}, default: {description: error}}
    get:
      operationId: listThings
      responses: {"200": {description: ok}}
"""


def test_yaml_flow_style_and_default(tmp_path: Path) -> None:
    spec = tmp_path / "flow.yaml"
    spec.write_text(FLOW, encoding="utf-8")
    fix_clean(spec)
    responses = data_of(spec)["paths"]["/things"]["post"]["responses"]
    assert {201, "default", 409, 429} <= set(responses)  # added as the spec spells its codes


ANCHORS = """\
openapi: 3.1.0
info: {title: Anchors, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      responses:
        200: &listed
          description: listed
  /others:
    get:
      operationId: listOthers
      responses:
        200: *listed
"""


def test_yaml_anchors_are_refused_where_an_edit_would_change_every_alias(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "anchors.yaml"
    spec.write_text(ANCHORS, encoding="utf-8")
    done = lint(str(spec), "--fix", "--fail-on", "never", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    unfixed = json.loads(done.stdout)["unfixed"]
    reasons = sorted(u["reason"] for u in unfixed)
    assert len(reasons) == 2, reasons
    assert "is a YAML alias (`*listed`)" in reasons[0]
    assert "is a YAML anchor that aliases repeat" in reasons[1]
    # the anchored response is as it was
    assert spec.read_text(encoding="utf-8").count("&listed") == 1
