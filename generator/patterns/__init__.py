"""One module per production pattern. Each owns its detection (what an operation declares,
and where) and its lint rules (what it should declare but does not).

`attach_patterns` fills `Operation.patterns` and `Webhook.signature` for the whole API.
"""

from __future__ import annotations

from dataclasses import fields, replace
from operator import attrgetter

from generator.ir import Api, Operation, OperationPatterns
from generator.patterns import (
    async_jobs,
    concurrency,
    idempotency,
    pagination,
    problems,
    ratelimit,
    security,
    webhooks,
)

MODULES = (
    security,
    idempotency,
    ratelimit,
    concurrency,
    async_jobs,
    problems,
    pagination,
    webhooks,
)


# every field of an `Operation` but `patterns` (the last), in order, read in C
_OPERATION_FIELDS = attrgetter(*(f.name for f in fields(Operation)[:-1]))
assert fields(Operation)[-1].name == "patterns"


def with_patterns(op: Operation, patterns: OperationPatterns) -> Operation:
    """`replace(op, patterns=patterns)` without `replace`'s loop over the fields in Python
    (GitHub's 800 operations: ~3 ms instead of ~5)."""
    return Operation(*_OPERATION_FIELDS(op), patterns)  # type: ignore[call-arg]  # attrgetter: no arity


def detect(op: Operation, api: Api) -> OperationPatterns:
    return OperationPatterns(
        idempotency=idempotency.detect(op),
        rate_limit=ratelimit.detect(op),
        concurrency=concurrency.detect(op),
        async_job=async_jobs.detect(op, api),
        problems=problems.detect(op),
        security=security.detect(op, api),
        pagination=pagination.detect(op, api),
    )


def attach_patterns(api: Api) -> Api:
    operations = tuple(with_patterns(op, detect(op, api)) for op in api.operations)
    hooks = tuple(
        replace(
            hook,
            operation=with_patterns(hook.operation, detect(hook.operation, api)),
            signature=webhooks.detect(hook),
        )
        for hook in api.webhooks
    )
    return replace(api, operations=operations, webhooks=hooks)
