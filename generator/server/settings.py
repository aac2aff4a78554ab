"""The server plan's settings: what the generated `settings.py` adds to the runtime's
`Settings`, and the rows of every setting the README lists."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
import threading
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.ir import Api
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

    from generator.render.fingerprint import code_digest
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


#: A URI as RFC 3986 spells it (no spaces, quotes or braces: a server URL that is not one is
#: not used for problem types).
_URI = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def problem_base(api: Api) -> str:
    """Where the server's problem `type` URIs start by default: the spec's
    `x-apiforge-problem-base`; else the base of the problem types it names (a `const`,
    `default`, `enum` or `example` of the `type` property of a problem+json schema); else
    `<its first server URL>/problems/` (variables at their defaults); else `/problems/`."""
    own = api.extensions.get("x-apiforge-problem-base")
    if isinstance(own, str) and own.strip():
        return own.strip()
    for op in api.operations:
        for response in op.responses:
            for media in response.content:
                if media.schema is None or not media.content_type.lower().startswith(
                    "application/problem+json"
                ):
                    continue
                named = _named_type(media.schema.data)
                if named:
                    return named
    for server in api.servers[:1]:
        url = server.url
        for variable in server.variables:
            url = url.replace("{" + variable.name + "}", variable.default)
        url = url.split("#", 1)[0].split("?", 1)[0]
        if url and _URI.fullmatch(url):
            return url.rstrip("/") + "/problems/"
    return "/problems/"


def _named_type(schema: Any) -> str:
    """The base (up to its last `/`) of an absolute problem type URI the schema names."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    prop = properties.get("type") if isinstance(properties, dict) else None
    if not isinstance(prop, dict):
        return ""
    named = [prop.get(k) for k in ("const", "default", "example")]
    named += [v for k in ("enum", "examples") if isinstance(prop.get(k), list) for v in prop[k]]
    for value in named:
        if isinstance(value, str) and "://" in value and "/" in value.split("://", 1)[1]:
            return value.rsplit("/", 1)[0] + "/"
    return ""


def settings_rows(problem_base: str = "/problems/") -> list[tuple[str, str, str]]:
    """Every setting's (variable, default, description), the defaults this server has."""
    rows = [
        (var, problem_base if var == "APIFORGE_PROBLEM_BASE" else default, doc)
        for var, default, doc in runtime_settings()
    ]
    seen = {r[0] for r in rows}
    for name, _type, default, doc in EXTRA_SETTINGS:
        var = "APIFORGE_" + name.upper()
        if var in seen:
            continue
        shown = {'""': "", "()": ""}.get(default, default)
        rows.append((var, shown, doc))
    return rows
