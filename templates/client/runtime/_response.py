"""What a call returns: `APIResponse`, a response whose headers are read and whose body is
parsed on demand.

- `APIResponse`: `.status_code`, `.headers`, `.etag`, `.replayed`, `.rate_limit`,
  `.not_modified`, `.idempotency_key`, `.retries_taken`, `.security` (what the call
  required: a job handle polls with the same), `.http_response`, `.json()`,
  `.parse(type_)` (a pydantic model class, any type, or a `TypeAdapter`; `.parse_as(annotation)`
  for a type that is no class), `.validate(data, type_)` (the same for data already decoded).
  Parsing is lenient unless the client was made with `strict_response_validation=True` (see
  `_models`); a 2xx body that still does not fit is returned for what it holds, with a warning
  (`_salvage`), or with strict validation raises `APIResponseValidationError`, as a body that
  is not JSON always does. A model of the API's gets the response's request id
  (`model._request_id`).
- `StreamedResponse[T]` / `AsyncStreamedResponse[T]`: what `with_streaming_response.<method>(...)`
  gives inside its `with` block (see `_raw`): the response's head (`.status_code`, `.headers`,
  `.etag`, ... as on `Raw`) with its body not yet read: `.iter_bytes()`, `.iter_text()`,
  `.iter_lines()` read it as it arrives, `.read()` whole, `.parse()` returns what the method
  itself returns (async: `async for` over the iterators, `await` the others). The body is read
  once: `.parse()` after iterating raises `httpx.StreamConsumed`.
"""

from __future__ import annotations

import functools
import json as jsonlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar, cast, overload

import httpx
import pydantic

from ._auth import Security
from ._errors import APIResponseValidationError, find_request_id
from ._logs import redact_url
from ._models import LENIENT
from ._models import BaseModel as Model
from ._ratelimit import RateLimit
from ._salvage import salvage

T = TypeVar("T")

log = logging.getLogger(__name__)


