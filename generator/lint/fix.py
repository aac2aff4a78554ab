"""`apiforge lint --fix` / `--diff`: write what the findings say is missing into the spec.

One spec at a time:

1. lint it (the findings, filtered by configuration and `x-apiforge-ignore` as always);
2. run the fix of every finding whose rule has one (`FIXES` in the pattern modules), into
   a plan made in memory (`generator.lint.fix_plan`); fixes that complete what they add
   (an `Idempotency-Key` with its 409/422) do so in the same pass;
3. lint the planned data again; when a fix made new findings of rules with a fix (a GET
   that now sends `ETag` asks for `If-Match` on its PUT), fix those too (at most a few
   rounds). The last round's findings are what is left;
4. write the plan into the text of each file it changes (`generator.lint.fix_files`),
   parse every new text back and compare it with the planned data, then (with `--fix`)
   write the files atomically.

A spec that cannot be read, or a file that cannot be written, is an error (exit 2) and no
file of that spec changes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from generator.errors import ApiforgeError, Problem
from generator.lint.config import LintConfig
from generator.lint.engine import LintResult, RuleFilter, lint, locate_findings
from generator.lint.fix_files import (
    FileChange,
    plan_changes,
    unified_diff,
    use_new_text,
    verify,
    write_atomically,
)
from generator.lint.fix_plan import Fix, FixPlan, Unfixed
from generator.lint.model import Finding
from generator.lint.registry import all_fixes, all_rules
from generator.spec import LoadedSpec, load_spec
from generator.spec.swagger2 import ConvertedDocument

MAX_ROUNDS = 4
# fixes that others build on go first: an `If-Match` planned for a PATCH means it needs no
# `Idempotency-Key`
_FIRST = ("etag-missing", "if-match-missing", "precondition-responses-missing")


@dataclass(frozen=True, slots=True)
class FixResult:
    """What `--fix` did to one spec, and what is left."""

    before: LintResult  # the findings before (not located)
    after: LintResult  # the findings left, located in the fixed text
    fixes: tuple[Fix, ...]  # located in the fixed text
    unfixed: tuple[Unfixed, ...]  # findings a fix exists for, which it could not make
    changes: tuple[FileChange, ...]

    def diff(self) -> str:
        return "".join(unified_diff(c) for c in self.changes)

    def fixed_by_rule(self) -> Counter[str]:
        """Per rule with a fix, how many fewer findings there are than before: what the fixes
        resolved, also those a fix of another rule resolved with it (a 429 that came with
        rate-limit headers), which no fix of their own lists."""
        fixable = set(all_fixes())
        before = Counter(f.rule for f in self.before.findings if f.rule in fixable)
        after = Counter(f.rule for f in self.after.findings if f.rule in fixable)
        return Counter({rule: n - after[rule] for rule, n in before.items() if n > after[rule]})


def _order(finding: Finding) -> tuple[int, str]:
    rank = _FIRST.index(finding.rule) if finding.rule in _FIRST else len(_FIRST)
    return (rank, finding.rule)


def fix_spec(source: str, config: LintConfig | None = None, *, write: bool) -> FixResult:
    """Fix one spec; with `write`, write the fixed files (atomically, all or none)."""
    from generator.spec.load import gc_paused

    with gc_paused():  # it builds a lot of acyclic data (see gc_paused)
        return _fix_spec(source, config or LintConfig(), write)


def _fix_spec(source: str, config: LintConfig, write: bool) -> FixResult:
    loaded = load_spec(source, validate=False)
    if isinstance(loaded.resolver.root, ConvertedDocument):  # its fixes would be OpenAPI 3
        raise ApiforgeError(
            Problem("`lint --fix` edits OpenAPI 3 documents; this is Swagger 2.0", file=source),
            "convert it to OpenAPI 3 first (e.g. `npx swagger2openapi spec.yaml -o "
            "openapi.yaml`), or lint it without --fix",
        )
    before = result = lint(loaded, config, locate=False)
    plan = FixPlan(loaded.resolver, RuleFilter(config, loaded.resolver, loaded.api))
    fixers = all_fixes()
    tried: set[tuple[str, str, str, str]] = set()
    for _ in range(MAX_ROUNDS):
        plan.api = loaded.api
        made = False
        for finding in sorted(result.findings, key=_order):
            fixer = fixers.get(finding.rule)
            key = (finding.rule, finding.file, finding.pointer, finding.message)
            if fixer is None or key in tried:
                continue
            tried.add(key)
            made = plan.run(fixer, finding) or made
        if not made:
            break
        loaded = _rebuild(loaded)
        result = lint(loaded, config, locate=False)
    changes = plan_changes(plan)
    verify(changes, keep_cache=write)
    if write and changes:
        write_atomically(changes)
    use_new_text(changes)
    after = locate_findings(result, loaded.resolver)
    fixes = list(plan.fixes.values())
    for fix in fixes:
        fix.line, fix.column = loaded.resolver.locate(fix.where)
    fixes.sort(key=lambda f: (f.where.file, f.line, f.column, f.rule))
    left = {(f.rule, f.file, f.pointer, f.message) for f in result.findings}
    unfixed = tuple(
        u
        for u in plan.unfixed
        if (u.finding.rule, u.finding.file, u.finding.pointer, u.finding.message) in left
    )
    return FixResult(before, after, tuple(fixes), unfixed, tuple(changes))


def _rebuild(loaded: LoadedSpec) -> LoadedSpec:
    """The IR of the documents as the plan has changed them."""
    from generator.patterns import attach_patterns
    from generator.spec.build import build_api

    return LoadedSpec(attach_patterns(build_api(loaded.resolver)), loaded.resolver)


def fixable_rules() -> tuple[str, ...]:
    fixers = all_fixes()
    return tuple(r.id for r in all_rules() if r.id in fixers)
