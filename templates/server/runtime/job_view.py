"""The job resource in the spec's own vocabulary.

The runtime keeps one job shape (``Job.to_json``: ``id``, ``status`` among ``queued``,
``running``, ``completed``, ``failed``, ``cancelled``, ``createdAt``, ``startedAt``,
``completedAt``, ``result``, ``error``, ``callbackUrl``). A spec describes its job resource in
its own words — ``state: succeeded``, ``job_id``, ``output`` — and clients validate against
that. A ``JobView``, generated from the schema of the spec's job status operation, renames
the fields, maps the runtime's states onto the spec's enumeration and leaves out what the
schema does not have, so every answer about a job (202, status, cancel, its webhook) is what
the spec declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class JobView:
    """``fields``: runtime field → the spec's property name; a runtime field not listed is
    left out, unless ``fields`` is None (the runtime's own shape). ``statuses``: runtime
    state → the spec's value (a state not listed keeps its name)."""

    fields: Mapping[str, str] | None = None
    statuses: Mapping[str, str] = field(default_factory=dict)

    def present(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` (a ``Job.to_json()``) as the spec shows a job."""
        status = body.get("status")
        shown = {**body, "status": self.statuses.get(status, status)} if status else dict(body)
        if self.fields is None:
            return shown
        return {self.fields[k]: v for k, v in shown.items() if k in self.fields}


#: The runtime's own shape, for specs whose job schema says nothing the runtime could map.
RUNTIME_VIEW = JobView()
