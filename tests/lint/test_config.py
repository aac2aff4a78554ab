"""Configuration files, `x-apiforge-ignore`, --select/--ignore, and unknown rule ids."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.errors import ApiforgeError
from generator.lint.config import LintConfig, find_config, load_config, resolve_config
from generator.lint.engine import lint_path
from tests.lint.conftest import Linter, SpecWriter, document, ok, rule_ids

BARE_POST = {
    "/a": {"post": {"responses": {"201": ok()}}},
    "/internal/x": {"post": {"responses": {"201": ok()}}},
}


def test_x_apiforge_ignore_on_operation_and_path_item(run_lint: Linter) -> None:
    paths = {
        "/a": {
            "post": {"x-apiforge-ignore": ["idempotency-key-missing"], "responses": {"201": ok()}}
        },
        "/b": {
            "x-apiforge-ignore": "idempotency-key-missing",
            "post": {"responses": {"201": ok()}},
        },
        # both levels apply together
        "/c": {
            "x-apiforge-ignore": ["rate-limit-headers-missing"],
            "post": {"x-apiforge-ignore": ["idempotency-key-missing"], "responses": {"201": ok()}},
        },
        "/d": {"post": {"responses": {"201": ok()}}},
    }
    config = LintConfig(select=frozenset({"idempotency-key-missing", "rate-limit-headers-missing"}))
    result = run_lint(paths=paths, config=config)
    assert sorted(f.message.split(":")[0] + " " + f.rule for f in result.findings) == [
        "POST /a rate-limit-headers-missing",
        "POST /b rate-limit-headers-missing",
        "POST /d idempotency-key-missing",
        "POST /d rate-limit-headers-missing",
    ]
    assert result.suppressed == 4


def test_unknown_rule_in_spec_is_an_error_with_its_location(write_spec: SpecWriter) -> None:
    paths = {"/a": {"get": {"x-apiforge-ignore": ["etag-mising"], "responses": {"200": ok()}}}}
    spec = write_spec(paths=paths)
    with pytest.raises(ApiforgeError) as caught:
        lint_path(str(spec), LintConfig())
    text = caught.value.render()
    assert "unknown rule id" in text and "`etag-mising` (did you mean `etag-missing`?)" in text
    assert f"{spec}:" in text and "x-apiforge-ignore" in text
    result = CliRunner().invoke(main, ["lint", str(spec)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_pyproject_found_walking_up(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        """
[tool.apiforge.lint]
ignore = ["rate-limit-headers-missing"]
fail-on = "warning"
[tool.apiforge.lint.severity]
idempotency-key-missing = "error"
problem-details-missing = "off"
[[tool.apiforge.lint.ignore-operations]]
path = "/internal/*"
methods = ["POST"]
"""
    )
    spec_dir = tmp_path / "api" / "v1"
    spec_dir.mkdir(parents=True)
    spec = spec_dir / "openapi.yaml"
    import yaml

    spec.write_text(yaml.safe_dump(document(BARE_POST)))
    assert find_config(str(spec)) == tmp_path / "pyproject.toml"
    config = resolve_config(str(spec), None)
    assert config.fail_on == "warning"
    result = lint_path(str(spec), config)
    assert [(f.rule, f.severity, f.message.split(":")[0]) for f in result.findings] == [
        ("idempotency-key-missing", "error", "POST /a")
    ]
    assert "rate-limit-headers-missing" not in result.rules_run
    assert "problem-details-missing" not in result.rules_run


def test_apiforge_yaml_and_pyproject_without_section(
    tmp_path: Path, write_spec: SpecWriter
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert (
        find_config(str(write_spec(paths=BARE_POST))) is None
        or find_config(str(write_spec(paths=BARE_POST))) != tmp_path / "pyproject.toml"
    )
    (tmp_path / ".apiforge.yaml").write_text("lint:\n  select: [idempotency-key-missing]\n")
    spec = write_spec(paths=BARE_POST)
    result = lint_path(str(spec), resolve_config(str(spec), None))
    assert set(rule_ids(result)) == {"idempotency-key-missing"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("lint:\n  ignore: [no-such-rule]\n", "unknown rule id in lint: ignore: `no-such-rule`"),
        ("lint:\n  severity: {etag-missing: fatal}\n", "severity of `etag-missing` must be"),
        ("lint:\n  severity: {etag-mising: error}\n", "did you mean `etag-missing`?"),
        ("lint:\n  colour: true\n", "unknown key(s) colour"),
        ("lint:\n  fail-on: sometimes\n", "`fail-on` must be one of"),
        ("lint:\n  ignore-operations: [{methods: [get]}]\n", "needs a `path` glob"),
        ("- a\n", "expected a mapping"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / ".apiforge.yaml"
    path.write_text(content)
    with pytest.raises(ApiforgeError) as caught:
        load_config(path)
    assert message in caught.value.render()
    assert str(path) in caught.value.render()


def test_cli_select_ignore_and_unknown_ids(write_spec: SpecWriter) -> None:
    spec = str(write_spec(paths=BARE_POST))
    runner = CliRunner()
    out = runner.invoke(
        main,
        [
            "lint",
            spec,
            "--no-config",
            "--format",
            "json",
            "--select",
            "idempotency-key-missing,rate-limit-headers-missing",
            "--ignore",
            "rate-limit-headers-missing",
        ],
    )
    assert out.exit_code == 0, out.output
    import json

    assert {f["rule"] for f in json.loads(out.output)["findings"]} == {"idempotency-key-missing"}
    bad = runner.invoke(main, ["lint", spec, "--select", "etag"])
    assert bad.exit_code == 2
    assert "unknown rule id in --select: `etag`" in bad.output
    assert "apiforge rules" in bad.output
    bad = runner.invoke(main, ["lint", spec, "--ignore", "nope"])
    assert bad.exit_code == 2 and "--ignore" in bad.output


def test_explicit_config_file(tmp_path: Path, write_spec: SpecWriter) -> None:
    cfg = tmp_path / "lint.yaml"
    cfg.write_text("lint:\n  select: [rate-limit-headers-missing]\n")
    spec = str(write_spec(paths=BARE_POST))
    out = CliRunner().invoke(main, ["lint", spec, "--config", str(cfg), "--format", "github"])
    assert out.exit_code == 0
    assert out.output.count("::warning") == 2 and "idempotency" not in out.output
    missing = CliRunner().invoke(main, ["lint", spec, "--config", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "no such configuration file" in missing.output
