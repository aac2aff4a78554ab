"""Idempotency keys: an `Idempotency-Key` request header, and the 409/422 it implies."""

from __future__ import annotations

from collections.abc import Iterator

from generator.ir import Api, IdempotencySpec, Operation
from generator.lint.model import Hit, Rule, code, join_words, op_hit, rule

HEADER_NAMES = ("idempotency-key", "x-idempotency-key")


def detect(op: Operation) -> IdempotencySpec | None:
    for name in HEADER_NAMES:
        param = op.parameter(name, "header")
        if param is not None:
            declared = frozenset(s for s in ("409", "422") if op.response(s) is not None)
            return IdempotencySpec(param.name, param.required, declared, param.where)
    return None


# --- lint rules ------------------------------------------------------------------------


_READ_LIKE_POST = ("search", "query", "graphql", "lookup", "validate", "preview", "estimate")


def needs_key(op: Operation) -> bool:
    """POST always (unless its last path segment names a read: `/search`, `/query`, …);
    PATCH when it has side effects a retry would repeat, i.e. it is not guarded by If-Match
    (a conditional PATCH retried after success gets 412, not a second change)."""
    if op.method == "post":
        last = op.path.rstrip("/").rsplit("/", 1)[-1].lower()
        return not any(
            last == w or last.endswith((":" + w, "-" + w, "_" + w)) for w in _READ_LIKE_POST
        )
    if op.method == "patch":
        return op.parameter("If-Match", "header") is None
    return False


@rule(
    "idempotency-key-missing",
    "warning",
    "POST, and PATCH with side effects, without an `Idempotency-Key` header parameter",
    "idempotency",
)
def key_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        if op.patterns.idempotency is None and needs_key(op):
            why = (
                " so clients can retry without creating a duplicate"
                if op.method == "post"
                else " (or an `If-Match` precondition) so a retried change is not applied twice"
            )
            yield op_hit(op, f"add an `Idempotency-Key` header parameter{why}")


@rule(
    "idempotency-responses-missing",
    "warning",
    "`Idempotency-Key` declared without 409 (request in progress) or 422 (key reused with another body)",
    "idempotency",
)
def responses_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        spec = op.patterns.idempotency
        if spec is None:
            continue
        missing = []
        if "409" not in spec.responses:
            missing.append("`409` (a request with this key is still in progress)")
        if "422" not in spec.responses:
            missing.append("`422` (the key was reused with a different body)")
        if missing:
            yield op_hit(
                op,
                f"{code(spec.header)} is declared; add response {join_words(missing)}",
                spec.where,
            )


RULES: tuple[Rule, ...] = (key_missing, responses_missing)
