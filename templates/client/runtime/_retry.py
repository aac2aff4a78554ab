"""When to retry a request, and how long to wait first.

Public API:

- `RetryPolicy(max_retries=2, initial_delay=0.5, max_delay=8.0, max_server_delay=60.0,
  jitter=random.random)` and its `decide(...) -> float | None` (seconds to wait before the
  next attempt, or None: do not retry), built from the parts below.
- `is_safe_to_repeat(method, has_idempotency_key=...)`: GET/HEAD/OPTIONS/PUT/DELETE always;
  POST/PATCH only with an idempotency key.
- `parse_retry_after(headers, now=...)`: the server's `retry-after-ms`, else `Retry-After`
  (delta seconds or an HTTP date, relative to `now`), in seconds; None when absent.
- `backoff_delay(retries_taken, ...)`: 0.5 s doubling per retry, capped at 8 s, minus up to
  25 % jitter (`jitter()` returns a number in [0, 1); inject a constant in tests).
- `RETRYABLE_STATUS_CODES`, `SAFE_METHODS`, `RETRY_COUNT_HEADER` (`X-Retry-Count`, sent on
  every attempt: 0 on the first, 1 on the first retry, ...).

This module depends on nothing else in the runtime, so errors and jobs can reuse its parsing.
"""

from __future__ import annotations

import email.utils
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

RETRYABLE_STATUS_CODES: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504})
SAFE_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
RETRY_COUNT_HEADER = "X-Retry-Count"

DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_SERVER_DELAY = 60.0


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup that works for `httpx.Headers` and plain dicts alike."""
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


def is_safe_to_repeat(method: str, *, has_idempotency_key: bool) -> bool:
    """Whether sending `method` twice cannot cause two effects on the server."""
    upper = method.upper()
    if upper in SAFE_METHODS:
        return True
    # POST/PATCH are only safe when the server can recognise the second copy by its key.
    return upper in ("POST", "PATCH") and has_idempotency_key


def parse_retry_after(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds the server asked us to wait, or None when it did not say (or said nonsense).

    `retry-after-ms` (non-standard, used by Stainless-style APIs) is more precise and wins.
    A date in the past means "now": 0.
    """
    millis = header(headers, "retry-after-ms")
    if millis is not None:
        try:
            value = float(millis)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value / 1000.0
    raw = header(headers, "retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            return None
        return max(0.0, when.timestamp() - now)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def backoff_delay(
    retries_taken: int,
    *,
    initial: float = INITIAL_RETRY_DELAY,
    maximum: float = MAX_RETRY_DELAY,
    jitter: Callable[[], float] = random.random,
) -> float:
    """Exponential backoff: `initial * 2**retries_taken`, capped at `maximum`, then reduced
    by up to 25 % so that many clients failing together do not retry in lock step."""
    base = min(initial * (2.0**retries_taken), maximum)
    return max(0.0, base * (1.0 - 0.25 * jitter()))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The retry rules of the generated client (see the module docstring)."""

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay: float = INITIAL_RETRY_DELAY
    max_delay: float = MAX_RETRY_DELAY
    max_server_delay: float = MAX_SERVER_DELAY
    jitter: Callable[[], float] = random.random

    def should_retry(
        self,
        *,
        method: str,
        has_idempotency_key: bool,
        retries_taken: int,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        request_sent: bool = True,
    ) -> bool:
        """Whether attempt number `retries_taken + 1` may be made.

        `status_code` None means no response arrived (connection error or timeout).
        `request_sent=False` means the connection was never established, so the server saw
        nothing and even a POST without a key can be sent again.
        """
        if retries_taken >= self.max_retries:
            return False
        if request_sent and not is_safe_to_repeat(method, has_idempotency_key=has_idempotency_key):
            # Not even `x-should-retry: true` can make a repeated charge safe.
            return False
        if headers is not None:
            verdict = (header(headers, "x-should-retry") or "").strip().lower()
            if verdict == "true":
                return True
            if verdict == "false":
                return False
        if status_code is None:
            return True
        return status_code in RETRYABLE_STATUS_CODES

    def next_delay(
        self, *, retries_taken: int, headers: Mapping[str, str] | None = None, now: float
    ) -> float | None:
        """Seconds to wait before the next attempt; None when the server asked for longer
        than `max_server_delay` (the caller then raises instead of hanging)."""
        if headers is not None:
            asked = parse_retry_after(headers, now=now)
            if asked is not None:
                return asked if asked <= self.max_server_delay else None
        return backoff_delay(
            retries_taken, initial=self.initial_delay, maximum=self.max_delay, jitter=self.jitter
        )

    def decide(
        self,
        *,
        method: str,
        has_idempotency_key: bool,
        retries_taken: int,
        now: float,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        request_sent: bool = True,
    ) -> float | None:
        """Seconds to wait before retrying, or None: give up and raise the error at hand."""
        if not self.should_retry(
            method=method,
            has_idempotency_key=has_idempotency_key,
            retries_taken=retries_taken,
            status_code=status_code,
            headers=headers,
            request_sent=request_sent,
        ):
            return None
        return self.next_delay(retries_taken=retries_taken, headers=headers, now=now)
