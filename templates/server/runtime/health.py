"""Probes and the metrics endpoint: what a load balancer, an orchestrator and Prometheus ask.

- liveness (`/healthz` by default): 200 `{"status": "ok"}` as long as the process answers;
- readiness (`/readyz`): checks what the server depends on — every SQLite file it uses can
  take a write lock, every Redis answers `PING`, every PostgreSQL database runs `SELECT 1`
  through the process's pool, the in-process job worker and webhook sender are running —
  within a second each; 200 with each check's result, or 503 `not-ready` (a problem) naming
  which checks failed; why they failed (an error naming a host and port) goes to the log,
  not to the unauthenticated caller (no URL, no DSN, no password in the answer);
- metrics (`/metrics`): `observability.exposition()`, plus the job queue depth and the
  webhook outbox backlog read from the stores at scrape time. Optionally (`metrics_port`)
  also on a port of its own, served by the first worker that binds it.

None of them is rate limited, authenticated, idempotent or in `/openapi.json`: they are
routes of their own, added before the API's routers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .observability import exposition, metrics_registry
from .problems import ProblemDetail, problem_response
from .storage import connect_sqlite, parse_store_url

logger = logging.getLogger(__name__)

Check = Callable[[], Awaitable[None]]
CHECK_TIMEOUT_SECONDS = 1.0
PENDING_CAP = 10_000  # the outbox gauge stops counting here (one bounded query per scrape)


def _sqlite_check(path: str) -> Check:
    def probe() -> None:
        conn = connect_sqlite(path)
        try:
            conn.execute("BEGIN IMMEDIATE")  # a write lock: the file is there and writable
            conn.execute("ROLLBACK")
        finally:
            conn.close()

    async def check() -> None:
        await asyncio.to_thread(probe)

    return check


def _redis_check(url: str) -> Check:
    async def check() -> None:
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(url, socket_connect_timeout=CHECK_TIMEOUT_SECONDS)
        try:
            await client.ping()
        finally:
            await client.aclose()

    return check


def _postgres_check(url: str) -> Check:
    async def check() -> None:
        from .postgres import ping

        await ping(url, CHECK_TIMEOUT_SECONDS)

    return check


def store_checks(urls: dict[str, str]) -> dict[str, Check]:
    """One check per distinct store (`what` → URL), named by its kind and what uses it."""
    by_url: dict[str, list[str]] = {}
    for what, url in urls.items():
        if url:
            by_url.setdefault(url, []).append(what)
    checks: dict[str, Check] = {}
    for url, users in by_url.items():
        parsed = parse_store_url(url)
        name = f"{parsed.kind} ({', '.join(users)})"
        if parsed.kind == "sqlite":
            checks[name] = _sqlite_check(parsed.path)
        elif parsed.kind == "redis":
            checks[name] = _redis_check(url)
        elif parsed.kind == "postgres":
            checks[name] = _postgres_check(url)
    return checks


def _running_check(what: str, running: Callable[[], bool]) -> Check:
    async def check() -> None:
        if not running():
            raise RuntimeError(f"the {what} is not running")

    return check


def service_checks(services: Any) -> dict[str, Check]:
    """The in-process job worker and webhook sender, when this process runs them."""
    checks: dict[str, Check] = {}
    jobs = getattr(services, "jobs", None)
    if jobs is not None and getattr(jobs, "arq_url", None) is None:
        checks["job worker"] = _running_check(
            "job worker", lambda: jobs.worker is not None and jobs.worker.running
        )
    dispatcher = getattr(services, "dispatcher", None)
    if dispatcher is not None:
        checks["webhook sender"] = _running_check("webhook sender", lambda: dispatcher.running)
    return checks


async def readiness(checks: dict[str, Check]) -> dict[str, str]:
    """Each check's result: "ok" or what went wrong (never a secret: no URLs)."""

    async def run(check: Check) -> str:
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                await check()
        except TimeoutError:
            return f"no answer within {CHECK_TIMEOUT_SECONDS:g}s"
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        return "ok"

    names = list(checks)
    results = await asyncio.gather(*(run(checks[n]) for n in names))
    return dict(zip(names, results, strict=True))


async def gauges(services: Any) -> dict[str, float]:
    """The values read at scrape time: the job queue depth and the outbox backlog."""
    values: dict[str, float] = {}
    jobs = getattr(services, "jobs", None)
    outbox = getattr(services, "outbox", None)
    try:
        if jobs is not None:
            queued = await jobs.store.queued()
            if queued is not None:
                values["jobs_queued"] = float(queued)
        if outbox is not None:
            pending = await outbox.list_deliveries(status="pending", limit=PENDING_CAP)
            values["webhook_outbox_pending"] = float(len(pending))
    except Exception:  # a store is down: readiness says so; the counters still go out
        logger.warning("metrics: reading the job queue or the outbox failed", exc_info=True)
    return values


def install_probes(
    app: FastAPI,
    services: Any,
    checks: dict[str, Check],
    *,
    live_path: str = "/healthz",
    ready_path: str = "/readyz",
    metrics_path: str = "/metrics",
) -> None:
    """Add the probes and the metrics endpoint to `app` (an empty path leaves one out)."""
    if live_path:

        async def live() -> JSONResponse:
            return JSONResponse({"status": "ok"})

        app.add_api_route(live_path, live, methods=["GET"], include_in_schema=False)
    if ready_path:

        async def ready(request: Request) -> Response:
            results = await readiness(checks)
            failed = [name for name, result in results.items() if result != "ok"]
            if not failed:
                return JSONResponse({"status": "ready", "checks": results})
            # why, in the log only: an error's text can name internal hosts and ports, and
            # anyone can ask this endpoint
            logger.warning("not ready: %s", "; ".join(f"{n}: {results[n]}" for n in failed))
            public = {
                name: "ok" if result == "ok" else "failed" for name, result in results.items()
            }
            problem = ProblemDetail(
                503,
                "not-ready",
                "Service unavailable",
                "Not ready: " + ", ".join(failed) + ".",
                extensions={"checks": public},
            )
            return problem_response(problem, request.url.path)

        app.add_api_route(ready_path, ready, methods=["GET"], include_in_schema=False)
    if metrics_path:

        async def metrics() -> Response:
            # rendering every series is CPU work: in a thread, the loop keeps answering
            body, content_type = await asyncio.to_thread(exposition, await gauges(services))
            return Response(body, media_type=content_type)

        app.add_api_route(metrics_path, metrics, methods=["GET"], include_in_schema=False)


def serve_metrics_port(port: int) -> bool:
    """Also serve the metrics on `port` (all interfaces) from this process; False when
    another worker already does (the port is taken). The gauges read at scrape time are only
    on the API's own metrics path."""
    from prometheus_client import start_http_server

    try:
        start_http_server(port, registry=metrics_registry())
    except OSError:
        return False
    return True
