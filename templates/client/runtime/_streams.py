"""Bodies that are not JSON: binary downloads streamed without holding them in memory, and
Server-Sent Events read one event at a time as they arrive.

Public API (the `Async*` classes are the same with `async for`, `async with`, awaitables):

- `BinaryStream(response)`: a binary response whose body has not been read yet (the request
  was sent with `stream=True`): `.iter_bytes(chunk_size=65536)`, `.write_to(path_or_file)`
  (returns the bytes written; memory stays at one chunk), `.read()`, `.close()`, and `with`;
  `.content_type`, `.filename` (from `Content-Disposition`), `.response` (the `APIResponse`).
- `EventStream(response, data_type=None)`: a `text/event-stream` response as an iterator of
  `ServerSentEvent`s, each yielded as soon as its blank line arrives (nothing is buffered to
  the end of the stream); `data` is parsed as JSON into `data_type` (a class or a pydantic
  `TypeAdapter`; leniently, as any response) when one is given, else kept as text. A `data:
  [DONE]` event ends the stream (the convention of OpenAI-style APIs). `with` / `.close()`
  closes the connection; iterating to the end closes it too. `.last_event_id` is the last
  `id:` seen (to resume with `Last-Event-ID`).
- `ServerSentEvent(data, event="message", id=None, retry=None, text="")`.
- `SSEDecoder`: the parser (the WHATWG rules: `event`, `data` lines joined by `\\n`, `id`
  without NUL, numeric `retry`, `:` comments, CRLF/CR/LF line ends, a BOM at the start).

Retries happen while the response has not started (the usual request loop); an error once
events are flowing is raised to the caller, never retried: events already handed out cannot
be taken back.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any, Generic, Self, TypeVar

import httpx
import pydantic

from ._errors import APIConnectionError, APIResponseValidationError, APITimeoutError
from ._response import APIResponse

T = TypeVar("T")

CHUNK_SIZE = 64 * 1024
DONE = "[DONE]"
_EOL = re.compile(r"\r\n|\r|\n")
_FILENAME = re.compile(r"""filename\*?=(?:UTF-8'')?"?([^";]+)"?""", re.IGNORECASE)


def _filename(disposition: str | None) -> str | None:
    if not disposition:
        return None
    found = _FILENAME.search(disposition)
    if found is None:
        return None
    from urllib.parse import unquote

    return os.path.basename(unquote(found.group(1).strip())) or None


class _Body:
    """What the sync and async binary streams share."""

    def __init__(self, response: APIResponse) -> None:
        self.response = response

    @property
    def content_type(self) -> str | None:
        value: str | None = self.response.headers.get("content-type")
        return value

    @property
    def filename(self) -> str | None:
        """The file name the server suggests (`Content-Disposition`), without any directory."""
        return _filename(self.response.headers.get("content-disposition"))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.response.status_code} {self.content_type}>"


def _target(file: str | os.PathLike[str] | IO[bytes]) -> tuple[IO[bytes], bool]:
    if isinstance(file, str | os.PathLike):
        return open(file, "wb"), True  # closed by the caller
    return file, False


def _broken(exc: httpx.TransportError, what: str) -> APIConnectionError:
    """A connection that failed once the body was flowing: raised, never retried (what was
    handed out cannot be taken back)."""
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"{what} timed out: {type(exc).__name__}")
    return APIConnectionError(f"{what} broke off: {exc!s}")


