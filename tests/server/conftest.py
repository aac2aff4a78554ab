"""Generated servers for the tests: generated once per session, handlers written by the test.

`generate(spec, out, package)` runs the generator in-process (what `apiforge server` does);
`acme_project` is the acme server with the handlers of `acme_handlers.py` written into its
handler modules; `serve(project, package, env=..., workers=...)` runs it under uvicorn on
127.0.0.1 (see tests/support.py) with a fresh SQLite store.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from generator.render.writer import WriteReport
from generator.server.plan import MissingHandler, write_server
from generator.server.plan_types import ServerPlan
from generator.spec import load_spec
from tests.server import acme_handlers
from tests.support import uvicorn_server

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
ACME_PACKAGE = "acme_srv"
TINY_KEY = "tiny-tier-key"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#: One caller for the tests that are not about who calls (the test verifier accepts any
#: token; a request's own `Authorization` header replaces this one).
authed = httpx.Client(headers={"Authorization": "Bearer acme-tests"}, timeout=30)


def generate(
    spec: Path, out: Path, package: str | None
) -> tuple[ServerPlan, WriteReport, list[MissingHandler]]:
    loaded = load_spec(str(spec))
    return write_server(
        loaded.api, out, spec_source=loaded.source, spec_name=spec.name, package=package
    )


def write_handler(project: Path, package: str, module: str, source: str) -> None:
    (project / package / "handlers" / f"{module}.py").write_text(source.lstrip())


@pytest.fixture(scope="session")
def acme_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("acme") / "project"
    generate(SPECS / "acme.yaml", project, ACME_PACKAGE)
    write_handler(project, ACME_PACKAGE, "customers", acme_handlers.CUSTOMERS)
    write_handler(project, ACME_PACKAGE, "payments", acme_handlers.PAYMENTS)
    write_handler(project, ACME_PACKAGE, "reports", acme_handlers.REPORTS)
    write_handler(project, ACME_PACKAGE, "_ledger", acme_handlers.LEDGER)
    (project / ACME_PACKAGE / "verifier.py").write_text(acme_handlers.VERIFIER.lstrip())
    return project


def base_env(state: Path) -> dict[str, str]:
    return {
        "APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}",
        "APIFORGE_RATE_LIMIT_DEFAULT": "10000/minute",
        "APIFORGE_RATE_LIMIT_TIERS": "tiny=3/minute",
        "TEST_TOKEN_TIERS": json.dumps({TINY_KEY: "tiny"}),
        "APIFORGE_MAX_BODY_BYTES": "4096",
        "APIFORGE_WEBHOOK_SECRETS": WEBHOOK_SECRET,
        # the tests' receivers listen on http://127.0.0.1: allowed here, refused by default
        "APIFORGE_WEBHOOK_ALLOW_HTTP": "1",
        "APIFORGE_WEBHOOK_ALLOW_DESTINATIONS": "127.0.0.1",
    }


@contextlib.contextmanager
def serve(
    project: Path,
    package: str,
    state: Path,
    *,
    env: Mapping[str, str] | None = None,
    workers: int = 1,
) -> Iterator[str]:
    state.mkdir(parents=True, exist_ok=True)
    full_env = {**base_env(state), **(env or {})}
    with uvicorn_server(
        f"{package}.main:app", cwd=state, env=full_env, workers=workers, pythonpath=[project]
    ) as (base, _proc):
        yield base


class Receiver:
    """A webhook consumer on 127.0.0.1 that records deliveries and checks their signature."""

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

    def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float = 10) -> Any:
        """The first delivered event that `match`es, after checking its Standard Webhooks
        signature independently of the runtime."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for headers, body in list(self.received):
                event = json.loads(body)
                if match(event):
                    assert headers["webhook-id"] == event["id"]
                    signed = f"{event['id']}.{headers['webhook-timestamp']}.".encode() + body
                    key = base64.b64decode(WEBHOOK_SECRET.removeprefix("whsec_"))
                    digest = hmac.new(key, signed, hashlib.sha256).digest()
                    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()
                    return event
            time.sleep(0.05)
        raise AssertionError(f"no matching webhook delivered; got {len(self.received)}")

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    try:
        yield found
    finally:
        found.close()


@pytest.fixture(scope="module")
def acme_url(
    acme_project: Path, tmp_path_factory: pytest.TempPathFactory, receiver: Receiver
) -> Iterator[str]:
    """The acme server: one uvicorn worker, SQLite store, rate limits in memory, webhook
    events delivered to `receiver`."""
    env = {"APIFORGE_WEBHOOK_ENDPOINTS": receiver.url}
    state = tmp_path_factory.mktemp("acme_state")
    with serve(acme_project, ACME_PACKAGE, state, env=env) as base:
        yield base


def poll(
    fetch: Callable[[], httpx.Response], done: Callable[[httpx.Response], bool], timeout: float = 10
) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        response = fetch()
        if done(response) or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def problem(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    """Check `response` is the `kind` problem with `status`; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    # under the problem base of the server's own spec (`test_problem_base.py` checks which)
    assert body["type"].endswith(f"/problems/{kind}"), body["type"]
    assert body["status"] == status
    assert {"type", "title", "status", "detail", "instance"} <= set(body)
    assert body["instance"] == httpx.URL(str(response.request.url)).path
    return body


def env_without(names: tuple[str, ...]) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}
