"""What the crash runs put around a generated server: its spec and handler, a payment provider
and a webhook consumer on 127.0.0.1, an ASGI wrapper that kills its worker after the commit,
and the client loop that retries one key until it gets an answer.

The handler of `POST /payments` (`HANDLER`): calls the payment provider in a recovery point
(`ctx.external_call("charge", …)`, with the derived key), then in `ctx.transaction()` inserts
one row into `crash_payments` and emits `payment.created`; the response is the payment. A
request carrying `X-Crash: <point>` SIGKILLs the worker serving it at that point:

- `before_write`  — the handler starts, nothing written;
- `in_phase`      — inside the recovery point: the provider charged, its result not stored;
- `inside_tx`     — the row and the event written, not committed;
- `after_block`   — the handler's transaction block ended, the answer not yet stored (the
  window where a handler that commits on its own has charged and the key knows nothing);
- `after_commit`  — committed with the stored answer, the response not sent (`KILLER`).

uvicorn starts a new worker in its place. The header is not part of the request's fingerprint,
so the client's retries stay the same request.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

POINTS = ("before_write", "in_phase", "inside_tx", "after_block", "after_commit")

SPEC = """
openapi: 3.1.0
info: {title: Crash Payments, version: 1.0.0}
paths:
  /payments:
    post:
      operationId: createPayment
      tags: [payments]
      parameters:
        - name: Idempotency-Key
          in: header
          required: true
          schema: {type: string, maxLength: 255}
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/PaymentCreate'}
      responses:
        '201':
          description: Created.
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Payment'}
webhooks:
  payment.created:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [id, type, data]
              properties:
                id: {type: string}
                type: {type: string}
                data: {$ref: '#/components/schemas/Payment'}
      responses:
        '200': {description: Received.}
components:
  schemas:
    PaymentCreate:
      type: object
      required: [amount]
      properties:
        amount: {type: integer}
    Payment:
      type: object
      required: [id, amount, charge]
      properties:
        id: {type: string}
        amount: {type: integer}
        charge: {type: string}
"""

HANDLER = """
from __future__ import annotations

import os
import secrets
import signal
from typing import Any

import httpx

from .. import models
from ..events import events
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext


