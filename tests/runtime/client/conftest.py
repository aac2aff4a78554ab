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
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from .fakes import FakeClock, ScriptServer, serving  # noqa: E402


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def server() -> Iterator[ScriptServer]:
    with serving(ScriptServer()) as script:
        yield script
