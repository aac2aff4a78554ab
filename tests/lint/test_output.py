"""Output formats, exit codes, colour, `apiforge rules`, rule docs, and the corpus."""

from __future__ import annotations

import csv
import enum
import json
import os
import pty
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import ApiforgeError
from generator.lint.config import LintConfig
from generator.lint.engine import lint_path
from generator.lint.registry import all_rules
from generator.lint.report import dumps, json_data, render_github, render_json, render_sarif
from tests.lint.conftest import FIXTURES, SpecWriter, ok

ROOT = Path(__file__).resolve().parents[2]
BARE = "specs/bare.yaml"
ACME = "specs/acme.yaml"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_exit_codes() -> None:
    assert invoke("lint", ACME)[0] == 0
    assert invoke("lint", BARE)[0] == 1  # error findings, default --fail-on error
    assert invoke("lint", BARE, "--fail-on", "never")[0] == 0
    assert invoke("lint", BARE, "--select", "idempotency-key-missing")[0] == 0  # warnings only
    assert (
        invoke("lint", BARE, "--select", "idempotency-key-missing", "--fail-on", "warning")[0] == 1
    )
    assert (
        invoke("lint", BARE, "--select", "async-retry-after-missing", "--fail-on", "warning")[0]
        == 0
    )
    assert (
        invoke("lint", BARE, "--select", "async-retry-after-missing", "--fail-on", "info")[0] == 1
    )
    code, out = invoke("lint", "specs/no-such.yaml")
    assert code == 2 and "no such file" in out and "Traceback" not in out
    assert invoke("lint", BARE, "--format", "xml")[0] == 2


def test_text_format() -> None:
    _, out = invoke("lint", BARE)
    lines = out.splitlines()
    assert lines[0].startswith("specs/bare.yaml:47:9")
    first = lines[0].split()
    assert first[1:3] == ["warning", "rate-limit-headers-missing"]
    assert lines[-1].startswith("48 findings: 4 errors, 42 warnings, 2 infos")
    assert "\x1b[" not in out
    assert invoke("lint", ACME)[1] == "no findings (14 operations, 4 webhooks checked, 16 rules)\n"


def test_text_groups_by_file() -> None:
    out = invoke("lint", str(FIXTURES.relative_to(ROOT) / "multifile" / "openapi.yaml"))[1]
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 4  # common.yaml, openapi.yaml, paths/batches.yaml, summary
    assert all(line.split(":")[0].endswith("common.yaml") for line in blocks[0].splitlines())


def test_json_format_shape() -> None:
    data = json.loads(invoke("lint", BARE, "--format", "json")[1])
    assert data["format"] == "apiforge-lint/1"
    assert data["summary"] == {
        "findings": 48,
        "error": 4,
        "warning": 42,
        "info": 2,
        "suppressed": 0,
        "baselined": 0,
        "operations": 12,
        "webhooks": 1,
    }
    first = data["findings"][0]
    assert set(first) == {
        "rule",
        "severity",
        "message",
        "file",
        "line",
        "column",
        "pointer",
        "operation",
        "webhook",
        "help",
        "url",
    }
    assert first["operation"] == {"id": "listWidgets", "method": "GET", "path": "/widgets"}
    hook = next(f for f in data["findings"] if f["webhook"])
    assert hook["webhook"] == "widget.created" and hook["operation"]["id"] == "widgetCreated"


class _Colour(str):
    pass


class _Level(enum.IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        "plain",
        None,
        {"a": {}, "b": [], "c": [[], [{}], {"d": ()}], "e": (1, "x")},
        {"é☃\U0001f600": 'quote " backslash \\ control \x00\x1f\x7f\n\t\r\b\f \u2028 é'},
        {"n": [0, -1, 10**30, 1.5, -0.0, float("nan"), float("inf"), True, False, None]},
        {7: "int key", 2.5: "float key", False: "bool key", None: "null key", "s": 1},
        {"sub": _Colour("red"), "level": _Level.HIGH, "deep": [[[[{"x": [None]}]]]]},
    ],
)
def test_json_report_writer_is_jsons_own_bytes(value: object) -> None:
    """The reports' JSON writer gives `json.dumps(value, indent=2, ensure_ascii=False)`."""
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_json_report_bytes_on_a_spec_with_findings() -> None:
    result = lint_path(BARE, LintConfig())
    expected = json.dumps(json_data(result), indent=2, ensure_ascii=False) + "\n"
    assert render_json(result) == expected and len(result.findings) == 48


