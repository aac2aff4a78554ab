"""The generated server's settings: one flat dataclass, read from environment variables.

Every field `name` is read from `<PREFIX><NAME>` (prefix `APIFORGE_` by default), e.g.
`store_url` ← `APIFORGE_STORE_URL`. Unset variables keep the default. In tests, construct
`Settings(...)` directly (or `Settings.from_env(environ={...})`) and pass it to `create_app`.

Value syntax in the environment, by field type:

- `str`, `int`, `float`: as is (numbers accept `1_000_000`); `bool`: 1/0, true/false, yes/no,
  on/off
- `tuple[str, ...]`: comma-separated (`a,b,c`); or a JSON array
- `dict[str, str]`: a JSON object (`{"free": "100/minute"}`), or `name=value` pairs
  separated by commas or whitespace (`free=100/minute pro=1000/minute`)

To add a setting: add a field with a default and a `#:` comment saying what it does and how
the environment spells it — `from_env` picks it up by its type, and `documented()` lists it
(the generated README renders that list). The fields and their documentation are below.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
#: Fields whose values are secrets: masked in `repr` (and so in logs and tracebacks).
SECRET_FIELDS = frozenset({"webhook_secrets"})


def mask_url(value: str) -> str:
    """`scheme://user:password@host…` with the password replaced by `***`."""
    match = re.match(r"^([a-z][a-z0-9+.-]*://[^/@:]*:)([^/@]*)(@.*)$", value, re.I | re.S)
    return f"{match.group(1)}***{match.group(3)}" if match else value


_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    #: Where resources (the versioned repository) and handlers' transactions live:
    #: `sqlite:///./data/app.db` (the embedded default; one file, several workers on one
    #: host), `postgresql://USER@HOST:PORT/DB` (several hosts: the repository, transactions,
    #: idempotency records, jobs and webhooks) or `memory://` (one process, tests).
    store_url: str = "sqlite:///./data/app.db"

    #: The pattern layer (rate limits, idempotency keys, ETags and preconditions) on (`1`) or
    #: off (`0`). Off serves the same routes and handlers without it, to measure what it
    #: costs (benchmarks only: never in production). Problem details stay on.
    patterns_enabled: bool = True
    #: Mock mode (`1`): an operation whose handler is not written yet (raises
    #: `NotImplementedError`) answers with its declared example, or a value made from its
    #: schema, with the declared status and headers; every pattern still applies. For front
    #: ends and contract tests before the handlers exist: never in production.
    mock: bool = False
    #: In mock mode (`1`): any well-formed credential gets in, as a principal of its own
    #: (named by the credential's digest) with the scopes the operation asks for; a request
    #: without one still gets 401. Never in production.
    mock_any_credential: bool = False

    #: Rate-limit counters: `memory://` (per process) or `redis://host:port/db` (shared by
    #: every worker and host). Any `limits` storage URL works.
    rate_limit_storage_url: str = "memory://"
    #: Turn rate limiting off (`0`) without touching the spec, e.g. behind a gateway that does it.
    rate_limit_enabled: bool = True
    #: `sliding-window-counter` (default), `fixed-window` or `moving-window`.
    rate_limit_strategy: str = "sliding-window-counter"
    #: On Redis (sliding window counter): the most units one round trip may take ahead for a
    #: caller whose window has room to spare (at most 1/16 of what is left), used by the
    #: caller's next requests in this worker without a round trip; 1: one round trip per
    #: request. Exact near the limit; see runtime/ratelimit.py for the bounds.
    rate_limit_lease: int = 32
    #: The realm of `WWW-Authenticate` challenges; empty: the API's title.
    auth_realm: str = ""
    #: Where problem `type` URIs start: each error's `type` is this followed by its kind
    #: (`validation-error`, `rate-limited`, …). Default: from the spec (its
    #: `x-apiforge-problem-base`, else the base of the problem types its examples name, else
    #: `<first server URL>/problems/`, else the relative `/problems/`).
    problem_base: str = "/problems/"
    #: Rejected credentials a client address (an IPv6 /64) may send per window before it gets
    #: 429 for every credential, the right one included (brute force), in `limits` syntax;
    #: empty: no bound. Counted in `RATE_LIMIT_STORAGE_URL` (or `REDIS_URL`): per process on
    #: `memory://`, shared by every worker on Redis.
    auth_failure_limit: str = "20/minute"
    #: The proxies (load balancers) whose `X-Forwarded-For` is believed, comma-separated
    #: addresses or networks (`10.0.0.5`, `10.0.0.0/8`); empty: no one's, the connection's
    #: own address is the client. Run uvicorn with `--no-proxy-headers` so the server decides.
    trusted_proxies: tuple[str, ...] = ()
    #: Origins besides the server's own (`https://app.example.com`, comma-separated) whose
    #: pages may send a cookie credential with an unsafe request; others get 403 (CSRF).
    csrf_allowed_origins: tuple[str, ...] = ()

    #: The limit of an authenticated caller without a tier, in `limits` syntax: `100/minute`,
    #: `10/second`, `5000/hour`.
    rate_limit_default: str = "100/minute"
    #: The limit of callers without a verified principal, counted per client IP; empty: the
    #: default.
    rate_limit_anonymous: str = ""
    #: Tier → limit, e.g. `free=100/minute pro=1000/minute`; a principal's tier is what the
    #: verifier put in `Principal.tier`.
    rate_limit_tiers: dict[str, str] = field(default_factory=dict)

    #: Log lines as `text` (one readable line each) or `json` (one object per line, for a log
    #: pipeline); each carries the request id. Credentials never appear in them.
    log_format: str = "text"
    #: The least severe log level written: `debug`, `info`, `warning`, `error`.
    log_level: str = "info"
    #: The liveness probe's path (200 while the process answers); empty: none.
    health_path: str = "/healthz"
    #: The readiness probe's path (503 naming the store, Redis or worker that fails); empty:
    #: none.
    ready_path: str = "/readyz"
    #: Prometheus metrics on this path; empty: none. With several workers, start them with
    #: `PROMETHEUS_MULTIPROC_DIR` set to an empty directory so the numbers add up.
    metrics_path: str = "/metrics"
    #: Also serve the metrics on this port, on every interface (0: no); the first worker to
    #: bind it serves every worker's numbers.
    metrics_port: int = 0

    #: Largest accepted request body in bytes (larger → 413), counted from Content-Length and
    #: from the bytes actually streamed.
    max_body_bytes: int = 1_048_576

    #: How long a stored idempotent response is replayed, in seconds (24 h, as Stripe).
    idempotency_ttl_seconds: int = 86_400

    #: Webhook signing secrets, comma-separated; the first signs, all verify (rotation).
    webhook_secrets: tuple[str, ...] = ()
    #: Allow plain `http://` webhook and callback destinations (local development and tests
    #: only: deliveries and their signatures then cross the network in clear).
    webhook_allow_http: bool = False
    #: Destinations allowed although they are not public addresses, comma-separated: IPs
    #: (`127.0.0.1`), networks (`10.20.0.0/16`), host names (`hooks.internal`) or every
    #: subdomain of one (`*.hooks.internal`). Loopback, private, link-local (cloud metadata)
    #: and other internal addresses are refused otherwise, when a job is submitted and again
    #: at connect time, against the address actually connected to.
    webhook_allow_destinations: tuple[str, ...] = ()
    #: One delivery attempt's deadline in seconds (connect, send and read together); a slower
    #: receiver's attempt fails and is retried on the schedule.
    webhook_attempt_timeout_seconds: float = 10.0
    #: How long a sender holds a delivery it claimed before another may take it (the sender
    #: died mid-attempt), in seconds; at least twice the attempt deadline plus 10 s.
    webhook_lease_seconds: float = 60.0
    #: Deliveries in flight at once, per process (at most 4 to one destination), so one slow
    #: receiver cannot hold back the others.
    webhook_concurrency: int = 16

    def __repr__(self) -> str:
        """Every field, with secrets masked and passwords in store URLs hidden: settings get
        logged, and a log line must never carry a secret."""
        parts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_FIELDS:
                shown: object = "***" if value else value
            elif isinstance(value, str):
                shown = mask_url(value)
            else:
                shown = value
            parts.append(f"{f.name}={shown!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def problems(self) -> list[str]:
        """What is wrong with these settings, one sentence each (checked at start-up, so a
        typo stops the server with a clear message instead of failing later). The store URLs
        are read by `storage.parse_store_url` and the limits by `limits` itself, as the
        server will read them."""
        # imported here: the generator reads this module on its own to document the settings
        from limits import parse_many
        from limits.storage import SCHEMES  # type: ignore[attr-defined]  # its URL schemes

        from .storage import parse_store_url

        found: list[str] = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            name = "APIFORGE_" + f.name.upper()
            if f.name.endswith("_url") and value:
                scheme = value.partition("://")[0].removeprefix("async+")
                try:
                    if f.name != "rate_limit_storage_url":
                        parse_store_url(value)
                    elif scheme not in SCHEMES:
                        raise ValueError(scheme)
                except ValueError:
                    found.append(
                        f"{name}: {mask_url(value)!r} is not a store URL "
                        "(memory://, sqlite:///FILE, redis://HOST:PORT/DB or "
                        "postgresql://USER@HOST:PORT/DB)"
                    )
            elif f.name.endswith("_path") and value and not str(value).startswith("/"):
                found.append(f"{name}: {value!r} must start with '/'")
            elif f.name.endswith(("_seconds", "_bytes", "_concurrency")) and value <= 0:
                found.append(f"{name}: must be positive, not {value!r}")
        limits = {
            "RATE_LIMIT_DEFAULT": self.rate_limit_default,
            "RATE_LIMIT_ANONYMOUS": self.rate_limit_anonymous,
            "AUTH_FAILURE_LIMIT": self.auth_failure_limit,
            **{f"RATE_LIMIT_TIERS ({k})": v for k, v in self.rate_limit_tiers.items()},
        }
        for name, value in limits.items():
            try:
                if value:
                    parse_many(value)
            except ValueError:
                found.append(
                    f"APIFORGE_{name}: {value!r} is not a limit like '100/minute' or '10/second'"
                )
        if self.log_format not in ("text", "json"):
            found.append(f"APIFORGE_LOG_FORMAT: {self.log_format!r} is not 'text' or 'json'")
        if self.log_level.lower() not in ("debug", "info", "warning", "error", "critical"):
            found.append(f"APIFORGE_LOG_LEVEL: {self.log_level!r} is not a log level")
        try:
            from .client_address import trusted_networks

            trusted_networks(self.trusted_proxies)
        except ValueError as exc:
            found.append(f"APIFORGE_TRUSTED_PROXIES: {exc}")
        if self.rate_limit_lease < 1:
            found.append(f"APIFORGE_RATE_LIMIT_LEASE: {self.rate_limit_lease} is not 1 or more")
        if not 0 <= self.metrics_port <= 65535:
            found.append(f"APIFORGE_METRICS_PORT: {self.metrics_port} is not a port")
        return found

    @classmethod
    def from_env(
        cls, prefix: str = "APIFORGE_", environ: Mapping[str, str] | None = None
    ) -> Settings:
        """Settings from `<prefix><FIELD>` variables; ValueError names a bad variable."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            name = prefix + f.name.upper()
            if name not in env:
                continue
            try:
                values[f.name] = _convert(env[name], _kind(f))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return cls(**values)

    @classmethod
    def documented(cls, prefix: str = "APIFORGE_") -> list[tuple[str, str, str]]:
        """(environment variable, default, description) for every setting, in field order."""
        docs = _field_docs(cls)
        rows = []
        for f in dataclasses.fields(cls):
            default: object = f.default
            if f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            rows.append((prefix + f.name.upper(), _render(default), docs.get(f.name, "")))
        return rows


