"""RFC 9457 problem details: the one shape every error of the generated server takes."""

from __future__ import annotations

import json
from typing import Any

PROBLEM_JSON = "application/problem+json"
PROBLEM_BASE = "https://apiforge.dev/problems/"


class ProblemDetail(Exception):
    """Raise anywhere in a request to answer with `application/problem+json`.

    `kind` is the last segment of the problem `type` URI (e.g. "idempotency-conflict").
    Extra members (e.g. `errors`) go in `extensions`; extra response headers in `headers`.
    """

    def __init__(
        self,
        status: int,
        kind: str,
        title: str,
        detail: str = "",
        *,
        headers: dict[str, str] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {kind}: {detail or title}")
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.headers = dict(headers or {})
        self.extensions = dict(extensions or {})

    def body(self, instance: str) -> dict[str, Any]:
        problem: dict[str, Any] = {
            "type": PROBLEM_BASE + self.kind,
            "title": self.title,
            "status": self.status,
            "detail": self.detail or self.title,
            "instance": instance,
        }
        problem.update(self.extensions)
        return problem

    def encode(self, instance: str) -> bytes:
        return json.dumps(self.body(instance), separators=(",", ":")).encode()
