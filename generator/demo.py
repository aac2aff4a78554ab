"""`make demo`: apiforge end to end on specs/acme.yaml, in well under a minute.

1. `apiforge inspect` and `apiforge lint` on the showcase spec, and a few findings on a bare one;
2. `apiforge generate`: the server and the client into `.demo/`, with small demo handler modules
   (handler modules are create-once: written only when absent, so edits to them survive);
3. the server under uvicorn on 127.0.0.1, on its embedded SQLite default;
4. a scripted session with the generated client: a 401 without a token and the call accepted
   with one, a response lost in transit and retried with
   the same idempotency key (replayed, one execution), a 429 honoured, a 412 resolved by the
   read-modify-write helper, a 202 job awaited from queued to completed;
5. the server stopped.

`python -m generator.demo serve` (`make serve`) generates what is missing and keeps the demo
server running in the foreground. `--dir` picks another directory than `.demo`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE_PREFIX = "acme"
SERVER_PACKAGE = f"{PACKAGE_PREFIX}_server"
CLIENT_PACKAGE = f"{PACKAGE_PREFIX}_client"
LIMITED_TOKEN = "demo-limited"  # this token's rate-limit tier allows 2 requests per second
SERVER_ENV = {
    "APIFORGE_RATE_LIMIT_TIERS": "tiny=2/second",
    "APIFORGE_JOBS_RETRY_AFTER_SECONDS": "1",
    "APIFORGE_WEBHOOK_SECRETS": "whsec_ZGVtby1zZWNyZXQtZGVtby1zZWNyZXQ=",
}

# -- the demo's business logic: what a developer writes into the generated handler modules --

# the credential check a developer writes into the generated verifier.py (create-once too)
VERIFIER = f'''
"""Demo credentials: two issued API tokens, kept as their SHA-256 (never the secret)."""

from __future__ import annotations

import hashlib

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


ISSUED = {{
    _digest("demo-token"): Principal("acct_demo"),
    _digest("{LIMITED_TOKEN}"): Principal("acct_limited", tier="tiny"),  # 2 requests/second
}}


class Verifier(VerifierBase):
    async def bearer_auth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return ISSUED.get(_digest(token))

    async def api_key_auth(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return ISSUED.get(_digest(key))
'''

HANDLERS = {
    "payments": '''
"""Demo payments: every run of create_payment is written to an executions ledger."""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
from pathlib import Path
from typing import Any

from .. import models
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext

LEDGER = Path("data/ledger.db")


def record_execution(idempotency_key: str, payment_id: str) -> None:
    LEDGER.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(LEDGER)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS executions (key TEXT, payment_id TEXT)")
        db.execute("INSERT INTO executions VALUES (?, ?)", (idempotency_key, payment_id))
        db.commit()


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        data = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        payment_id = "pay_" + secrets.token_hex(13).upper()
        method = {k: v for k, v in data["paymentMethod"].items() if k != "token"}
        payment = {**data, "id": payment_id, "paymentMethod": method, "status": "succeeded",
                   "amountRefunded": 0, "createdAt": "2026-04-15T10:30:00Z"}
        record_execution(ctx.request.headers.get("idempotency-key", ""), payment_id)
        await ctx.repository("payments").create(payment_id, payment)
        return Reply(payment, headers={"Location": f"/v1/payments/{payment_id}"})

    async def list_payments(self, ctx: RequestContext, *, limit: int = 20,
                            starting_after: str | None = None, customer_id: str | None = None,
                            status: Any = None) -> Any:
        records = await ctx.repository("payments").list(limit=limit, after=starting_after)
        return {"data": [r.value for r in records], "nextCursor": None}

    async def get_payment(self, ctx: RequestContext, *, payment_id: str) -> Any:
        found = await ctx.repository("payments").get(payment_id)
        if found is None:
            raise ctx.not_found(f"No payment {payment_id}.")
        return found.value
''',
    "customers": '''
"""Demo customers: the versioned repository gives each one an ETag ("v<version>")."""

from __future__ import annotations

import secrets
from typing import Any

from .. import models
from ..interfaces import CustomersBase
from ..runtime.context import Reply, RequestContext

NOW = "2026-04-15T10:30:00Z"


class CustomersHandler(CustomersBase):
    async def create_customer(self, ctx: RequestContext, *, body: models.CustomerCreate) -> Any:
        customer_id = "cus_" + secrets.token_hex(13).upper()
        data = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        value = {"id": customer_id, "tags": [], **data, "createdAt": NOW, "updatedAt": NOW}
        version = await ctx.repository("customers").create(customer_id, value)
        return Reply({**value, "version": version}, version=version)

    async def get_customer(self, ctx: RequestContext, *, customer_id: str) -> Any:
        found = await ctx.repository("customers").get(customer_id)
        if found is None:
            raise ctx.not_found(f"No customer {customer_id}.")
        return Reply({**found.value, "version": found.version}, version=found.version)

    async def update_customer(self, ctx: RequestContext, *, customer_id: str,
                              body: models.CustomerUpdate) -> Any:
        repo = ctx.repository("customers")
        found = await repo.get(customer_id)
        version = ctx.precondition(None if found is None else found.version)  # 412 if stale
        assert found is not None
        value = {**found.value, **body.model_dump(mode="json", by_alias=True, exclude_unset=True)}
        new_version = await repo.update(customer_id, value, expected_version=version)
        return Reply({**value, "version": new_version}, version=new_version)
''',
    "reports": '''
"""Demo reports: the 202 job's work — here, a report that takes a second and a half."""

