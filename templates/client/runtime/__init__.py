"""apiforge client runtime: copied verbatim into every generated client as `<package>._runtime`.

Generated code imports everything it needs from here:

- `_base`: `SyncAPIClient`, `AsyncAPIClient`, `RequestOptions`; `_response`: `APIResponse`;
- `_auth`: `Scheme`, `Security`, `Credentials` and the credential types (`BasicAuth`,
  `ClientCredentials`, `TokenProvider`, `AsyncTokenProvider`);
- `_errors`: `APIError` and its family, `ProblemDetails`, `error_from_response`;
- `_retry`: `RetryPolicy` and the retry rules; `_ratelimit`: `RateLimit`, `parse_rate_limit`;
- `_jobs`: `JobHandle`, `AsyncJobHandle`; `_concurrency`: `read_modify_write` (+ async);
- `_webhooks`: `verify_webhook` and two signing helpers for tests;
- `_query`: `Styled`, `encode_query` (objects and arrays of objects in the query string);
  `_forms`: `Encoding` (how a form body's property is written, `multipart` / `urlencoded`);
  `_params`: path, header and cookie parameter values; `_omit`: `omit` (an argument not
  given) and `body_of` (a body from its members as keyword arguments);
- `_raw`: `Raw`, `to_raw`, `async_to_raw` (each resource's `with_raw_response`), `to_streamed`,
  `async_to_streamed` (its `with_streaming_response`);
- `_pagination`: `Pagination`, `SyncPage`, `AsyncPage`, `AsyncPaginator` (list operations);
- `_streams`: `BinaryStream`, `EventStream`, `ServerSentEvent` (+ async): binary downloads and
  Server-Sent Events, read as they arrive;
- `_models`: the lenient `BaseModel`, `Open`, `AwareDatetime` and `LENIENT` the generated
  `models.py` is built on (forward-compatible responses).

It depends on the standard library, httpx and pydantic v2 only (with pydantic's own
`pydantic_core`), and imports itself relatively.
"""

from ._auth import (
    AsyncTokenProvider,
    BasicAuth,
    ClientCredentials,
    Credentials,
    Scheme,
    Security,
    TokenProvider,
)
from ._base import (
    DEFAULT_IDEMPOTENCY_HEADER,
    DEFAULT_TIMEOUT,
    RESERVED_ATTRIBUTES,
    AsyncAPIClient,
    RequestOptions,
    SyncAPIClient,
    to_jsonable,
)
from ._concurrency import async_read_modify_write, read_modify_write
from ._errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    BadRequest,
    Conflict,
    CredentialsError,
    Forbidden,
    IdempotencyConflict,
    IdempotencyInProgress,
    JobCancelled,
    JobFailed,
    JobTimeout,
    MissingCredentials,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    ProblemDetails,
    RateLimited,
    ServerError,
    TokenRequestFailed,
    Unauthorized,
    UnexpectedStatus,
    UnprocessableEntity,
    WebhookVerificationError,
    error_from_response,
)
from ._forms import Encoding
from ._jobs import JOB_STATES, TERMINAL_STATES, AsyncJobHandle, JobHandle
from ._omit import Omit, body_of, omit
from ._pagination import AsyncPage, AsyncPaginator, Pagination, SyncPage
from ._params import cookie_value, header_value, path_segment
from ._query import Styled, encode_query
from ._ratelimit import RateLimit, parse_rate_limit
from ._raw import Raw, async_to_raw, async_to_streamed, to_raw, to_streamed
from ._response import APIResponse, AsyncStreamedResponse, StreamedResponse
from ._retry import (
    RETRY_COUNT_HEADER,
    RETRYABLE_STATUS_CODES,
    SAFE_METHODS,
    RetryPolicy,
    backoff_delay,
    is_safe_to_repeat,
    parse_retry_after,
)
from ._streams import (
    AsyncBinaryStream,
    AsyncEventStream,
    BinaryStream,
    EventStream,
    ServerSentEvent,
)
from ._webhooks import sign_standard_webhook, sign_stripe_style, verify_webhook

__all__ = [
    "DEFAULT_IDEMPOTENCY_HEADER",
    "DEFAULT_TIMEOUT",
    "JOB_STATES",
    "RESERVED_ATTRIBUTES",
    "RETRYABLE_STATUS_CODES",
    "RETRY_COUNT_HEADER",
    "SAFE_METHODS",
    "TERMINAL_STATES",
    "APIConnectionError",
    "APIError",
    "APIResponse",
    "APIResponseValidationError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncAPIClient",
    "AsyncBinaryStream",
    "AsyncEventStream",
    "AsyncJobHandle",
    "AsyncPage",
    "AsyncPaginator",
    "AsyncStreamedResponse",
    "AsyncTokenProvider",
    "BadRequest",
    "BasicAuth",
    "BinaryStream",
    "ClientCredentials",
    "Conflict",
    "Credentials",
    "CredentialsError",
    "Encoding",
    "EventStream",
    "Forbidden",
    "IdempotencyConflict",
    "IdempotencyInProgress",
    "JobCancelled",
    "JobFailed",
    "JobHandle",
    "JobTimeout",
    "MissingCredentials",
    "NotFound",
    "Omit",
    "Pagination",
    "PreconditionFailed",
    "PreconditionRequired",
    "ProblemDetails",
    "RateLimit",
    "RateLimited",
    "Raw",
    "RequestOptions",
    "RetryPolicy",
    "Scheme",
    "Security",
    "ServerError",
    "ServerSentEvent",
    "StreamedResponse",
    "Styled",
    "SyncAPIClient",
    "SyncPage",
    "TokenProvider",
    "TokenRequestFailed",
    "Unauthorized",
    "UnexpectedStatus",
    "UnprocessableEntity",
    "WebhookVerificationError",
    "async_read_modify_write",
    "async_to_raw",
    "async_to_streamed",
    "backoff_delay",
    "body_of",
    "cookie_value",
    "encode_query",
    "error_from_response",
    "header_value",
    "is_safe_to_repeat",
    "omit",
    "parse_rate_limit",
    "parse_retry_after",
    "path_segment",
    "read_modify_write",
    "sign_standard_webhook",
    "sign_stripe_style",
    "to_jsonable",
    "to_raw",
    "to_streamed",
    "verify_webhook",
]
