"""`apiforge diff` on the command line: exit codes, the output formats, configuration and
acknowledgements, the ways of naming a side (a file, `-`, `REF:PATH` from git), multi-file
and Swagger 2.0 specs, and bad input as one clear message with exit 2."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import main
from tests.diff.test_planted import (
    BASE,
    _create,
    _remove_param,
    _remove_ping,
    _remove_response_property,
    base,
    write,
)


def run(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(main, ["diff", *args], input=stdin, catch_exceptions=False)


@pytest.fixture
def breaking(tmp_path: Path) -> tuple[str, str]:
    """An old spec and a new one with two breaking changes (a parameter, a response field)."""
    variant = copy.deepcopy(base())
    _remove_param(variant)
    _remove_response_property(variant)
    return write(tmp_path, "old", base()), write(tmp_path, "new", variant)


def test_exit_codes_follow_fail_on(breaking: tuple[str, str]) -> None:
    old, new = breaking
    assert run(old, new).exit_code == 1
    assert run(old, new, "--fail-on", "never").exit_code == 0
    assert run(str(BASE), str(BASE)).exit_code == 0


def test_text_groups_and_summarises(breaking: tuple[str, str]) -> None:
    result = run(*breaking)
    out = result.output
    assert out.startswith("Breaking changes (2)")
    assert "parameter-removed  GET /v1/customers: query parameter `email` removed" in out
    assert "client: client.customers.list(email=…)" in out
    assert f"old: {breaking[0]}:" in out and f"new: {breaking[1]}:" in out
    assert out.rstrip().endswith(
        "2 changes (2 breaking, 0 warning, 0 compatible); client version bump: major"
    )


def test_json_is_stable_and_located(breaking: tuple[str, str]) -> None:
    data = json.loads(run(*breaking, "--format", "json").output)
    assert data["format"] == "apiforge-diff/1"
    assert data["summary"]["breaking"] == 2 and data["summary"]["bump"] == "major"
    change = next(c for c in data["changes"] if c["kind"] == "response-property-removed")
    assert change["old"]["pointer"] == "/components/schemas/Customer/properties/name"
    assert change["old"]["line"] > 0 and change["new"]["line"] > 0
    assert change["new"]["pointer"] == "/components/schemas/Customer"
    assert "GET /v1/customers/{customer}" in change["operations"]


def test_sarif_has_new_locations_and_old_related(breaking: tuple[str, str]) -> None:
    data = json.loads(run(*breaking, "--format", "sarif").output)
    results = data["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"parameter-removed", "response-property-removed"}
    for r in results:
        assert r["level"] == "error"
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("new.yaml")
        related = r["relatedLocations"][0]["physicalLocation"]
        assert related["artifactLocation"]["uri"].endswith("old.yaml")
        assert related["region"]["startLine"] > 0


def test_github_annotations_and_markdown(breaking: tuple[str, str]) -> None:
    lines = run(*breaking, "--format", "github").output.splitlines()
    assert lines[0].startswith("::error file=") and "title=parameter-removed::" in lines[0]
    markdown = run(*breaking, "--format", "markdown").output
    assert markdown.startswith("## Billing 1.0.0")
    assert "client version bump **major**" in markdown
    assert "### Breaking changes" in markdown
    assert "  - client: `client.customers.list(email=…)`" in markdown


def test_configuration_ignores_and_overrides(breaking: tuple[str, str], tmp_path: Path) -> None:
    old, new = breaking
    config = tmp_path / ".apiforge.yaml"
    config.write_text(
        "diff:\n"
        "  severity: {parameter-removed: warning}\n"
        "  ignore-operations:\n"
        "    - {path: '/v1/customers*', rules: [response-property-removed]}\n",
        encoding="utf-8",
    )
    data = json.loads(run(old, new, "--format", "json").output)
    assert [(c["kind"], c["level"]) for c in data["changes"]] == [("parameter-removed", "warning")]
    assert data["summary"]["suppressed"] == 1
    assert run(old, new).exit_code == 0  # a warning, below the default fail-on
    assert run(old, new, "--fail-on", "warning").exit_code == 1
    assert run(old, new, "--no-config").exit_code == 1
    config.write_text("diff:\n  ignore: [no-such-kind]\n", encoding="utf-8")
    bad = CliRunner().invoke(main, ["diff", old, new])
    assert bad.exit_code == 2
    assert "unknown change kind" in bad.output and "no-such-kind" in bad.output


def test_acknowledgement_in_the_new_spec(tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    _remove_param(variant)
    variant["paths"]["/v1/customers"]["get"]["x-apiforge-diff-accept"] = ["parameter-removed"]
    old, new = write(tmp_path, "old", base()), write(tmp_path, "new", variant)
    result = run(old, new)
    assert result.exit_code == 0, result.output
    assert "1 acknowledged in the spec" in result.output
    # the client still changes: the bump says so
    assert "client version bump: major" in result.output
    variant["paths"]["/v1/customers"]["get"]["x-apiforge-diff-accept"] = ["parameter-remvoed"]
    write(tmp_path, "new", variant)
    bad = CliRunner().invoke(main, ["diff", old, new])
    assert bad.exit_code == 2
    assert "new.yaml:" in bad.output and "did you mean `parameter-removed`" in bad.output


def test_bad_input_is_one_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("openapi: 3.1.0\ninfo: [\n", encoding="utf-8")
    (tmp_path / "afile").write_text("")
    for args in (
        [str(BASE), str(BASE), "-o", str(tmp_path / "afile" / "report.json")],
        [str(BASE), str(tmp_path / "missing.yaml")],
        [str(broken), str(BASE)],
        ["-", "-"],
        ["HEAD:no/such/spec.yaml", str(BASE)],
        [str(BASE)],
    ):
        result = CliRunner().invoke(main, ["diff", *args])
        assert result.exit_code == 2, (args, result.output)
        assert result.output.startswith("error: "), result.output
        assert "Traceback" not in result.output


def test_output_file_holds_what_stdout_would(breaking: tuple[str, str], tmp_path: Path) -> None:
    old, new = breaking
    out = tmp_path / "report.json"
    written = run(old, new, "--format", "json", "-o", str(out))
    assert written.exit_code == 1 and written.output == ""
    assert out.read_text(encoding="utf-8") == run(old, new, "--format", "json").output


def test_stdin_side(tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    _remove_ping(variant)
    new = write(tmp_path, "new", variant)
    result = run("-", new, "--format", "json", stdin=BASE.read_text(encoding="utf-8"))
    data = json.loads(result.output)
    assert [c["kind"] for c in data["changes"]] == ["operation-removed"]
    assert data["changes"][0]["old"]["file"] == "<stdin>"


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_git_ref_side_with_a_multi_file_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`REF:PATH` reads the spec and the files its `$ref`s name from that commit."""
    spec = copy.deepcopy(base())
    schemas = spec["components"]["schemas"]
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "schemas.yaml").write_text(yaml.safe_dump(schemas), encoding="utf-8")
    text = yaml.safe_dump(spec).replace("'#/components/schemas/", "'schemas.yaml#/")
    (tmp_path / "api" / "openapi.yaml").write_text(text, encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "v1")
    del schemas["Customer"]["properties"]["name"]  # in the other file only
    (tmp_path / "api" / "schemas.yaml").write_text(yaml.safe_dump(schemas), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    data = json.loads(run("HEAD:api/openapi.yaml", "api/openapi.yaml", "--format", "json").output)
    kinds = [(c["kind"], c["old"]["file"], c["new"]["file"]) for c in data["changes"]]
    assert kinds == [("response-property-removed", "HEAD:api/schemas.yaml", "api/schemas.yaml")]


def test_swagger2_sides(tmp_path: Path) -> None:
    def swagger(required: bool) -> str:
        return yaml.safe_dump(
            {
                "swagger": "2.0",
                "info": {"title": "S", "version": "1"},
                "paths": {
                    "/pets": {
                        "get": {
                            "parameters": [
                                {
                                    "name": "kind",
                                    "in": "query",
                                    "type": "string",
                                    "required": required,
                                }
                            ],
                            "responses": {"200": {"description": "ok"}},
                        }
                    }
                },
            }
        )

    (tmp_path / "a.yaml").write_text(swagger(False), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(swagger(True), encoding="utf-8")
    data = json.loads(
        run(str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"), "--format", "json").output
    )
    (change,) = data["changes"]
    assert change["kind"] == "parameter-became-required"
    assert change["new"]["pointer"] == "/paths/~1pets/get/parameters/0"  # as the 2.0 file has it


def test_list_kinds() -> None:
    out = run("--list-kinds").output
    assert "idempotency-key-removed" in out and "breaking" in out


def test_create_request_body_change_names_model_field(tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    _create(variant)["requestBody"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/CustomerCreate"
    }
    variant["components"]["schemas"]["CustomerCreate"]["required"].append("name")
    data = json.loads(
        run(
            write(tmp_path, "old", base()), write(tmp_path, "new", variant), "--format", "json"
        ).output
    )
    (change,) = data["changes"]
    assert "client.customers.create(body=…): CustomerCreate.name" in change["client"]


def test_every_kind_has_a_documentation_page() -> None:
    from generator.diff.kinds import all_kinds

    docs = Path(__file__).resolve().parents[2] / "docs"
    index = (docs / "diff.md").read_text(encoding="utf-8")
    for kind in all_kinds():
        page = docs / "diff" / f"{kind.id}.md"
        assert page.is_file(), f"docs/diff/{kind.id}.md is missing"
        text = page.read_text(encoding="utf-8")
        assert f"**Default level:** {kind.level}" in text
        assert f"](diff/{kind.id}.md)" in index
