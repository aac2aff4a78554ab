"""Errors in the spec's own words.

Every error of the server is decided as an RFC 9457 problem (`problems.ProblemDetail`). An
operation whose spec declares its own error object (`{code, message}`, `{error: {code,
message}}`, …) gets its problems shown in that object: an ``ErrorView``, generated from the
declared schema into ``error_views.json``, says which of the problem's members fills which
property, which required properties get a fixed value, and whether the members sit inside
one property (``wrap``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class ErrorView:
    """``fields``: the spec's property → the problem's member that fills it: ``detail``,
    ``title``, ``kind`` (the last segment of the problem's ``type``), ``status`` (a number),
    ``status_text``, ``request_id``, ``instance``, ``timestamp`` (now, ISO 8601), ``errors``
    (the validation errors) or ``messages`` (their messages), or, for an array of error
    objects, ``{"each": {property → location, location_strings, location_text, message or
    type}, "constants":
    {…}}``. ``constants``: property → value.
    """

    fields: Mapping[str, Any]
    constants: Mapping[str, Any] = field(default_factory=dict)
    wrap: str = ""

    def present(self, problem: Mapping[str, Any]) -> dict[str, Any]:
        """``problem`` (a ``ProblemDetail.body()``) as the spec shows an error."""
        errors = problem.get("errors")
        errors = errors if isinstance(errors, list) else []
        members: dict[str, Any] = {
            "detail": problem.get("detail"),
            "title": problem.get("title"),
            "kind": str(problem.get("type", "")).rsplit("/", 1)[-1],
            "status": problem.get("status"),
            "status_text": str(problem.get("status")),
            "request_id": problem.get("requestId"),
            "instance": problem.get("instance"),
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "errors": errors,
            "messages": [
                str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors
            ],
        }
        body = dict(self.constants)
        for prop, member in self.fields.items():
            value = _each(member, errors) if isinstance(member, Mapping) else members.get(member)
            if value is not None:
                body[prop] = value
        return {self.wrap: body} if self.wrap else body


def _each(view: Mapping[str, Any], errors: list[Any]) -> list[dict[str, Any]]:
    """The validation errors, each as the spec's error item shows one."""
    shown = []
    for error in errors:
        error = error if isinstance(error, Mapping) else {"message": str(error)}
        location = error.get("location")
        location = location if isinstance(location, list) else []
        members = {
            "location": location,
            "location_strings": [str(part) for part in location],
            "location_text": ".".join(str(part) for part in location),
            "message": error.get("message"),
            "type": error.get("type"),
        }
        item = dict(view.get("constants", {}))
        for prop, member in view.get("each", {}).items():
            if members.get(member) is not None:
                item[prop] = members[member]
        shown.append(item)
    return shown


def load_error_views(path: Path) -> dict[str, dict[str, ErrorView]]:
    """``error_views.json`` → operation id → {declared response key → its view}."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    views = {
        name: ErrorView(v["fields"], v.get("constants", {}), v.get("wrap", ""))
        for name, v in data.get("views", {}).items()
    }
    return {
        op: {key: views[name] for key, name in keys.items()}
        for op, keys in data.get("operations", {}).items()
    }
