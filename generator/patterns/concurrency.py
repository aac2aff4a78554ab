"""Optimistic concurrency: ETag on reads, If-Match/If-None-Match, and 304/412/428."""

from __future__ import annotations

from generator.ir import ConcurrencySpec, Operation


def detect(op: Operation) -> ConcurrencySpec | None:
    etag = next((h for r in op.success_responses if (h := r.header("ETag")) is not None), None)
    if_match = op.parameter("If-Match", "header")
    if_none_match = op.parameter("If-None-Match", "header")
    evidence = etag or if_match or if_none_match
    if evidence is None:
        return None
    return ConcurrencySpec(
        etag=etag is not None,
        if_match=if_match is not None,
        if_match_required=bool(if_match and if_match.required),
        if_none_match=if_none_match is not None,
        responses=frozenset(s for s in ("304", "412", "428") if op.response(s) is not None),
        where=evidence.where,
    )
