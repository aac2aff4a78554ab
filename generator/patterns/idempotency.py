"""Idempotency keys: an `Idempotency-Key` request header, and the 409/422 it implies."""

from __future__ import annotations

from generator.ir import IdempotencySpec, Operation

HEADER_NAMES = ("idempotency-key", "x-idempotency-key")


def detect(op: Operation) -> IdempotencySpec | None:
    for name in HEADER_NAMES:
        param = op.parameter(name, "header")
        if param is not None:
            declared = frozenset(s for s in ("409", "422") if op.response(s) is not None)
            return IdempotencySpec(param.name, param.required, declared, param.where)
    return None
