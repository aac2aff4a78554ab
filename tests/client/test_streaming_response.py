"""`with_streaming_response` on the generated acme client against a real server on 127.0.0.1:
the block is entered when the response's head arrived, the body is read only when asked for
(`iter_bytes`, `iter_lines`, `parse`), sync and async, and the response is closed after it."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.runtime.client.fakes import streaming

from .test_requests import PAYMENT

BODY = json.dumps(PAYMENT).encode()


class HeldBody:
    """Sends the head and half the body, then the rest only once the test says so."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.released: list[bool] = []

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(BODY)))
        h.send_header("X-Request-Id", "req_9")
        h.end_headers()
        h.wfile.write(BODY[:10])
        h.wfile.flush()
        self.released.append(self.release.wait(5))
        h.wfile.write(BODY[10:])


def lines(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    for n in range(3):
        chunk = json.dumps({"n": n}).encode() + b"\n"
        h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        h.wfile.flush()
    h.wfile.write(b"0\r\n\r\n")


def missing(h: BaseHTTPRequestHandler) -> None:
    body = b'{"type": "about:blank", "title": "Not Found", "status": 404}'
    h.send_response(404)
    h.send_header("Content-Type", "application/problem+json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def test_the_body_is_read_on_demand_and_parsed_as_the_method_returns(acme: Any) -> None:
    held = HeldBody()
    with (
        streaming({"/v1/payments/pay_1": held}) as server,
        acme.Client(base_url=server.url, bearer_auth="t", timeout=10.0) as client,
    ):
        with client.payments.with_streaming_response.get(payment_id="pay_1") as response:
            # inside the block before the server sent the rest of the body
            assert isinstance(response, acme.StreamedResponse)
            assert (response.status_code, response.request_id) == (200, "req_9")
            assert not response.http_response.is_stream_consumed
            held.release.set()
            payment = response.parse()
        assert response.http_response.is_closed
    assert held.released == [True]  # the rest was sent after the block was entered
    assert isinstance(payment, acme.models.Payment)
    assert (payment.id, payment._request_id) == (PAYMENT["id"], "req_9")
    assert len(server.requests) == 1  # parse() sent nothing more


def test_lines_and_bytes_as_they_arrive(acme: Any) -> None:
    with (
        streaming({"/v1/payments/pay_1": lines}) as server,
        acme.Client(base_url=server.url, bearer_auth="t") as client,
    ):
        with client.payments.with_streaming_response.get(payment_id="pay_1") as response:
            assert list(response.iter_lines()) == ['{"n": 0}', '{"n": 1}', '{"n": 2}']
        with client.payments.with_streaming_response.get(payment_id="pay_1") as response:
            assert b"".join(response.iter_bytes()) == b'{"n": 0}\n{"n": 1}\n{"n": 2}\n'


def test_an_error_status_raises_on_entering(acme: Any) -> None:
    with (
        streaming({"/v1/payments/nope": missing}) as server,
        acme.Client(base_url=server.url, bearer_auth="t") as client,
        pytest.raises(acme.NotFound),
        client.payments.with_streaming_response.get(payment_id="nope"),
    ):
        raise AssertionError("the block must not run")


def test_async_streaming_response(acme: Any) -> None:
    held = HeldBody()

    async def run(url: str) -> tuple[list[str], Any, bool]:
        async with acme.AsyncClient(base_url=url, bearer_auth="t", timeout=10.0) as client:
            streamed = client.payments.with_streaming_response
            async with streamed.get(payment_id="lines") as response:
                got = [line async for line in response.iter_lines()]
            async with streamed.get(payment_id="pay_1") as response:
                assert isinstance(response, acme.AsyncStreamedResponse)
                assert not response.http_response.is_stream_consumed
                held.release.set()
                payment = await response.parse()
            return got, payment, response.http_response.is_closed

    with streaming({"/v1/payments/pay_1": held, "/v1/payments/lines": lines}) as server:
        got, payment, closed = asyncio.run(run(server.url))
    assert got == ['{"n": 0}', '{"n": 1}', '{"n": 2}']
    assert (payment.id, payment._request_id, closed) == (PAYMENT["id"], "req_9", True)
    assert held.released == [True]
