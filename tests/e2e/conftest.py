"""The generated acme server and client, end to end: generated once per session (by
`apiforge generate`, as a user would), the handlers of `handlers.py` written
into the server's handler modules, the server under uvicorn on 127.0.0.1 with a small SQLite
store, and a fault proxy in front of it."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.e2e import handlers
from tests.e2e.faultproxy import FaultProxy
from tests.e2e.harness import Ledger, Receiver, Waits, Wire, summary_lines
from tests.server import acme_handlers
from tests.support import uvicorn_server

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "specs" / "acme.yaml"
PACKAGE_PREFIX = "acme_e2e"
SERVER_PACKAGE = f"{PACKAGE_PREFIX}_server"
CLIENT_PACKAGE = f"{PACKAGE_PREFIX}_client"
WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
THROTTLED_TOKEN = "e2e-throttled"  # rate-limit tier "tiny": 2 requests per second


@dataclass(frozen=True)
class Products:
    server: Path  # the server project (pyproject.toml, <package>/)
    client: Path  # the client project
    acme: ModuleType  # the generated client package, imported


@pytest.fixture(scope="session")
def products(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Products]:
    out = tmp_path_factory.mktemp("e2e")
    command = ["generate", str(ACME), "-o", str(out), "--package-prefix", PACKAGE_PREFIX]
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"apiforge generate failed:\n{done.stdout}{done.stderr}"
    for module, source in handlers.ALL.items():
        (out / "server" / SERVER_PACKAGE / "handlers" / f"{module}.py").write_text(source.lstrip())
    (out / "server" / SERVER_PACKAGE / "verifier.py").write_text(acme_handlers.VERIFIER.lstrip())
    sys.path.insert(0, str(out / "client"))
    try:
        acme = importlib.import_module(CLIENT_PACKAGE)
        yield Products(out / "server", out / "client", acme)
    finally:
        sys.path.remove(str(out / "client"))


@pytest.fixture(scope="session")
def acme(products: Products) -> ModuleType:
    return products.acme


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    try:
        yield found
    finally:
        found.close()


@dataclass(frozen=True)
class Server:
    url: str
    ledger: Ledger


@pytest.fixture(scope="session")
def server(
    products: Products, receiver: Receiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    state = tmp_path_factory.mktemp("e2e_state")
    env = {
        "APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}",
        "APIFORGE_RATE_LIMIT_DEFAULT": "100000/minute",
        "APIFORGE_RATE_LIMIT_TIERS": "tiny=2/second",
        "TEST_TOKEN_TIERS": json.dumps({THROTTLED_TOKEN: "tiny"}),
        "APIFORGE_WEBHOOK_SECRETS": WEBHOOK_SECRET,
        "APIFORGE_WEBHOOK_ALLOW_HTTP": "1",  # the receiver: http://127.0.0.1
        "APIFORGE_WEBHOOK_ALLOW_DESTINATIONS": "127.0.0.1",
        "APIFORGE_WEBHOOK_ENDPOINTS": receiver.url,
        "APIFORGE_JOBS_RETRY_AFTER_SECONDS": "1",
        "E2E_LEDGER": str(state / "ledger.db"),
        "E2E_JOB_SECONDS": "0.3",
    }
    with uvicorn_server(
        f"{SERVER_PACKAGE}.main:app", cwd=state, env=env, pythonpath=[products.server]
    ) as (url, _proc):
        yield Server(url, Ledger(state / "ledger.db"))


@pytest.fixture(scope="session")
def proxy(server: Server) -> Iterator[FaultProxy]:
    """A fault proxy in front of the server; each test sets its plan with `proxy.reset(plan)`."""
    with FaultProxy(server.url) as found:
        yield found


MakeClient = Callable[..., Any]


@pytest.fixture
def make_client(acme: ModuleType, server: Server) -> Iterator[MakeClient]:
    """`make_client(wire, waits, base_url=server, **kw)`: a generated `Client` whose attempts
    go through `wire` and whose waits go through `waits` (no jitter unless given)."""
    made: list[Any] = []

    def make(wire: Wire, waits: Waits, **kw: Any) -> Any:
        kw.setdefault("base_url", server.url)
        kw.setdefault("bearer_auth", "e2e-token")
        kw.setdefault("jitter", lambda: 0.0)
        client = acme.Client(transport=wire, sleep=waits.sleep, clock=waits.clock, **kw)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary_lines()
    if lines:
        terminalreporter.section("fault-injection runs (generated client -> proxy -> server)")
        for line in lines:
            terminalreporter.write_line(line)
