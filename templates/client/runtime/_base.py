"""The HTTP core that generated `Client` / `AsyncClient` classes subclass.

Public API:

- `SyncAPIClient(base_url, *, timeout=DEFAULT_TIMEOUT, max_retries=2, default_headers=None,
  default_query=None, schemes=(), credentials=None, user_agent=None, http_client=None,
  transport=None, sleep=time.sleep, clock=time.time, jitter=random.random,
  wait_on_rate_limit=False, max_retry_delay=60.0, strict_response_validation=False)`:
  `default_query` is sent on every call, under the call's own parameters (a declared parameter
  or an `extra_query` member of the same name wins); `schemes` are the spec's security schemes
  (`_auth.Scheme`), `credentials` what the caller gave for each (by scheme name; see `_auth`);
  `AsyncAPIClient(...)` takes the same arguments with an `httpx.AsyncClient`, an
  `httpx.AsyncBaseTransport` and an async `sleep`.
  - `.request(options: RequestOptions, *, stream=False) -> APIResponse` (awaitable on the async
    client); with `stream=True` a success's body is not read (see `_streams`; the caller
    closes it), an error's is; under `with_streaming_response` (see `_raw`) the call is
    streamed and its response handed to that wrapper;
  - `.last_rate_limit: RateLimit | None`, from the latest response that carried one;
  - `.close()` / `with` (`aclose()` / `async with`): closes the httpx client only if this
    object created it.
  Each attempt is logged at DEBUG (method, URL, status, elapsed, retry number; no secret:
  see `_logs`), each retry at INFO.
- `RequestOptions(method, path, *, params, headers, json, content, data, files, encoding,
  idempotency_header, idempotency_key, security, accept, max_retries, timeout, extra_query,
  extra_body)`: one logical call.
- `APIResponse` (see `_response`): what `request()` returns.
- `RESERVED_ATTRIBUTES`: names the base classes use; generated resource attributes must avoid
  them.

What one `request()` does:

1. buffers the body once (JSON serialised once, streams and files read once) so every attempt
   sends the same bytes — a server hashing the body for its idempotency check sees one body;
2. picks ONE idempotency key (the caller's, else a uuid4) before the first attempt when the
   operation declares an idempotency header, and sends it on every attempt;
3. sends `X-Retry-Count: <n>` (0 on the first attempt);
4. retries under `RetryPolicy` (see `_retry`): connection errors, timeouts, 408/409/429/5xx,
   only when the request is safe to repeat, waiting `retry-after-ms` / `Retry-After` or
   backoff through the injected `sleep`;
5. raises the typed error from `_errors` for any status outside 2xx, except that a 304 is
   returned when the request carried `If-None-Match`;
6. wraps httpx connection and timeout errors in `APIConnectionError` / `APITimeoutError`.
7. sends credentials as `_auth.Credentials` chooses them for the call's `security` (the
   first requirement the client holds everything for; none for public operations; raises
   `MissingCredentials` before anything is sent when it holds none of them), and only to the
   origin of `base_url` (an absolute URL elsewhere, such as a job Location on another host,
   gets none and needs none). Credentials are applied to each attempt; after a 401, an OAuth2
   client-credentials token is fetched anew and the call tried once more. The caller's own
   headers (`extra_headers`) win over a credential header of the same name. When the httpx
   client follows redirects (`http_client=httpx.Client(follow_redirects=True)`), a hop to
   another origin carries no credential header (`Authorization`, `Cookie`, API key headers).

With `wait_on_rate_limit=True`, a call made after a response that said `remaining == 0`
first sleeps until that window's reset.
"""

from __future__ import annotations

import asyncio
import datetime
import json as jsonlib
import logging
import pathlib
import random
import time
import uuid
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Self, TypeVar, cast

import httpx
import pydantic

