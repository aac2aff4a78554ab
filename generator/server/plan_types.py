"""What a server plan is: the plan of the whole server (`ServerPlan`), of each router
module (`TagPlan`), of each operation (`OperationPlan`) and of each of its parameters
(`ParamPlan`). The planner (`plan.py`) makes them; the templates, the handler modules
(`handlers.py`) and the mock answers (`conformance.py`) read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.ir import Operation
from generator.render.writer import GeneratedFile
from generator.server.events import EventPlan
from generator.server.security import AuthPlan, SchemePlan
from generator.server.settings import EXTRA_SETTINGS


@dataclass(frozen=True)
class JobViewPlan:
    """`fields`: runtime field → the spec's property (None: the runtime's own shape)."""

    fields: dict[str, str] | None = None
    statuses: dict[str, str] = field(default_factory=dict)
    result: Any = None  # the schema of the job's result, for its mock


@dataclass(frozen=True)
class ParamPlan:
    name: str  # Python keyword (handler) and endpoint parameter
    wire: str
    location: str
    type: str  # for the handler signature
    annotation: str  # for the endpoint signature (Annotated[...] with the FastAPI marker)
    default: str | None  # Python expression, None: required
    description: str


@dataclass(frozen=True)
class OperationPlan:
    op: Operation
    kind: str  # handler, job, job_status, job_cancel
    name: str  # handler method
    endpoint: str  # router function
    method: str  # upper case
    route_path: str  # the path with Python parameter names
    params: tuple[ParamPlan, ...]
    body_kind: str | None  # json, form, raw, None
    body_type: str | None  # handler's body type
    body_annotation: str | None  # endpoint's body parameter annotation
    body_default: str | None
    media_types: tuple[str, ...]
    # a body that is not JSON: `require_body(<form model or Any>, required=…)`; a JSON body
    # with nulls its schema refuses: `refuse_nulls(…)`, reading `null_rules`; or None
    body_check: str | None
    result: str  # handler return annotation
    response_model: str | None
    status: int
    statuses: tuple[int, ...]
    empty: tuple[int, ...]
    conditional: bool
    rate_limit: str | None  # header family
    idempotency_header: str | None
    idempotency_required: bool
    if_match: bool
    if_match_required: bool
    job_name: str | None
    callback_property: str | None
    auth: AuthPlan | None  # None: the spec declares no security for it
    summary: str
    patterns: tuple[str, ...]  # README lines
    null_rules: dict[str, Any] = field(default_factory=dict)  # see nulls.py


@dataclass(frozen=True)
class TagPlan:
    tag: str
    module: str
    base_class: str
    handler_class: str
    operations: tuple[OperationPlan, ...]

    @property
    def handler_operations(self) -> tuple[OperationPlan, ...]:
        return tuple(o for o in self.operations if o.kind in ("handler", "job"))

    @property
    def null_rules(self) -> dict[str, Any]:
        """The rules of the router's null checks, one table (a component's rule is the same
        whichever operation made it)."""
        table: dict[str, Any] = {}
        for op in self.operations:
            table.update(op.null_rules)
        return dict(sorted(table.items()))


@dataclass
class ServerPlan:
    package: str
    distribution: str
    version: str
    api_version: str
    title: str
    description: str
    spec_name: str
    tags: list[TagPlan]
    events: list[EventPlan]
    has_jobs: bool
    jobs_base_path: str
    has_idempotency: bool
    has_rate_limits: bool
    has_outbox: bool
    signature_scheme: str  # standard, stripe
    signature_prefix: str
    schemes: list[SchemePlan]
    has_auth: bool  # some operation declares security
    settings: list[tuple[str, str, str]]  # env var, default, description
    # the `type` of the webhook a job sends when it ends, per final status (see job_events)
    job_event_types: dict[str, str] = field(default_factory=dict)
    # True when that event is one of the API's `webhooks` (also sent to every subscribed
    # endpoint, APIFORGE_WEBHOOK_ENDPOINTS), False when it is only the submit's callback
    job_event_subscribed: bool = False
    # the job resource in the words of the spec's job schema (conformance.py)
    job_view: JobViewPlan = field(default_factory=JobViewPlan)
    # operation id → its declared error responses (→ a plain JSON media type they declare),
    # where they decide 400 vs 422 or the media type of a problem
    declared_errors: dict[str, dict[str, str]] = field(default_factory=dict)
    # whether `error_views.json` shows problems as error objects operations declare
    has_error_views: bool = False
    # the server's own paths (probes, metrics, docs) that the spec's operations take
    moved_paths: dict[str, str] = field(default_factory=dict)
    problem_base: str = "/problems/"  # where problem `type` URIs start by default
    extra_settings: tuple[tuple[str, str, str, str], ...] = EXTRA_SETTINGS
    files: list[GeneratedFile] = field(default_factory=list)

    @property
    def allowed_methods(self) -> dict[str, tuple[str, ...]]:
        paths: dict[str, set[str]] = {}
        for tag in self.tags:
            for op in tag.operations:
                paths.setdefault(op.route_path, set()).add(op.method)
        return {p: tuple(sorted(m)) for p, m in sorted(paths.items())}

    @property
    def handler_tags(self) -> list[TagPlan]:
        return [t for t in self.tags if t.handler_operations]


@dataclass(frozen=True)
class Kept:
    """A resource's operations as templates see them (`files.tag_view`), with their fingerprints'
    digests: what the plan cache keeps of a resource."""

    views: tuple[OperationPlan, ...]
    digests: tuple[bytes, ...]
    # its entry of mocks.json ("": none), with the digest of the job result it was made with
    mocks: tuple[str, str] | None = None
