"""Chaos runs of the generated acme server and client (see docs/reliability.md).

Sizes are module constants sized for `make test`, overridden from the environment for
`make chaos` (`CHAOS_PAYMENTS=1000 ...`). The generated products come from the e2e suite's
`products` fixture (generated once per session by `apiforge generate`, with the e2e handlers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.chaos.harness import Served, serve_acme, summary_lines
from tests.e2e.conftest import (  # noqa: F401 (acme, products: the e2e fixtures)
    SERVER_PACKAGE,
    Products,
    acme,
    products,
)


def _size(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


PAYMENTS = _size("CHAOS_PAYMENTS", 100)  # logical payments per backend
THREADS = _size("CHAOS_THREADS", 6)  # concurrent client threads
STORM_CLIENTS = _size("CHAOS_STORM_CLIENTS", 4)  # K read-modify-write clients
STORM_INCREMENTS = _size("CHAOS_STORM_INCREMENTS", 8)  # increments per client
RATE_WINDOWS = _size("CHAOS_RATE_WINDOWS", 4)  # windows measured per strategy
SEED = _size("CHAOS_SEED", 20260415)

NO_LIMIT = "1000000/minute"  # the chaos runs measure effects, not the limiter
# what test_ratelimit measures, for its own credential only (low enough that a few client
# threads on a loaded 2-core machine saturate it: ~70 requests/s get through the stack there)
RATE_LIMIT = os.environ.get("CHAOS_RATE_LIMIT", "20/second")
RATE_TOKEN = "chaos-rate-limited"  # that credential: tier "measured"
LIMIT_ENV = {
    "APIFORGE_RATE_LIMIT_DEFAULT": NO_LIMIT,
    "APIFORGE_RATE_LIMIT_TIERS": f"measured={RATE_LIMIT}",
    "TEST_TOKEN_TIERS": json.dumps({RATE_TOKEN: "measured"}),
}


@pytest.fixture(scope="session", params=["sqlite", "redis"])
def acme_server(
    request: pytest.FixtureRequest,
    products: Products,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """The generated acme server, two uvicorn workers, on the SQLite store alone or with
    idempotency records, rate limits, jobs and the outbox on Redis."""
    backend = request.param
    env = dict(LIMIT_ENV)  # the limiter's default strategy: sliding window counter
    if backend == "redis":
        redis_url: str = request.getfixturevalue("redis_url")
        env["APIFORGE_REDIS_URL"] = redis_url
    state = tmp_path_factory.mktemp(f"chaos_{backend}")
    with serve_acme(products.server, SERVER_PACKAGE, state, backend=backend, env=env) as served:
        yield served


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary_lines()
    if lines:
        terminalreporter.section("chaos runs (generated client -> fault proxy -> 2 workers)")
        for line in lines:
            terminalreporter.write_line(line)
