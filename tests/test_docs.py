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


#: Dated-run wording: a page that speaks of "the run of 2026-11-30", of what held "since" or
#: "as of" a date, or of a run "(…, 2026-12-03)" is a log. Dates inside names (Stripe's
#: `spec3.2023-09-12.yaml`, Azure's `__2019-08-01`) and API versions a sentence compares
#: ("2023-08-07 → 2023-09-12") are no run's date and pass.
DATED_RUN = re.compile(
    r"\b(?:runs? of|(?:measured|run|ran|tried)(?: on| in)?|on|since|as of|until|from|before"
    r"|after|by|dated?)\s+\(?20\d\d-\d\d-\d\d\b"
    r"|(?:\(|,\s)20\d\d-\d\d-\d\d[,)]"
    r"|\b(?:we|I) (?:tried|measured|found|fixed)\b",
    re.I,
)
TEMPLATE_READMES = sorted((ROOT / "templates").rglob("README.md*"))


def test_docs_state_what_holds_not_when_it_was_run() -> None:
    found = [
        f"{page.relative_to(ROOT)}: {' '.join(m.group().split())}"
        for page in [*DOCS, *TEMPLATE_READMES]
        for m in DATED_RUN.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_dated_run_wording_is_caught_and_names_with_dates_are_not() -> None:
    logs = [
        "The run of 2026-11-30 (217 specs) had 5 clear errors",
        "Last run (2026-12-01, 2 processes, 13.4 min)",
        "on a shared 2-core machine at load 10-12, 2026-12-03):",
        "the others from the runs of 2026-12-01",
        "as of 2026-12-02 every spec passes",
        "since 2026-11-01 the cache is on",
        "We tried a second process",
    ]
    names = [
        "`../shared/corpus/stripe/spec3.2023-09-12.yaml`",
        "| swagger2/azure.com__azsadmin-Drive__2019-05-01.yaml | ? |",
        "Stripe v450 → v524 (2023-08-07 → 2023-09-12)",
        "written `2024-05-01` / RFC 3339 `2024-05-01T12:00:00+02:00`",
        "github/api.github.com.2022-06-11.json",
        "apisguru/plaid.com__2020-09-14_1.20.6.yaml",
    ]
    assert [s for s in logs if not DATED_RUN.search(s)] == []
    assert [s for s in names if DATED_RUN.search(s)] == []


def test_the_index_links_every_page_and_folder_of_docs() -> None:
    index = ROOT / "docs" / "README.md"
    linked = {(index.parent / target).resolve() for target in LINK.findall(index.read_text())}
    pages = [p for p in (ROOT / "docs").iterdir() if p.name != "README.md"]
    pages = [p for p in pages if p.suffix == ".md" or p.is_dir()]
    assert pages
    assert [p.name for p in pages if p.resolve() not in linked] == []
