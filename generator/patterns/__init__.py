"""One module per production pattern. Each owns its detection (what an operation declares,
and where) and its lint rules (what it should declare but does not).

`attach_patterns` fills `Operation.patterns` and `Webhook.signature` for the whole API.
"""

from __future__ import annotations

from dataclasses import replace

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
    operations = tuple(replace(op, patterns=detect(op, api)) for op in api.operations)
    hooks = tuple(
        replace(
            hook,
            operation=replace(hook.operation, patterns=detect(hook.operation, api)),
            signature=webhooks.detect(hook),
        )
        for hook in api.webhooks
    )
    return replace(api, operations=operations, webhooks=hooks)