from ._auth import Applied, Credential, Credentials, Scheme, Security, Selection
from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    error_from_response,
)
from ._forms import Encoding, form_members, multipart, urlencoded
from ._logs import log_attempt, redact_url
from ._params import iso
from ._query import Styled, encode_query
from ._ratelimit import RateLimit, parse_rate_limit
from ._raw import StreamedCall, note_response, streamed_call
from ._response import APIResponse
from ._retry import (
    DEFAULT_MAX_RETRIES,
    MAX_SERVER_DELAY,
    RETRY_COUNT_HEADER,
    RetryPolicy,
)

T = TypeVar("T")

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
DEFAULT_IDEMPOTENCY_HEADER = "Idempotency-Key"

QueryValue = str | int | float | bool | None
QueryParam = QueryValue | datetime.date
QueryParams = Mapping[str, QueryParam | Sequence[QueryParam] | Styled]
FileContent = bytes | IO[bytes] | pathlib.PurePath  # a path: read, sent with its name
FileSpec = (
    FileContent
    | tuple[str | None, FileContent]
    | tuple[str | None, FileContent, str | None]
    | tuple[str | None, FileContent, str | None, Mapping[str, str]]
)
SyncContent = bytes | str | IO[bytes] | Iterable[bytes]
AsyncContent = SyncContent | AsyncIterable[bytes]
TimeoutTypes = float | httpx.Timeout | None

# Errors after which the server may or may not have seen the request.
_RETRYABLE_TRANSPORT_ERRORS = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.ProxyError,
)
# Errors raised before a single byte of the request left this process.
_NOT_SENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """One logical API call, as generated code describes it.

    - `path`: already formatted and percent-encoded, relative to `base_url`; an absolute URL
      (e.g. a job's `Location`) is used as is.
    - `params` / `headers`: query parameters and extra headers; None values are left out. A
      `Styled` parameter (an object, a list of objects, a delimited list) is written in its
      OpenAPI style by `_query.encode_query`.
    - `json`: the body as JSON data or pydantic models (models are dumped by alias, unset
      fields left out); None means no JSON body. `content`: raw bytes, str, a file or a
      (async) byte stream; `data` / `files`: a URL-encoded form and a multipart body, each a
      model or a mapping (see `_forms`: fields, files with their name and content type), each
      property written as `encoding` (by property name) says (`_forms.Encoding`);
      `part_headers`: the caller's headers for the multipart parts of a property, by name.
    - `idempotency_header`: the header the operation declares for idempotency keys (None if it
      declares none); `idempotency_key`: the caller's key, which wins over a generated one. A
      caller's key (this argument, or a `key_header` among `headers`) on an operation that
      declares no header is sent as `key_header` (`Idempotency-Key` unless the spec names
      another), and makes a POST or PATCH retryable like one that declares it; without a key
      they are never sent twice.
    - `security`: what the operation requires (see `_auth.Security`); None: it declares
      nothing, so no credentials are sent.
    - `accept`: the `Accept` header, the media types the operation declares (None: the
      client's default, `application/json`); the caller's own `Accept` wins.
    - `errors`: the types of the error bodies the operation declares, by status (`"404"`,
      `"4XX"`, `"default"`): an error's `.parsed` is its body read as that type.
    - `max_retries` / `timeout`: per-call overrides of the client's settings.
    - `extra_query` / `extra_body`: what the spec does not declare, sent as well: query
      parameters after the declared ones, members merged into the JSON object or form body
      (theirs win).
    """

    method: str
    path: str
    params: QueryParams | None = None
    headers: Mapping[str, str | None] | None = None
    json: Any = None
    content: AsyncContent | None = None
    data: Mapping[str, Any] | pydantic.BaseModel | None = None
    files: Mapping[str, Any] | pydantic.BaseModel | None = None
    encoding: Mapping[str, Encoding] | None = None
    part_headers: Mapping[str, Mapping[str, str]] | None = None
    idempotency_header: str | None = None
    idempotency_key: str | None = None
    key_header: str = DEFAULT_IDEMPOTENCY_HEADER
    security: Security | None = None
    accept: str | None = None
    errors: Mapping[str, Any] | None = None
    max_retries: int | None = None
    timeout: TimeoutTypes = None
    extra_query: Mapping[str, Any] | None = None
    extra_body: Mapping[str, Any] | None = None