class BinaryStream(_Body):
    """A binary body read as it arrives (see the module docstring)."""

    def iter_bytes(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        try:
            yield from self.response.http_response.iter_bytes(chunk_size)
        except httpx.TransportError as exc:
            raise _broken(exc, "the download") from exc

    def write_to(
        self, file: str | os.PathLike[str] | IO[bytes], *, chunk_size: int = CHUNK_SIZE
    ) -> int:
        """Write the body to a path or a binary file object; returns the bytes written."""
        out, owned = _target(file)
        written = 0
        try:
            for chunk in self.iter_bytes(chunk_size):
                out.write(chunk)
                written += len(chunk)
        finally:
            if owned:
                out.close()
            self.close()
        return written

    def read(self) -> bytes:
        return self.response.http_response.read()

    def close(self) -> None:
        self.response.http_response.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncBinaryStream(_Body):
    """A binary body read as it arrives, for the async client."""

    async def iter_bytes(self, chunk_size: int = CHUNK_SIZE) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.http_response.aiter_bytes(chunk_size):
                yield chunk
        except httpx.TransportError as exc:
            raise _broken(exc, "the download") from exc

    async def write_to(
        self, file: str | os.PathLike[str] | IO[bytes], *, chunk_size: int = CHUNK_SIZE
    ) -> int:
        """Write the body to a path or a binary file object; returns the bytes written."""
        out, owned = _target(file)
        written = 0
        try:
            async for chunk in self.iter_bytes(chunk_size):
                out.write(chunk)
                written += len(chunk)
        finally:
            if owned:
                out.close()
            await self.close()
        return written

    async def read(self) -> bytes:
        return await self.response.http_response.aread()

    async def close(self) -> None:
        await self.response.http_response.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


# --- Server-Sent Events -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerSentEvent(Generic[T]):
    """One event: `data` parsed (or the text, when the operation declares no schema),
    `text` the data as it arrived."""

    data: T
    event: str = "message"
    id: str | None = None
    retry: int | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class RawEvent:
    event: str
    data: str
    id: str | None
    retry: int | None


class SSEDecoder:
    """Bytes in, events out, following the WHATWG `text/event-stream` parsing rules."""

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""  # text after the last complete line
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._retry: int | None = None
        self._id_seen = False
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> list[RawEvent]:
        """The events `chunk` completes. What follows the last line end waits for the next
        chunk; at the end of the stream it is dropped, as the spec says."""
        buffer = self._buffer + self._text.decode(chunk)
        if not self._started and buffer:
            buffer = buffer.removeprefix("\ufeff")
            self._started = True
        events: list[RawEvent] = []
        start = 0
        for end in _EOL.finditer(buffer):
            if end.group() == "\r" and end.end() == len(buffer):
                break  # perhaps the first half of a CRLF split between chunks
            event = self._line(buffer[start : end.start()])
            start = end.end()
            if event is not None:
                events.append(event)
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str) -> RawEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
                self._id_seen = True
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> RawEvent | None:
        data, event, retry = self._data, self._event, self._retry
        self._data, self._event, self._retry = [], "", None
        if not data:
            return None
        event_id = self.last_event_id if self._id_seen else None
        return RawEvent(event or "message", "\n".join(data), event_id, retry)


class _Events(Generic[T]):
    """What the sync and async event streams share: decoding and parsing."""

    def __init__(
        self,
        response: APIResponse,
        data_type: type[T] | pydantic.TypeAdapter[T] | None = None,
    ) -> None:
        self.response = response
        self._type = data_type
        self._decoder = SSEDecoder()
        self._done = False

    @property
    def last_event_id(self) -> str | None:
        return self._decoder.last_event_id

    def _parse(self, raw: RawEvent) -> ServerSentEvent[T]:
        data: Any = raw.data
        if self._type is not None:
            try:
                decoded = json.loads(raw.data)
            except ValueError as exc:
                raise APIResponseValidationError(
                    self.response.http_response,
                    f"has an event whose data is not JSON: {raw.data[:200]!r}",
                ) from exc
            data = self.response.validate(decoded, self._type)
        return ServerSentEvent(data, raw.event, raw.id, raw.retry, raw.data)

    def _events(self, chunk: bytes) -> list[ServerSentEvent[T]]:
        parsed: list[ServerSentEvent[T]] = []
        for raw in self._decoder.feed(chunk):
            if raw.data == DONE:
                self._done = True
                break
            parsed.append(self._parse(raw))
        return parsed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.response.status_code}>"


class EventStream(_Events[T]):
    """A `text/event-stream` response, event by event (see the module docstring)."""

    def __iter__(self) -> Iterator[ServerSentEvent[T]]:
        try:
            for chunk in self.response.http_response.iter_bytes():
                yield from self._events(chunk)
                if self._done:
                    return
        except httpx.TransportError as exc:
            raise _broken(exc, "the event stream") from exc
        finally:
            self.close()

    def close(self) -> None:
        self.response.http_response.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncEventStream(_Events[T]):
    """A `text/event-stream` response, event by event, for the async client."""

    async def __aiter__(self) -> AsyncIterator[ServerSentEvent[T]]:
        try:
            async for chunk in self.response.http_response.aiter_bytes():
                for event in self._events(chunk):
                    yield event
                if self._done:
                    return
        except httpx.TransportError as exc:
            raise _broken(exc, "the event stream") from exc
        finally:
            await self.close()

    async def close(self) -> None:
        await self.response.http_response.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


__all__ = [
    "AsyncBinaryStream",
    "AsyncEventStream",
    "BinaryStream",
    "EventStream",
    "RawEvent",
    "SSEDecoder",
    "ServerSentEvent",
]
