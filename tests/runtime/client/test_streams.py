"""Binary downloads and Server-Sent Events against a real streaming server on 127.0.0.1:
a 50 MB download written to a file in bounded memory; the first event read before the server
sends the second; retries before the stream starts, an error after."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pydantic
import pytest

from templates.client.runtime import (
    APIConnectionError,
    APIResponseValidationError,
    AsyncAPIClient,
    AsyncBinaryStream,
    AsyncEventStream,
    BinaryStream,
    EventStream,
    RequestOptions,
    ServerError,
    SyncAPIClient,
)
from templates.client.runtime._streams import SSEDecoder

from .fakes import FakeClock, streaming

MB = 1024 * 1024
SIZE = 50 * MB
BLOCK = bytes(range(256)) * 256  # 64 KiB


class Ticks(pydantic.BaseModel):
    n: int


def download(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/octet-stream")
    h.send_header("Content-Length", str(SIZE))
    h.send_header("Content-Disposition", 'attachment; filename="../../etc/report.bin"')
    h.end_headers()
    for _ in range(SIZE // len(BLOCK)):
        h.wfile.write(BLOCK)


def expected_digest() -> str:
    digest = hashlib.sha256()
    for _ in range(SIZE // len(BLOCK)):
        digest.update(BLOCK)
    return digest.hexdigest()


def sse_headers(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()


def test_a_50_mb_download_is_written_in_bounded_memory(tmp_path: Path, clock: FakeClock) -> None:
    target = tmp_path / "report.bin"
    with (
        streaming({"/report": download}) as server,
        SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client,
    ):
        tracemalloc.start()
        try:
            response = client.request(RequestOptions("GET", "/report"), stream=True)
            with BinaryStream(response) as stream:
                assert stream.filename == "report.bin"  # no directory from the server
                written = stream.write_to(target)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert written == SIZE == target.stat().st_size
    assert hashlib.sha256(target.read_bytes()).hexdigest() == expected_digest()
    assert peak < 4 * MB, f"peak {peak / MB:.1f} MB"


def test_async_download_to_a_file_object(tmp_path: Path, clock: FakeClock) -> None:
    async def main(url: str) -> tuple[int, int]:
        async with AsyncAPIClient(url, sleep=clock.async_sleep, clock=clock) as client:
            response = await client.request(RequestOptions("GET", "/report"), stream=True)
            async with AsyncBinaryStream(response) as stream:
                with (tmp_path / "a.bin").open("wb") as out:
                    written = await stream.write_to(out)
            small = await client.request(RequestOptions("GET", "/small"), stream=True)
            return written, len(await AsyncBinaryStream(small).read())

    def small(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "3")
        h.end_headers()
        h.wfile.write(b"abc")

    with streaming({"/report": download, "/small": small}) as server:
        assert asyncio.run(main(server.url)) == (SIZE, 3)


class Gate:
    """The server sends the second event only once the client has the first."""

    def __init__(self) -> None:
        self.first_read = threading.Event()
        self.sent_first_at = 0.0

    def write(self, h: BaseHTTPRequestHandler) -> None:
        sse_headers(h)
        h.wfile.write(b': comment, ignored\n\nretry: 3000\nid: 1\ndata: {"n": 1}\n\n')
        h.wfile.flush()
        self.sent_first_at = time.perf_counter()
        if not self.first_read.wait(5):
            return  # the client waited for the end: the test fails below
        h.wfile.write(b'event: tick\ndata: {"n":\ndata: 2}\n\ndata: [DONE]\n\ndata: {"n": 3}\n\n')
        h.wfile.flush()


def test_the_first_event_arrives_before_the_server_sends_the_second(clock: FakeClock) -> None:
    gate = Gate()
    with (
        streaming({"/events": gate.write}) as server,
        SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client,
    ):
        response = client.request(RequestOptions("GET", "/events"), stream=True)
        events = []
        with EventStream(response, Ticks) as stream:
            for event in stream:
                if not events:
                    gate.first_read.set()
                events.append(event)
    assert [(e.event, e.data.n, e.id, e.retry) for e in events] == [
        ("message", 1, "1", 3000),
        ("tick", 2, "1", None),  # the id persists; [DONE] ended the stream
    ]
    assert events[1].text == '{"n":\n2}'
    assert stream.last_event_id == "1"


def test_async_events_and_text_data(clock: FakeClock) -> None:
    gate = Gate()

    async def main(url: str) -> list[Any]:
        async with AsyncAPIClient(url, sleep=clock.async_sleep, clock=clock) as client:
            response = await client.request(RequestOptions("GET", "/events"), stream=True)
            seen = []
            async for event in AsyncEventStream[str](response):
                gate.first_read.set()
                seen.append(event.data)
            return seen

    with streaming({"/events": gate.write}) as server:
        assert asyncio.run(main(server.url)) == ['{"n": 1}', '{"n":\n2}']


def test_retried_before_the_stream_starts_never_after(clock: FakeClock) -> None:
    attempts: list[int] = []

    def flaky(h: BaseHTTPRequestHandler) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            body = b'{"title": "busy"}'
            h.send_response(503)
            h.send_header("Content-Type", "application/problem+json")
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Content-Length", "1000")  # promises more than it sends
        h.end_headers()
        h.wfile.write(b'data: {"n": 1}\n\n')
        h.wfile.flush()
        h.close_connection = True

    def down(h: BaseHTTPRequestHandler) -> None:
        body = b'{"title": "down"}'
        h.send_response(500)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    with (
        streaming({"/events": flaky, "/down": down}) as server,
        SyncAPIClient(server.url, sleep=clock.sleep, clock=clock, jitter=lambda: 0.0) as client,
    ):
        response = client.request(RequestOptions("GET", "/events"), stream=True)
        assert response.retries_taken == 1
        got = []
        with pytest.raises(APIConnectionError, match="the event stream broke off"):
            for event in EventStream(response, Ticks):
                got.append(event.data.n)
        with pytest.raises(ServerError) as failed:
            client.request(RequestOptions("GET", "/down", max_retries=0), stream=True)
    assert got == [1] and len(attempts) == 2 and clock.sleeps == [0.5]
    assert failed.value.body == {"title": "down"}  # read, for the error


def test_an_event_whose_data_does_not_parse(clock: FakeClock) -> None:
    def bad(h: BaseHTTPRequestHandler) -> None:
        sse_headers(h)
        h.wfile.write(b"data: not json\n\n")

    with (
        streaming({"/events": bad}) as server,
        SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client,
    ):
        response = client.request(RequestOptions("GET", "/events"), stream=True)
        with pytest.raises(APIResponseValidationError, match="data is not JSON: 'not json'"):
            list(EventStream(response, Ticks))


def _decode(*chunks: bytes) -> list[tuple[str, str, str | None, int | None]]:
    decoder = SSEDecoder()
    return [(e.event, e.data, e.id, e.retry) for c in chunks for e in decoder.feed(c)]


def test_the_parser_follows_the_whatwg_rules() -> None:
    assert _decode(b"\xef\xbb\xbfdata: a\r", b"\ndata:b\r\rdata: c\n\n") == [
        ("message", "a\nb", None, None),
        ("message", "c", None, None),
    ]
    assert _decode(b"data\n\nevent: x\n\nid: 7\ndata: y\n\n") == [
        ("message", "", None, None),
        ("message", "y", "7", None),  # the `event: x` block had no data: not dispatched
    ]
    assert _decode(b"retry: soon\nid: a\0b\ndata: z\n\n") == [("message", "z", None, None)]
    assert _decode(b"data: no blank line at the end") == []
    assert _decode("data: \u00e9".encode()[:-1], "data: \u00e9\n\n".encode()[-3:]) == [
        ("message", "\u00e9", None, None)
    ]
