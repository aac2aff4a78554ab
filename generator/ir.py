"""The typed, immutable model of an API that every stage after loading reads.

Built by `generator.spec.build.build_api`. Every node records `where`: the file and JSON
pointer of the spec node it came from, so any message can name file:line:column.
Pattern detection (generator/patterns/) fills `Operation.patterns` and `Webhook.signature`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

HttpMethod = Literal["get", "put", "post", "delete", "options", "head", "patch", "trace"]
HTTP_METHODS: tuple[HttpMethod, ...] = (
    "get",
    "put",
    "post",
    "delete",
    "options",
    "head",
    "patch",
    "trace",
)
ParamIn = Literal["path", "query", "header", "cookie"]


@dataclass(frozen=True, slots=True, order=True)
class Where:
    """A spec node: the file it lives in (as given, relative to the working directory) and
    its RFC 6901 JSON pointer in that file."""

    file: str
    pointer: str

    def child(self, *tokens: str | int) -> Where:
        pointer = self.pointer
        for token in tokens:
            text = token if token.__class__ is str else str(token)
            if "~" in text or "/" in text:  # most tokens need no escaping
                text = text.replace("~", "~0").replace("/", "~1")
            pointer = f"{pointer}/{text}"
        return Where(self.file, pointer)


@dataclass(frozen=True, slots=True)
class Schema:
    """A JSON schema as the spec wrote it, with `$ref`s to components left in place.

    `name` is the component name when the schema was referenced as `#/components/schemas/X`.
    `data` is the schema itself (after following that one `$ref`); it is plain JSON data,
    read-only by convention.
    """

    name: str | None
    data: Mapping[str, Any]
    where: Where
    properties: frozenset[str] = frozenset()  # top-level property names, through $ref and allOf


@dataclass(frozen=True, slots=True)
class Header:
    """A response header the spec declares."""

    name: str
    required: bool
    description: str
    schema: Schema | None
    where: Where


@dataclass(frozen=True, slots=True)
class Parameter:
    """An operation's parameter (its path item's included; the operation's wins)."""

    name: str
    location: ParamIn
    required: bool
    description: str
    deprecated: bool
    schema: Schema | None
    where: Where
    style: str = ""  # as declared; "" means OpenAPI's default for the location
    explode: bool | None = None  # as declared; None means the style's default


@dataclass(frozen=True, slots=True)
class Encoding:
    """One entry of a form body's `encoding`: how one property of the body goes on the wire."""

    where: Where
    style: str = ""  # as declared; "" means OpenAPI's default (`form`)
    explode: bool | None = None  # as declared; None means the style's default
    content_type: str = ""  # `contentType` (a multipart part's type), as declared
    allow_reserved: bool = False
    # `headers` whose value the spec fixes (`const`, one `enum` value, a `default`): a
    # multipart part's own headers, by name
    headers: tuple[tuple[str, str], ...] = ()
    # the other declared `headers` (no value of their own), with whether each is `required`:
    # the client sends them when the caller gives them
    open_headers: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True, slots=True)
class MediaType:
    """One `content` entry: a media type, its schema and its examples."""

    content_type: str
    schema: Schema | None
    where: Where
    examples: tuple[Any, ...] = ()  # `example`, then each `examples` entry's `value`
    #: the names of the `examples` entries, for the last `len(example_names)` of `examples`
    example_names: tuple[str, ...] = ()
    encoding: Mapping[str, Encoding] = field(default_factory=dict)  # by property name


@dataclass(frozen=True, slots=True)
class RequestBody:
    """An operation's request body."""

    required: bool
    description: str
    content: tuple[MediaType, ...]
    where: Where


@dataclass(frozen=True, slots=True)
class Response:
    """One entry of an operation's `responses`: `status` is "200", "2XX" or "default"."""

    status: str
    description: str
    headers: tuple[Header, ...]
    content: tuple[MediaType, ...]
    where: Where

    def header(self, name: str) -> Header | None:
        lowered = name.lower()
        for header in self.headers:  # (a loop, not `next(...)`: asked thousands of times)
            if header.name.lower() == lowered:
                return header
        return None

    @property
    def status_class(self) -> str:
        """ "2", "4", "5" … for numeric and range statuses; "default" for `default`."""
        return self.status[0] if self.status[0].isdigit() else "default"


@dataclass(frozen=True, slots=True)
class OAuthFlow:
    """One flow of an oauth2 scheme (`flows.<kind>`): URLs as the spec wrote them."""

    kind: str  # implicit, password, clientCredentials, authorizationCode, deviceAuthorization
    authorization_url: str
    token_url: str
    refresh_url: str
    scopes: tuple[str, ...]  # sorted


