"""Rate-limit headers, whichever family the server speaks, as one `RateLimit`.

Public API:

- `RateLimit(limit, remaining, reset_at)`: `reset_at` is unix seconds (float); each field is
  None when the server did not say. `.exhausted` (remaining == 0) and
  `.seconds_until_reset(now)`.
- `parse_rate_limit(headers, now=None) -> RateLimit | None`, reading, in this order:
  1. IETF structured fields: `RateLimit: "policy";r=50;t=30` with
     `RateLimit-Policy: "policy";q=100;w=60` (and the older draft's
     `RateLimit: limit=100, remaining=50, reset=30`); `t`/`reset` are delta seconds;
  2. `RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` (reset: delta seconds);
  3. `X-RateLimit-*` or `X-Rate-Limit-*` (reset: epoch seconds when > 1e9, epoch
     milliseconds when > 1e12, else delta seconds).
  None when no family is present. `now` defaults to `time.time()`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ._retry import header

_EPOCH_SECONDS = 1e9  # values above this are timestamps, not deltas (1e9 s is 2001)
_EPOCH_MILLIS = 1e12


@dataclass(frozen=True, slots=True)
class RateLimit:
    """The quota state the last response reported."""

    limit: int | None
    remaining: int | None
    reset_at: float | None

    @property
    def exhausted(self) -> bool:
        """True when the server said no calls are left in this window."""
        return self.remaining is not None and self.remaining <= 0

    def seconds_until_reset(self, now: float | None = None) -> float | None:
        """How long until the window resets (never negative); None if unknown."""
        if self.reset_at is None:
            return None
        current = time.time() if now is None else now
        return max(0.0, self.reset_at - current)


def parse_rate_limit(headers: Mapping[str, str], *, now: float | None = None) -> RateLimit | None:
    """Parse whichever rate-limit header family `headers` carry (see the module docstring)."""
    current = time.time() if now is None else now
    structured = header(headers, "ratelimit")
    if structured is not None:
        parsed = _parse_structured(structured, header(headers, "ratelimit-policy"), current)
        if parsed is not None:
            return parsed
    for prefix, reset_is_delta in (
        ("ratelimit-", True),
        ("x-ratelimit-", False),
        ("x-rate-limit-", False),
    ):
        limit = _leading_int(header(headers, prefix + "limit"))
        remaining = _leading_int(header(headers, prefix + "remaining"))
        reset = _leading_number(header(headers, prefix + "reset"))
        if limit is None and remaining is None and reset is None:
            continue
        reset_at: float | None = None
        if reset is not None:
            if reset_is_delta:
                reset_at = current + reset
            elif reset > _EPOCH_MILLIS:
                reset_at = reset / 1000.0
            elif reset > _EPOCH_SECONDS:
                reset_at = reset
            else:
                reset_at = current + reset
        return RateLimit(limit=limit, remaining=remaining, reset_at=reset_at)
    return None


def _leading_number(value: str | None) -> float | None:
    # `RateLimit-Limit: 100, 100;w=60` (draft-03) lists the policies after the number.
    if value is None:
        return None
    first = value.split(",", 1)[0].split(";", 1)[0].strip()
    try:
        number = float(first)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _leading_int(value: str | None) -> int | None:
    number = _leading_number(value)
    return None if number is None else int(number)


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return [part for part in parts if part]


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _sf_list(text: str) -> list[tuple[str, dict[str, str]]]:
    """A structured-field list (RFC 8941) as (item, parameters) pairs; enough for rate limits."""
    items: list[tuple[str, dict[str, str]]] = []
    for member in _split_outside_quotes(text, ","):
        pieces = _split_outside_quotes(member, ";")
        if not pieces:
            continue
        params: dict[str, str] = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip().lower()] = _unquote(value) if value else "?1"
        items.append((_unquote(pieces[0]), params))
    return items


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _parse_structured(value: str, policy: str | None, now: float) -> RateLimit | None:
    items = _sf_list(value)
    if not items:
        return None
    # Older drafts: `RateLimit: limit=100, remaining=50, reset=30` (a dictionary).
    if any(
        item.partition("=")[0].strip().lower() in ("limit", "remaining", "reset")
        for item, _ in items
    ):
        fields: dict[str, str] = {}
        for item, _ in items:
            key, _, raw = item.partition("=")
            fields[key.strip().lower()] = raw.strip()
        limit = _number(fields.get("limit"))
        remaining = _number(fields.get("remaining"))
        reset = _number(fields.get("reset"))
        return RateLimit(
            limit=None if limit is None else int(limit),
            remaining=None if remaining is None else int(remaining),
            reset_at=None if reset is None else now + reset,
        )
    # Current draft: one item per policy; the most restrictive one is what binds us.
    candidates = [(name, params) for name, params in items if _number(params.get("r")) is not None]
    if not candidates:
        return None
    name, params = min(candidates, key=lambda item: _number(item[1].get("r")) or 0.0)
    remaining = _number(params.get("r"))
    reset = _number(params.get("t"))
    limit_value: float | None = None
    if policy is not None:
        policies = _sf_list(policy)
        matching = [p for policy_name, p in policies if policy_name == name]
        if not matching and len(policies) == 1:
            matching = [policies[0][1]]
        if matching:
            limit_value = _number(matching[0].get("q"))
    return RateLimit(
        limit=None if limit_value is None else int(limit_value),
        remaining=None if remaining is None else int(remaining),
        reset_at=None if reset is None else now + reset,
    )
