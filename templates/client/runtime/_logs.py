"""What the client says about itself: one DEBUG line per request, and deprecation warnings.

Public API:

- `logger`: the logger named after the generated package (`acme_client`); every runtime
  module logs through it (retries at INFO, each attempt at DEBUG).
- `setup_logging(env_var)`: with the environment variable set to `debug` or `info` (e.g.
  `ACME_CLIENT_LOG=debug`), the package's logger gets that level and, if it has no handler of
  its own, one to stderr. Logging configuration does the same without the variable.
- `log_attempt(request, status, elapsed, retries_taken, secret_headers)`: `GET https://...
  -> 200 in 0.042 s (retry 1)`, and at DEBUG its request headers. Never a secret: the
  query's API keys and parameters named like credentials (`token`, `api_key`, `signature`,
  ...) show as `REDACTED`, so do a URL's password, `Authorization`, `Cookie`, the API-key
  headers, and every header named like a credential.
- `warn_deprecated(message)`: a `DeprecationWarning` pointing at the caller's line (the first
  frame outside the generated package).
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import warnings
from collections.abc import Iterable, Mapping

import httpx

from ._auth import REDACTED, redacted_query_keys

# `acme_client._runtime._logs` → `acme_client` (the runtime as it is tested: its own package)
PACKAGE = (
    __name__.rsplit("._runtime", 1)[0] if "._runtime" in __name__ else __name__.rsplit(".", 1)[0]
)
logger = logging.getLogger(PACKAGE)

# query parameters and headers whose values are credentials, whatever the spec calls them
_SECRET_WORDS = ("token", "secret", "password", "passwd", "signature", "api_key", "apikey")
_SECRET_NAMES = frozenset(
    {"key", "sig", "code", "auth", "authorization", "cookie", "set-cookie", "x-api-key"}
)


def is_secret(name: str, known: Iterable[str] = ()) -> bool:
    lowered = name.lower().replace("-", "_")
    return (
        lowered in _SECRET_NAMES
        or lowered.replace("_", "-") in _SECRET_NAMES
        or any(word in lowered for word in _SECRET_WORDS)
        or name.lower() in {k.lower() for k in known}
    )


def redact_url(url: httpx.URL) -> str:
    """The URL with its password and its credential-like query values masked."""
    keys = redacted_query_keys()
    params = url.params
    if any(is_secret(name, keys) for name in params):
        url = url.copy_with(
            params=[(k, REDACTED if is_secret(k, keys) else v) for k, v in params.multi_items()]
        )
    if url.password:
        url = url.copy_with(username=url.username, password=REDACTED)
    return str(url)


def redact_headers(headers: httpx.Headers, secret: Iterable[str] = ()) -> dict[str, str]:
    known = set(secret)
    return {
        name: REDACTED if is_secret(name, known) else value for name, value in headers.multi_items()
    }


def log_attempt(
    request: httpx.Request,
    status: int | str,
    elapsed: float,
    retries_taken: int,
    secret_headers: Iterable[str] = (),
) -> None:
    if not logger.isEnabledFor(logging.DEBUG):
        return
    retry = f" (retry {retries_taken})" if retries_taken else ""
    logger.debug(
        "%s %s -> %s in %.3f s%s",
        request.method,
        redact_url(request.url),
        status,
        elapsed,
        retry,
    )
    logger.debug("request headers: %s", redact_headers(request.headers, secret_headers))


def setup_logging(env_var: str, environ: Mapping[str, str] | None = None) -> None:
    """Switch the package's logging on from `env_var` (see the module docstring)."""
    level = (environ if environ is not None else os.environ).get(env_var, "").strip().upper()
    if level not in ("DEBUG", "INFO"):
        return
    logger.setLevel(level)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logger.addHandler(handler)


def warn_deprecated(message: str) -> None:
    """A `DeprecationWarning` at the first frame outside the generated package."""
    level = 2  # the caller of this function
    here = inspect.currentframe()
    frame = here.f_back if here is not None else None
    while frame is not None and frame.f_globals.get("__name__", "").startswith(PACKAGE + "."):
        frame = frame.f_back
        level += 1
    warnings.warn(message, DeprecationWarning, stacklevel=level)


__all__ = [
    "PACKAGE",
    "is_secret",
    "log_attempt",
    "logger",
    "redact_headers",
    "redact_url",
    "setup_logging",
    "warn_deprecated",
]
