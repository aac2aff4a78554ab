"""Shared fixtures for the client runtime tests.

The runtime is imported from the repository as `templates.client.runtime` (a package with
relative imports only; `test_packaging.py` checks it also works copied as `<pkg>._runtime`).

- `clock`: a fake wall clock whose `sleep` records each wait and advances time, so waits are
  asserted exactly without sleeping.
- `server`: a real HTTP server on 127.0.0.1 in a thread, answering from a script per
  (method, path) and recording every request it received (headers and raw body).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from .fakes import FakeClock, ScriptServer, handler_for  # noqa: E402


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server() -> Iterator[ScriptServer]:
    script = ScriptServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(script))
    httpd.daemon_threads = True
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield script
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
