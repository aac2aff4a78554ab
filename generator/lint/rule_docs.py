"""The page of each lint rule (`docs/rules/<id>.md`), as `apiforge rules ID` prints it.

The pages ship inside the wheel (`generator/rule_docs/`, see pyproject's force-include); in a
checkout they are read from `docs/rules/`. Findings point to them by the command that shows
a page (`help_command`), and, when `APIFORGE_RULE_DOCS_URL` gives where a team publishes
them, by URL (`help_uri`: the base followed by `<id>.md`).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from generator.errors import ApiforgeError, Problem

_PACKAGE = Path(__file__).resolve().parent.parent


def pages_dir() -> Path | None:
    """Where the rule pages are: inside the installed package, else in the checkout."""
    for candidate in (_PACKAGE / "rule_docs", _PACKAGE.parent / "docs" / "rules"):
        if candidate.is_dir():
            return candidate
    return None


def help_command(rule_id: str) -> str:
    return f"apiforge rules {rule_id}"


def help_uri(rule_id: str) -> str | None:
    """The rule page's URL under `APIFORGE_RULE_DOCS_URL`, or None when it is not set."""
    base = os.environ.get("APIFORGE_RULE_DOCS_URL", "").strip()
    if not base:
        return None
    return f"{base.rstrip('/')}/{rule_id}.md"


def rule_page(rule_id: str, known: list[str]) -> str:
    """The text of `rule_id`'s page; ApiforgeError naming the closest ids when there is no
    such rule."""
    if rule_id not in known:
        close = difflib.get_close_matches(rule_id, known, n=3)
        hint = f"did you mean {' or '.join(close)}?" if close else "`apiforge rules` lists them"
        raise ApiforgeError(Problem(f"no lint rule {rule_id!r}"), hint)
    folder = pages_dir()
    page = folder / f"{rule_id}.md" if folder is not None else None
    if page is None or not page.is_file():
        raise ApiforgeError(Problem(f"the page of {rule_id} is not installed"))
    return page.read_text(encoding="utf-8")
