"""Rate limiting on the `limits` library, keyed by the authenticated principal.

Who is limited:

- an *authenticated principal*: the `security.Principal` authentication verified
  (`request.state.principal`), by its `id`; its `tier` picks the limit from `tiers`
  (tier → "100/minute"), and a principal without a (known) tier gets `default`;
- everyone else — no credentials, or credentials nobody verified — by client address
  (`client_address.client_ip`: `X-Forwarded-For` believed only from
  `APIFORGE_TRUSTED_PROXIES`, an IPv6 address by its /64), with the `anonymous` limit. A token the caller sends is never a key by itself, so
  inventing tokens cannot buy fresh buckets.

Strategies: "sliding-window-counter" (default), "fixed-window", "moving-window". Storage: any
`limits` storage URL — `memory://` (per process, the default) or `redis://host:port/db`. The
async storages are used (`async+memory://`, `async+redis://` through redis-py), so a Redis
round trip never blocks the event loop; on memory the async storage costs about the same as
the sync one (~30 µs per hit + stats, measured).

Headers (`family`, as the spec declares them), on every response of a limited operation,
errors included:

- "x-ratelimit": `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (unix s)
- "ratelimit":   `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (delta seconds)
- "ietf":        `RateLimit: "default";r=R;t=T` and `RateLimit-Policy: "default";q=Q;w=W`
                 (the policy name is the bucket name)

Over the limit: 429 problem `rate-limited` with an integer `Retry-After` (≥ 1).
If the storage fails (Redis down), requests are let through without headers and a warning is
logged (fail open).

Round trips: a request needs the hit and the window's stats (for the headers). `limits` asks
its storage twice (`hit`, then `get_window_stats`). On Redis with the default sliding window
counter, `RateLimiter` instead runs one Lua script — `limits`' own acquire script, returning
the window it decided on — registered on `limits`' own connection and keys: one script call per
request, and the calls of concurrent requests share one pipelined round trip (see
`_OneTripSlidingWindow`; each decision stays exact and atomic: no overshoot). While a caller's
window has room to spare, one call takes up to `lease` units ahead (`APIFORGE_RATE_LIMIT_LEASE`,
default 32, at most 1/16 of what is left) for the caller's next requests in this worker: no
round trip for those; near the limit every request is one exact call again. Other strategies
and storages use the two calls; on memory the second call is a dictionary read.

Integration surface:

- `RateLimiter(...)` / `RateLimiter.from_settings(settings)` — the configured limiter.
- `install_rate_limiting(app, limiter)` — once in `create_app`, after
  `problems.install_problem_handlers` (whose middleware carries the headers onto every
  response); stores the limiter in `app.state.rate_limiter`.
- `rate_limited(family, *, bucket="default") -> RateLimit` — per operation:
  `@router.get(..., dependencies=[Depends(rate_limited("x-ratelimit"))])` on an
  `APIRouter(route_class=problems.GuardedRoute)` so the limit is checked before the body is read.
  Operations with the same bucket share one quota per principal.
- `rate_limit_headers(family, result, now=None)` — the header list for a `RateLimitResult`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from fastapi import FastAPI
from limits import RateLimitItem, WindowStats, parse
from limits.aio.storage import Storage as AsyncStorage
from limits.aio.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)
from limits.aio.strategies import (
    RateLimiter as _AsyncStrategy,
)
from limits.storage import storage_from_string
from starlette.requests import Request

from .client_address import client_ip
from .observability import record
from .problems import ProblemDetail, RequestGuard, defer_response_headers
from .security import principal_of

if TYPE_CHECKING:
    from .settings import Settings

logger = logging.getLogger(__name__)

Family = Literal["x-ratelimit", "ratelimit", "ietf"]
Strategy = Literal["sliding-window-counter", "fixed-window", "moving-window"]
FAMILIES: tuple[str, ...] = get_args(Family)
STRATEGIES: dict[str, type[_AsyncStrategy]] = {
    "sliding-window-counter": SlidingWindowCounterRateLimiter,
    "fixed-window": FixedWindowRateLimiter,
    "moving-window": MovingWindowRateLimiter,
}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request counts against. `key` is "user:<id>" or "ip:<addr>"."""

    key: str
    tier: str | None
    anonymous: bool


