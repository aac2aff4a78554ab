"""One `apiforge diff` run: read both sides (a file, `-`, or `REF:PATH` from git; multi-file
and Swagger 2.0 as everywhere), compare, apply the configuration and the new spec's
acknowledgements, locate each change that is left in both files, and name what it does to
the client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from generator.diff.client_effect import ClientNames, semver_bump
from generator.diff.compare import Diff
from generator.diff.kinds import (
    LEVEL_SEVERITY,
    LEVELS,
    SEVERITY_LEVEL,
    check_kind_ids,
    kinds_by_id,
)
from generator.diff.model import Change, Located
from generator.errors import ApiforgeError, Problem
from generator.ir import Api, Operation, Where
from generator.lint.config import LintConfig, Vocabulary, resolve_config
from generator.lint.engine import in_spec_ids
from generator.spec import LoadedSpec, load_spec
from generator.spec.load import MISSING, node_at
from generator.spec.refs import Resolver

ACCEPT_KEY = "x-apiforge-diff-accept"
FAIL_ON = ("breaking", "warning", "compatible", "never")
VOCABULARY = Vocabulary(
    section="diff",
    levels={level: LEVEL_SEVERITY[level] for level in LEVELS},  # type: ignore[misc]
    fail_on={"breaking": "error", "warning": "warning", "compatible": "info", "never": "never"},
    check=check_kind_ids,
    hint="see docs/diff.md for the configuration keys",
)
_RANK = {"breaking": 3, "warning": 2, "compatible": 1}


@dataclass(frozen=True, slots=True)
class DiffResult:
    old: Api
    new: Api
    changes: tuple[Located, ...]  # sorted by level, then place in the new file
    acknowledged: tuple[Located, ...]  # accepted by the new spec's `x-apiforge-diff-accept`
    suppressed: int  # dropped by configuration (ignore, severity off, ignore-operations)
    bump: str  # major, minor or patch

    def count(self, level: str) -> int:
        return sum(1 for c in self.changes if c.level == level)

    def fails(self, fail_on: str) -> bool:
        """Whether a change is at or above `fail_on` (a level, or the severity the
        configuration stands it for: `error` for `breaking`)."""
        level = SEVERITY_LEVEL.get(fail_on, fail_on)
        if level == "never":
            return False
        return any(_RANK[c.level] >= _RANK[level] for c in self.changes)


def diff_config(
    new_source: str, config_file: str | None, use_files: bool, fail_on: str | None = None
) -> LintConfig:
    """The `diff` section of the configuration nearest the new spec (or `config_file`);
    `fail_on` (a level) overrides its `fail-on`."""
    config = resolve_config(new_source, config_file, use_files, VOCABULARY)
    return replace(config, fail_on=VOCABULARY.fail_on[fail_on]) if fail_on else config


def load_side(source: str) -> LoadedSpec:
    from generator.spec.load import gc_paused, read_whole

    with gc_paused(), read_whole():
        return load_spec(source, validate=False)


def run_diff(old_source: str, new_source: str, config: LintConfig | None = None) -> DiffResult:
    if old_source == "-" and new_source == "-":
        raise ApiforgeError(
            Problem("both sides cannot be standard input"), "give one side as a file or REF:PATH"
        )
    old, new = load_side(old_source), load_side(new_source)
    return diff_loaded(old, new, config)


def diff_loaded(old: LoadedSpec, new: LoadedSpec, config: LintConfig | None = None) -> DiffResult:
    config = config or LintConfig()
    changes = Diff(old.api, old.resolver, new.api, new.resolver).changes()
    accepts = _Accepts(new.resolver, new.api)
    names = ClientNames(old.api, new.api)
    kept: list[Located] = []
    acknowledged: list[Located] = []
    suppressed = 0
    all_levels = []
    for change in changes:
        kind = kinds_by_id()[change.kind]
        severity = config.enabled(change.kind, LEVEL_SEVERITY[kind.level])  # type: ignore[arg-type]
        if severity is None or _ignored(config, change):
            suppressed += 1
            continue
        level = SEVERITY_LEVEL[severity]
        all_levels.append(level)
        located = _locate(change, level, old.resolver, new.resolver, names)
        if accepts.accepted(change):
            acknowledged.append(located)
        else:
            kept.append(located)
    order: dict[str, int] = {level: i for i, level in enumerate(LEVELS)}

    def sort_key(c: Located) -> tuple[int, str, int, int, str, str]:
        return (order[c.level], c.new_file, c.new_line, c.new_column, c.kind, c.message)

    return DiffResult(
        old.api,
        new.api,
        tuple(sorted(kept, key=sort_key)),
        tuple(sorted(acknowledged, key=sort_key)),
        suppressed,
        semver_bump(all_levels),
    )


def _operations(change: Change) -> Iterator[Operation]:
    for old_op, new_op in change.reach:
        op = new_op or old_op
        if op is not None:
            yield op


def _ignored(config: LintConfig, change: Change) -> bool:
    """`ignore-operations` of the configuration: every operation the change reaches is
    ignored for its kind."""
    ignores = config.ignore_operations
    if not ignores:
        return False
    ops = list(_operations(change))
    if change.webhook:
        return any(i.matches(change.kind, "post", change.webhook) for i in ignores)
    return bool(ops) and all(
        any(i.matches(change.kind, op.method, op.path) for i in ignores) for op in ops
    )


class _Accepts:
    """`x-apiforge-diff-accept: [kind, …]` in the new spec, on the operation a change reaches
    (or its path item), on the node the change is at, or at the top level for every change."""

    def __init__(self, resolver: Resolver, api: Api) -> None:
        self.r = resolver
        self._cache: dict[Where, frozenset[str]] = {}
        self.top = self._at(Where(api.root, ""))

    def _at(self, where: Where) -> frozenset[str]:
        cached = self._cache.get(where)
        if cached is None and node_at(self.r.document(where.file).data, where.pointer) is MISSING:
            cached = self._cache[where] = frozenset()  # (a removed part's nearest place)
        if cached is None:
            cached = self._cache[where] = in_spec_ids(
                self.r,
                where,
                ACCEPT_KEY,
                known=kinds_by_id(),
                noun="change kind",
                hint="docs/diff.md lists every change kind",
                example="parameter-removed",
            )
        return cached

    def accepted(self, change: Change) -> bool:
        if change.kind in self.top:
            return True
        if change.new is not None and change.kind in self._at(change.new):
            return True
        ops = [op for _, op in change.reach if op is not None]
        return bool(ops) and all(
            change.kind in self._at(op.where) or change.kind in self._at(op.path_where)
            for op in ops
        )


def _locate(
    change: Change, level: str, old: Resolver, new: Resolver, names: ClientNames
) -> Located:
    ofile = oline = ocol = opointer = nfile = nline = ncol = npointer = None
    if change.old is not None:
        ofile = change.old.file
        oline, ocol = old.locate(change.old)
        opointer = old.written_pointer(change.old)
    if change.new is not None:
        nfile = change.new.file
        nline, ncol = new.locate(change.new)
        npointer = new.written_pointer(change.new)
    labels = sorted({op.label for op in _operations(change)})
    if change.webhook:
        labels = [f"webhook {change.webhook}"]
    return Located(
        change=change,
        level=level,
        old_file=ofile or "",
        old_line=oline or 0,
        old_column=ocol or 0,
        old_pointer=opointer or "",
        new_file=nfile or "",
        new_line=nline or 0,
        new_column=ncol or 0,
        new_pointer=npointer or "",
        operations=tuple(labels),
        client=names.describe(change) if level == "breaking" else (),
    )