@dataclass(frozen=True, slots=True)
class SecurityScheme:
    """One entry of `components/securitySchemes`."""

    name: str
    type: str  # apiKey, http, oauth2, openIdConnect, mutualTLS
    scheme: str  # for http: bearer, basic (lower case)
    location: str  # for apiKey: header, query, cookie
    parameter_name: str  # for apiKey: the header/query/cookie name
    where: Where
    description: str = ""
    bearer_format: str = ""
    flows: tuple[OAuthFlow, ...] = ()  # oauth2, sorted by kind
    open_id_connect_url: str = ""

    @property
    def kind(self) -> str:
        """What the credential is: "bearer" (http bearer, oauth2, openIdConnect), "basic",
        "apiKey", or "" for what a server cannot read (mutualTLS, other http schemes,
        unknown types)."""
        if self.type == "http":
            return self.scheme if self.scheme in ("bearer", "basic") else ""
        if self.type in ("oauth2", "openIdConnect"):
            return "bearer"
        if self.type == "apiKey" and self.location in ("header", "query", "cookie"):
            return "apiKey" if self.parameter_name else ""
        return ""


SecurityRequirement = Mapping[str, tuple[str, ...]]


# --- what the pattern modules detect -------------------------------------------------


@dataclass(frozen=True, slots=True)
class IdempotencySpec:
    """What an operation declares of idempotency keys."""

    header: str  # as the spec spells it
    required: bool
    responses: frozenset[str]  # which of 409/422 are declared
    where: Where


RateLimitFamily = Literal["x-ratelimit", "ratelimit", "ietf"]


@dataclass(frozen=True, slots=True)
class RateLimitSpec:
    """What an operation declares of rate limits."""

    family: RateLimitFamily
    headers: tuple[str, ...]  # the declared names, as spelled
    has_429: bool
    retry_after: bool  # the 429 declares Retry-After
    where: Where


@dataclass(frozen=True, slots=True)
class ConcurrencySpec:
    """What an operation declares of optimistic concurrency (ETag, If-Match)."""

    etag: bool  # a 2xx response declares ETag
    if_match: bool
    if_match_required: bool
    if_none_match: bool
    responses: frozenset[str]  # which of 304/412/428 are declared
    where: Where


@dataclass(frozen=True, slots=True)
class AsyncJobSpec:
    """What a 202 operation declares of its job."""

    location: bool
    retry_after: bool
    status_operation: str | None  # operation id of the job status GET, when resolvable
    cancel_operation: str | None
    callback_url: bool  # the request body has a `callbackUrl` property
    where: Where


@dataclass(frozen=True, slots=True)
class ProblemsSpec:
    """How an operation's error responses are written."""

    problem_statuses: tuple[str, ...]  # error responses using application/problem+json
    other_statuses: tuple[str, ...]  # error responses with another (or no) media type


@dataclass(frozen=True, slots=True)
class SecuritySpec:
    """Who may call an operation, as OpenAPI defines it: the operation's own `security`, else
    the API's. `alternatives` is an OR of requirement objects, each an AND of
    (scheme name, required scopes) in the order the spec wrote them; an empty requirement
    object (or `security: []`) makes the operation public. Names that are not in
    `components/securitySchemes` stay (they can never be satisfied) and are listed in
    `unknown`."""

    alternatives: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
    public: bool
    own: bool  # the operation declares `security` itself (False: the API's default)
    unknown: tuple[str, ...]
    where: Where

    @property
    def schemes(self) -> tuple[str, ...]:
        """Every scheme name the alternatives use, first use first."""
        names: dict[str, None] = {}
        for alternative in self.alternatives:
            for name, _ in alternative:
                names[name] = None
        return tuple(names)


PaginationStyle = Literal["cursor", "link", "next_url", "offset", "page"]
PAGINATION_STYLES: tuple[PaginationStyle, ...] = ("cursor", "link", "next_url", "offset", "page")


