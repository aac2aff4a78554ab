"""The Redis outbox: several processes or hosts on one Redis (not a cluster); each change is
one Lua script. To write an event in the same transaction as your own commands,
``await RedisOutbox.enqueue_in(pipe, …)`` adds it to your ``MULTI`` pipeline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .outbox import (
    Attempt,
    Clock,
    Delivery,
    DeliveryStatus,
    Endpoint,
    Outbox,
    _attempt_from_json,
    _new_deliveries,
    _token,
    encode_event,
)

if TYPE_CHECKING:  # redis is the `redis` extra: imported only by the Redis outbox
    import redis.asyncio as aioredis

_REDIS_ENQUEUE = """
-- KEYS[1] event hash, KEYS[2] event's delivery list, KEYS[3] due zset, KEYS[4] all zset
-- ARGV[1] event type, ARGV[2] body, ARGV[3] now, ARGV[4] prefix, ARGV[5] deliveries JSON
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('LRANGE', KEYS[2], 0, -1)
end
redis.call('HSET', KEYS[1], 'type', ARGV[1], 'body', ARGV[2], 'created_at', ARGV[3])
local ids = {}
for _, d in ipairs(cjson.decode(ARGV[5])) do
  redis.call('HSET', ARGV[4] .. 'delivery:' .. d['id'],
    'id', d['id'], 'event_id', d['event_id'], 'event_type', ARGV[1], 'url', d['url'],
    'signer_key', d['signer_key'], 'status', 'pending', 'attempt_count', '0',
    'next_attempt_at', ARGV[3], 'created_at', ARGV[3], 'updated_at', ARGV[3],
    'last_status_code', '', 'last_error', '', 'claim', '', 'request_id', d['request_id'],
    'owner', d['owner'])
  redis.call('ZADD', KEYS[3], ARGV[3], d['id'])
  redis.call('ZADD', KEYS[4], ARGV[3], d['id'])
  redis.call('RPUSH', KEYS[2], d['id'])
  table.insert(ids, d['id'])
end
return ids
"""

_REDIS_CLAIM = """
-- KEYS[1] due zset; ARGV[1] now, ARGV[2] limit, ARGV[3] lease until, ARGV[4] claim, ARGV[5] prefix
-- ARGV[6..] owners to leave where they are ('' for none)
local limit = tonumber(ARGV[2])
local skip = {}
for i = 6, #ARGV do skip[ARGV[i]] = true end
local ids = {}
local offset = 0
while #ids < limit do
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', offset, 256)
  if #batch == 0 then break end
  for _, id in ipairs(batch) do
    local owner = redis.call('HGET', ARGV[5] .. 'delivery:' .. id, 'owner') or ''
    if not skip[owner] then
      table.insert(ids, id)
      if #ids >= limit then break end
    end
  end
  offset = offset + #batch
end
for _, id in ipairs(ids) do
  redis.call('ZADD', KEYS[1], ARGV[3], id)
  redis.call('HSET', ARGV[5] .. 'delivery:' .. id,
    'status', 'sending', 'claim', ARGV[4], 'next_attempt_at', ARGV[3])
end
return ids
"""

_REDIS_RECORD = """
-- KEYS[1] delivery hash, KEYS[2] attempts list, KEYS[3] due zset
-- ARGV: claim, status, attempt_count, next ('' = none), updated_at, code, error, attempt, id
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'attempt_count', ARGV[3],
  'next_attempt_at', ARGV[4], 'updated_at', ARGV[5], 'last_status_code', ARGV[6],
  'last_error', ARGV[7], 'claim', '')
redis.call('RPUSH', KEYS[2], ARGV[8])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[9])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[9])
end
return 1
"""


_REDIS_RELEASE = """
-- KEYS[1] delivery hash, KEYS[2] due zset; ARGV: claim, next attempt at, id
if redis.call('HGET', KEYS[1], 'claim') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'pending', 'next_attempt_at', ARGV[2], 'claim', '')
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""


