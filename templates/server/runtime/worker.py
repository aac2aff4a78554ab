"""Run arq workers for the jobs of a Redis-backed server (several processes or hosts).

Either of::

    python -m <package>.runtime.worker <package>.<module>:registry --url redis://host:6379/0
    APIFORGE_JOB_REGISTRY=<package>.<module>:registry APIFORGE_JOBS_URL=redis://… \\
        arq <package>.runtime.worker.WorkerSettings

Optional: ``APIFORGE_WEBHOOKS_URL`` (callback outbox; default: the jobs URL),
``APIFORGE_JOBS_MAX_ATTEMPTS`` (3), ``APIFORGE_JOBS_TIMEOUT_SECONDS`` (300),
``APIFORGE_JOBS_BASE_PATH`` (/jobs, used in problem ``instance`` members).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from .jobs import arq_worker_settings, env_options, registry_from_string


def settings_from_env(
    registry: str | None = None, url: str | None = None, webhooks_url: str | None = None
) -> type:
    spec = registry or os.environ.get("APIFORGE_JOB_REGISTRY", "")
    jobs_url = url or os.environ.get("APIFORGE_JOBS_URL", "")
    if not spec or not jobs_url.startswith(("redis://", "rediss://", "unix://")):
        raise SystemExit(
            "arq workers need APIFORGE_JOB_REGISTRY=<module>:<registry> and a redis:// "
            "APIFORGE_JOBS_URL (or: python -m <package>.runtime.worker MODULE:REGISTRY --url URL)"
        )
    return arq_worker_settings(
        registry_from_string(spec),
        jobs_url,
        webhooks_url=webhooks_url or os.environ.get("APIFORGE_WEBHOOKS_URL") or None,
        **env_options(),
    )


def __getattr__(name: str) -> Any:
    # `arq <package>.runtime.worker.WorkerSettings`: built when arq asks for it
    if name == "WorkerSettings":
        return settings_from_env()
    raise AttributeError(name)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run an arq worker for apiforge jobs.")
    parser.add_argument("registry", help="the JobRegistry, as package.module:attribute")
    parser.add_argument("--url", default=None, help="redis:// URL (default: $APIFORGE_JOBS_URL)")
    parser.add_argument("--webhooks-url", default=None, help="callback outbox store URL")
    parser.add_argument("--burst", action="store_true", help="exit once the queue is empty")
    args = parser.parse_args(argv)

    import logging

    from arq.worker import run_worker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    run_worker(settings_from_env(args.registry, args.url, args.webhooks_url), burst=args.burst)


if __name__ == "__main__":
    main()