def _with_extra(body: Any, extra: Mapping[str, Any] | None, *, form: bool) -> Any:
    """`body` with the caller's `extra_body` members merged in (a form's as given, a JSON
    body's as JSON data)."""
    if not extra:
        return body
    if body is None:
        return dict(extra)
    members: Any = form_members(body) if form else to_jsonable(body)
    if not isinstance(members, Mapping):
        raise TypeError("extra_body needs a body that is an object")
    return {**cast("Mapping[str, Any]", members), **extra}


_ANY_ADAPTER: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Any)


def to_jsonable(value: Any) -> Any:
    """JSON data from a request body that may contain pydantic models, at any depth: dumped
    by alias, unset fields left out (so a PATCH sends only what the caller set); dates, UUIDs,
    enums and decimals as pydantic writes them in JSON mode."""
    return _ANY_ADAPTER.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A request ready to be sent any number of times: everything fixed, bodies buffered."""

    method: str
    url: str
    params: list[tuple[str, QueryValue]]
    headers: dict[str, str]
    content: bytes | None
    data: Mapping[str, Any] | None
    files: list[tuple[str, Any]] | None
    idempotency_key: str | None
    max_retries: int
    timeout: TimeoutTypes
    security: Security | None
    own_headers: frozenset[str]  # lower-case names the call set itself: credentials yield
    errors: Mapping[str, Any] | None = None


def _query(query: Mapping[str, Any]) -> list[tuple[str, QueryValue]]:
    """Query parameters as httpx sends them: `Styled` ones in their OpenAPI style, dates in ISO
    form, a list as the name repeated, None left out."""
    params: list[tuple[str, QueryValue]] = []
    for name, value in query.items():
        if isinstance(value, Styled):
            params += encode_query(
                name, to_jsonable(value.value), style=value.style, explode=value.explode
            )
        elif isinstance(value, str | int | float | bool | datetime.date):
            params.append((name, _scalar(value)))
        elif value is not None:
            params.extend((name, _scalar(v)) for v in value if v is not None)
    return params


def _scalar(value: QueryParam) -> QueryValue:
    return iso(value) if isinstance(value, datetime.date) else value


def _buffer_sync(content: SyncContent) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode()
    if isinstance(content, IO):
        data: bytes | str = content.read()
        return data.encode() if isinstance(data, str) else bytes(data)
    return b"".join(content)


async def _buffer_async(content: AsyncContent) -> bytes:
    if isinstance(content, AsyncIterable):
        return b"".join([chunk async for chunk in content])
    return _buffer_sync(content)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


class _BaseClient:
    """What the sync and async clients share: configuration, request preparation and the
    decision taken after each attempt. The two loops differ only in how they wait and send.

    `with_options(**changes)`: a new client made with this one's constructor arguments, some
    changed (`timeout=`, `max_retries=`, a credential, ...); a generated client records its
    arguments in `_arguments` (the base classes' own constructors, when made directly)."""

    _arguments: Mapping[str, Any] = {}

    def with_options(self, **changes: Any) -> Self:
        return type(self)(**{**self._arguments, **changes})

    def __init__(
        self,
        base_url: str,
        *,
        timeout: TimeoutTypes,
        max_retries: int,
        default_headers: Mapping[str, str] | None,
        default_query: Mapping[str, Any] | None,
        schemes: Sequence[Scheme],
        credentials: Mapping[str, Credential | None] | None,
        user_agent: str | None,
        clock: Callable[[], float],
        jitter: Callable[[], float],
        wait_on_rate_limit: bool,
        max_retry_delay: float,
        strict_response_validation: bool,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.wait_on_rate_limit = wait_on_rate_limit
        self.last_rate_limit: RateLimit | None = None
        self._clock = clock
        self._jitter = jitter
        self._max_retry_delay = max_retry_delay
        self.strict_response_validation = strict_response_validation
        headers: dict[str, str] = {"Accept": "application/json"}
        headers.update(default_headers or {})
        if user_agent is not None:
            headers["User-Agent"] = user_agent
        self._headers = httpx.Headers(headers)
        self.default_query: Mapping[str, Any] = dict(default_query or {})
        self._auth = Credentials(schemes, credentials or {}, base_url=self.base_url, clock=clock)
        # header names whose values the request log masks (besides credential-like ones)
        self._secret_headers = frozenset(
            s.parameter for s in schemes if s.kind == "apiKey" and s.location == "header"
        )
        self._origin = _origin(httpx.URL(self.base_url))

    def _policy(self, max_retries: int) -> RetryPolicy:
        return RetryPolicy(
            max_retries=max_retries, max_server_delay=self._max_retry_delay, jitter=self._jitter
        )

    def _url(self, path: str) -> str:
        if "://" in path.split("?", 1)[0]:
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    def _select(self, options: RequestOptions) -> Selection:
        """The credentials this call sends; raises `MissingCredentials` (before anything is
        sent) when the client holds none that satisfy the operation. Credentials go to the
        API's own origin only: a job Location on another host gets none."""
        if _origin(httpx.URL(self._url(options.path))) != self._origin:
            return ()
        return self._auth.select(options.security, f"{options.method.upper()} {options.path}")

    def _prepare(self, options: RequestOptions, content: bytes | None) -> _Prepared:
        url = self._url(options.path)
        headers = httpx.Headers(self._headers)
        if options.accept:
            headers["Accept"] = options.accept
        body = content
        data, files, json = options.data, options.files, options.json
        if data is not None:
            data = _with_extra(data, options.extra_body, form=True)
        elif files is not None:
            files = _with_extra(files, options.extra_body, form=True)
        elif content is None:
            json = _with_extra(json, options.extra_body, form=False)
        if json is not None:
            # Serialised once, so every attempt sends byte-identical JSON.
            body = jsonlib.dumps(
                to_jsonable(json), separators=(",", ":"), ensure_ascii=False
            ).encode()
            headers["Content-Type"] = "application/json"
        # Optional header parameters arrive as None when the caller did not set them.
        own = {k: v for k, v in (options.headers or {}).items() if v is not None}
        headers.update(own)

        key_header = options.idempotency_header
        key = options.idempotency_key
        if key_header is None and (key is not None or options.key_header in headers):
            # the caller's key (argument or header) makes any call safe to repeat
            key_header = options.key_header
        if key_header is not None:
            key = key or headers.get(key_header) or str(uuid.uuid4())
            headers[key_header] = key

        declared = {k: v for k, v in (options.params or {}).items() if v is not None}
        params = _query({**self.default_query, **declared, **(options.extra_query or {})})
        return _Prepared(
            method=options.method.upper(),
            url=url,
            params=params,
            headers=dict(headers.multi_items()),
            content=body,
            data=urlencoded(data, options.encoding) if data is not None else None,
            files=multipart(files, options.encoding, options.part_headers)
            if files is not None
            else None,
            idempotency_key=key,
            max_retries=self.max_retries if options.max_retries is None else options.max_retries,
            timeout=self.timeout if options.timeout is None else options.timeout,
            security=options.security,
            own_headers=frozenset(k.lower() for k in own),
            errors=options.errors,
        )

    def _next_hop(
        self, client: httpx.Client | httpx.AsyncClient, response: httpx.Response, hops: int
    ) -> httpx.Request | None:
        """The redirect to follow after `response`, if the httpx client follows redirects:
        httpx itself would keep API key headers on the way to another origin (it drops only
        `Authorization`), so redirects are followed here, one hop at a time, and a hop to
        another origin (scheme, host or port) carries no credential header at all."""
        follow = response.next_request
        if follow is None or not client.follow_redirects:
            return None
        if hops >= client.max_redirects:
            raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=follow)
        if _origin(follow.url) != _origin(response.request.url):
            for name in self._auth.header_names():
                follow.headers.pop(name, None)
        return follow

    def _build_request(
        self,
        client: httpx.Client | httpx.AsyncClient,
        prepared: _Prepared,
        retries_taken: int,
        applied: Applied,
    ) -> httpx.Request:
        headers = httpx.Headers(prepared.headers)
        for name, value in applied.headers.items():
            if name.lower() not in prepared.own_headers:
                headers[name] = value
        if applied.cookies:  # this request's Cookie header only, after the caller's own
            own_cookie = headers.get("cookie")
            cookie = applied.cookie_header()
            headers["Cookie"] = f"{own_cookie}; {cookie}" if own_cookie else cookie
        headers[RETRY_COUNT_HEADER] = str(retries_taken)
        params = [*applied.params, *prepared.params]
        return client.build_request(
            prepared.method,
            prepared.url,
            params=params or None,
            headers=headers,
            content=prepared.content,
            data=prepared.data,
            files=prepared.files,
            timeout=prepared.timeout,
        )

    def _returned(self, response: APIResponse, call: StreamedCall | None) -> APIResponse:
        """`response`, noted for `with_raw_response`; under `with_streaming_response` handed to
        the call instead, which ends the generated method before it reads the body (`_raw`)."""
        if call is not None:
            call.arrived(response)
        note_response(response)
        return response

    def _rate_limit_wait(self) -> float:
        """Seconds to hold the next call back because the last response said we are out."""
        limit = self.last_rate_limit
        if not self.wait_on_rate_limit or limit is None or not limit.exhausted:
            return 0.0
        return limit.seconds_until_reset(self._clock()) or 0.0

    def _on_response(
        self, prepared: _Prepared, response: httpx.Response, retries_taken: int
    ) -> APIResponse | tuple[APIStatusError, float | None]:
        """The response to return, or the error to raise with the delay before a retry
        (None: raise now)."""
        now = self._clock()
        rate_limit = parse_rate_limit(response.headers, now=now)
        if rate_limit is not None:
            self.last_rate_limit = rate_limit
        status = response.status_code
        if 200 <= status < 300 or (status == 304 and "if-none-match" in response.request.headers):
            return APIResponse(
                response,
                rate_limit=rate_limit,
                idempotency_key=prepared.idempotency_key,
                retries_taken=retries_taken,
                security=prepared.security,
                strict=self.strict_response_validation,
            )
        error = error_from_response(response, now=now)
        error.parsed = self._declared_error(prepared.errors, response)
        delay = self._policy(prepared.max_retries).decide(
            method=prepared.method,
            has_idempotency_key=prepared.idempotency_key is not None,
            retries_taken=retries_taken,
            now=now,
            status_code=status,
            headers=response.headers,
        )
        return error, delay

    def _declared_error(self, errors: Mapping[str, Any] | None, response: httpx.Response) -> Any:
        """The error body read as the type the operation declares for its status; None when it
        declares none or the body is not that."""
        status = str(response.status_code)
        declared: Any = errors and (
            errors.get(status) or errors.get(f"{status[0]}XX") or errors.get("default")
        )
        if not declared or not response.content:
            return None
        try:
            return APIResponse(response, strict=self.strict_response_validation).parse(declared)
        except APIResponseValidationError:
            return None

    def _on_transport_error(
        self,
        prepared: _Prepared,
        request: httpx.Request,
        exc: httpx.TransportError,
        retries_taken: int,
    ) -> tuple[APIConnectionError, float | None]:
        if isinstance(exc, httpx.TimeoutException):
            error: APIConnectionError = APITimeoutError(
                f"Request timed out: {type(exc).__name__}", request=request
            )
        else:
            error = APIConnectionError(f"Connection error: {exc!s}", request=request)
        if not isinstance(exc, _RETRYABLE_TRANSPORT_ERRORS):
            return error, None
        delay = self._policy(prepared.max_retries).decide(
            method=prepared.method,
            has_idempotency_key=prepared.idempotency_key is not None,
            retries_taken=retries_taken,
            now=self._clock(),
            request_sent=not isinstance(exc, _NOT_SENT_ERRORS),
        )
        return error, delay

    def _refresh(
        self, error: APIStatusError, refreshed: bool, selection: Selection, applied: Applied
    ) -> bool:
        """After a 401, once per call: forget the managed tokens the attempt sent, so the
        next attempt fetches fresh ones (the server refused before doing anything, so
        repeating is safe). True: try again now."""
        if error.status_code != 401 or refreshed:
            return False
        if not self._auth.invalidate(selection, applied):
            return False
        log.info("HTTP 401 with a cached OAuth2 token: trying once more with a new one")
        return True

    def _log_attempt(
        self, request: httpx.Request, status: int | str, started: float, retries_taken: int
    ) -> None:
        elapsed = time.monotonic() - started
        log_attempt(request, status, elapsed, retries_taken, self._secret_headers)

    def _log_retry(self, prepared: _Prepared, retries_taken: int, delay: float, why: str) -> None:
        log.info(
            "retrying %s %s in %.3f s (retry %d of %d): %s",
            prepared.method,
            redact_url(httpx.URL(prepared.url)),
            delay,
            retries_taken + 1,
            prepared.max_retries,
            why,
        )


class SyncAPIClient(_BaseClient):
    """Base of the generated synchronous `Client` (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        default_headers: Mapping[str, str] | None = None,
        default_query: Mapping[str, Any] | None = None,
        schemes: Sequence[Scheme] = (),
        credentials: Mapping[str, Credential | None] | None = None,
        user_agent: str | None = None,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        wait_on_rate_limit: bool = False,
        max_retry_delay: float = MAX_SERVER_DELAY,
        strict_response_validation: bool = False,
    ) -> None:
        super().__init__(
            base_url,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
            default_query=default_query,
            schemes=schemes,
            credentials=credentials,
            user_agent=user_agent,
            clock=clock,
            jitter=jitter,
            wait_on_rate_limit=wait_on_rate_limit,
            max_retry_delay=max_retry_delay,
            strict_response_validation=strict_response_validation,
        )
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client or transport, not both")
        self._sleep = sleep
        self._owns_client = http_client is None
        self._client = http_client or httpx.Client(transport=transport, timeout=timeout)

    def request(self, options: RequestOptions, *, stream: bool = False) -> APIResponse:
        """Send one logical call, retrying as the policy allows; see the module docstring."""
        if isinstance(options.content, AsyncIterable):
            raise TypeError("an async byte stream needs the async client")
        call = streamed_call()
        if call is not None and call.response is not None:
            return call.response  # `.parse()` of a streamed response: its body is read
        stream = stream or call is not None
        selection = self._select(options)
        content = _buffer_sync(options.content) if options.content is not None else None
        prepared = self._prepare(options, content)
        retries_taken = 0
        refreshed = False
        while True:
            wait = self._rate_limit_wait()
            if wait > 0:
                self._sleep(wait)
            applied = self._auth.apply(selection, self._client)
            request = self._build_request(self._client, prepared, retries_taken, applied)
            error: APIStatusError | APIConnectionError
            started = time.monotonic()
            try:
                response = self._client.send(request, stream=stream, follow_redirects=False)
                hops = 0
                while (follow := self._next_hop(self._client, response, hops)) is not None:
                    response.close()
                    response = self._client.send(follow, stream=stream, follow_redirects=False)
                    hops += 1
                if stream and not 200 <= response.status_code < 300:
                    response.read()  # an error's body: its problem details, then it closes
            except httpx.TransportError as exc:
                self._log_attempt(request, type(exc).__name__, started, retries_taken)
                error, delay = self._on_transport_error(prepared, request, exc, retries_taken)
                if delay is None:
                    raise error from exc
            else:
                self._log_attempt(request, response.status_code, started, retries_taken)
                outcome = self._on_response(prepared, response, retries_taken)
                if isinstance(outcome, APIResponse):
                    return self._returned(outcome, call)
                error, delay = outcome
                if self._refresh(error, refreshed, selection, applied):
                    refreshed = True
                    continue
                if delay is None:
                    raise error
            self._log_retry(prepared, retries_taken, delay, error.message)
            self._sleep(delay)
            retries_taken += 1

    def close(self) -> None:
        """Close the underlying httpx client if this object created it."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncAPIClient(_BaseClient):
    """Base of the generated asynchronous `AsyncClient` (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        default_headers: Mapping[str, str] | None = None,
        default_query: Mapping[str, Any] | None = None,
        schemes: Sequence[Scheme] = (),
        credentials: Mapping[str, Credential | None] | None = None,
        user_agent: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        wait_on_rate_limit: bool = False,
        max_retry_delay: float = MAX_SERVER_DELAY,
        strict_response_validation: bool = False,
    ) -> None:
        super().__init__(
            base_url,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
            default_query=default_query,
            schemes=schemes,
            credentials=credentials,
            user_agent=user_agent,
            clock=clock,
            jitter=jitter,
            wait_on_rate_limit=wait_on_rate_limit,
            max_retry_delay=max_retry_delay,
            strict_response_validation=strict_response_validation,
        )
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client or transport, not both")
        self._sleep = sleep
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(transport=transport, timeout=timeout)

    async def request(self, options: RequestOptions, *, stream: bool = False) -> APIResponse:
        """Send one logical call, retrying as the policy allows; see the module docstring."""
        call = streamed_call()
        if call is not None and call.response is not None:
            return call.response  # `.parse()` of a streamed response: its body is read
        stream = stream or call is not None
        selection = self._select(options)
        content = await _buffer_async(options.content) if options.content is not None else None
        prepared = self._prepare(options, content)
        retries_taken = 0
        refreshed = False
        while True:
            wait = self._rate_limit_wait()
            if wait > 0:
                await self._sleep(wait)
            applied = await self._auth.apply_async(selection, self._client)
            request = self._build_request(self._client, prepared, retries_taken, applied)
            error: APIStatusError | APIConnectionError
            started = time.monotonic()
            try:
                response = await self._client.send(request, stream=stream, follow_redirects=False)
                hops = 0
                while (follow := self._next_hop(self._client, response, hops)) is not None:
                    await response.aclose()
                    response = await self._client.send(
                        follow, stream=stream, follow_redirects=False
                    )
                    hops += 1
                if stream and not 200 <= response.status_code < 300:
                    await response.aread()  # an error's body: its problem details
            except httpx.TransportError as exc:
                self._log_attempt(request, type(exc).__name__, started, retries_taken)
                error, delay = self._on_transport_error(prepared, request, exc, retries_taken)
                if delay is None:
                    raise error from exc
            else:
                self._log_attempt(request, response.status_code, started, retries_taken)
                outcome = self._on_response(prepared, response, retries_taken)
                if isinstance(outcome, APIResponse):
                    return self._returned(outcome, call)
                error, delay = outcome
                if self._refresh(error, refreshed, selection, applied):
                    refreshed = True
                    continue
                if delay is None:
                    raise error
            self._log_retry(prepared, retries_taken, delay, error.message)
            await self._sleep(delay)
            retries_taken += 1

    async def aclose(self) -> None:
        """Close the underlying httpx client if this object created it."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


RESERVED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        name
        for cls in (SyncAPIClient, AsyncAPIClient)
        for name in dir(cls)
        if not name.startswith("_")
    }
    | {
        "base_url",
        "timeout",
        "max_retries",
        "wait_on_rate_limit",
        "last_rate_limit",
        "strict_response_validation",
        "default_query",
    }
)
