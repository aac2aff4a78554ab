"""What a lint rule is and what it reports. Pattern modules import this to declare their
`RULES`; the engine (generator.lint.engine) runs them, filters by configuration and locates
the findings that survive.

A leaf: it imports only the IR, so that `generator.patterns` (the rules and their fixes) and
`generator.lint` (the engine, the fixer, the reports) share these types without importing
each other in a circle."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from generator.ir import Api, Operation, Response, Where

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")  # most severe first
SEVERITY_RANK: dict[str, int] = {"error": 3, "warning": 2, "info": 1}


def normalized(name: str) -> str:
    """A name as it is compared with others: `Retry-After` = `retry_after` = `RetryAfter`.
    (Here, not in the fixer, so a plain `lint` does not import the fixer.)"""
    return re.sub(r"[^0-9a-z]", "", name.lower())


@dataclass(frozen=True, slots=True)
class Hit:
    """What a rule yields: a message that says what to add, the node it is about, and the
    operation (or webhook operation) it concerns — also when the node is a shared `$ref`
    target that several operations use."""

    message: str
    where: Where
    operation: Operation | None = None
    webhook: str | None = None  # the webhook's name when the operation is a webhook
    # what the rule's fix adds, when the message alone says it (the missing statuses)
    fix: tuple[str, ...] = ()


Check = Callable[[Api], Iterable[Hit]]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity  # the default
    summary: str  # one line, shown by `apiforge rules`
    pattern: str  # the pattern module that owns it
    check: Check


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    pointer: str
    operation: Operation | None  # the operation concerned (a webhook's operation for webhooks)
    webhook: str | None
    fix: tuple[str, ...] = ()  # what the rule's fix adds, when the message alone says it

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.rule, self.message)


class RuleGate(Protocol):
    """What a fix asks before it runs: whether `rule_id` runs and would report on `op`
    (`generator.lint.engine.RuleFilter` answers it)."""

    def allows(self, rule_id: str, op: Operation | None) -> bool: ...


def rule(id: str, severity: Severity, summary: str, pattern: str) -> Callable[[Check], Rule]:
    """Decorator: turn a check function into a `Rule`."""

    def wrap(check: Check) -> Rule:
        return Rule(id, severity, summary, pattern, check)

    return wrap


# --- small helpers rules share -------------------------------------------------------


def op_hit(
    op: Operation, message: str, where: Where | None = None, fix: tuple[str, ...] = ()
) -> Hit:
    """A hit about `op`: the message is prefixed with the operation's label."""
    return Hit(f"{op.label}: {message}", where or op.where, op, fix=fix)


def responses_where(op: Operation) -> Where:
    """The operation's `responses` object (located at the operation when it has none)."""
    return op.where.child("responses")


def statuses(responses: Iterable[Response]) -> str:
    return ", ".join(r.status for r in responses)


def code(text: str) -> str:
    return f"`{text}`"


def join_words(items: Iterable[str], word: str = "and") -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def api_operations(api: Api) -> Iterator[Operation]:
    """The API's own operations (webhooks are requests the API sends: their own rules)."""
    return iter(api.operations)
