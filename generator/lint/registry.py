"""Every lint rule, gathered from the pattern modules' `RULES`, in a stable order."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import TYPE_CHECKING

from generator.errors import ApiforgeError, Problem
from generator.lint.model import Rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer


@cache
def all_rules() -> tuple[Rule, ...]:
    from generator.patterns import MODULES

    rules = tuple(r for module in MODULES for r in getattr(module, "RULES", ()))
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule id"
    return rules


@cache
def rules_by_id() -> dict[str, Rule]:
    return {r.id: r for r in all_rules()}


@cache
def all_fixes() -> dict[str, Fixer]:
    """Every rule's fix (`FIXES` in the pattern modules, next to the rules), by rule id."""
    from generator.patterns import MODULES

    fixes: dict[str, Fixer] = {}
    for module in MODULES:
        fixes.update(getattr(module, "FIXES", {}))
    assert set(fixes) <= set(rules_by_id()), "a fix for a rule that does not exist"
    return fixes


def check_ids(
    ids: list[str],
    *,
    source: str,
    file: str = "",
    line: int = 0,
    column: int = 0,
    pointer: str | None = None,
    known: Collection[str] | None = None,
    noun: str = "rule id",
    hint: str = "`apiforge rules` lists every rule id",
) -> None:
    """Refuse ids that do not exist (lint's rule ids unless `known` is given), naming where
    they were written."""
    if known is None:
        known = rules_by_id()
    unknown = [i for i in ids if i not in known]
    if not unknown:
        return
    import difflib

    hints = []
    for bad in unknown:
        close = difflib.get_close_matches(bad, known, n=1)
        hints.append(f"`{bad}`" + (f" (did you mean `{close[0]}`?)" if close else ""))
    raise ApiforgeError(
        Problem(
            f"unknown {noun}{'s' if len(unknown) > 1 else ''} in {source}: {', '.join(hints)}",
            file=file,
            line=line,
            column=column,
            pointer=pointer,
        ),
        hint,
    )
