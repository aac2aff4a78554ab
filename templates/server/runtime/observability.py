"""Seeing the server work: request ids, structured logs and Prometheus metrics.

- **Request ids.** `RequestIdMiddleware` (pure ASGI, the outermost layer) takes the caller's
  `X-Request-Id` when it is a sane token (visible ASCII, at most 128 characters) or makes
  one, echoes it on every response (errors included), and keeps it in a context variable:
  every log line of the request carries it, every problem document has it as the
  `requestId` member, and the jobs and webhook deliveries the request starts carry it on
  (`bind_request_id`; a delivery keeps it in its record, and does not send it).
- **Logs.** `configure_logging(package, level, format)` gives the package's loggers one
  stderr handler, plain text (`… [request_id] message`) or JSON (one object per line:
  `time`, `level`, `logger`, `message`, `request_id`, `event` and its fields, `exc_info`).
  One access line per request (`<package>.access`: method, route template, status — 499
  when the client left before the answer —, milliseconds, principal id) — run uvicorn with
  `--no-access-log` to have only these — and one line per decision worth an operator's
  attention (`record(...)` below). No line carries a credential or a secret: the fields are
  ids, statuses and route templates. A text line is one line: control characters in its
  message (a percent-decoded `%0d%0a` in a path) are escaped, so no input forges a line.
- **Metrics** (`prometheus-client`). `record(event, **labels)` counts a pattern decision and,
  for the interesting ones, logs it. With several uvicorn workers, set
  `PROMETHEUS_MULTIPROC_DIR` to an empty directory before starting them (the metrics
  endpoint then adds up every worker's files); without it, each process counts for itself.
  No label takes an unbounded value: routes are templates of the route table
  (`/v1/payments/{payment_id}`, `<unmatched>` for 404s), methods are those of the route table
  (`other` for any other a client sends), buckets come from the spec, attempt numbers are
  capped. The page is rendered in a worker thread, so a scrape does not hold up requests.

Metric families (prefix `apiforge_`): `requests_total{method,route,status}`,
`request_duration_seconds{method,route}`, `auth_total{outcome}`,
`idempotency_total{outcome}` (executed, replayed, conflict, in_progress, missing_key,
invalid_key), `rate_limit_total{decision,bucket}` (allowed, limited),
`preconditions_total{outcome}` (304, 412, 428), `jobs_total{state}` (queued, running,
completed, failed, cancelled), `jobs_queued` and `webhook_outbox_pending` (gauges, read from
the stores at scrape time), `webhook_deliveries_total{outcome,attempt}` (delivered, failed,
dead, refused; attempt 1…7, "8+").
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "X-Request-Id"
#: Set in the scope by whoever finds that the client closed the connection before any answer.
CLIENT_LEFT_KEY = "apiforge.client_left"
#: The status a request is counted and logged with when its client left before the answer
#: (nginx's "client closed request"; never sent).
CLIENT_CLOSED_STATUS = 499
_STANDARD_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
_VALID_REQUEST_ID = re.compile(r"[!-~]{1,128}")
_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "apiforge_request_id", default=None
)
_access = logging.getLogger("apiforge.access")
_events = logging.getLogger("apiforge.events")


def current_request_id() -> str | None:
    """The id of the request (or job, or delivery) this code runs for, if any."""
    return _request_id.get()


def new_request_id() -> str:
    return os.urandom(16).hex()  # 128 random bits (uuid4's formatting cost, without it)


@contextlib.contextmanager
def bind_request_id(value: str | None) -> Iterator[None]:
    """Run a block (a job, a delivery) under the id of the request that started it."""
    token = _request_id.set(value)
    try:
        yield
    finally:
        _request_id.reset(token)


def _route_template(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return str(path) if path else "<unmatched>"


def _route_methods(app: Any) -> frozenset[str]:
    """The methods the app's route table answers (HEAD with GET): a closed set. Routers
    included in the app (FastAPI keeps them as one entry) and mounts are walked too."""
    methods = {"HEAD"}
    todo = list(getattr(app, "routes", ()))
    while todo:
        route = todo.pop()
        methods.update(getattr(route, "methods", None) or ())
        inner = getattr(route, "original_router", route)  # FastAPI's included router
        todo.extend(getattr(inner, "routes", None) or ())
    return frozenset(methods)


class RequestIdMiddleware:
    """Request ids, the access log line and the request metrics (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._methods: frozenset[str] | None = None

    def method_label(self, scope: Scope) -> str:
        """The request's method when the route table has it, else `other`: a client's
        invented methods do not each make a series."""
        method = str(scope.get("method", ""))
        if self._methods is None:
            if "app" not in scope:
                return method if method in _STANDARD_METHODS else "other"
            self._methods = _route_methods(scope["app"])  # the table is built by now
        return method if method in self._methods else "other"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = ""
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                text = value.decode("latin-1").strip()
                rid = text if _VALID_REQUEST_ID.fullmatch(text) else ""
                break
        rid = rid or new_request_id()
        scope.setdefault("state", {})["request_id"] = rid
        header = (b"x-request-id", rid.encode("latin-1"))
        status = 500  # unless a response starts; 499 when the client is found gone
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        token = _request_id.set(rid)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            if scope.get(CLIENT_LEFT_KEY):
                status = CLIENT_CLOSED_STATUS
            route = _route_template(scope)
            method = self.method_label(scope)
            METRICS.request(method, route, status, elapsed)
            if _access.isEnabledFor(logging.INFO):
                principal = (scope.get("state") or {}).get("principal")
                fields = {
                    "method": method,
                    "route": route,
                    "status": status,
                    "ms": round(elapsed * 1000, 2),
                    "principal": getattr(principal, "id", None),
                }
                _access.info(
                    "%s %s %d %.1fms",
                    method,
                    route,
                    status,
                    elapsed * 1000,
                    extra={"event": "request", "fields": fields},
                )
            _request_id.reset(token)


# --- logs ----------------------------------------------------------------------------------


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        event = getattr(record, "event", None)
        if event:
            data["event"] = event
            data.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            data["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def _escape_control(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


class TextFormatter(logging.Formatter):
    """Plain text lines whose message cannot break the line: control characters (CR, LF,
    and the Unicode line separators) are written escaped (`\\r\\n`). A traceback still
    follows on its own lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return _CONTROL.sub(_escape_control, super().formatMessage(record))


_HANDLER_MARK = "_apiforge_handler"


def configure_logging(package: str, level: str = "INFO", format: str = "text") -> None:
    """Send the package's and apiforge's loggers to stderr as text or JSON (idempotent: a
    second call replaces the handler it installed)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    handler.setFormatter(JsonFormatter() if format == "json" else TextFormatter(_TEXT_FORMAT))
    setattr(handler, _HANDLER_MARK, True)
    for name in (package, "apiforge"):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if getattr(h, _HANDLER_MARK, False)]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(level.upper())
        logger.propagate = False


# --- metrics -------------------------------------------------------------------------------

#: The decisions `record` logs, at which level (the rest are only counted).
_LOGGED: dict[tuple[str, str], int] = {
    ("idempotency", "replayed"): logging.INFO,
    ("idempotency", "conflict"): logging.WARNING,
    ("idempotency", "in_progress"): logging.INFO,
    ("rate_limit", "limited"): logging.INFO,
    ("preconditions", "412"): logging.INFO,
    ("preconditions", "428"): logging.INFO,
    ("auth", "rejected"): logging.INFO,
    ("auth", "locked_out"): logging.WARNING,
    ("auth", "not_implemented"): logging.WARNING,
    ("jobs", "failed"): logging.WARNING,
    ("webhook_deliveries", "failed"): logging.WARNING,
    ("webhook_deliveries", "dead"): logging.ERROR,
    ("webhook_deliveries", "refused"): logging.ERROR,
}
_MAX_ATTEMPT_LABEL = 8
_PHRASES = {
    "webhook_deliveries": "webhook delivery",
    "jobs": "job",
    "idempotency": "idempotency key",
    "rate_limit": "rate limit",
    "preconditions": "precondition",
    "auth": "authentication",
}


class Metrics:
    """The process's metric families, created on first use (so `PROMETHEUS_MULTIPROC_DIR`,
    read by prometheus-client when it is imported, can be set by then)."""

    def __init__(self) -> None:
        self.enabled = True
        self._families: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._families is None:
            import prometheus_client
            from prometheus_client import Counter, Histogram, disable_created_metrics

            # one set per process, also when several copies of this runtime are imported
            # (the registry refuses a second family of the same name)
            shared: dict[str, Any] | None = prometheus_client.__dict__.get("_apiforge_families")
            if shared is not None:
                self._families = shared
                return shared

            disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` series

            def counter(name: str, doc: str, *labels: str) -> Any:
                return Counter(f"apiforge_{name}", doc, labels)

            self._families = {
                "requests": counter(
                    "requests",
                    "HTTP requests by method, route and status",
                    "method",
                    "route",
                    "status",
                ),
                "duration": Histogram(
                    "apiforge_request_duration_seconds",
                    "HTTP request latency by method and route",
                    ("method", "route"),
                ),
                "auth": counter("auth", "Authentication outcomes", "outcome"),
                "idempotency": counter("idempotency", "Idempotency-Key outcomes", "outcome"),
                "rate_limit": counter("rate_limit", "Rate-limit decisions", "decision", "bucket"),
                "preconditions": counter("preconditions", "Conditional answers", "outcome"),
                "jobs": counter("jobs", "Job state changes", "state"),
                "webhook_deliveries": counter(
                    "webhook_deliveries", "Webhook delivery attempts", "outcome", "attempt"
                ),
            }
            prometheus_client.__dict__["_apiforge_families"] = self._families
        return self._families

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        if not self.enabled:
            return
        families = self._get()
        families["requests"].labels(method, route, str(status)).inc()
        families["duration"].labels(method, route).observe(seconds)

    def count(self, family: str, *labels: str) -> None:
        if self.enabled:
            self._get()[family].labels(*labels).inc()


METRICS = Metrics()


def record(family: str, outcome: str, *, log: str = "", **labels: str | int) -> None:
    """Count one pattern decision (`family` is a metric family above, `outcome` its first
    label; `labels` the others, in order) and log it when it is worth an operator's
    attention. `log` adds words to the line; it must never hold a credential."""
    values = [outcome]
    for key, value in labels.items():
        if key == "attempt":
            number = int(value)
            value = str(number) if number < _MAX_ATTEMPT_LABEL else f"{_MAX_ATTEMPT_LABEL}+"
        values.append(str(value))
    METRICS.count(family, *values)
    level = _LOGGED.get((family, outcome))
    if level is not None:
        fields = {"outcome": outcome, **{k: v for k, v in labels.items()}}
        _events.log(
            level,
            "%s %s%s",
            _PHRASES.get(family, family),
            outcome.replace("_", " "),
            f": {log}" if log else "",
            extra={"event": family, "fields": fields},
        )


def metrics_registry() -> Any:
    """What to collect from: every worker's files with `PROMETHEUS_MULTIPROC_DIR`, else this
    process's registry."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import CollectorRegistry, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return registry
    from prometheus_client import REGISTRY

    return REGISTRY


def exposition(extra: dict[str, float] | None = None) -> tuple[bytes, str]:
    """The metrics text (every worker's with `PROMETHEUS_MULTIPROC_DIR`), plus `extra`
    gauges read at scrape time; (body, content type)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    registry = metrics_registry()
    METRICS._get()  # the families exist even before their first count
    body = generate_latest(registry)
    if extra:
        gauges = CollectorRegistry()
        now = dict(extra)

        class _Now:
            def collect(self) -> Iterator[GaugeMetricFamily]:
                for name, value in sorted(now.items()):
                    yield GaugeMetricFamily(f"apiforge_{name}", name.replace("_", " "), value)

        gauges.register(_Now())
        body += generate_latest(gauges)
    return body, CONTENT_TYPE_LATEST


def process_exited() -> None:
    """Tell the multiprocess collector this worker is gone (live gauges)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        with contextlib.suppress(Exception):
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