@dataclass(frozen=True, slots=True)
class RateLimitResult:
    allowed: bool
    limit: int  # quota of the window
    remaining: int
    reset_at: float  # unix time when (more) quota frees up
    window: int  # window length in seconds
    bucket: str
    description: str  # e.g. "100 per 1 minute"

    def retry_after(self, now: float | None = None) -> int:
        """Whole seconds until a retry can succeed, at least 1."""
        now = time.time() if now is None else now
        return max(1, math.ceil(self.reset_at - now))


def rate_limit_headers(
    family: str, result: RateLimitResult, now: float | None = None
) -> list[tuple[str, str]]:
    """The response headers of `family` ("x-ratelimit", "ratelimit" or "ietf")."""
    now = time.time() if now is None else now
    delta = max(0, math.ceil(result.reset_at - now))
    if family == "x-ratelimit":
        return [
            ("X-RateLimit-Limit", str(result.limit)),
            ("X-RateLimit-Remaining", str(result.remaining)),
            ("X-RateLimit-Reset", str(math.ceil(max(result.reset_at, now)))),
        ]
    if family == "ratelimit":
        return [
            ("RateLimit-Limit", str(result.limit)),
            ("RateLimit-Remaining", str(result.remaining)),
            ("RateLimit-Reset", str(delta)),
        ]
    if family == "ietf":
        name = result.bucket.replace("\\", "\\\\").replace('"', '\\"')
        return [
            ("RateLimit", f'"{name}";r={result.remaining};t={delta}'),
            ("RateLimit-Policy", f'"{name}";q={result.limit};w={result.window}'),
        ]
    raise ValueError(f"unknown rate-limit header family {family!r}; use one of {FAMILIES}")


def _async_storage_url(url: str) -> str:
    return url if url.startswith("async+") else "async+" + url


# limits 5's acquire_sliding_window.lua, unchanged in what it decides, returning the window
# (counts and TTLs after the hit) so that the headers need no second round trip.
# KEYS: previous, current window; ARGV: limit, expiry (s), amount. Times in ms.
_LUA_ACQUIRE_SLIDING_WINDOW = """
local limit = tonumber(ARGV[1])
local expiry = tonumber(ARGV[2]) * 1000
local amount = tonumber(ARGV[3])
local current_ttl = tonumber(redis.call('pttl', KEYS[2]))
if current_ttl > 0 and current_ttl < expiry then
    redis.call('rename', KEYS[2], KEYS[1])
    redis.call('set', KEYS[2], 0, 'PX', current_ttl + expiry)
end
local previous_count = tonumber(redis.call('get', KEYS[1])) or 0
local previous_ttl = tonumber(redis.call('pttl', KEYS[1])) or 0
local current_count = tonumber(redis.call('get', KEYS[2])) or 0
current_ttl = tonumber(redis.call('pttl', KEYS[2])) or 0
if previous_ttl <= 0 then previous_ttl = 0 end
if current_ttl <= 0 then current_ttl = 0 end
local weighted = math.floor(previous_count * previous_ttl / expiry) + current_count
local acquired = 0
if amount <= limit and weighted + amount <= limit then
    acquired = 1
    if redis.call('exists', KEYS[2]) == 1 then
        current_count = redis.call('incrby', KEYS[2], amount)
    else
        redis.call('set', KEYS[2], amount, 'PX', expiry * 2)
        current_count = amount
        current_ttl = expiry * 2
    end
end
return {acquired, previous_count, previous_ttl, current_count, current_ttl}
"""


_LEASE_SECONDS = 1.0  # how long leased units stay usable


@dataclass(slots=True)
class _Lease:
    """Units of one caller's window this worker holds, and the window when it took them."""

    units: int
    until: float  # time.monotonic() after which the units are dropped
    stats: WindowStats