async def _r(result: Any) -> Any:
    """redis-py types each command as ``Awaitable[T] | T``; the asyncio client always awaits."""
    return await result


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisOutbox(Outbox):
    """Several processes or hosts. Keys live under ``prefix`` (one Redis, not a cluster)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "apiforge:webhooks:",
        clock: Clock = time.time,
        client: aioredis.Redis | None = None,
    ) -> None:
        super().__init__(clock)
        self.prefix = prefix
        if client is None:
            import redis.asyncio as aioredis

            client = aioredis.Redis.from_url(url)
        self.redis: aioredis.Redis = client
        self._enqueue_script = self.redis.register_script(_REDIS_ENQUEUE)
        self._claim_script = self.redis.register_script(_REDIS_CLAIM)
        self._record_script = self.redis.register_script(_REDIS_RECORD)
        self._release_script = self.redis.register_script(_REDIS_RELEASE)

    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def _enqueue_args(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> tuple[list[str], list[Any]]:
        event_id = str(event["id"])
        deliveries = [
            {
                "id": d.id,
                "event_id": d.event_id,
                "url": d.url,
                "signer_key": d.signer_key,
                "request_id": d.request_id or "",
                "owner": d.owner or "",
            }
            for d in _new_deliveries(event, endpoints, now)
        ]
        keys = [
            self._k("event", event_id),
            self._k("event", event_id, "deliveries"),
            self._k("due"),
            self._k("all"),
        ]
        args = [
            str(event.get("type", "")),
            encode_event(event),
            repr(now),
            self.prefix,
            json.dumps(deliveries),
        ]
        return keys, args

    async def enqueue_in(
        self,
        pipe: Any,
        event: Mapping[str, Any],
        endpoints: Sequence[Endpoint | str],
        now: float | None = None,
    ) -> None:
        """Queue the enqueue on the caller's ``MULTI`` pipeline (``redis.asyncio`` pipeline with
        ``transaction=True``): it commits or not with the caller's own commands."""
        keys, args = self._enqueue_args(event, endpoints, self.clock() if now is None else now)
        await self._enqueue_script(keys=keys, args=args, client=pipe)

    async def _enqueue(
        self, event: Mapping[str, Any], endpoints: Sequence[Endpoint | str], now: float
    ) -> list[Delivery]:
        keys, args = self._enqueue_args(event, endpoints, now)
        ids = await self._enqueue_script(keys=keys, args=args)
        found = [await self.get_delivery(_s(i)) for i in ids]
        return [d for d in found if d is not None]

    @staticmethod
    def _delivery(raw: Mapping[Any, Any]) -> Delivery:
        h = {_s(k): _s(v) for k, v in raw.items()}
        status: Any = h["status"]
        return Delivery(
            h["id"],
            h["event_id"],
            h["event_type"],
            h["url"],
            h["signer_key"],
            status,
            int(h["attempt_count"]),
            float(h["next_attempt_at"]) if h["next_attempt_at"] else None,
            float(h["created_at"]),
            float(h["updated_at"]),
            int(h["last_status_code"]) if h["last_status_code"] else None,
            h["last_error"] or None,
            h["claim"],
            h.get("request_id") or None,
            h.get("owner") or None,
        )

    async def claim_due(
        self, now: float, limit: int, lease_seconds: float, skip_owners: Collection[str] = ()
    ) -> list[tuple[Delivery, bytes]]:
        claim = _token("clm_")
        ids = await self._claim_script(
            keys=[self._k("due")],
            args=[
                repr(now),
                limit,
                repr(now + lease_seconds),
                claim,
                self.prefix,
                *sorted(skip_owners),
            ],
        )
        out = []
        for raw_id in ids:
            d = await self.get_delivery(_s(raw_id))
            if d is None:
                continue
            body = await _r(self.redis.hget(self._k("event", d.event_id), "body"))
            out.append((d, bytes(body or b"")))
        return out

    async def record_attempt(
        self,
        delivery: Delivery,
        attempt: Attempt,
        status: DeliveryStatus,
        next_attempt_at: float | None,
    ) -> bool:
        done = await self._record_script(
            keys=[
                self._k("delivery", delivery.id),
                self._k("attempts", delivery.id),
                self._k("due"),
            ],
            args=[
                delivery.claim,
                status,
                attempt.number,
                "" if next_attempt_at is None else repr(next_attempt_at),
                repr(attempt.at),
                "" if attempt.status_code is None else attempt.status_code,
                attempt.error or "",
                json.dumps(attempt.to_json()),
                delivery.id,
            ],
        )
        return bool(done)

    async def release(self, delivery: Delivery, next_attempt_at: float) -> bool:
        done = await self._release_script(
            keys=[self._k("delivery", delivery.id), self._k("due")],
            args=[delivery.claim, repr(next_attempt_at), delivery.id],
        )
        return bool(done)

    async def get_delivery(self, delivery_id: str) -> Delivery | None:
        raw = await _r(self.redis.hgetall(self._k("delivery", delivery_id)))
        return self._delivery(raw) if raw else None

    async def list_deliveries(
        self,
        *,
        event_id: str | None = None,
        status: DeliveryStatus | None = None,
        limit: int = 100,
    ) -> list[Delivery]:
        if event_id is not None:
            ids = await _r(self.redis.lrange(self._k("event", event_id, "deliveries"), 0, -1))
            ids = list(reversed(ids))
        else:
            ids = await _r(self.redis.zrevrange(self._k("all"), 0, -1))
        out: list[Delivery] = []
        for raw_id in ids:
            d = await self.get_delivery(_s(raw_id))
            if d is not None and (status is None or d.status == status):
                out.append(d)
                if len(out) >= limit:
                    break
        return out

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        raw = await _r(self.redis.lrange(self._k("attempts", delivery_id), 0, -1))
        return [_attempt_from_json(json.loads(r)) for r in raw]

    async def get_event(self, event_id: str) -> dict[str, Any] | None:
        body = await _r(self.redis.hget(self._k("event", event_id), "body"))
        return None if body is None else dict(json.loads(body))

    async def close(self) -> None:
        await self.redis.aclose()
