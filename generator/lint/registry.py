"""Every lint rule, gathered from the pattern modules' `RULES`, in a stable order."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import TYPE_CHECKING

from generator.errors import ApiforgeError, Problem
from generator.lint.model import Rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer


#: The entry point group of rule plugins: each entry names a `Rule` or an iterable of them.
PLUGIN_GROUP = "apiforge.rules"


@cache
def all_rules() -> tuple[Rule, ...]:
    """apiforge's rules, then the plugins' (entry points in `PLUGIN_GROUP`)."""
    from generator.patterns import MODULES

    rules = tuple(r for module in MODULES for r in getattr(module, "RULES", ()))
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)), "duplicate rule id"
    return rules + plugin_rules(frozenset(ids))


def plugin_rules(taken: frozenset[str]) -> tuple[Rule, ...]:
    """The rules of the installed plugins, in the order of their entry points' names; a
    plugin that cannot be loaded, or gives something else than rules or an id already
    taken, is one clear error."""
    if not _declares_plugins():
        return ()
    from importlib.metadata import entry_points  # ~0.1-0.3 s: only when a plugin is there

    found: list[Rule] = []
    for entry in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        where = f"the lint plugin {entry.name!r} ({entry.value})"
        try:
            loaded = entry.load()
        except Exception as exc:
            raise ApiforgeError(Problem(f"{where} cannot be loaded: {exc}")) from None
        items = [loaded] if isinstance(loaded, Rule) else list(loaded)
        for item in items:
            if not isinstance(item, Rule):
                raise ApiforgeError(Problem(f"{where} gives {type(item).__name__}, not a Rule"))
            if item.id in taken or any(r.id == item.id for r in found):
                raise ApiforgeError(Problem(f"{where}: rule id {item.id!r} is taken"))
            found.append(item)
    return tuple(found)


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


def _declares_plugins() -> bool:
    """Whether an installed distribution declares a `PLUGIN_GROUP` entry point: its
    `entry_points.txt` read on `sys.path` directly (a few ms), as `importlib.metadata`
    would find it."""
    import os
    import sys

    header = f"[{PLUGIN_GROUP}]"
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                path = os.path.join(folder or ".", name, "entry_points.txt")
                try:
                    with open(path, encoding="utf-8") as fh:
                        if header in fh.read():
                            return True
                except OSError:
                    continue
    return False


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