@dataclass(frozen=True, slots=True)
class PaginationSpec:
    """How a list operation pages (generator/patterns/pagination.py).

    Paths are JSON member names from the response body down; `()` for `items` means the body
    itself is the array. By style:

    - `cursor`: the next page sends `param` = the body's value at `next` (Google's
      `pageToken`/`nextPageToken`), or, when `next` is `()`, the last item's `id` (Stripe's
      `starting_after` with `has_more`);
    - `link`: the next page is the `Link: <...>; rel="next"` header's URL;
    - `next_url`: the next page is the URL at `next` in the body (`next`, `links.next`, ...);
    - `offset`: `param` (offset) moves on by the items received;
    - `page`: `param` (page number) moves on by one, from `first_page`.

    `has_more` (a boolean flag) and `total` (offset: the item count; page: the page count)
    stop iteration where the body has them; `limit_param` is the page-size parameter, with
    its declared `default` and `maximum` (a page shorter than a size the server must honour
    is the last one)."""

    style: PaginationStyle
    items: tuple[str, ...]
    param: str = ""
    next: tuple[str, ...] = ()
    has_more: tuple[str, ...] = ()
    total: tuple[str, ...] = ()
    limit_param: str = ""
    limit_default: int | None = None
    limit_maximum: int | None = None
    first_page: int = 1
    source: Literal["detected", "extension"] = "detected"
    where: Where | None = None


@dataclass(frozen=True, slots=True)
class OperationPatterns:
    """Every pattern detected on one operation (`generator.patterns`)."""

    idempotency: IdempotencySpec | None = None
    rate_limit: RateLimitSpec | None = None
    concurrency: ConcurrencySpec | None = None
    async_job: AsyncJobSpec | None = None
    problems: ProblemsSpec | None = None
    security: SecuritySpec | None = None
    pagination: PaginationSpec | None = None


@dataclass(frozen=True, slots=True)
class WebhookSignatureSpec:
    """How a webhook's deliveries are signed."""

    scheme: Literal["standard-webhooks", "stripe-style", "custom"]
    signature_header: str | None
    id_header: str | None
    timestamp_header: str | None
    payload_has_id: bool
    where: Where


# --- the model -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: a method on a path."""

    id: str  # operationId, or a stable id derived from method and path
    method: HttpMethod
    path: str
    tags: tuple[str, ...]
    summary: str
    description: str
    deprecated: bool
    parameters: tuple[Parameter, ...]  # path-item level merged in, operation level wins
    request_body: RequestBody | None
    responses: tuple[Response, ...]
    security: tuple[SecurityRequirement, ...] | None  # None: the API's default applies
    extensions: Mapping[str, Any]  # x-* keys of the operation and its path item
    where: Where  # the operation object
    path_where: Where  # its path item
    patterns: OperationPatterns = field(default_factory=OperationPatterns)

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"

    def response(self, status: str) -> Response | None:
        for response in self.responses:
            if response.status == status:
                return response
        return None

    def parameter(self, name: str, location: ParamIn) -> Parameter | None:
        lowered = name.lower()
        for p in self.parameters:
            if p.location == location and (
                p.name.lower() == lowered if location == "header" else p.name == name
            ):
                return p
        return None

    @property
    def success_responses(self) -> tuple[Response, ...]:
        return tuple([r for r in self.responses if r.status[0] == "2"])  # status_class "2"

    @property
    def error_responses(self) -> tuple[Response, ...]:
        return tuple([r for r in self.responses if r.status_class in ("4", "5", "default")])


@dataclass(frozen=True, slots=True)
class Webhook:
    """An event the API sends: 3.1 `webhooks`, 3.0 `callbacks`, or Redoc's `x-webhooks`."""

    name: str
    source: Literal["webhooks", "callback", "x-webhooks"]
    operation: Operation
    signature: WebhookSignatureSpec | None = None


@dataclass(frozen=True, slots=True)
class ServerVariable:
    """A variable of a server URL template."""

    name: str
    default: str
    enum: tuple[str, ...]  # as the spec lists them; () for any value
    description: str = ""


@dataclass(frozen=True, slots=True)
class Server:
    """One entry of `servers`."""

    url: str  # a template when it has variables: `https://{region}.example.com`
    description: str
    variables: tuple[ServerVariable, ...] = ()  # in the order the spec lists them


@dataclass(frozen=True, slots=True)
class Api:
    """The whole API: what every later stage reads."""

    title: str
    version: str
    description: str
    openapi: str  # the document's `openapi` field, e.g. "3.1.0"
    servers: tuple[Server, ...]
    operations: tuple[Operation, ...]  # sorted by path, then method order
    webhooks: tuple[Webhook, ...]  # sorted by name
    schemas: Mapping[str, Schema]  # components/schemas, sorted by name
    security_schemes: tuple[SecurityScheme, ...]
    security: tuple[SecurityRequirement, ...]
    extensions: Mapping[str, Any]
    root: str  # the root file, as given
    where: Where

    def operation(self, operation_id: str) -> Operation | None:
        return next((o for o in self.operations if o.id == operation_id), None)