from __future__ import annotations

import asyncio
from typing import Any

from .. import models
from ..interfaces import ReportsBase
from ..runtime.context import JobContext


class ReportsHandler(ReportsBase):
    async def create_report(self, ctx: JobContext, *, body: models.ReportRequest) -> Any:
        await asyncio.sleep(1.5)
        name = f"{body.type.value}-{body.start_date}-{body.end_date}.csv"
        return models.ReportResult(report_url=f"https://reports.acme.example.com/{name}")
''',
}


# -- printing -------------------------------------------------------------------------------


def heading(text: str) -> None:
    print(f"\n== {text}")


def show(text: str, indent: int = 2) -> None:
    for line in text.rstrip("\n").splitlines():
        print(" " * indent + line)


def display(path: Path) -> str:
    """`path` relative to the working directory when it is inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


def short(text: str, width: int = 96) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def apiforge(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the `apiforge` command (this interpreter's) and echo it."""
    print(f"$ apiforge {' '.join(args)}")
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True
    )


def check(result: subprocess.CompletedProcess[str], *ok: int) -> None:
    if result.returncode not in (ok or (0,)):
        sys.exit(f"apiforge failed (exit {result.returncode}):\n{result.stdout}{result.stderr}")


# -- steps ----------------------------------------------------------------------------------


def find_specs() -> Path:
    for base in (Path.cwd(), Path(__file__).resolve().parent.parent):
        if (base / "specs" / "acme.yaml").is_file():
            return base / "specs"
    sys.exit("specs/acme.yaml not found: run the demo from the apiforge repository")


def lint_and_inspect(specs: Path) -> None:
    heading("1. What the specs declare")
    acme = display(specs / "acme.yaml")
    bare = display(specs / "bare.yaml")
    result = apiforge("inspect", acme, "--format", "json")
    check(result)
    report = json.loads(result.stdout)
    api, counts = report["api"], report["summary"]
    show(
        f"{api['title']} {api['version']}: {counts['operations']} operations, "
        f"{counts['webhooks']} webhooks"
    )
    show(
        f"idempotency keys {counts['idempotency']} · rate limits {counts['rate_limit']} · "
        f"ETag/If-Match {counts['concurrency']} · 202 jobs {counts['async_job']} · "
        f"problem details {counts['problems']} · signed webhooks {counts['signed_webhooks']}"
    )

    result = apiforge("lint", acme)
    check(result)
    show(result.stdout)

    result = apiforge("lint", bare)
    check(result, 1)
    lines = result.stdout.strip().splitlines()
    findings = [line.removeprefix(bare + ":") for line in lines if line.startswith(bare)]
    shown: dict[str, str] = {}  # a few different rules, errors first
    for severity in ("error", "warning"):
        for line in findings:
            rule = line.split()[2]
            if f" {severity} " in line and rule not in shown and len(shown) < 4:
                shown[rule] = line
    for line in sorted(shown.values(), key=lambda f: int(f.split(":")[0])):
        show(short(line))
    show(f"… {len(findings) - len(shown)} more; {lines[-1]} (exit {result.returncode})")


def write_handlers(server_dir: Path) -> list[str]:
    """The demo's handler modules and verifier, written only where none exists yet
    (create-once)."""
    written = []
    folder = server_dir / SERVER_PACKAGE / "handlers"
    sources = {folder / f"{module}.py": source for module, source in HANDLERS.items()}
    sources[server_dir / SERVER_PACKAGE / "verifier.py"] = VERIFIER
    for path, source in sources.items():
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(source.lstrip())
            written.append(path.name)
    return written


def generate(specs: Path, out: Path) -> None:
    heading("2. Generate the server and the client")
    written = write_handlers(out / "server")
    if written:
        where = display(out / "server" / SERVER_PACKAGE)
        show(f"(demo handlers and verifier written to {where}/: {', '.join(written)})", 0)
    # the server goes to OUT/server (package acme_server), the client to OUT/client (acme_client)
    result = apiforge(
        "generate",
        display(specs / "acme.yaml"),
        "-o",
        display(out),
        "--package-prefix",
        PACKAGE_PREFIX,
    )
    check(result)
    show(result.stdout)


def needs_generation(specs: Path, out: Path) -> bool:
    spec_time = (specs / "acme.yaml").stat().st_mtime
    for marker in (
        out / "server" / SERVER_PACKAGE / "main.py",
        out / "client" / CLIENT_PACKAGE / "_client.py",
    ):
        if not marker.exists() or marker.stat().st_mtime < spec_time:
            return True
    return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        f"{SERVER_PACKAGE}.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]


def server_env(server_dir: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(server_dir), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **SERVER_ENV, "PYTHONPATH": path}


@contextlib.contextmanager
def running_server(out: Path) -> Iterator[str]:
    import httpx

    heading("3. Serve it")
    server_dir = out / "server"
    data = server_dir / "data"
    for stale in ("app.db", "app.db-wal", "app.db-shm", "ledger.db"):
        (data / stale).unlink(missing_ok=True)  # a fresh store for every demo run
    port = free_port()
    log_path = out / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            server_command(port),
            cwd=server_dir,
            env=server_env(server_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                sys.exit(f"the server exited ({proc.returncode}); see {log_path}")
            try:
                httpx.get(url + "/", timeout=1)  # any answer (here a 404 problem) will do
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    sys.exit(f"the server did not answer within 30 s; see {log_path}")
                time.sleep(0.1)
        show(f"uvicorn {SERVER_PACKAGE}.main:app listening on {url}")
        show(f"store: embedded SQLite at {display(data / 'app.db')} (log: {display(log_path)})")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        heading("5. Server stopped")


# -- the client session ---------------------------------------------------------------------


def demo_transport() -> Any:
    """An httpx transport over the real network that logs every exchange and, when asked,
    loses the next response: the request reaches the server and is answered, but the answer
    never arrives (what a dropped connection or a proxy timeout does)."""
    import httpx

    class DemoTransport(httpx.HTTPTransport):
        def __init__(self) -> None:
            super().__init__()
            self.lose_next_response = False
            self.log: list[tuple[httpx.Request, httpx.Response, bool]] = []  # ..., lost

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = super().handle_request(request)
            response.read()
            lost, self.lose_next_response = self.lose_next_response, False
            self.log.append((request, response, lost))
            if lost:
                raise httpx.ReadError("connection lost before the response arrived")
            return response

    return DemoTransport()


class Session:
    """The scripted session: one generated client per caller, one logging transport."""

    def __init__(self, url: str, out: Path) -> None:
        sys.path.insert(0, str(out / "client"))
        self.acme = importlib.import_module(CLIENT_PACKAGE)
        self.url = url
        self.ledger = out / "server" / "data" / "ledger.db"
        self.transport = demo_transport()
        self.waits: list[float] = []
        self.mark = 0

    def client(self, token: str = "demo-token") -> Any:
        def sleep(seconds: float) -> None:  # the client's injected sleep: noted, then slept
            self.waits.append(seconds)
            time.sleep(seconds)

        # no jitter, so the backoff reads the same on every run
        return self.acme.Client(
            base_url=self.url,
            bearer_auth=token,
            transport=self.transport,
            sleep=sleep,
            jitter=lambda: 0.0,
        )

    def start(self, title: str) -> None:
        print(f"\n  {title}")
        self.mark = len(self.transport.log)
        self.waits.clear()

    def exchanges(self) -> list[tuple[Any, Any, bool]]:
        return list(self.transport.log[self.mark :])

    def executions(self, key: str) -> int:
        with contextlib.closing(sqlite3.connect(self.ledger)) as db:
            query = "SELECT COUNT(*) FROM executions WHERE key = ?"
            return int(db.execute(query, (key,)).fetchone()[0])

    def authentication(self) -> None:
        import httpx

        self.start("Authentication: the spec's bearerAuth, checked by the demo verifier")
        payments = self.url + "/v1/payments"
        for label, headers in (
            ("no token", {}),
            ("a made-up token", {"Authorization": "Bearer made-up"}),
        ):
            r = httpx.get(payments, headers=headers, timeout=10)
            challenge = r.headers.get("www-authenticate", "")
            show(
                f"GET /v1/payments with {label} → {r.status_code}, WWW-Authenticate: {challenge}", 4
            )
        page = self.client().payments.with_raw_response.list()
        show(
            f"GET /v1/payments with demo-token → {page.status_code} "
            "(the verifier knows its SHA-256; principal acct_demo)",
            4,
        )

    def idempotent_retry(self) -> None:
        self.start("Idempotent retry: the first response is lost in transit")
        api = self.client()
        self.transport.lose_next_response = True
        raw = api.payments.with_raw_response.create(
            body={
                "amount": 5000,
                "currency": "usd",
                "customerId": "cus_01HTZ3A7B8C9D0E1F2G3H4J5K6",
                "paymentMethod": {"type": "card", "token": "tok_visa_4242"},
            }
        )
        for request, response, lost in self.exchanges():
            key = request.headers["idempotency-key"]
            sent = f"POST /v1/payments  Idempotency-Key: {key[:8]}…"
            if lost:
                show(f"{sent} → {response.status_code} sent by the server, lost on the way", 4)
                show(f"the client retries after {self.waits[0]:g} s, with the same key", 4)
            else:
                replayed = response.headers.get("idempotent-replayed", "false")
                show(f"{sent} → {response.status_code}, Idempotent-Replayed: {replayed}", 4)
        payment = raw.parsed
        show(
            f"payment {payment.id}: ${payment.amount / 100:.2f} {payment.status.value}; "
            f"server ledger: {self.executions(raw.idempotency_key)} execution for this key",
            4,
        )

    def rate_limit(self) -> None:
        self.start(f"Rate limit: a token allowed 2 requests per second ({LIMITED_TOKEN})")
        api = self.client(LIMITED_TOKEN)
        for _ in range(6):  # until a call ran into the limit
            if api.payments.with_raw_response.list().retries_taken:
                break
        waits = iter(self.waits)
        for request, response, _ in self.exchanges():
            line = f"{request.method} {request.url.path} → {response.status_code}"
            if response.status_code == 429:
                line += f", Retry-After: {response.headers['retry-after']}"
                line += f"  (the client sleeps {next(waits):g} s, then retries)"
            else:
                line += f"  (X-RateLimit-Remaining: {response.headers['x-ratelimit-remaining']})"
            show(line, 4)

    def concurrency(self) -> None:
        self.start("Optimistic concurrency: Alice writes from a stale copy")
        api = self.client()
        created = api.customers.with_raw_response.create(
            body={"email": "alice@example.com", "name": "Alice Martin"}
        )
        cid, stale = created.parsed.id, created.etag
        show(f"Alice creates customer {cid} and keeps the copy: ETag {stale}", 4)
        bob = api.customers.with_raw_response.update(
            customer_id=cid, body={"phone": "+33142685300"}, if_match=stale
        )
        show(f"Bob sets the phone with If-Match {stale} → {bob.status_code}, ETag {bob.etag}", 4)
        copies = [(created.parsed, stale)]

        def read() -> tuple[Any, str | None]:  # Alice's copy first, then fresh reads
            if copies:
                return copies.pop()
            fresh = api.customers.with_raw_response.get(customer_id=cid)
            return fresh.parsed, fresh.etag

        self.mark = len(self.transport.log)
        result = self.acme.read_modify_write(
            read,
            lambda customer: {"tags": [*customer.tags, "vip"]},
            lambda change, etag: api.customers.with_raw_response.update(
                customer_id=cid, body=change, if_match=etag
            ),
        )
        show("Alice: read_modify_write(read, add the tag 'vip', write)", 4)
        for request, response, _ in self.exchanges():
            condition = request.headers.get("if-match")
            sent = request.method + " /v1/customers/{id}"
            sent += f" If-Match {condition}" if condition else ""
            if response.status_code == 412:
                answer = "412 Precondition Failed → read again"
            else:
                answer = f"{response.status_code}, ETag {response.headers['etag']}"
            show(f"{sent} → {answer}", 6)
        customer = result.parsed
        show(f"result: phone {customer.phone}, tags {customer.tags} (both writes kept)", 4)

    def job(self) -> None:
        self.start("Async job: 202 Accepted, then wait() polls the job")
        api = self.client()
        job = api.reports.create(
            body={"type": "sales", "startDate": "2026-01-01", "endDate": "2026-03-31"}
        )
        show(
            f"POST /v1/reports → 202: job {job.id} {job.status}, Retry-After: {job.retry_after:g}",
            4,
        )
        report = job.wait(timeout=30)
        states = [response.json()["status"] for _, response, _ in self.exchanges()]
        waited = sorted(set(self.waits))
        polls = len(states) - 1
        if len(waited) == 1:
            pace = f"{waited[0]:g} s apart, as Retry-After asks"
        else:
            pace = "waiting " + ", ".join(f"{w:g} s" for w in self.waits)
        show(f"wait(): {' → '.join(states)} ({polls} poll{'s' * (polls != 1)}, {pace})", 4)
        show(f"result: {report.report_url}", 4)


def client_session(url: str, out: Path) -> None:
    heading(f"4. A client session with the generated client ({CLIENT_PACKAGE})")
    session = Session(url, out)
    session.authentication()
    session.idempotent_retry()
    session.rate_limit()
    session.concurrency()
    session.job()
    session.transport.close()


def run_demo(out: Path) -> None:
    try:
        import httpx  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        sys.exit("the demo needs the dev extras: pip install -e '.[dev]' (make demo does)")
    specs = find_specs()
    print("apiforge demo: production patterns, from the spec to a running server and client")
    lint_and_inspect(specs)
    generate(specs, out)
    with running_server(out) as url:
        client_session(url, out)
    print(
        f"\nEverything generated is in {display(out)}/ (make serve keeps the demo server running)."
    )


def serve(out: Path, port: int) -> None:
    specs = find_specs()
    if needs_generation(specs, out):
        generate(specs, out)
    else:
        write_handlers(out / "server")
    server_dir = out / "server"
    url = f"http://127.0.0.1:{port}"
    print(f"\nserving {SERVER_PACKAGE} on {url} (SQLite store in {display(server_dir / 'data')})")
    print(f"try: curl -i {url}/v1/payments -H 'Authorization: Bearer demo-token'")
    print(
        f"     the client: {display(out / 'client')} (package {CLIENT_PACKAGE}); Ctrl-C stops the server",
        flush=True,
    )
    os.chdir(server_dir)
    os.execve(sys.executable, server_command(port), server_env(server_dir.resolve()))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m generator.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", nargs="?", choices=["demo", "serve"], default="demo")
    parser.add_argument("--dir", default=".demo", help="where to generate (default: .demo)")
    parser.add_argument("--port", type=int, default=8000, help="port for `serve` (default 8000)")
    args = parser.parse_args(argv)
    out = Path(args.dir).resolve()
    if args.command == "serve":
        serve(out, args.port)
    else:
        run_demo(out)


if __name__ == "__main__":
    main()