def die(key: str, point: str) -> None:
    # note the kill in $CRASH_KILLS (one appended line), then SIGKILL this worker
    fd = os.open(os.environ["CRASH_KILLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{key} {point}\\n".encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)


def die_at(ctx: RequestContext, point: str) -> None:
    if ctx.request.headers.get("x-crash") == point:
        die(ctx.request.headers["idempotency-key"], point)


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        die_at(ctx, "before_write")

        async def charge(key: str) -> dict[str, Any]:
            async with httpx.AsyncClient(timeout=10) as client:
                answer = await client.post(
                    os.environ["CRASH_PSP"], json={"amount": body.amount},
                    headers={"Idempotency-Key": key},
                )
            die_at(ctx, "in_phase")
            return dict(answer.json())

        charged = await ctx.external_call("charge", charge)
        key = ctx.request.headers["idempotency-key"]
        payment = {"id": "pay_" + secrets.token_hex(8), "amount": body.amount,
                   "charge": charged["charge"]}
        async with ctx.transaction() as tx:
            await tx.execute(
                "INSERT INTO crash_payments (idem_key, payment_id) VALUES (?, ?)",
                (key, payment["id"]),
            )
            await events(ctx, tx).payment_created(payment)
            die_at(ctx, "inside_tx")
        die_at(ctx, "after_block")
        return Reply(payment, status=201)
"""

KILLER = '''
"""The generated app; a fresh 201 whose request says `X-Crash: after_commit` kills the worker
as its response starts: after the commit, before a byte reaches the client."""

from crash_server.handlers.payments import die
from crash_server.main import app as inner


async def app(scope, receive, send):
    if scope["type"] != "http":
        return await inner(scope, receive, send)
    headers = dict(scope["headers"])
    crash = headers.get(b"x-crash", b"")

    async def killing_send(message):
        if (
            crash == b"after_commit"
            and message["type"] == "http.response.start"
            and message["status"] == 201
            and not any(k.lower() == b"idempotent-replayed" for k, _ in message["headers"])
        ):
            die(headers[b"idempotency-key"].decode(), "after_commit")
        await send(message)

    await inner(scope, receive, killing_send)
'''

TABLE = (
    "CREATE TABLE crash_payments (seq INTEGER, idem_key TEXT NOT NULL, payment_id TEXT NOT NULL)"
)


def generate_server(out: Path, handler: str = HANDLER) -> Path:
    """`apiforge server` on `SPEC` into `out/server` (package `crash_server`), with `handler`
    as its payments handler module; returns the project folder."""
    (out / "spec.yaml").write_text(SPEC, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator.cli",
            "server",
            str(out / "spec.yaml"),
            "-o",
            str(out / "server"),
            "--package",
            "crash_server",
        ],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    payments = out / "server" / "crash_server" / "handlers" / "payments.py"
    payments.write_text(handler.lstrip(), encoding="utf-8")
    return out / "server"


class Provider:
    """A payment provider on 127.0.0.1 that dedupes on its `Idempotency-Key` (as real ones do):
    records every call, answers the same charge for the same key."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                key = self.headers["Idempotency-Key"]
                outer.calls.append(key)
                body = json.dumps({"charge": "ch_" + hashlib.sha256(key.encode()).hexdigest()[:16]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/charges"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def schedule(keys: list[str], seed: int, max_crashes: int = 2) -> dict[str, list[str]]:
    """Per key, the kill points of its successive attempts (seeded): every point is drawn
    about as often (`after_commit` ends a key's list: its answer is stored then), and about
    a quarter of the keys see no crash of their own."""
    rng = random.Random(seed)
    plan: dict[str, list[str]] = {}
    for key in keys:
        count = 0 if rng.random() < 0.25 else rng.randint(1, max_crashes)
        points: list[str] = []
        while len(points) < count and "after_commit" not in points:  # then it is answered
            points.append(rng.choice(POINTS))
        # in the order a request reaches them: a phase whose result is stored is not run
        # again, so a kill inside it can only come before the kills that follow it
        plan[key] = sorted(points, key=POINTS.index)
    return plan


@dataclass
class KeyRun:
    """What one key's client saw."""

    key: str
    crashes: list[str]  # the kill points it asked for, in order
    amount: int  # its request body's
    answers: list[bytes] = field(default_factory=list)  # every 201 body, fresh or replayed
    replayed: int = 0
    in_progress: int = 0  # 409 while a dead worker's claim lived
    lost: int = 0  # connection lost (its own kill, or another request's on the same worker)
    killed_at: float = 0.0  # when its last connection was lost
    answered_at: float = 0.0
    other: Counter[int] = field(default_factory=Counter)


def kills(path: Path) -> Counter[tuple[str, str]]:
    """The kills the workers noted: (key, point) → how many."""
    if not path.exists():
        return Counter()
    lines = path.read_text(encoding="utf-8").splitlines()
    return Counter((key, point) for key, _, point in (line.partition(" ") for line in lines))


def drive(base_url: str, run: KeyRun, deadline: float, kill_log: Path) -> None:
    """Retry `run.key` until a 201 (Retry-After honoured, scaled down), sending the next kill
    point while there is one; a kill point is used up once a worker died at it (a connection
    lost to another request's kill is only retried)."""
    pending = list(run.crashes)
    with httpx.Client(base_url=base_url, timeout=30) as client:
        while time.monotonic() < deadline:
            headers = {"Idempotency-Key": run.key}
            if pending:
                headers["X-Crash"] = pending[0]
            try:
                answer = client.post("/payments", json={"amount": run.amount}, headers=headers)
            except httpx.TransportError:
                run.lost += 1
                run.killed_at = time.monotonic()
                if pending and kills(kill_log)[(run.key, pending[0])] > run.crashes[
                    : len(run.crashes) - len(pending)
                ].count(pending[0]):
                    pending.pop(0)
                time.sleep(0.1)
                continue
            if answer.status_code == 409:
                run.in_progress += 1
                time.sleep(0.25)
                continue
            if answer.status_code != 201:
                run.other[answer.status_code] += 1
                time.sleep(0.1)
                continue
            run.answers.append(answer.content)
            run.replayed += answer.headers.get("idempotent-replayed") == "true"
            if pending:  # answered (a replay) before its kill point was reached: drop it
                pending.pop(0)
                continue
            run.answered_at = time.monotonic()
            return
    raise AssertionError(f"key {run.key} got no answer before the deadline ({run})")