def test_json_report_findings_template_is_jsons_own_bytes() -> None:
    """`render_json` writes each finding from a template: the bytes of `json.dumps` for
    hostile strings, findings without an operation, webhook findings, and no findings."""
    result = lint_path(BARE, LintConfig())
    op = result.findings[0].operation
    assert op is not None
    hostile = 'é☃\U0001f600 "quote" \\ \x00\x1f\x7f\n\t\u2028 </script> {{x}}'
    odd_op = replace(op, id=hostile, path="/a/{b}/" + hostile)
    findings = (
        replace(result.findings[0], message=hostile, pointer="/paths/~1a~1" + hostile),
        replace(result.findings[1], operation=None, webhook=None, file=hostile, line=0),
        replace(result.findings[2], operation=odd_op, webhook=hostile, column=10**6),
    )
    for variant in (replace(result, findings=findings), replace(result, findings=())):
        expected = json.dumps(json_data(variant), indent=2, ensure_ascii=False) + "\n"
        assert render_json(variant) == expected
        assert json.loads(render_json(variant))["findings"] == json_data(variant)["findings"]


def test_sarif_is_valid_sarif_2_1_0() -> None:
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text())
    for spec in (BARE, ACME, str(FIXTURES.relative_to(ROOT) / "multifile" / "openapi.yaml")):
        data = json.loads(invoke("lint", spec, "--format", "sarif")[1])
        jsonschema.validate(data, schema)
        run = data["runs"][0]
        rules = run["tool"]["driver"]["rules"]
        assert [r["id"] for r in rules] == [r.id for r in all_rules()]
        for result in run["results"]:
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
            region = result["locations"][0]["physicalLocation"]["region"]
            assert region["startLine"] >= 1 and region["startColumn"] >= 1
            assert not result["locations"][0]["physicalLocation"]["artifactLocation"][
                "uri"
            ].startswith("/")
    bare = json.loads(invoke("lint", BARE, "--format", "sarif")[1])["runs"][0]["results"]
    assert {r["level"] for r in bare} == {"error", "warning", "note"}
    assert bare[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "GET /widgets"
    fingerprints = [r["partialFingerprints"]["apiforgeFinding/v1"] for r in bare]
    assert len(set(fingerprints)) == len(fingerprints)


def test_github_annotations_escape(write_spec: SpecWriter) -> None:
    out = invoke("lint", BARE, "--format", "github")[1].splitlines()
    assert out[0].startswith(
        "::warning file=specs/bare.yaml,line=47,col=9,title=rate-limit-headers-missing::GET /widgets: add"
    )
    assert any(line.startswith("::error ") for line in out) and any(
        line.startswith("::notice ") for line in out
    )
    # a path with a comma and a message with a newline/percent stay one annotation each
    spec = write_spec(paths={"/a%b": {"post": {"responses": {"201": ok()}}}}, name="we,ird.yaml")
    result = lint_path(str(spec), LintConfig(select=frozenset({"idempotency-key-missing"})))
    (line, _summary) = render_github(result).splitlines()
    assert "file=" + str(spec).replace(",", "%2C") in line
    assert "POST /a%25b" in line


def test_the_lint_process_ends_with_its_report_whole(tmp_path: Path) -> None:
    """The `apiforge` process ends at once after `lint` (no freeing of the spec's objects):
    its report is still all there, piped or in a file, with lint's exit code."""
    command = [sys.executable, "-c", "from generator.cli import run; run()", "lint", BARE]
    env = {**os.environ, "APIFORGE_NO_CACHE": "1", "NO_COLOR": "1"}
    piped = subprocess.run([*command, "--format", "json"], capture_output=True, env=env)
    assert (
        piped.returncode == 1
        and piped.stdout.decode() == invoke("lint", BARE, "--format", "json")[1]
    )
    target = tmp_path / "report.txt"
    written = subprocess.run([*command, "-o", str(target)], capture_output=True, env=env)
    assert written.returncode == 1 and written.stdout == b""
    assert target.read_text().endswith("(12 operations, 1 webhook checked)\n")
    missing = subprocess.run([*command[:-1], "nope.yaml"], capture_output=True, env=env)
    assert missing.returncode == 2 and missing.stderr.startswith(b"error: no such file")


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "report.sarif"
    code, out = invoke("lint", BARE, "--format", "sarif", "--output", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"
    assert invoke("lint", BARE, "--output", str(tmp_path / "missing" / "x.txt"))[0] == 2


def _run_in_pty(env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "lint", BARE, "--select", "retry-after-missing"],
        cwd=ROOT,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.returncode == 1
    return b"".join(chunks).decode()


def test_colour_only_on_a_tty_and_never_with_no_color() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[31m" in _run_in_pty(env)
    assert "\x1b[" not in _run_in_pty({**env, "NO_COLOR": "1"})
    piped = subprocess.run(
        [sys.executable, "-m", "generator.cli", "lint", BARE],
        cwd=ROOT,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert b"\x1b[" not in piped.stdout


def test_rules_command_and_docs() -> None:
    code, out = invoke("rules")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(all_rules()) == 16
    for rule, line in zip(all_rules(), lines, strict=True):
        assert line.split()[:2] == [rule.id, rule.severity]
        doc = ROOT / "docs" / "rules" / f"{rule.id}.md"
        assert doc.is_file(), f"docs/rules/{rule.id}.md is missing"
        text = doc.read_text()
        assert text.startswith(f"# `{rule.id}`") and "```yaml" in text
    data = json.loads(invoke("rules", "--format", "json")[1])
    assert {d["id"] for d in data} == {r.id for r in all_rules()}


def test_sarif_render_without_findings_is_valid() -> None:
    result = lint_path(ACME, LintConfig())
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(json.loads(render_sarif(result)), schema)


def _corpus_sample() -> list[str]:
    index = CORPUS / "INDEX.tsv"
    if not index.is_file():
        return []
    with index.open() as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    small = sorted((r for r in rows if int(r["bytes"] or 0) < 400_000), key=lambda r: r["path"])
    return [r["path"] for r in small[:: max(1, len(small) // 12)]]


@pytest.mark.skipif(not _corpus_sample(), reason="../shared/corpus is not here")
@pytest.mark.parametrize("path", _corpus_sample())
def test_corpus_specs_lint_without_traceback(path: str) -> None:
    try:
        result = lint_path(str(CORPUS / path), LintConfig())
    except ApiforgeError:
        return  # a clear error is fine; a traceback is not
    render_sarif(result)
    for finding in result.findings:
        assert finding.line >= 1 and finding.message


def test_a_cold_lint_imports_only_what_it_uses() -> None:
    """PyYAML (read by rapidyaml instead), the fixer and tempfile are not imported by a plain
    cold `lint` of a YAML or a JSON spec: each is a share of its start-up time."""
    code = (
        "import sys; from generator.lint.run import run_lint; "
        "run_lint([sys.argv[1]], use_config=False); "
        "print(sorted(m for m in ('yaml', 'tempfile', 'generator.lint.fix_plan') "
        "if m in sys.modules))"
    )
    env = {**os.environ, "APIFORGE_NO_CACHE": "1"}
    for spec in (BARE, str(FIXTURES / "fix/rate-limit-headers-missing/openapi.json")):
        found = subprocess.run(
            [sys.executable, "-c", code, spec], capture_output=True, env=env, text=True
        )
        assert found.stdout == "[]\n", (spec, found.stdout, found.stderr[-500:])
