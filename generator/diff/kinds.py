"""Every kind of change `apiforge diff` reports: a stable id, what it is by default (breaking,
warning, compatible), a one-line summary, and whether it is about a production pattern (no
general-purpose diff tool sees those). One page each in docs/diff/."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

Level = Literal["breaking", "warning", "compatible"]
LEVELS: tuple[Level, ...] = ("breaking", "warning", "compatible")  # most severe first
# the lint severity each level stands for in the shared configuration reader
LEVEL_SEVERITY = {"breaking": "error", "warning": "warning", "compatible": "info"}
SEVERITY_LEVEL: dict[str, Level] = {"error": "breaking", "warning": "warning", "info": "compatible"}


@dataclass(frozen=True, slots=True)
class Kind:
    id: str
    level: Level  # the default
    summary: str
    pattern: str = ""  # the production pattern it is about ("" for the general kinds)
    why: str = ""  # what it does to a client, for its documentation page


def _k(id: str, level: Level, summary: str, why: str, pattern: str = "") -> Kind:
    return Kind(id, level, summary, pattern, why)


_ALL = (
    # --- operations and paths
    _k(
        "operation-removed",
        "breaking",
        "an operation was removed without being deprecated first",
        "Calls to it answer 404 or 405; its client method disappears. Policy: deprecate an "
        "operation in one version (`deprecated: true`) before removing it in a later one.",
    ),
    _k(
        "deprecated-operation-removed",
        "warning",
        "a deprecated operation was removed",
        "Its client method disappears, as announced by its deprecation.",
    ),
    _k(
        "operation-moved",
        "breaking",
        "an operation (same operationId) moved to another path or method",
        "Calls to the old path or method fail; the client method may keep its "
        "name but sends elsewhere, so an older client breaks.",
    ),
    _k(
        "path-parameter-renamed",
        "breaking",
        "a path parameter was renamed",
        "The URL is the same on the wire, but the client's keyword argument is renamed: "
        "`client.x.retrieve(id=...)` becomes `client.x.retrieve(customer=...)`.",
    ),
    _k("operation-added", "compatible", "an operation was added", "A new client method."),
    _k(
        "operation-deprecated",
        "compatible",
        "an operation was deprecated",
        "Its client method warns; plan its removal.",
    ),
    # --- parameters
    _k(
        "parameter-added-required",
        "breaking",
        "a required parameter was added",
        "Existing calls lack it and are refused; the client method needs a new argument.",
    ),
    _k(
        "parameter-added-optional",
        "compatible",
        "an optional parameter was added",
        "A new optional keyword argument.",
    ),
    _k(
        "parameter-removed",
        "breaking",
        "a parameter was removed",
        "The server ignores or refuses it; the client method loses the keyword argument, so "
        "code that passes it fails with a TypeError.",
    ),
    _k(
        "parameter-moved",
        "breaking",
        "a parameter moved (query, header, path, cookie)",
        "Clients send it where the server no longer reads it.",
    ),
    _k(
        "parameter-became-required",
        "breaking",
        "an optional parameter became required",
        "Calls without it are refused; the keyword argument loses its default.",
    ),
    _k(
        "parameter-type-changed",
        "breaking",
        "a parameter's type changed to one that refuses values it accepted",
        "Values clients send today are refused (400/422).",
    ),
    _k(
        "parameter-enum-narrowed",
        "breaking",
        "a parameter's allowed values were reduced",
        "A value clients send today is refused; the client's `Literal[...]` type loses it.",
    ),
    _k(
        "parameter-constraint-narrowed",
        "breaking",
        "a parameter's bounds were tightened "
        "(maxLength, maximum, maxItems lowered; minLength, minimum, minItems raised)",
        "Values clients send today are refused.",
    ),
    _k(
        "parameter-pattern-added",
        "breaking",
        "a `pattern` was added to a parameter, or changed",
        "Values clients send today may be refused.",
    ),
    # --- request bodies
    _k(
        "request-body-became-required",
        "breaking",
        "a request body became required (or a required one was added)",
        "Calls without a body are refused.",
    ),
    _k(
        "request-media-type-removed",
        "breaking",
        "a request media type was removed",
        "Clients that send it get 415.",
    ),
    _k(
        "request-property-added-required",
        "breaking",
        "a required property was added to a request body",
        "Bodies clients send today lack it and are refused.",
    ),
    _k(
        "request-property-became-required",
        "breaking",
        "a request body property became required",
        "Bodies without it are refused; its model field loses its default.",
    ),
    _k(
        "request-property-removed",
        "breaking",
        "a request body property was removed",
        "The server ignores or refuses it; the client's model loses the field.",
    ),
    _k(
        "request-property-added-optional",
        "compatible",
        "an optional property was added to a request body",
        "A new optional model field.",
    ),
    _k(
        "request-type-changed",
        "breaking",
        "a request body value's type changed to one that refuses values it accepted",
        "Values clients send today are refused.",
    ),
    _k(
        "request-enum-narrowed",
        "breaking",
        "a request body value's allowed values were reduced",
        "A value clients send today is refused.",
    ),
    _k(
        "request-constraint-narrowed",
        "breaking",
        "a request body value's bounds were tightened",
        "Values clients send today are refused.",
    ),
    _k(
        "request-pattern-added",
        "breaking",
        "a `pattern` was added to a request body value, or changed",
        "Values clients send today may be refused.",
    ),
    # --- responses
    _k(
        "response-status-removed",
        "breaking",
        "a success response status was removed",
        "Clients that expect it get another status, or a response they cannot parse.",
    ),
    _k(
        "error-response-removed",
        "warning",
        "an error response status was removed",
        "Clients that handle that error by its declared shape lose the declaration.",
    ),
    _k(
        "response-media-type-removed",
        "breaking",
        "a response media type was removed",
        "Clients that ask for it (Accept) or parse it get something else.",
    ),
    _k(
        "response-property-removed",
        "breaking",
        "a response property was removed",
        "Clients that read it find nothing; the client's model loses the field.",
    ),
    _k(
        "response-property-became-optional",
        "breaking",
        "a required response property became optional",
        "Clients that rely on its presence break; the model field becomes `X | None`.",
    ),
    _k(
        "response-property-became-nullable",
        "breaking",
        "a response value became nullable",
        "Clients that do not expect `null` break; the model field becomes `X | None`.",
    ),
    _k(
        "response-type-changed",
        "breaking",
        "a response value's type changed",
        "Clients parse the old type; a strict client (a Pydantic model) refuses the answer.",
    ),
    _k(
        "response-enum-value-added",
        "warning",
        "a value was added to a response enum",
        "Strict clients (an exhaustive `match`, a `Literal[...]` type) refuse or mishandle it.",
    ),
    _k(
        "response-property-added",
        "compatible",
        "a response property was added",
        "A new model field.",
    ),
    # --- security and servers
    _k(
        "security-requirement-added",
        "breaking",
        "an operation's security was added or tightened (a way of calling it no longer suffices)",
        "Calls with the credentials that worked get 401/403; the client needs a credential.",
    ),
    _k(
        "security-scope-added",
        "breaking",
        "an operation requires more OAuth scopes",
        "Tokens without the new scope get 403.",
    ),
    _k(
        "server-removed",
        "breaking",
        "a server URL was removed",
        "Clients configured with it (or defaulting to it) call a server that is gone.",
    ),
    # --- production patterns
    _k(
        "idempotency-key-removed",
        "breaking",
        "an operation no longer declares `Idempotency-Key`",
        "The client stops sending a key, so its automatic retries of the call are no longer "
        "safe (a retried payment can be charged twice), and `idempotency_key=` disappears.",
        "idempotency",
    ),
    _k(
        "idempotency-key-required",
        "breaking",
        "`Idempotency-Key` became required",
        "Clients that do not send a key are refused (400).",
        "idempotency",
    ),
    _k(
        "idempotency-key-added",
        "compatible",
        "an operation now declares `Idempotency-Key` (optional)",
        "The client sends a key with every call and retries it safely: a retried payment is "
        "no longer charged twice.",
        "idempotency",
    ),
    _k(
        "idempotency-response-removed",
        "warning",
        "an idempotency answer (409 in progress, 422 key reused) is no longer declared",
        "The client loses the typed error it retries (409) or reports (422).",
        "idempotency",
    ),
    _k(
        "rate-limit-headers-removed",
        "breaking",
        "an operation no longer declares rate-limit headers",
        "Clients that pace themselves by the remaining quota lose it and run into 429s.",
        "ratelimit",
    ),
    _k(
        "rate-limit-family-changed",
        "breaking",
        "the rate-limit header family changed "
        "(`X-RateLimit-*`, `RateLimit-*`, `RateLimit`/`RateLimit-Policy`)",
        "Clients read the old names and see no quota.",
        "ratelimit",
    ),
    _k(
        "rate-limit-429-removed",
        "warning",
        "`429 Too Many Requests` is no longer declared",
        "Clients lose the declaration of the answer they back off on.",
        "ratelimit",
    ),
    _k(
        "retry-after-removed",
        "breaking",
        "`Retry-After` was removed from a 429",
        "Clients no longer know how long to wait and fall back to guessing.",
        "ratelimit",
    ),
    _k(
        "etag-removed",
        "breaking",
        "a success response no longer declares `ETag`",
        "Clients that read a version to send it back in `If-Match` have none.",
        "concurrency",
    ),
    _k(
        "if-match-required",
        "breaking",
        "`If-Match` became required",
        "Clients that never sent it get `428 Precondition Required`.",
        "concurrency",
    ),
    _k(
        "async-became-sync",
        "breaking",
        "a 202 + `Location` job became a synchronous answer",
        "Clients poll a job that no longer exists; the client's `JobHandle` result becomes the "
        "value itself.",
        "async_jobs",
    ),
    _k(
        "sync-became-async",
        "breaking",
        "a synchronous answer became a 202 job",
        "Clients parse a 202's empty or job body as the result; the client method now returns "
        "a `JobHandle`.",
        "async_jobs",
    ),
    _k(
        "async-location-removed",
        "breaking",
        "a 202 no longer declares `Location`",
        "Clients cannot find the job's status resource.",
        "async_jobs",
    ),
    _k(
        "async-retry-after-removed",
        "warning",
        "`Retry-After` was removed from a 202",
        "Clients poll at their own pace instead of the server's.",
        "async_jobs",
    ),
    _k(
        "webhook-signature-changed",
        "breaking",
        "a webhook's signature header or scheme changed",
        "Receivers verify the old header or scheme and refuse every delivery.",
        "webhooks",
    ),
    _k(
        "webhook-id-removed",
        "breaking",
        "a webhook no longer declares its delivery id header",
        "Receivers that deduplicate deliveries by it process retries twice.",
        "webhooks",
    ),
    _k(
        "webhook-payload-narrowed",
        "breaking",
        "a webhook's payload lost a property, made one optional or nullable, or changed a type",
        "Receivers read what is no longer sent.",
        "webhooks",
    ),
    _k(
        "webhook-removed",
        "warning",
        "a webhook was removed",
        "Receivers stop getting its events; its verify helper disappears.",
        "webhooks",
    ),
    _k(
        "pagination-changed",
        "breaking",
        "a list operation's pagination changed (style, parameter, items) or was removed",
        "The client's page iterator sends the old "
        "parameter or reads the old field: it stops after the first page or loops.",
        "pagination",
    ),
)


@cache
def kinds_by_id() -> dict[str, Kind]:
    found = {k.id: k for k in _ALL}
    assert len(found) == len(_ALL), "duplicate change kind id"
    return found


def all_kinds() -> tuple[Kind, ...]:
    return _ALL


def check_kind_ids(ids: list[str], **where: Any) -> None:
    """Refuse change kind ids that do not exist, naming where they were written."""
    from generator.lint.registry import check_ids

    check_ids(
        ids,
        **where,
        known=kinds_by_id(),
        noun="change kind",
        hint="docs/diff.md lists every change kind",
    )
