"""The documentation is for users: an index of every page, every rule listed, links that
resolve inside the repository, no path of one machine, no work-log wording."""

from __future__ import annotations

import re
from pathlib import Path

from generator.lint.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "specs").glob("*.md")])
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|home|root|Users)/\w")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_lint_md_lists_every_rule_with_its_page() -> None:
    text = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"[`{rule.id}`](rules/{rule.id}.md)" in text, rule.id
        assert (ROOT / "docs" / "rules" / f"{rule.id}.md").is_file()


def test_no_machine_paths_and_links_resolve_inside_the_repository() -> None:
    found = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        found += [f"{page.relative_to(ROOT)}: {m.group()}" for m in MACHINE_PATH.finditer(text)]
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            resolved = (page.parent / target).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                found.append(f"{page.relative_to(ROOT)}: link {target}")
    assert found == []


#: Work-log wording: who measured when, not what holds.
WORK_LOG = re.compile(r"\b(?:issues? \d+|session \d+|this session|sessions? \d+'s)\b", re.I)


def test_docs_say_what_holds_not_who_measured_when() -> None:
    found = [
        f"{page.relative_to(ROOT)}: {m.group()}"
        for page in DOCS
        for m in WORK_LOG.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_index_links_every_page_and_folder_of_docs() -> None:
    index = ROOT / "docs" / "README.md"
    linked = {(index.parent / target).resolve() for target in LINK.findall(index.read_text())}
    pages = [p for p in (ROOT / "docs").iterdir() if p.name != "README.md"]
    pages = [p for p in pages if p.suffix == ".md" or p.is_dir()]
    assert pages
    assert [p.name for p in pages if p.resolve() not in linked] == []
