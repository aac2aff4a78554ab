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

Streamed access: `client.payments.with_streaming_response.create(...)` is a context manager
(`async with` on the async client) giving a `StreamedResponse[T]` (see `_response`) as soon as
the response's head arrived, its body unread; leaving the block closes the response. How:
`to_streamed` / `async_to_streamed` run the method with a `StreamedCall` in a context
variable; the client's `request()` then sends the call with `stream=True` and, on success,
hands the response to the call (`StreamedCall.arrived`), which ends the method right there
(`HeadArrived`, caught by the wrapper) instead of letting it read the body. `.parse()` reads
the body, then runs the method once more with the same arguments and the call holding that
response, which `request()` returns without sending anything: the method's own code turns
it into its result. An error status raises on entering the block, as any call does.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from contextvars import ContextVar
from typing import Generic, ParamSpec, TypeVar

from ._response import APIResponse, AsyncStreamedResponse, ResponseFacts, StreamedResponse

T = TypeVar("T")
P = ParamSpec("P")

_noted: ContextVar[list[APIResponse] | None] = ContextVar("apiforge_raw_responses", default=None)


def note_response(response: APIResponse) -> None:
    """Called by the client for each response it returns: kept only inside a raw call."""
    noted = _noted.get()
    if noted is not None:
        noted.append(response)


class Raw(ResponseFacts, Generic[T]):
    """A parsed result with the response it came from."""

    def __init__(self, response: APIResponse, parsed: T) -> None:
        self.response = response
        self.parsed = parsed

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


class HeadArrived(BaseException):
    """Ends a generated method under `with_streaming_response` once its response's head
    arrived (a BaseException, so no `except Exception` on the way swallows it)."""


class StreamedCall:
    """One call under `with_streaming_response`: the response, once it arrived."""

    def __init__(self, response: APIResponse | None = None) -> None:
        self.response = response

    def arrived(self, response: APIResponse) -> None:
        self.response = response
        raise HeadArrived


_streamed: ContextVar[StreamedCall | None] = ContextVar("apiforge_streamed_call", default=None)


def streamed_call() -> StreamedCall | None:
    """The call under `with_streaming_response` the current request belongs to, if any."""
    return _streamed.get()


def _arrived(call: StreamedCall, func: Callable[..., object]) -> APIResponse:
    if call.response is None:  # every generated method sends a request: a bug if not
        raise RuntimeError(f"{getattr(func, '__qualname__', func)!r} sent no request")
    return call.response


def to_streamed(
    func: Callable[P, T],
) -> Callable[P, contextlib.AbstractContextManager[StreamedResponse[T]]]:
    """`func` (a generated method) as a context manager giving its response, body unread."""

    @functools.wraps(func)
    @contextlib.contextmanager
    def streamed(*args: P.args, **kwargs: P.kwargs) -> Generator[StreamedResponse[T]]:
        call = StreamedCall()
        token = _streamed.set(call)
        try:
            func(*args, **kwargs)
        except HeadArrived:
            pass
        finally:
            _streamed.reset(token)
        response = _arrived(call, func)

        def parse() -> T:
            token = _streamed.set(StreamedCall(response))
            try:
                return func(*args, **kwargs)
            finally:
                _streamed.reset(token)

        try:
            yield StreamedResponse(response, parse)
        finally:
            response.http_response.close()

    return streamed


def async_to_streamed(
    func: Callable[P, Awaitable[T]],
) -> Callable[P, contextlib.AbstractAsyncContextManager[AsyncStreamedResponse[T]]]:
    """`to_streamed` for a generated async method (`async with`)."""

    @functools.wraps(func)
    @contextlib.asynccontextmanager
    async def streamed(
        *args: P.args, **kwargs: P.kwargs
    ) -> AsyncGenerator[AsyncStreamedResponse[T]]:
        call = StreamedCall()
        token = _streamed.set(call)
        try:
            await func(*args, **kwargs)
        except HeadArrived:
            pass
        finally:
            _streamed.reset(token)
        response = _arrived(call, func)

        async def parse() -> T:
            token = _streamed.set(StreamedCall(response))
            try:
                return await func(*args, **kwargs)
            finally:
                _streamed.reset(token)

        try:
            yield AsyncStreamedResponse(response, parse)
        finally:
            await response.http_response.aclose()

    return streamed