def _kind(f: dataclasses.Field[Any]) -> str:
    annotation = str(f.type)
    for kind in ("bool", "int", "float", "tuple", "dict"):
        if annotation.startswith(kind):
            return kind
    return "str"


def _convert(raw: str, kind: str) -> object:
    text = raw.strip()
    if kind == "str":
        return raw
    if kind == "bool":
        lowered = text.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"{raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{raw!r} is not an integer") from None
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    if kind == "tuple":
        if text.startswith("["):
            items = json.loads(text)
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ValueError("expected a JSON array of strings")
            return tuple(items)
        return tuple(part.strip() for part in text.split(",") if part.strip())
    # dict
    if text.startswith("{"):
        try:
            mapping = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON object: {exc}") from None
        if not isinstance(mapping, dict):
            raise ValueError("expected a JSON object")
        return {str(k): str(v) for k, v in mapping.items()}
    result: dict[str, str] = {}
    for pair in re.split(r"[,\s]+", text):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r} is not name=value")
        result[key] = value
    return result


def _render(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _field_docs(cls: type) -> dict[str, str]:
    """The `#:` comments above each field, read from the source of `cls` and its bases
    (a subclass adding settings documents them the same way)."""
    import inspect

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            with contextlib.suppress(OSError, TypeError):
                docs.update(_comments(inspect.getsource(klass)))
    return docs


def _comments(source: str) -> dict[str, str]:
    docs: dict[str, str] = {}
    pending: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        match = re.match(r"^(\w+)\s*:", stripped)
        if match and pending:
            docs[match.group(1)] = " ".join(pending)
        pending = []
    return docs
