"""Async jobs: 202 Accepted with `Location` (and `Retry-After`) pointing at a status resource."""

from __future__ import annotations

import os.path
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, AsyncJobSpec, Operation, Where
from generator.lint.model import Hit, Rule, normalized, op_hit, rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding

JOB_SEGMENTS = {
    "jobs",
    "job",
    "operations",
    "tasks",
    "task",
    "status",
    "actions",
    "exports",
    "batches",
}
CALLBACK_PROPERTIES = {"callbackUrl", "callback_url", "callbackURL", "webhookUrl", "webhook_url"}
_PARAM_END = re.compile(r"/\{[^/}]+\}$")


def detect(op: Operation, api: Api) -> AsyncJobSpec | None:
    accepted = op.response("202")
    if accepted is None:
        return None
    status_op = find_status_operation(op, api)
    cancel_op = find_cancel_operation(status_op, api) if status_op else None
    body_schemas = [
        m.schema for m in (op.request_body.content if op.request_body else ()) if m.schema
    ]
    return AsyncJobSpec(
        location=accepted.header("Location") is not None,
        retry_after=accepted.header("Retry-After") is not None,
        status_operation=status_op.id if status_op else None,
        cancel_operation=cancel_op.id if cancel_op else None,
        callback_url=any(CALLBACK_PROPERTIES & s.properties for s in body_schemas),
        where=accepted.where,
    )


class _Routes:
    """What `detect` looks up across an API's operations, made once per API (it is asked
    for each 202 operation, and a scan of all operations each time was a sixth of pattern
    detection on GitHub's spec)."""

    last: _Routes | None = None  # the API asked last (patterns attach to one API at a time)

    def __init__(self, api: Api) -> None:
        self.api = api
        self.job_statuses = [
            o
            for o in api.operations
            if o.method == "get"
            and _PARAM_END.search(o.path)
            and o.path.rstrip("/").split("/")[-2].lower() in JOB_SEGMENTS
        ]
        self.first: dict[tuple[str, str], int] = {}  # (method, path) → first index
        for i, o in enumerate(api.operations):
            self.first.setdefault((o.method, o.path), i)

    @classmethod
    def of(cls, api: Api) -> _Routes:
        routes = cls.last
        if routes is None or routes.api is not api:
            routes = cls.last = cls(api)
        return routes


def find_status_operation(op: Operation, api: Api) -> Operation | None:
    """The GET that a 202's `Location` most likely points at: `GET …/jobs/{id}`-shaped,
    nearest to the submitting path."""
    candidates = _Routes.of(api).job_statuses
    if not candidates:
        return None
    return max(candidates, key=lambda o: (len(os.path.commonpath([o.path, op.path])), o.path))


def find_cancel_operation(status_op: Operation, api: Api) -> Operation | None:
    """The first operation that cancels the job: `DELETE` on its status path, or `POST` on
    that path + `/cancel`."""
    first = _Routes.of(api).first
    found = [
        i
        for i in (
            first.get(("delete", status_op.path)),
            first.get(("post", status_op.path + "/cancel")),
        )
        if i is not None
    ]
    return api.operations[min(found)] if found else None


# --- lint rules ------------------------------------------------------------------------


@rule("async-location-missing", "error", "a 202 response without a `Location` header", "async_jobs")
def location_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        job = op.patterns.async_job
        if job is not None and not job.location:
            target = f" (e.g. `{_status_path(op, api)}`)" if job.status_operation else ""
            yield op_hit(
                op,
                f"add a `Location` header to the 202 response pointing at the job's status "
                f"resource{target}, so clients know where to poll",
                job.where,
            )


@rule("async-retry-after-missing", "info", "a 202 response without `Retry-After`", "async_jobs")
def retry_after_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        job = op.patterns.async_job
        if job is not None and not job.retry_after:
            yield op_hit(
                op,
                "add a `Retry-After` header (seconds) to the 202 response to tell clients "
                "when to poll first",
                job.where,
            )


def _status_path(op: Operation, api: Api) -> str:
    job = op.patterns.async_job
    status = api.operation(job.status_operation) if job and job.status_operation else None
    return status.path if status else ""


RULES: tuple[Rule, ...] = (location_missing, retry_after_missing)


# --- the fixes -------------------------------------------------------------------------------

LOCATION: dict[str, Any] = {
    "description": "Where the result is: for 202 Accepted, the job's status resource to poll.",
    "schema": {"type": "string", "format": "uri-reference"},
}


def fix_location(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    location = plan.component(
        "headers", "Location", LOCATION, lambda key, _: normalized(key) == "location"
    )
    at = plan.add_header(Where(finding.file, finding.pointer), "Location", location)
    return at, f"{plan.label(finding)}: added `Location` to the 202 response"


def fix_retry_after(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    from generator.patterns.ratelimit import retry_after_header

    response = Where(finding.file, finding.pointer)
    at = plan.add_header(response, "Retry-After", retry_after_header(plan))
    return at, f"{plan.label(finding)}: added `Retry-After` to the 202 response"


FIXES: dict[str, Fixer] = {
    "async-location-missing": fix_location,
    "async-retry-after-missing": fix_retry_after,
}