class APIResponse:
    """A successful (or 304) response, with the production-pattern headers already read."""

    def __init__(
        self,
        http_response: httpx.Response,
        *,
        rate_limit: RateLimit | None = None,
        idempotency_key: str | None = None,
        retries_taken: int = 0,
        security: Security | None = None,
        strict: bool = False,
    ) -> None:
        self.http_response = http_response
        self.rate_limit = rate_limit
        self.idempotency_key = idempotency_key
        self.retries_taken = retries_taken
        self.security = security
        self.strict = strict

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.http_response.headers

    @property
    def etag(self) -> str | None:
        """The `ETag` header, verbatim (quotes and `W/` included), to echo in `If-Match`."""
        etag: str | None = self.http_response.headers.get("etag")
        return etag

    @property
    def replayed(self) -> bool:
        """True when the server answered from its idempotency store (`Idempotent-Replayed`)."""
        value: str = self.http_response.headers.get("idempotent-replayed", "")
        return value.strip().lower() == "true"

    @property
    def not_modified(self) -> bool:
        """True for a 304 answer to `If-None-Match`: the cached copy is still current."""
        return self.http_response.status_code == 304

    def json(self) -> Any:
        """The body as JSON data; None for an empty body. `APIResponseValidationError` when
        it is not JSON."""
        if not self.http_response.content:
            return None
        try:
            return jsonlib.loads(self.http_response.content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise APIResponseValidationError(self.http_response, "is not JSON") from exc

    @overload
    def parse(self, type_: pydantic.TypeAdapter[T]) -> T: ...
    @overload
    def parse(self, type_: type[T]) -> T: ...
    def parse(self, type_: pydantic.TypeAdapter[T] | type[T]) -> T:
        """The body validated as `type_`; an empty body validates as None."""
        if not self.http_response.content:
            return self.validate(None, type_)
        adapter = type_ if isinstance(type_, pydantic.TypeAdapter) else _adapter(type_)
        try:
            parsed = adapter.validate_json(self.http_response.content, context=self._context)
        except pydantic.ValidationError as exc:
            if any(e.get("type") == "json_invalid" for e in exc.errors()):
                raise APIResponseValidationError(self.http_response, "is not JSON") from exc
            parsed = self._salvaged(exc, self.json(), type_)
        return self._stamped(parsed)

    def _stamped(self, parsed: T) -> T:
        """`parsed`, a model of the API's, with the request id of this response."""
        if isinstance(parsed, Model):
            parsed._request_id = find_request_id(self.http_response.headers)  # pyright: ignore[reportPrivateUsage]
        return parsed

    def parse_as(self, annotation: Any) -> Any:
        """`parse` for a type that is no class (`list[models.Pet]`, a union, `Any`): generated
        methods `cast` the result to that type."""
        return self.parse(cast("type[Any]", annotation))

    @overload
    def validate(self, data: Any, type_: pydantic.TypeAdapter[T]) -> T: ...
    @overload
    def validate(self, data: Any, type_: type[T]) -> T: ...
    def validate(self, data: Any, type_: pydantic.TypeAdapter[T] | type[T]) -> T:
        """`data` (decoded from this response's body) validated as `type_`."""
        adapter = type_ if isinstance(type_, pydantic.TypeAdapter) else _adapter(type_)
        try:
            return self._stamped(adapter.validate_python(data, context=self._context))
        except pydantic.ValidationError as exc:
            return self._stamped(self._salvaged(exc, data, type_))

    def _salvaged(
        self, exc: pydantic.ValidationError, data: Any, type_: pydantic.TypeAdapter[T] | type[T]
    ) -> T:
        """A 2xx body that breaks its type: raised when strict, else read for what it holds
        (`_salvage`) with a warning; an error body's breach is always raised."""
        error = self._invalid(exc)
        if self.strict or not 200 <= self.status_code < 300:
            raise error from exc
        request = self.http_response.request
        log.warning(
            "%s %s: %s; returned as it came (strict_response_validation=True raises)",
            request.method,
            redact_url(request.url),
            error,
        )
        annotation: Any = Any if isinstance(type_, pydantic.TypeAdapter) else type_
        return cast(T, salvage(data, annotation, self._context))

    @property
    def _context(self) -> dict[str, Any] | None:
        return None if self.strict else LENIENT

    def _invalid(self, exc: pydantic.ValidationError) -> APIResponseValidationError:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        summary = "invalid"
        if errors:
            where = ".".join(str(part) for part in errors[0]["loc"]) or "the body"
            summary = f"{where}: {errors[0]['msg']}"
        count = exc.error_count()
        return APIResponseValidationError(
            self.http_response,
            f"does not match the declared type ({count} error{'s' if count > 1 else ''}; "
            f"{summary})",
            errors=[dict(e) for e in errors],
        )

    def __repr__(self) -> str:
        return f"<APIResponse {self.status_code} retries_taken={self.retries_taken}>"


def _adapter(type_: type[T]) -> pydantic.TypeAdapter[T]:
    try:
        return cast("pydantic.TypeAdapter[T]", _cached_adapter(cast(Any, type_)))
    except TypeError:  # unhashable type expression
        return pydantic.TypeAdapter(type_)


@functools.lru_cache(maxsize=512)
def _cached_adapter(type_: Any) -> pydantic.TypeAdapter[Any]:
    # Building a TypeAdapter compiles a validator: do it once per type, not once per call.
    return pydantic.TypeAdapter(type_)


class ResponseFacts:
    """The headers' facts, read from `self.response`: shared by `Raw` and streamed responses."""

    response: APIResponse

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def http_response(self) -> httpx.Response:
        return self.response.http_response

    @property
    def etag(self) -> str | None:
        """The `ETag` header, to send back in `if_match=` / `if_none_match=`."""
        return self.response.etag

    @property
    def replayed(self) -> bool:
        """True when the server replayed a stored response for this idempotency key."""
        return self.response.replayed

    @property
    def not_modified(self) -> bool:
        return self.response.not_modified

    @property
    def rate_limit(self) -> RateLimit | None:
        return self.response.rate_limit

    @property
    def idempotency_key(self) -> str | None:
        return self.response.idempotency_key

    @property
    def retries_taken(self) -> int:
        return self.response.retries_taken

    @property
    def request_id(self) -> str | None:
        return find_request_id(self.response.headers)


class StreamedResponse(ResponseFacts, Generic[T]):
    """A response whose body is read on demand (see the module docstring)."""

    def __init__(self, response: APIResponse, parse: Callable[[], T]) -> None:
        self.response = response
        self._parse = parse

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        return self.response.http_response.iter_bytes(chunk_size)

    def iter_text(self, chunk_size: int | None = None) -> Iterator[str]:
        return self.response.http_response.iter_text(chunk_size)

    def iter_lines(self) -> Iterator[str]:
        return self.response.http_response.iter_lines()

    def read(self) -> bytes:
        return self.response.http_response.read()

    def json(self) -> Any:
        self.read()
        return self.response.json()

    def parse(self) -> T:
        """The body read whole and returned as the method itself returns it."""
        self.read()
        return self._parse()

    def close(self) -> None:
        self.response.http_response.close()

    def __repr__(self) -> str:
        return f"<StreamedResponse {self.status_code}>"


class AsyncStreamedResponse(ResponseFacts, Generic[T]):
    """`StreamedResponse` on the async client: iterate with `async for`, await the rest."""

    def __init__(self, response: APIResponse, parse: Callable[[], Awaitable[T]]) -> None:
        self.response = response
        self._parse = parse

    def iter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        return self.response.http_response.aiter_bytes(chunk_size)

    def iter_text(self, chunk_size: int | None = None) -> AsyncIterator[str]:
        return self.response.http_response.aiter_text(chunk_size)

    def iter_lines(self) -> AsyncIterator[str]:
        return self.response.http_response.aiter_lines()

    async def read(self) -> bytes:
        return await self.response.http_response.aread()

    async def json(self) -> Any:
        await self.read()
        return self.response.json()

    async def parse(self) -> T:
        """The body read whole and returned as the method itself returns it."""
        await self.read()
        return await self._parse()

    async def close(self) -> None:
        await self.response.http_response.aclose()

    def __repr__(self) -> str:
        return f"<AsyncStreamedResponse {self.status_code}>"
