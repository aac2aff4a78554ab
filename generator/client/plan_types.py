"""What a client plan is: the plan of the whole client (`ClientPlan`), of each resource module
(`ResourcePlan`), of each operation (`OperationPlan`) and of each of its parameters
(`ParamPlan`), and what the plan cache keeps of a resource (`Kept`). The planner (`plan.py`)
makes them; the file list (`files.py`) and the templates read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.client.auth import AuthPlan, SecurityPlan
from generator.client.body_args import uses_params
from generator.client.media import MediaPlan
from generator.client.pages import PagePlan
from generator.client.servers import ServersPlan
from generator.ir import Operation
from generator.patterns.idempotency import DEFAULT_HEADER as DEFAULT_IDEMPOTENCY_HEADER
from generator.render.writer import GeneratedFile


@dataclass(frozen=True)
class ParamPlan:
    name: str  # Python keyword
    wire: str  # name on the wire, as the spec spells it
    location: str
    type: str
    required: bool
    description: str
    example: str  # a Python expression for the README
    # a query parameter httpx cannot send as it is (an object, a list of objects, a delimited
    # list): its OpenAPI style and explode, for the runtime's `Styled`; "" for the others
    style: str = ""
    explode: bool = True
    deprecated: bool = False  # using it warns (DeprecationWarning)


@dataclass(frozen=True)
class PathPart:
    literal: str | None  # a piece of the path template
    param: str | None  # or the keyword whose value fills it


@dataclass(frozen=True)
class OperationPlan:
    op: Operation
    name: str
    method: str  # upper case
    path_parts: tuple[PathPart, ...]
    params: tuple[ParamPlan, ...]
    body: str | None  # body argument type
    body_required: bool
    body_kind: str  # json, data, files, content
    body_media_type: str
    result: str  # the return type of the plain method
    parse_type: str | None  # what the response body parses as (None: nothing)
    parse_plain: bool  # parse_type is a class (APIResponse.parse takes it as is)
    idempotency_header: str | None
    if_match: bool
    if_match_required: bool
    if_none_match: bool
    job_result: str | None  # the job's result type for 202 operations
    summary: str
    description: str
    deprecated: bool
    security: SecurityPlan | None = None  # what the operation requires (None: nothing declared)
    page: PagePlan | None = None  # a list operation: its page type and `Pagination(...)`
    errors: str = ""  # `{"404": models.Error, ...}`: the declared error bodies' models
    encoding: str = ""  # a form body's `{"field": Encoding(...)}` (render.form_encoding)
    # a multipart body's declared part headers without a value of their own, as (property,
    # header): the method takes `part_headers=` to send them
    part_headers: tuple[tuple[str, str], ...] = ()
    body_example: str = "{}"  # the README's `body=`: the required members with example values
    # where a caller's `idempotency_key=` goes when the operation declares no header
    key_header: str = DEFAULT_IDEMPOTENCY_HEADER
    # what it answers with (JSON, text, bytes, events)
    media: MediaPlan = field(default_factory=lambda: MediaPlan("none", ""))
    stream_name: str = ""  # the `<method>_stream` twin, for bytes and events beside JSON
    # where the method's name comes from (`method_names`): "crud", "action", "extension", or
    # "operation_id" (the docstring names the operationId when the method is not named after it)
    named_by: str = "operation_id"
    # the body's members as keyword arguments (`body_args`; location "body"), beside `body=`
    # for a whole body: () when the body is no object with properties
    body_args: tuple[ParamPlan, ...] = ()

    @property
    def part_headers_text(self) -> str:
        """The declared part headers without a value, for the docstring: "`X-Sum` on
        `file`, …"."""
        return ", ".join(f"`{header}` on `{field}`" for field, header in self.part_headers)

    @property
    def body_overloads(self) -> bool:
        """Whether the method has two signatures: the body's members as keyword arguments, or
        the whole body as `body=` (so giving both is a type error, as it is a `TypeError`)."""
        return bool(self.body_args)


@dataclass(frozen=True)
class ChildPlan:
    """A nested resource, as its parent's attribute."""

    attribute: str
    class_name: str
    module: str


@dataclass(frozen=True)
class ResourcePlan:
    attribute: str
    dotted: str  # its path from the client: "customers.sources"
    module: str  # resources/<module>.py
    class_name: str  # the sync class; "Async" + it is the async one
    label: str  # what it groups: a tag or a path
    operations: tuple[OperationPlan, ...]
    children: tuple[ChildPlan, ...] = ()
    uses_builtins: bool = False  # its annotations say `builtins.list` (a method is `list`)

    @property
    def top_level(self) -> bool:
        return "." not in self.dotted

    @property
    def uses_params(self) -> bool:
        """Whether its signatures name a TypedDict of the `params` module."""
        return any(
            uses_params(t)
            for o in self.operations
            for t in (o.body or "", *(a.type for a in o.body_args))
        )


@dataclass(frozen=True)
class WebhookPlan:
    name: str
    function: str
    type: str
    plain: bool
    signature_header: str | None
    description: str


@dataclass
class ClientPlan:
    package: str
    distribution: str
    version: str  # the package's
    api_version: str  # the spec's info.version, as written
    title: str
    description: str
    spec_name: str
    base_url: str | None
    servers: ServersPlan
    user_agent: str
    resources: list[ResourcePlan]
    auth: list[AuthPlan]
    webhooks: list[WebhookPlan]
    auth_example: str = ""  # constructor arguments for the README's first example
    log_env: str = ""  # the environment variable that switches DEBUG logging on
    files: list[GeneratedFile] = field(default_factory=list)


@dataclass(frozen=True)
class Kept:
    """What the plan cache keeps of a resource: its operations as templates see them
    (`_resource_view`), and as its class body does (`_class_scope_view`; () when the same),
    with their fingerprints' digests."""

    views: tuple[OperationPlan, ...]
    digests: tuple[bytes, ...]
    scoped: tuple[OperationPlan, ...]
    scoped_digests: tuple[bytes, ...]
    uses_builtins: bool