class _OneTripSlidingWindow:
    """Sliding-window-counter hit + window stats in one Redis round trip, on the redis-py
    connection and with the keys of `limits`' own Redis storage (so counters stay compatible
    with `limits`, e.g. `storage.reset()`). `attach` returns None when the storage is not one
    this knows (another `limits` version or Redis client): the limiter then makes two calls.

    The script calls of concurrent requests share round trips (auto-pipelining): a call
    joins a queue; one flush at a time sends the whole queue as one pipeline (no MULTI: each
    script still runs on its own, atomically, so every decision is the exact one it would be
    alone) and, while that pipeline is out, the next calls queue for the one after. Alone, a
    request waits for no one; under load, one send, one receive and one wake-up of the event
    loop serve a whole batch. The script is sent by its SHA (a pipeline of redis-py's
    `Script` objects would ask `SCRIPT EXISTS` first: a second round trip).

    Leases: while a caller's window has room to spare, one script call takes several units
    at once (`amount` k, counted in Redis at once like k hits) and the next k-1 requests of
    that caller in this worker use them without a round trip. k is at most `max_lease` and at
    most 1/16 of what the window had left at the last call, so near the limit every request
    is one exact call again (k = 1) and small limits (< 32 per window) are never leased.
    Bounds: a lease is used within `_LEASE_SECONDS` (or a tenth of the window, if shorter) or
    dropped; a unit counted early can let at most k extra requests per worker into the window
    that follows, and units a worker leased but never used can refuse at most that many of
    another worker's requests before they expire. `max_lease=1`: one call per request."""

    def __init__(self, storage: AsyncStorage, max_lease: int = 1) -> None:
        bridge = storage.bridge  # type: ignore[attr-defined]
        self._storage = storage
        self._bridge = bridge
        self._script = bridge.get_connection().register_script(_LUA_ACQUIRE_SLIDING_WINDOW)
        self._queue: list[tuple[list[str], list[int], asyncio.Future[Any]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.batches = 0  # pipelines sent (with `calls`, the mean batch size: tests, benches)
        self.calls = 0
        self.max_lease = max_lease
        self._leases: dict[str, _Lease] = {}
        self._leasing: dict[str, asyncio.Event] = {}  # callers with a lease call in flight

    @classmethod
    def attach(
        cls, storage: AsyncStorage, strategy: str, max_lease: int = 1
    ) -> _OneTripSlidingWindow | None:
        bridge = getattr(storage, "bridge", None)
        if (
            strategy != "sliding-window-counter"
            or type(bridge).__name__ != "RedispyBridge"
            or not hasattr(bridge, "prefixed_key")
            or not hasattr(storage, "_current_window_key")
            or not hasattr(storage, "_previous_window_key")
        ):
            return None
        return cls(storage, max_lease)

    async def hit(self, item: RateLimitItem, *identifiers: str) -> tuple[bool, WindowStats]:
        key = item.key_for(*identifiers)
        while True:
            now = time.monotonic()
            lease = self._leases.get(key)
            if lease is not None and lease.units and now < lease.until:
                lease.units -= 1
                return True, WindowStats(
                    lease.stats.reset_time, lease.stats.remaining + lease.units
                )
            leasing = self._leasing.get(key)
            if leasing is None:
                break
            await leasing.wait()  # a lease for this caller is on its way: share it
        amount = 1
        if lease is not None and self.max_lease > 1:
            amount = max(1, min(self.max_lease, lease.stats.remaining // 16))
        if amount == 1:  # exact calls of concurrent requests go out side by side
            return await self._take(key, item, amount, now)
        self._leasing[key] = done = asyncio.Event()
        try:
            return await self._take(key, item, amount, now)
        finally:
            del self._leasing[key]
            done.set()

    async def _take(
        self, key: str, item: RateLimitItem, amount: int, now: float
    ) -> tuple[bool, WindowStats]:
        """One unit for this request and `amount` - 1 more for the lease."""
        acquired, stats = await self._acquire(key, item, amount)
        if not acquired and amount > 1:  # the window cannot spare a lease: one exact unit
            amount = 1
            acquired, stats = await self._acquire(key, item, amount)
        if len(self._leases) > 10_000:  # callers seen once in a while: forget the stale
            self._leases = {k: v for k, v in self._leases.items() if v.until > now}
        spare = amount - 1 if acquired else 0
        held = self._leases.get(key)  # a concurrent request of the caller may have leased too
        if held is not None and held.units and held.until > now:
            spare += held.units
        ttl = min(_LEASE_SECONDS, item.get_expiry() / 10)
        self._leases[key] = _Lease(spare, now + ttl, stats)
        return acquired, WindowStats(stats.reset_time, stats.remaining + spare)

    async def _acquire(
        self, key: str, item: RateLimitItem, amount: int
    ) -> tuple[bool, WindowStats]:
        """`amount` units of `key`'s window, all or none, and the window after."""
        storage: Any = self._storage
        keys = [
            self._bridge.prefixed_key(storage._previous_window_key(key)),
            self._bridge.prefixed_key(storage._current_window_key(key)),
        ]
        expiry = item.get_expiry()
        reply = await self._call(keys, [item.amount, expiry, amount])
        acquired, prev_count, prev_ttl, cur_count, cur_ttl = reply
        return bool(acquired), _window_stats(
            item, int(prev_count), int(prev_ttl) / 1000, int(cur_count), int(cur_ttl) / 1000
        )

    async def _call(self, keys: list[str], args: list[int]) -> Any:
        """The script's reply for `keys`, `args`, sent in the next pipeline."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append((keys, args, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                replies = await self._send([(keys, args) for keys, args, _ in batch])
            except BaseException as exc:  # the connection, or this task cancelled
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(
                            exc if isinstance(exc, Exception) else ConnectionError()
                        )
                if not isinstance(exc, Exception):
                    raise
                continue
            self.batches += 1
            self.calls += len(batch)
            for (_, _, future), reply in zip(batch, replies, strict=True):
                if future.done():  # its request was cancelled (the client went away)
                    continue
                if isinstance(reply, Exception):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)

    async def _send(
        self, calls: list[tuple[list[str], list[int]]], again: bool = True
    ) -> list[Any]:
        """One pipeline of EVALSHA calls (no MULTI); the replies, errors included. Calls the
        server did not run for want of the script (a restarted Redis) are sent once more
        after loading it; the others ran and are not repeated."""
        connection = self._bridge.get_connection()
        pipe = connection.pipeline(transaction=False)
        for keys, args in calls:
            pipe.evalsha(self._script.sha, len(keys), *keys, *args)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        # redis' NoScriptError, by name: redis is imported only when a redis:// URL is set
        missing = [i for i, reply in enumerate(replies) if type(reply).__name__ == "NoScriptError"]
        if missing and again:
            self._script.sha = await connection.script_load(self._script.script)
            retried = await self._send([calls[i] for i in missing], again=False)
            for i, reply in zip(missing, retried, strict=True):
                replies[i] = reply
        return replies


def _window_stats(
    item: RateLimitItem,
    previous_count: int,
    previous_expires_in: float,
    current_count: int,
    current_expires_in: float,
) -> WindowStats:
    """`SlidingWindowCounterRateLimiter.get_window_stats` of limits 5, from a window, with
    the reset of a window that has just begun a window away, not now."""
    expiry = item.get_expiry()
    weighted = previous_count * previous_expires_in / expiry + current_count
    remaining = max(0, item.amount - math.floor(weighted))
    now = time.time()
    if not (previous_count or current_count):
        return WindowStats(now, remaining)
    previous_reset_in, current_reset_in = math.inf, math.inf
    if previous_count:
        previous_reset_in = previous_expires_in % (expiry / previous_count)
    if current_count:
        # the current window's key lives for what is left of the window plus one window: a
        # TTL of exactly one or two windows is a window that ends a whole window from now
        # (limits' own `% expiry` says "now" there)
        current_reset_in = current_expires_in % expiry or expiry
    return WindowStats(now + min(previous_reset_in, current_reset_in), remaining)


class RateLimiter:
    """Limits per principal and bucket; see the module docstring for who is limited how."""

    def __init__(
        self,
        *,
        storage_url: str = "memory://",
        strategy: str = "sliding-window-counter",
        default: str = "100/minute",
        anonymous: str | None = None,
        tiers: Mapping[str, str] | None = None,
        enabled: bool = True,
        key_prefix: str = "apiforge",
        lease: int = 32,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"rate-limit strategy {strategy!r}: use one of {sorted(STRATEGIES)}")
        self.enabled = enabled
        self.default = _parse_limit(default, "default")
        self.anonymous = _parse_limit(anonymous, "anonymous") if anonymous else self.default
        self.tiers = {
            name: _parse_limit(value, f"tier {name}") for name, value in (tiers or {}).items()
        }
        self.key_prefix = key_prefix
        options: dict[str, str] = {}
        url = _async_storage_url(storage_url)
        if url.startswith(("async+redis", "async+rediss")):
            options = {"implementation": "redispy", "key_prefix": key_prefix}
        storage = storage_from_string(url, **options)
        if not isinstance(storage, AsyncStorage):
            raise ValueError(f"rate-limit storage {storage_url!r} has no async implementation")
        self.storage = storage
        self.strategy = STRATEGIES[strategy](storage)
        if lease < 1:
            raise ValueError(f"rate-limit lease {lease}: must be 1 (no lease) or more")
        self._one_trip = _OneTripSlidingWindow.attach(storage, strategy, lease)
        self._storage_failed = False

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> RateLimiter:
        options: dict[str, object] = {
            "storage_url": settings.rate_limit_storage_url,
            "strategy": settings.rate_limit_strategy,
            "default": settings.rate_limit_default,
            "anonymous": settings.rate_limit_anonymous or None,
            "tiers": settings.rate_limit_tiers,
            "enabled": settings.rate_limit_enabled and settings.patterns_enabled,
            "lease": settings.rate_limit_lease,
        }
        options.update(overrides)
        return cls(**options)  # type: ignore[arg-type]

    # -- who ---------------------------------------------------------------------------

    def caller(self, request: Request) -> Caller:
        principal = principal_of(request)
        if principal is not None:
            return Caller(f"user:{principal.id}", principal.tier, False)
        return Caller(f"ip:{client_ip(request)}", None, True)

    def limit_for(self, caller: Caller) -> RateLimitItem:
        if caller.anonymous:
            return self.anonymous
        if caller.tier is not None and caller.tier in self.tiers:
            return self.tiers[caller.tier]
        return self.default

    # -- how much ----------------------------------------------------------------------

    async def hit(self, request: Request, bucket: str = "default") -> RateLimitResult | None:
        """Consume one unit of `bucket` for the request's caller; None if the storage failed."""
        caller = self.caller(request)
        item = self.limit_for(caller)
        try:
            if self._one_trip is not None:
                allowed, stats = await self._one_trip.hit(item, bucket, caller.key)
            else:
                allowed = await self.strategy.hit(item, bucket, caller.key)
                stats = await self._window(item, bucket, caller.key)
        except Exception as exc:  # fail open: a limiter outage must not take the API down
            if not self._storage_failed:
                logger.warning("rate-limit storage failed; letting requests through", exc_info=exc)
            self._storage_failed = True
            return None
        self._storage_failed = False
        return RateLimitResult(
            allowed=allowed,
            limit=item.amount,
            remaining=0 if not allowed else max(0, stats.remaining),
            reset_at=stats.reset_time,
            window=item.get_expiry(),
            bucket=bucket,
            description=str(item),
        )

    async def _window(self, item: RateLimitItem, *identifiers: str) -> WindowStats:
        """The window after a hit; a sliding window's read the way the one-trip script's is
        (`_window_stats`)."""
        if not isinstance(self.strategy, SlidingWindowCounterRateLimiter):
            return await self.strategy.get_window_stats(item, *identifiers)
        storage: Any = self.storage
        window = await storage.get_sliding_window(item.key_for(*identifiers), item.get_expiry())
        return _window_stats(item, *window)

    async def reset(self) -> None:
        """Forget every counter (tests)."""
        await self.storage.reset()


def _parse_limit(value: str, what: str) -> RateLimitItem:
    try:
        return parse(value)
    except ValueError as exc:
        raise ValueError(f"rate limit {what}: {value!r} is not a limit like '100/minute'") from exc


class RateLimit(RequestGuard):
    """The per-operation guard `rate_limited` returns (a FastAPI dependency)."""

    def __init__(self, family: str, bucket: str) -> None:
        if family not in FAMILIES:
            raise ValueError(f"unknown rate-limit header family {family!r}; use one of {FAMILIES}")
        self.family = family
        self.bucket = bucket

    async def check(self, request: Request) -> None:
        limiter: RateLimiter | None = getattr(request.app.state, "rate_limiter", None)
        if limiter is None:
            raise RuntimeError("rate_limited(...) needs install_rate_limiting(app, limiter)")
        if not limiter.enabled:
            return
        result = await limiter.hit(request, self.bucket)
        if result is None:
            return
        now = time.time()
        defer_response_headers(request.scope, rate_limit_headers(self.family, result, now))
        record("rate_limit", "allowed" if result.allowed else "limited", bucket=self.bucket)
        if not result.allowed:
            retry = result.retry_after(now)
            raise ProblemDetail(
                429,
                "rate-limited",
                "Too many requests",
                f"Rate limit of {result.description} exceeded. Retry after {retry}s.",
                headers={"Retry-After": str(retry)},
            )


def rate_limited(family: str, *, bucket: str = "default") -> RateLimit:
    """The dependency that limits an operation and sends the `family` headers."""
    return RateLimit(family, bucket)


def install_rate_limiting(app: FastAPI, limiter: RateLimiter) -> None:
    """Make `limiter` the one `rate_limited(...)` dependencies of `app` use."""
    app.state.rate_limiter = limiter
