"""What the end-to-end tests put around the generated client: a recording transport, an
injected sleep and clock, the server's executions ledger, a webhook consumer, and the figures
of each fault run (printed at the end of the pytest session by conftest.py)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

# 2026-04-15T10:30:00Z: where the injected clock starts
EPOCH = 1_776_249_000.0


def payment_body(amount: int = 5000, customer: str = "cus_01HTZ3A7B8C9D0E1F2G3H4J5K6") -> Any:
    """A valid createPayment body, as a plain dict."""
    return {
        "amount": amount,
        "currency": "usd",
        "customerId": customer,
        "paymentMethod": {"type": "card", "token": "tok_visa_4242"},
    }


@dataclass(frozen=True)
class Exchange:
    """One attempt as it went over the wire."""

    method: str
    path: str
    retry_count: str
    idempotency_key: str | None
    status: int | None  # None: no response (connection error or timeout)
    error: str | None
    headers: httpx.Headers


class Wire(httpx.BaseTransport):
    """An httpx transport that records every attempt the client makes (real network below)."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        def record(status: int | None, error: str | None, headers: httpx.Headers) -> None:
            self.exchanges.append(
                Exchange(
                    request.method,
                    request.url.path,
                    request.headers.get("x-retry-count", ""),
                    request.headers.get("idempotency-key"),
                    status,
                    error,
                    headers,
                )
            )

        try:
            response = self.inner.handle_request(request)
            response.read()  # a truncated body fails here, inside the attempt
        except httpx.TransportError as exc:
            record(None, type(exc).__name__, httpx.Headers())
            raise
        record(response.status_code, None, response.headers)
        return response

    def close(self) -> None:
        self.inner.close()

    def statuses(self) -> list[int | str | None]:
        return [e.status if e.status is not None else e.error for e in self.exchanges]


class Waits:
    """The client's injected `sleep` and `clock`: every wait is recorded and moves the clock;
    with `real=True` it is also slept for real (for waits the server itself measures)."""

    def __init__(self, *, real: bool = False, start: float = EPOCH) -> None:
        self.real = real
        self.now = start
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.real:
            time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.real:
            import asyncio

            await asyncio.sleep(seconds)

    def clock(self) -> float:
        return self.now


class Ledger:
    """The server's executions ledger: one row per run of `create_payment`'s body."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def executions(self, keys: Iterable[str | None]) -> dict[str, int]:
        wanted = [k for k in keys if k is not None]
        counts = dict.fromkeys(wanted, 0)
        if not self.path.exists() or not wanted:
            return counts
        with contextlib.closing(sqlite3.connect(self.path, timeout=10)) as db:
            marks = ",".join("?" * len(wanted))
            rows = db.execute(
                "SELECT idempotency_key, COUNT(*) FROM executions"
                f" WHERE idempotency_key IN ({marks}) GROUP BY idempotency_key",
                wanted,
            ).fetchall()
        counts.update({key: int(n) for key, n in rows})
        return counts

    def total(self, keys: Iterable[str | None]) -> int:
        return sum(self.executions(keys).values())


class Receiver:
    """A webhook consumer on 127.0.0.1: records each delivery's headers and raw body."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(
        self, match: Callable[[bytes], bool], timeout: float = 15
    ) -> tuple[dict[str, str], bytes]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for headers, body in list(self.received):
                if match(body):
                    return headers, body
            time.sleep(0.05)
        raise AssertionError(f"no matching webhook delivered; got {len(self.received)}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class FaultRun:
    """The figures of one fault-injection run, for the session summary."""

    name: str
    calls: int  # logical client calls
    sent: int  # HTTP requests the client sent (attempts)
    server_saw: int  # of which reached the server
    effects: int  # executions counted in the server's ledger
    retries: int  # retries the client made
    waits: list[float] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)  # injected, by kind


RUNS: list[FaultRun] = []


def summary_lines() -> list[str]:
    if not RUNS:
        return []
    head = f"{'fault run':<34} {'calls':>5} {'sent':>5} {'server':>6} {'effects':>7} {'retries':>7}  waits (s)"
    lines = [head]
    for run in RUNS:
        waits = " ".join(f"{w:.3g}" for w in run.waits) or "-"
        if len(waits) > 40:
            waits = waits[:37] + "..."
        lines.append(
            f"{run.name:<34} {run.calls:>5} {run.sent:>5} {run.server_saw:>6} "
            f"{run.effects:>7} {run.retries:>7}  {waits}"
        )
        if len(run.faults) > 1:
            lines.append(
                "    faults: " + ", ".join(f"{k} {n}" for k, n in sorted(run.faults.items()))
            )
    return lines
