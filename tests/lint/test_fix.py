"""`apiforge lint --fix` / `--diff`: golden files per rule (YAML 3.1 and JSON 3.0, a shared
`$ref`, a second file), what must hold of every fix (idempotent, still valid, the findings
gone, only lines inserted), round-trip fidelity, configuration, bad input, atomic writes."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import ApiforgeError
from generator.lint.config import LintConfig
from generator.lint.engine import lint_path
from generator.lint.fix import fix_spec, fixable_rules
from generator.lint.fix_files import same_data
from generator.spec import load_spec
from generator.spec.validate import collect_errors
from tests.lint import fix_golden

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def errors(spec: Path) -> list[str]:
    return [e.message for e in collect_errors(load_spec(str(spec)).resolver)]


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, list[str], list[str]]]:
    """The line diff's blocks that are not pure insertions: (tag, old lines, new lines)."""
    old = before.decode("utf-8-sig").splitlines(keepends=True)
    new = after.decode("utf-8-sig").splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (tag, old[a:b], new[c:d])
        for tag, a, b, c, d in matcher.get_opcodes()
        if tag not in ("equal", "insert")
    ]


def opened_flow(old: str, new: str) -> bool:
    """`key: {}` that became `key:` (YAML) or `"key": {` (JSON), the one change allowed."""
    old, new = old.rstrip("\r\n"), new.rstrip("\r\n")
    for empty in ("{}", "[]"):
        if old.endswith(": " + empty) and new == old[: -len(empty) - 1].rstrip():
            return True
        if old.rstrip(",").endswith(empty) and new == old.rstrip(",")[:-1]:
            return True
    return False


