"""Run the rules over a loaded spec: filter by configuration and `x-apiforge-ignore`, then
locate (file:line:column) only the findings that survive — or none at all when the caller only
counts them (`lint(..., locate=False)`: `apiforge generate`'s one-line summary), since locating
builds the spec's source map."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

from generator.ir import Api, Operation, Where
from generator.lint.config import LintConfig
from generator.lint.model import SEVERITY_RANK, Finding, Severity
from generator.lint.registry import all_rules, check_ids, rules_by_id
from generator.spec import LoadedSpec
from generator.spec.refs import Resolver

IGNORE_KEY = "x-apiforge-ignore"
# `Finding.sort_key`, made in C
_SORT_KEY = attrgetter("file", "line", "column", "rule", "message")
_ASK_EVERY = 100  # new spots: a batch for the child to locate while the rules go on


@dataclass(frozen=True, slots=True)
class LintResult:
    api: Api
    findings: tuple[Finding, ...]
    rules_run: tuple[str, ...]
    suppressed: int  # findings dropped by x-apiforge-ignore or ignore-operations
    baselined: int = 0  # findings a baseline knows (`lint --baseline`), left out

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def fails(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        threshold = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[f.severity] >= threshold for f in self.findings)


def in_spec_ids(
    resolver: Resolver,
    where: Where,
    key: str,
    *,
    known: Collection[str] | None = None,
    noun: str = "rule id",
    hint: str = "`apiforge rules` lists every rule id",
    example: str = "etag-missing",
) -> frozenset[str]:
    """The ids listed under `key` (`x-apiforge-ignore`, …) of the node at `where`: a list of
    known ids (lint's rule ids unless `known` is given), or one id; anything else is an error
    located at the key."""
    node: Any = resolver.get(where)
    value = node.get(key) if isinstance(node, dict) else None
    if value is None:
        return frozenset()
    at = where.child(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        from generator.errors import ApiforgeError

        raise ApiforgeError(
            resolver.problem(f"`{key}` must be a list of {noun}s", at),
            f"write e.g. `{key}: [{example}]`",
        )
    known = rules_by_id() if known is None else known
    # located only when an id is unknown: the error names file:line:column
    line, column = (0, 0) if all(v in known for v in value) else resolver.locate(at)
    check_ids(
        value,
        source=f"`{key}`",
        file=at.file,
        line=line,
        column=column,
        pointer=at.pointer,
        known=known,
        noun=noun,
        hint=hint,
    )
    return frozenset(value)


class _InSpecIgnores:
    """`x-apiforge-ignore: [rule-id, …]` on an operation or its path item (both apply)."""

    def __init__(self, resolver: Resolver) -> None:
        self.r = resolver
        self._cache: dict[Where, frozenset[str]] = {}

    def _at(self, where: Where) -> frozenset[str]:
        cached = self._cache.get(where)
        if cached is None:
            cached = self._cache[where] = in_spec_ids(self.r, where, IGNORE_KEY)
        return cached

    def for_operation(self, op: Operation) -> frozenset[str]:
        if IGNORE_KEY not in op.extensions:
            return frozenset()
        return self._at(op.where) | self._at(op.path_where)

    def check_all(self, api: Api) -> None:
        """Validate every `x-apiforge-ignore` up front, so an unknown id is an error even
        when no finding would have consulted it."""
        for op in (*api.operations, *(h.operation for h in api.webhooks)):
            self.for_operation(op)


class RuleFilter:
    """Which rules run at which severity (configuration), and which operations they skip
    (`x-apiforge-ignore`, `ignore-operations`): what `lint` reports and `--fix` fixes."""

    def __init__(self, config: LintConfig, resolver: Resolver, api: Api) -> None:
        self.config = config
        self._in_spec = _InSpecIgnores(resolver)
        self._in_spec.check_all(api)

    def severity(self, rule_id: str, default: Severity) -> Severity | None:
        return self.config.enabled(rule_id, default)

    def suppressed(self, rule_id: str, op: Operation | None) -> bool:
        if op is None:
            return False
        if IGNORE_KEY in op.extensions and rule_id in self._in_spec.for_operation(op):
            return True
        ignores = self.config.ignore_operations  # asked for every hit: most runs have none
        return bool(ignores) and any(i.matches(rule_id, op.method, op.path) for i in ignores)

    def allows(self, rule_id: str, op: Operation | None) -> bool:
        """Whether `rule_id` runs and would report on `op`."""
        rule = rules_by_id()[rule_id]
        return self.severity(rule_id, rule.severity) is not None and not self.suppressed(
            rule_id, op
        )


def lint(
    loaded: LoadedSpec, config: LintConfig | None = None, *, locate: bool = True
) -> LintResult:
    """The findings of every enabled rule. `locate=False`: the same findings, counts and
    order-independent facts, with line and column 0 — for callers that only count them."""
    config = config or LintConfig()
    api, resolver = loaded.api, loaded.resolver
    rules = RuleFilter(config, resolver, api)

    hits: list[tuple[str, Severity, Any]] = []
    run: list[str] = []
    suppressed = 0
    # where the findings are, by (file, pointer): sent to be located in batches as they are
    # found, the first `sent` of them so far (a forked child locates them meanwhile)
    spots: dict[tuple[str, str], Where] = {}
    sent = 0
    for rule in all_rules():
        severity = rules.severity(rule.id, rule.severity)
        if severity is None:
            continue
        run.append(rule.id)
        for hit in rule.check(api):
            if rules.suppressed(rule.id, hit.operation):
                suppressed += 1
                continue
            hits.append((rule.id, severity, hit))
            spots.setdefault((hit.where.file, hit.where.pointer), hit.where)
            if locate and len(spots) >= sent + _ASK_EVERY:
                sent = _ask_ahead(resolver, spots, sent)
    if locate and len(spots) > sent:
        _ask_ahead(resolver, spots, sent)

    # keyed by (file, pointer) tuples, not by `Where`: a tuple hashes in C, a dataclass's
    # __hash__ is a Python call, and GitHub's spec has 4,000 hits
    kept: dict[tuple[str, str, str, str], tuple[str, Severity, Any]] = {}
    for rule_id, severity, hit in hits:
        # the same finding again (a shared `$ref` target): the first one stays
        kept.setdefault(
            (rule_id, hit.where.file, hit.where.pointer, hit.message), (rule_id, severity, hit)
        )
    located = _located(resolver, list(spots.values())) if locate else {}
    findings = []
    for rule_id, severity, hit in kept.values():
        where = hit.where
        line, column, pointer = located.get((where.file, where.pointer), (0, 0, where.pointer))
        findings.append(
            Finding(
                rule=rule_id,
                severity=severity,
                message=hit.message,
                file=where.file,
                line=line,
                column=column,
                pointer=pointer,
                operation=hit.operation,
                webhook=hit.webhook,
                fix=hit.fix,
            )
        )
    ordered = tuple(sorted(findings, key=_SORT_KEY))
    return LintResult(api, ordered, tuple(run), suppressed)


def _by_file(wheres: list[Where]) -> dict[str, list[Where]]:
    by_file: dict[str, list[Where]] = {}
    for where in wheres:
        by_file.setdefault(where.file, []).append(where)
    return by_file


def _ask_ahead(resolver: Resolver, spots: dict[tuple[str, str], Where], sent: int) -> int:
    """Have the spots after the first `sent` located meanwhile where a file's child does it
    (`ask_ahead`); how many are sent now."""
    from generator.spec.sourcemap import ask_ahead

    for file, group in _by_file(list(spots.values())[sent:]).items():
        ask_ahead(resolver.document(file), [w.pointer for w in group])
    return len(spots)


def _located(
    resolver: Resolver, wheres: list[Where]
) -> dict[tuple[str, str], tuple[int, int, str]]:
    """Line, column and the pointer as written (a Swagger 2.0 file's own lines and pointers)
    of each node, by (file, pointer): each file's asked all at once (`Document.locate_all`:
    a big one may have its map made meanwhile in a forked child)."""
    located = {}
    for file, group in _by_file(wheres).items():
        written = [resolver.written_pointer(w) for w in group]  # (before waiting for a child)
        places = resolver.document(file).locate_all([w.pointer for w in group])
        for where, (line, column), pointer in zip(group, places, written, strict=True):
            located[(file, where.pointer)] = (line, column, pointer)
    return located


def locate_findings(result: LintResult, resolver: Resolver) -> LintResult:
    """`result` (of `lint(..., locate=False)`) with every finding located by `resolver`."""
    located: dict[Where, tuple[int, int, str]] = {}
    findings = []
    for f in result.findings:
        where = Where(f.file, f.pointer)
        if where not in located:
            located[where] = (*resolver.locate(where), resolver.written_pointer(where))
        line, column, pointer = located[where]
        findings.append(replace(f, line=line, column=column, pointer=pointer))
    findings.sort(key=lambda f: f.sort_key)
    return replace(result, findings=tuple(findings))


def lint_path(source: str, config: LintConfig | None = None) -> LintResult:
    from generator.spec import load_spec
    from generator.spec.load import gc_paused, read_whole

    with gc_paused(), read_whole():  # the spec, its IR and the findings: no cycles
        return lint(load_spec(source, validate=False, locate_ahead=True), config)
