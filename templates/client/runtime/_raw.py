"""Raw access: every generated method's result with the HTTP response it came from.

`client.payments.with_raw_response.create(...)` calls `client.payments.create(...)` with the
same (typed) arguments and returns `Raw[T]`: `.parsed` (what `create` returns) beside the
status, headers, ETag, replay flag, rate limit, idempotency key and retry count.

How: `to_raw` / `async_to_raw` wrap a bound method (typed with `ParamSpec`, so the wrapper
keeps the method's signature); while the call runs, the client's `request()` notes each
response it returns (`note_response`) in a context variable the wrapper set, and the wrapper
pairs the first one (the call's own; a page fetched later while iterating is not part of it)
with the result. A context variable follows the call into the coroutine of an async method
and into nothing else, so concurrent calls never see each other's responses.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Generic, ParamSpec, TypeVar

import httpx

from ._ratelimit import RateLimit
from ._response import APIResponse

T = TypeVar("T")
P = ParamSpec("P")

_noted: ContextVar[list[APIResponse] | None] = ContextVar("apiforge_raw_responses", default=None)


def note_response(response: APIResponse) -> None:
    """Called by the client for each response it returns: kept only inside a raw call."""
    noted = _noted.get()
    if noted is not None:
        noted.append(response)


class Raw(Generic[T]):
    """A parsed result with the response it came from."""

    def __init__(self, response: APIResponse, parsed: T) -> None:
        self.response = response
        self.parsed = parsed

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

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

    def __repr__(self) -> str:
        return f"<Raw {self.status_code} {self.parsed!r}>"


def _first(noted: list[APIResponse], func: Callable[..., object]) -> APIResponse:
    if not noted:  # every generated method sends a request: a bug if not
        raise RuntimeError(f"{getattr(func, '__qualname__', func)!r} sent no request")
    return noted[0]


def to_raw(func: Callable[P, T]) -> Callable[P, Raw[T]]:
    """`func` (a generated method), returning its result with its response."""

    @functools.wraps(func)
    def raw(*args: P.args, **kwargs: P.kwargs) -> Raw[T]:
        noted: list[APIResponse] = []
        token = _noted.set(noted)
        try:
            parsed = func(*args, **kwargs)
        finally:
            _noted.reset(token)
        return Raw(_first(noted, func), parsed)

    return raw


def async_to_raw(func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[Raw[T]]]:
    """`func` (a generated async method, or one returning an awaitable such as a paginator),
    awaited, returning its result with its response."""

    @functools.wraps(func)
    async def raw(*args: P.args, **kwargs: P.kwargs) -> Raw[T]:
        noted: list[APIResponse] = []
        token = _noted.set(noted)
        try:
            parsed = await func(*args, **kwargs)
        finally:
            _noted.reset(token)
        return Raw(_first(noted, func), parsed)

    return raw