def grew_in_line(old: str, new: str) -> bool:
    """`new` is `old` with text inserted (a flow collection or a one-line JSON document)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return all(tag in ("equal", "insert") for tag, *_ in matcher.get_opcodes())


def assert_only_inserted(before: bytes, after: bytes) -> None:
    for tag, old, new in changed_lines(before, after):
        assert tag == "replace" and len(old) == 1, (tag, old, new)
        assert opened_flow(old[0], new[0]) or grew_in_line(old[0], new[0]), (old, new)


# --- golden files, per rule -------------------------------------------------------------


@pytest.mark.parametrize("case", fix_golden.case_names())
def test_fix_matches_golden(case: str) -> None:
    expected = fix_golden.golden(case)
    assert expected, f"{case}/fixed is missing: run `make golden` and read the diff"
    actual = fix_golden.produce(case)
    assert sorted(actual) == sorted(expected), "the set of changed files differs from golden"
    for rel, data in actual.items():
        if data != expected[rel]:
            diff = difflib.unified_diff(
                expected[rel].decode().splitlines(), data.decode().splitlines(), lineterm=""
            )
            pytest.fail(f"{case}/{rel} differs from golden:\n" + "\n".join(list(diff)[:60]))


@pytest.mark.parametrize("case", fix_golden.case_names())
def test_fix_is_safe(case: str) -> None:
    """Idempotent; still valid where it was; no finding of a fixed rule left; the line diff
    is insertions (and the lines an empty flow collection opens)."""
    before = fix_golden.inputs(case)
    config = fix_golden.config(case)
    with fix_golden.copied(case) as folder:
        valid = {spec: not errors(folder / spec) for spec in fix_golden.specs(case)}
        results = fix_golden.fix_case(folder, case)
        assert all(r.fixes for r in results)
        after = fix_golden.changed(folder, before)
        for rel, data in after.items():
            assert_only_inserted(before[rel], data)
        assert not any(fix_golden.fix_case(folder, case)[i].changes for i in range(len(results)))
        for spec in fix_golden.specs(case):
            if valid[spec]:
                assert errors(folder / spec) == [], spec
            left = lint_path(str(folder / spec), config).findings
            assert not [f for f in left if f.rule in fixable_rules()], left


def test_every_fixable_rule_has_a_golden_case() -> None:
    assert set(fixable_rules()) <= set(fix_golden.case_names())
    assert "rate-limit-header-family-mixed" not in fixable_rules()  # it would need a removal


# --- fidelity ---------------------------------------------------------------------------

FIDELITY = (
    "# Orders API: a hand-written spec\n"
    "openapi: 3.0.3  # we are on 3.0 still\n"
    "info:\n"
    '  title: "Orders \\u2014 API"\n'
    "  version: '1.0'\n"
    "  description: |\n"
    "    Line one.\n"
    "\n"
    "    # not a comment, part of the text\n"
    "x-defaults: &defaults {type: string, maxLength: 10}\n"
    "paths:\n"
    "  /orders:   # the collection\n"
    "    get:\n"
    "      operationId: listOrders\n"
    "      parameters:\n"
    "        - {name: tag, in: query, schema: *defaults}\n"
    "      responses:\n"
    "        '200':\n"
    "          description: |+\n"
    "            Kept trailing blank lines.\n"
    "\n"
    "        # errors below\n"
    "        \"404\": {description: 'Not found'}\n"
    "    post:\n"
    "      operationId: createOrder\n"
    "      responses:\n"
    "        '201':\n"
    "          description: >-\n"
    "            Created,\n"
    "            folded.\n"
    "      # trailing comment of the operation\n"
    "components:\n"
    "  schemas: {}\n"
)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_yaml_round_trip_fidelity(tmp_path: Path, eol: str) -> None:
    spec = tmp_path / "openapi.yaml"
    before = FIDELITY.replace("\n", eol).encode()
    spec.write_bytes(before)
    data_before = load_spec(str(spec)).resolver.root.data
    result = fix_spec(str(spec), write=True)
    after = spec.read_bytes()
    assert result.fixes and after != before
    assert_only_inserted(before, after)
    text = after.decode()
    if eol == "\r\n":
        assert text.count("\n") == text.count("\r\n")  # every new line is CRLF too
    for kept in (
        "# Orders API: a hand-written spec",
        "openapi: 3.0.3  # we are on 3.0 still",
        'title: "Orders \\u2014 API"',
        "&defaults {type: string, maxLength: 10}",
        "schema: *defaults}",
        "/orders:   # the collection",
        "# errors below",
        "# trailing comment of the operation",
    ):
        assert kept in text
    data = load_spec(str(spec)).resolver.root.data
    responses = data["paths"]["/orders"]["get"]["responses"]
    assert responses["200"]["description"] == "Kept trailing blank lines.\n\n"  # |+ intact
    assert data["info"]["description"] == data_before["info"]["description"]
    assert data["x-defaults"] is data["paths"]["/orders"]["get"]["parameters"][0]["schema"]
    assert "application/problem+json" in responses["404"]["content"]
    assert data["components"]["schemas"]["Problem"]["type"] == "object"
    assert fix_spec(str(spec), write=True).changes == ()


def test_json_keeps_its_indentation_and_key_order(tmp_path: Path) -> None:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/a": {
                "post": {"responses": {"201": {"description": "x"}, "500": {"description": "y"}}}
            }
        },
    }
    for indent, name in ((4, "four.json"), ("\t", "tabs.json"), (None, "minified.json")):
        spec = tmp_path / name
        text = json.dumps(doc, indent=indent, separators=None if indent else (",", ":"))
        spec.write_text(text + "\n")
        fix_spec(str(spec), write=True)
        after = spec.read_text()
        assert_only_inserted(text.encode() + b"\n", after.encode())
        fixed = json.loads(after)
        assert list(fixed)[:2] == ["openapi", "info"]  # the document still starts with them
        assert list(fixed["paths"]["/a"]["post"]["responses"])[-1] == "500"
        assert "Idempotency-Key" in after
        if indent == "\t":
            assert '\t\t\t"parameters": [' in after


def test_json_object_on_one_line_grows_on_that_line(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.json"
    text = (
        '{\n  "openapi": "3.1.0",\n  "info": {"title": "T", "version": "1"},\n'
        '  "paths": {\n    "/a": {\n      "get": {\n        "responses": {\n'
        '          "200": {"description": "x"}\n        }\n      }\n    }\n  }\n}\n'
    )
    spec.write_text(text)
    fix_spec(str(spec), LintConfig(select=frozenset({"rate-limit-headers-missing"})), write=True)
    after = spec.read_text()
    assert_only_inserted(text.encode(), after.encode())
    line = next(x for x in after.splitlines() if '"200"' in x)
    assert line.startswith('          "200": {"headers": {"RateLimit": {"$ref": ')
    assert line.endswith(', "description": "x"}')


def test_nan_and_odd_values_survive(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\nx-odd: [.nan, 2001-12-14, !!binary aGk=]\n"
        "paths:\n  /a:\n    post:\n      responses:\n        '201':\n          description: x\n"
    )
    fix_spec(str(spec), write=True)
    assert same_data(float("nan"), float("nan"))
    assert "Idempotency-Key" in spec.read_text()


# --- configuration applies to fixes -------------------------------------------------------


def test_select_ignore_and_in_spec_ignores_apply(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n"
        "  /a:\n    post:\n      x-apiforge-ignore: [idempotency-key-missing]\n"
        "      responses:\n        '201': {description: x}\n"
        "        '404': {description: y}\n"
        "  /b:\n    post:\n      responses:\n        '201': {description: x}\n"
    )
    original = spec.read_bytes()
    fix_spec(str(spec), LintConfig(ignore=frozenset({"problem-details-missing"})), write=True)
    data = load_spec(str(spec)).resolver.root.data
    assert "parameters" not in data["paths"]["/a"]["post"]  # x-apiforge-ignore
    assert data["paths"]["/b"]["post"]["parameters"]  # fixed
    assert "content" not in data["paths"]["/a"]["post"]["responses"]["404"]  # --ignore
    spec.write_bytes(original)
    fix_spec(str(spec), LintConfig(select=frozenset({"problem-details-missing"})), write=True)
    data = load_spec(str(spec)).resolver.root.data
    assert "parameters" not in data["paths"]["/b"]["post"]  # not selected
    assert "content" in data["paths"]["/a"]["post"]["responses"]["404"]


def test_reuses_the_apis_own_components(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n"
        "  /a:\n    post:\n      parameters:\n        - $ref: '#/components/parameters/Key'\n"
        "      responses:\n        '201': {description: x}\n"
        "        '409': {description: busy}\n        '422': {description: reused}\n"
        "  /b:\n    post:\n      responses:\n        '201': {description: x}\n"
        "components:\n  parameters:\n    Key: {name: idempotency-key, in: header, schema: {type: string}}\n"
    )
    fix_spec(str(spec), LintConfig(select=frozenset({"idempotency-key-missing"})), write=True)
    data = load_spec(str(spec)).resolver.root.data
    assert data["paths"]["/b"]["post"]["parameters"] == [{"$ref": "#/components/parameters/Key"}]
    assert list(data["components"]["parameters"]) == ["Key"]  # reused, not duplicated


# --- bad input, writing --------------------------------------------------------------------


def test_bad_input_leaves_the_file_untouched(tmp_path: Path) -> None:
    cases = {
        "malformed.yaml": b"openapi: 3.1.0\ninfo: {title: [\n",
        "dangling.yaml": b"openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n"
        b"    post:\n      responses:\n        '201': {$ref: '#/components/responses/Nope'}\n",
    }
    for name, content in cases.items():
        spec = tmp_path / name
        spec.write_bytes(content)
        code, _, err = invoke("lint", str(spec), "--fix")
        assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err
        assert spec.read_bytes() == content
    code, _, err = invoke("lint", "-", "--fix")
    assert code == 2 and "standard input" in err
    code, _, err = invoke("lint", str(spec), "--fix", "--diff")
    assert code == 2 and "do not go together" in err


def test_unwritable_file_is_a_clear_error(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_bytes(
        b"openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths:\n  /a:\n"
        b"    post:\n      responses:\n        '201': {description: x}\n"
    )
    spec.chmod(0o444)
    try:
        code, _, err = invoke("lint", str(spec), "--fix")
    finally:
        spec.chmod(0o644)
    assert code == 2 and "read-only" in err
    assert b"Idempotency" not in spec.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["openapi.yaml"]  # no leftovers


def test_a_failed_write_changes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = fix_golden.CASES / "multi-file"
    folder = tmp_path / "spec"
    shutil.copytree(case, folder, ignore=shutil.ignore_patterns("fixed"))
    before = {p: p.read_bytes() for p in folder.rglob("*.yaml")}
    real_replace = os.replace
    calls: list[str] = []

    def flaky(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:  # the second file's rename fails
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(ApiforgeError, match="cannot write the fixed file"):
        fix_spec(str(folder / "openapi.yaml"), write=True)
    assert {p: p.read_bytes() for p in folder.rglob("*.yaml")} == before
    assert sorted(p.name for p in folder.rglob("*") if p.name.startswith(".")) == []


def test_a_fix_the_text_cannot_take_is_reported_not_made(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    text = (
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\nx-common:\n  ok: &ok\n"
        "    description: OK.\npaths:\n  /a:\n    get:\n      responses:\n        '200': *ok\n"
        "  /b:\n    get:\n      responses:\n        '200': *ok\n"
    )
    spec.write_text(text)
    code, out, _ = invoke("lint", str(spec), "--fix", "--select", "rate-limit-headers-missing")
    assert code == 0 and spec.read_text() == text
    assert "openapi.yaml:10:9  not fixed  rate-limit-headers-missing  " in out
    assert "is a YAML alias (`*ok`)" in out and "2 findings could not be fixed" in out
    data = json.loads(invoke("lint", str(spec), "--fix", "--format", "json")[1])
    assert {u["rule"] for u in data["unfixed"]} == {"rate-limit-headers-missing"}


def test_an_interrupted_write_leaves_the_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "openapi.yaml"
    shutil.copy(fix_golden.CASES / "etag-missing" / "openapi.yaml", spec)
    before = spec.read_bytes()

    def crash(fd: int) -> None:  # the machine stops halfway through writing
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        fix_spec(str(spec), write=True)
    assert spec.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["openapi.yaml"]  # no temporary file left


# --- the command line ----------------------------------------------------------------------


def test_diff_writes_nothing_and_applies_to_what_fix_writes(tmp_path: Path) -> None:
    case = fix_golden.CASES / "multi-file"
    for name in ("a", "b"):
        shutil.copytree(case, tmp_path / name, ignore=shutil.ignore_patterns("fixed"))
    env = {**os.environ, "APIFORGE_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-m", "generator.cli", "lint", "openapi.yaml"]
    proc = subprocess.run([*run, "--diff"], cwd=tmp_path / "a", capture_output=True, env=env)
    assert proc.returncode == 1, proc.stderr  # the spec would change
    assert b"would fix" in proc.stderr  # the report goes to stderr, the patch alone to stdout
    assert (tmp_path / "a" / "openapi.yaml").read_bytes() == (case / "openapi.yaml").read_bytes()
    subprocess.run(["patch", "-p1", "-s"], input=proc.stdout, cwd=tmp_path / "a", check=True)
    subprocess.run([*run, "--fix"], cwd=tmp_path / "b", capture_output=True, env=env, check=False)
    for rel in ("openapi.yaml", "paths/orders.yaml"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    again = [*run, "--diff", "--fail-on", "never"]
    proc = subprocess.run(again, cwd=tmp_path / "b", capture_output=True, env=env)
    assert (proc.returncode, proc.stdout) == (0, b"")  # nothing left to change


def test_several_specs_and_directories_in_one_report(tmp_path: Path) -> None:
    for case in ("etag-missing", "multi-file"):
        shutil.copytree(
            fix_golden.CASES / case, tmp_path / case, ignore=shutil.ignore_patterns("fixed")
        )
    code, out, _ = invoke("lint", str(tmp_path), "--format", "json", "--fail-on", "never")
    data = json.loads(out)
    roots = [s["root"] for s in data["specs"]]
    assert [Path(r).relative_to(tmp_path).as_posix() for r in roots] == [
        "etag-missing/openapi.json",
        "etag-missing/openapi.yaml",
        "multi-file/openapi.yaml",  # paths/orders.yaml is a fragment, not a spec
    ]
    assert data["summary"]["findings"] == len(data["findings"])
    code, out, _ = invoke("lint", str(tmp_path / "etag-missing"), str(tmp_path), "--fix")
    assert code == 0
    assert out.splitlines()[-2].startswith("fixed ") and " in 4 files: " in out.splitlines()[-2]
    files = [line.split(":")[0] for line in out.splitlines() if "  fixed  " in line]
    assert files == sorted(files, key=files.index)  # grouped per file
    code, out, _ = invoke("lint", str(tmp_path), "--fix", "--format", "json")
    assert json.loads(out)["changed"] == []  # idempotent


def test_skip_non_specs_as_pre_commit_passes_every_changed_file(tmp_path: Path) -> None:
    workflow = tmp_path / "ci.yaml"
    workflow.write_text("on: [push]\njobs: {}\n")
    spec = tmp_path / "openapi.yaml"
    shutil.copy(fix_golden.CASES / "etag-missing" / "openapi.yaml", spec)
    assert invoke("lint", str(workflow))[0] == 2  # named on purpose: it must be a spec
    code, out, _ = invoke("lint", "--skip-non-specs", str(workflow))
    assert code == 0 and "nothing to lint" in out
    code, out, _ = invoke("lint", "--skip-non-specs", "--fix", str(workflow), str(spec))
    assert code == 0 and "fixed 6 findings in 1 file" in out  # the PATCH: If-Match, no key
    assert workflow.read_text() == "on: [push]\njobs: {}\n"


def test_exit_codes_after_a_fix(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    shutil.copy(ROOT / "specs" / "bare.yaml", spec)
    code, out, _ = invoke("lint", str(spec), "--fix", "--fail-on", "info")
    assert code == 1 and "rate-limit-header-family-mixed" in out  # what no fix can do is left
    # bare.yaml also breaks a rule no fix can mend (an x-apiforge-pagination naming a missing
    # parameter): without it, nothing at the failing severity is left
    code, out, _ = invoke("lint", str(spec), "--fix")
    assert code == 1 and "pagination-extension-invalid" in out
    assert invoke("lint", str(spec), "--fix", "--ignore", "pagination-extension-invalid")[0] == 0


def test_pre_commit_hooks_are_declared() -> None:
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"apiforge-lint", "apiforge-lint-fix"}
    assert by_id["apiforge-lint"]["entry"] == "apiforge lint --skip-non-specs"
    assert by_id["apiforge-lint-fix"]["entry"] == "apiforge lint --skip-non-specs --fix"
    for hook in hooks:
        assert hook["language"] == "python" and set(hook["types_or"]) == {"yaml", "json"}


# --- a sample of the corpus (the whole corpus: bench/fix_sweep.py) --------------------------

SAMPLE = [
    "apisguru/canada-holidays.ca__1.0.yaml",  # `headers: {}` to open
    "apisguru/shotstack.io__v1.yaml",  # `responses: {}`
    "xero/xero-webhooks.yaml",
    "twilio/twilio_sync_v1.json",
    "oai/learn/v3.0/callback-example.yaml",
]


@pytest.mark.parametrize("path", SAMPLE)
def test_corpus_sample(tmp_path: Path, path: str) -> None:
    source = CORPUS / path
    if not source.is_file():
        pytest.skip("../shared/corpus is not here")
    spec = tmp_path / source.name
    spec.write_bytes(source.read_bytes())
    before = spec.read_bytes()
    valid = not errors(spec)
    result = fix_spec(str(spec), write=True)
    assert result.fixes
    assert_only_inserted(before, spec.read_bytes())
    if valid:
        assert errors(spec) == []
    assert not [f for f in result.after.findings if f.rule in fixable_rules()]
    assert fix_spec(str(spec), write=True).changes == ()
