"""What the chaos runs put around the generated acme server and client.

- `serve_acme(...)`: the generated server (the e2e handlers) under uvicorn with two workers on
  127.0.0.1, wrapped in `RECORDER`: an ASGI wrapper that appends one JSON line per response
  (time, method, path, status, `Idempotent-Replayed`, idempotency key, `X-RateLimit-Remaining`)
  to a per-process file — the server's own log of what it answered, read by `ServerLog`.
- `ChaosPlan`: a `FaultPlan` that names each fault it hands out (a short and a long delay
  are both "delay" to the proxy) and can doom chosen idempotency keys (every attempt of their
  first logical call loses its response, so the caller gets a typed error and must recover).
- `fast_sleep`: the clients' sleep — real, but scaled down (backoff and Retry-After are not
  what these runs measure; the server-side effects are).
- `FIGURES`: what each run measured, printed at the end of the session by conftest.py and
  written as JSON to `$CHAOS_REPORT` when set.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.faultproxy import PASS, Fault, FaultPlan, HttpRequest
from tests.support import uvicorn_server

SLEEP_SCALE = 0.05  # a 0.5 s backoff sleeps 25 ms, a Retry-After of 1 s 50 ms


def fast_sleep(seconds: float) -> None:
    time.sleep(seconds * SLEEP_SCALE)


RECORDER = '''
"""The generated app, with every response appended to $CHAOS_LOG_DIR/<pid>.jsonl."""

import json
import os
import time

from {package}.main import app as inner

_files = {{}}


def _log():
    pid = os.getpid()
    if pid not in _files:
        path = os.path.join(os.environ["CHAOS_LOG_DIR"], f"{{pid}}.jsonl")
        _files[pid] = open(path, "a", buffering=1, encoding="utf-8")
    return _files[pid]


async def app(scope, receive, send):
    if scope["type"] != "http":
        return await inner(scope, receive, send)
    request = {{k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}}

    async def recording_send(message):
        if message["type"] == "http.response.start":
            headers = {{
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in message.get("headers", [])
            }}
            entry = {{
                "t": time.time(),
                "m": scope["method"],
                "p": scope["path"],
                "s": message["status"],
                "r": headers.get("idempotent-replayed", "").lower() == "true",
                "k": request.get("idempotency-key"),
                "rem": headers.get("x-ratelimit-remaining"),
            }}
            _log().write(json.dumps(entry) + "\\n")
        await send(message)

    await inner(scope, receive, recording_send)
'''


@dataclass(frozen=True)
class Answer:
    """One response as the server logged it."""

    t: float
    method: str
    path: str
    status: int
    replayed: bool
    key: str | None
    remaining: str | None


def by_status(answers: list[Answer]) -> dict[str, int]:
    """Answers counted by status, replays apart: {"201": 100, "201 replayed": 40, ...}."""
    counts = Counter(f"{a.status}{' replayed' if a.replayed else ''}" for a in answers)
    return dict(sorted(counts.items()))


class ServerLog:
    """Every response the server's workers sent, from their JSON-lines files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def answers(self, keep: Callable[[Answer], bool] = lambda a: True) -> list[Answer]:
        found: list[Answer] = []
        for path in sorted(self.directory.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                e = json.loads(line)
                answer = Answer(e["t"], e["m"], e["p"], e["s"], e["r"], e["k"], e["rem"])
                if keep(answer):
                    found.append(answer)
        return sorted(found, key=lambda a: a.t)

    def pids(self) -> int:
        """How many worker processes answered (each writes its own file)."""
        return sum(1 for p in self.directory.glob("*.jsonl") if p.stat().st_size)


@dataclass(frozen=True)
class Served:
    url: str
    log: ServerLog
    ledger: Path  # the executions ledger of tests/e2e/handlers.py
    backend: str  # "sqlite" or "redis"


@contextmanager
def serve_acme(
    server_project: Path,
    package: str,
    state: Path,
    *,
    backend: str,
    env: Mapping[str, str],
    workers: int = 2,
) -> Iterator[Served]:
    """The generated server (`package` in `server_project`) with `workers` uvicorn workers;
    its store, ledger and response log under `state`."""
    logs = state / "log"
    logs.mkdir(parents=True, exist_ok=True)
    (state / "chaos_app.py").write_text(RECORDER.format(package=package), encoding="utf-8")
    full_env = {
        "APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}",
        "E2E_LEDGER": str(state / "ledger.db"),
        "CHAOS_LOG_DIR": str(logs),
        **env,
    }
    with uvicorn_server(
        "chaos_app:app",
        cwd=state,
        env=full_env,
        workers=workers,
        pythonpath=[server_project],
    ) as (url, _proc):
        yield Served(url, ServerLog(logs), state / "ledger.db", backend)


class ChaosPlan(FaultPlan):
    """`FaultPlan` with named faults (`weights`: name -> (fault, weight)), counted by name in
    `injected`, and doomed idempotency keys: the first `n` attempts carrying such a key lose
    their response after the server answered."""

    def __init__(
        self,
        weights: Mapping[str, tuple[Fault, float]],
        *,
        seed: int,
        match: Callable[[HttpRequest], bool],
        doomed: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(weights={f: w for f, w in weights.values()}, seed=seed, match=match)
        self.names = {f: name for name, (f, _w) in weights.items()}
        self.doomed = dict(doomed or {})
        self.injected: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def next_fault(self, request: HttpRequest) -> Fault:
        key = request.header("idempotency-key")
        with self._count_lock:
            if self.match is not None and self.match(request) and self.doomed.get(key, 0) > 0:
                self.doomed[key] -= 1
                self.injected["drop_response (doomed key)"] += 1
                return Fault.drop_response()
        fault = super().next_fault(request)
        if fault != PASS:
            with self._count_lock:
                self.injected[self.names.get(fault, fault.label)] += 1
        return fault


def run_threads(targets: list[Callable[[], None]], timeout: float = 900) -> None:
    """Run each target in its own thread; re-raise the first exception any of them raised
    (a failed assertion inside a worker must fail the test, not only print a warning)."""
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    if any(thread.is_alive() for thread in threads):
        raise AssertionError(f"a chaos worker thread still runs after {timeout} s")
    if errors:
        raise errors[0]


@dataclass
class Figures:
    """One run's figures, for the session summary and docs/reliability.md."""

    section: str  # "payments", "storm", "rate-limit"
    name: str
    values: dict[str, Any]


FIGURES: list[Figures] = []


def record(section: str, name: str, **values: Any) -> None:
    FIGURES.append(Figures(section, name, values))
    path = os.environ.get("CHAOS_REPORT")
    if path:
        rows = [{"section": f.section, "name": f.name, **f.values} for f in FIGURES]
        Path(path).write_text(json.dumps(rows, indent=2, default=str) + "\n", encoding="utf-8")


def summary_lines() -> list[str]:
    lines: list[str] = []
    for f in FIGURES:
        lines.append(f"[{f.section}] {f.name}")
        for key, value in f.values.items():
            if isinstance(value, float):
                value = f"{value:.4g}"
            lines.append(f"    {key}: {value}")
    return lines
