"""The server plan's settings: what the generated `settings.py` adds to the runtime's
`Settings`, and the rows of every setting the README lists."""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading

from generator.errors import ApiforgeError, Problem
from generator.render.env import templates_root

#: Settings this server adds to the runtime's (name, type, default literal, description).
EXTRA_SETTINGS: tuple[tuple[str, str, str, str], ...] = (
    (
        "redis_url",
        "str",
        '""',
        "One switch to Redis for several processes or hosts: when set, rate limits, "
        "idempotency records, jobs and the webhook outbox use this `redis://host:port/db` "
        "(unless their own setting names another store). Resources stay in `STORE_URL`.",
    ),
    (
        "idempotency_store_url",
        "str",
        '""',
        "Idempotency records: `memory://`, `sqlite:///FILE`, `redis://…` or "
        "`postgresql://…`; "
        "empty: `REDIS_URL`, else `STORE_URL`.",
    ),
    (
        "idempotency_lock_timeout_seconds",
        "int",
        "60",
        "How long a claimed key stays locked after its worker died (live handlers keep "
        "their claim with a heartbeat).",
    ),
    (
        "jobs_store_url",
        "str",
        '""',
        "202 jobs: `sqlite:///FILE` (in-process worker, the default), `postgresql://…` "
        "(in-process workers on several hosts) or `redis://…` (arq workers); empty: "
        "`REDIS_URL`, else `STORE_URL`.",
    ),
    ("jobs_retry_after_seconds", "int", "5", "`Retry-After` on 202 answers and job polls."),
    (
        "jobs_lease_seconds",
        "float",
        "30.0",
        "How long a running job stays claimed by the in-process worker without a renewal (it "
        "renews every third of it); after a crash, the job is retried once this has passed.",
    ),
    (
        "jobs_max_attempts",
        "int",
        "3",
        "Runs a job gets (interrupted runs included) before it fails as `job-abandoned`.",
    ),
    ("jobs_concurrency", "int", "4", "Jobs the in-process worker runs at once, per process."),
    (
        "webhooks_store_url",
        "str",
        '""',
        "The webhook outbox; empty: `REDIS_URL`, else `STORE_URL` (with jobs in the same "
        "SQLite file, a job's end and its callback event are one transaction).",
    ),
    (
        "webhook_endpoints",
        "tuple[str, ...]",
        "()",
        "URLs every event is delivered to unless the handler names others, comma-separated.",
    ),
)


_settings_lock = threading.Lock()


def _new_settings_lock() -> None:
    global _settings_lock
    _settings_lock = threading.Lock()


# a forked child (generator/forked.py) must not inherit it held by a thread it does not have
os.register_at_fork(after_in_child=_new_settings_lock)


@functools.cache
def runtime_settings() -> tuple[tuple[str, str, str], ...]:
    """(variable, default, description) of the runtime's Settings, read from its module once
    per process (under a lock: plans may run in threads, and the import is process-wide).
    Executing the module takes a while, so the answer is also cached by the module's bytes,
    apiforge's code and Python's version (it reads nothing else)."""
    import hashlib

    from generator.render.env import code_digest
    from generator.spec.load import cache_get, cache_put

    with _settings_lock:
        path = templates_root() / "server" / "runtime" / "settings.py"
        try:
            material = f"{code_digest()}\0{sys.version}\0".encode() + path.read_bytes()
        except OSError:
            material = b""
        key = hashlib.sha256(material).hexdigest() if material else None
        hit = cache_get("settings1", key) if key else None
        if isinstance(hit, tuple):
            return hit
        spec = importlib.util.spec_from_file_location("_apiforge_runtime_settings", path)
        if spec is None or spec.loader is None:
            raise ApiforgeError(Problem(f"cannot read the server runtime's settings ({path})"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look the module up while it executes
        try:
            spec.loader.exec_module(module)
            rows: list[tuple[str, str, str]] = module.Settings.documented()
        finally:
            sys.modules.pop(spec.name, None)
        result = tuple((str(a), str(b), str(c)) for a, b, c in rows)
        if key:
            cache_put("settings1", key, result)
        return result


def settings_rows() -> list[tuple[str, str, str]]:
    rows = list(runtime_settings())
    seen = {r[0] for r in rows}
    for name, _type, default, doc in EXTRA_SETTINGS:
        var = "APIFORGE_" + name.upper()
        if var in seen:
            continue
        shown = {'""': "", "()": ""}.get(default, default)
        rows.append((var, shown, doc))
    return rows
