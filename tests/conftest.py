from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import postgres_server, redis_server

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

# `apiforge generate` piped says its stages past 2 s, which a loaded machine reaches: tests that
# read stderr line by line get only what they test (the progress tests turn it back on)
os.environ["APIFORGE_NO_PROGRESS"] = "1"
# every warning on every run, whatever an earlier run (or test) said for the same spec (the
# repeats tests turn it off)
os.environ["APIFORGE_REPEAT_WARNINGS"] = "1"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server for the whole session (flush what you need in your own test)."""
    with redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL cluster for the whole session, on a free port (its `postgres`
    database; tests make their own with `tests.support.fresh_database`)."""
    with postgres_server() as url:
        yield url


@pytest.fixture(autouse=True)
def apiforge_logger_restored() -> Iterator[None]:
    """The "apiforge" logger as it was before each test: a generated server started in-process
    configures it with a handler on that test's stderr, which pytest closes afterwards (a later
    warning would then fail in that handler)."""
    import logging

    log = logging.getLogger("apiforge")
    handlers, level, propagate = list(log.handlers), log.level, log.propagate
    yield
    log.handlers[:] = handlers
    log.setLevel(level)
    log.propagate = propagate
