"""Each rule's page is one command away: `apiforge rules ID` prints it, and every finding
says how to reach it (text, JSON, SARIF), by URL when the team publishes the pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.lint.registry import all_rules

ROOT = Path(__file__).resolve().parents[2]
SPEC = str(ROOT / "specs" / "users.yaml")


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("rule", [r.id for r in all_rules()])
def test_every_rule_has_a_page_the_command_prints(rule: str) -> None:
    code, out, _ = run("rules", rule)
    assert code == 0
    assert out.startswith(f"# `{rule}`")
    assert out == (ROOT / "docs" / "rules" / f"{rule}.md").read_text(encoding="utf-8")


def test_an_unknown_rule_is_one_line_with_the_closest_ids() -> None:
    code, _, err = run("rules", "idempotency-key-missin")
    assert code == 2
    assert err.splitlines() == [
        "error: no lint rule 'idempotency-key-missin'",
        "hint: did you mean idempotency-key-missing or idempotency-responses-missing?",
    ]


def test_text_json_and_sarif_findings_name_the_page() -> None:
    _, text, _ = run("lint", SPEC, "--fail-on", "never")
    assert text.splitlines()[-2] == ("rule pages: apiforge rules RULE (rate-limit-headers-missing)")
    _, out, _ = run("lint", SPEC, "--format", "json", "--fail-on", "never")
    findings = json.loads(out)["findings"]
    assert findings
    assert all(f["help"] == f"apiforge rules {f['rule']}" and f["url"] is None for f in findings)
    _, out, _ = run("lint", SPEC, "--format", "sarif", "--fail-on", "never")
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert all(f"apiforge rules {r['id']}" in r["help"]["text"] for r in rules)
    assert all("helpUri" not in r for r in rules)


def test_a_published_docs_url_goes_into_every_finding() -> None:
    env = {"APIFORGE_RULE_DOCS_URL": "https://docs.example.com/apiforge/rules/"}
    _, out, _ = run("lint", SPEC, "--format", "sarif", "--fail-on", "never", env=env)
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["helpUri"] for r in rules} == {
        f"https://docs.example.com/apiforge/rules/{r.id}.md" for r in all_rules()
    }
    _, out, _ = run("lint", SPEC, "--format", "json", "--fail-on", "never", env=env)
    urls = {f["url"] for f in json.loads(out)["findings"]}
    assert urls == {"https://docs.example.com/apiforge/rules/rate-limit-headers-missing.md"}
    _, text, _ = run("lint", SPEC, "--fail-on", "never", env=env)
    assert text.splitlines()[-2] == (
        "rule pages: https://docs.example.com/apiforge/rules/rate-limit-headers-missing.md"
    )


def test_a_config_error_says_where_the_keys_are_documented(tmp_path: Path) -> None:
    (tmp_path / ".apiforge.yaml").write_text("lint:\n  selekt: [etag-missing]\n")
    code, _, err = run("lint", SPEC, "--config", str(tmp_path / ".apiforge.yaml"))
    assert code == 2
    assert "`apiforge lint --help` shows the configuration keys" in err
