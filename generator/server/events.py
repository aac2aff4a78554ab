"""The server plan's webhook pieces: the typed event helpers of `events.py`, the event
type a 202 job sends when it ends, and the signature convention of the API's webhooks."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from generator.ir import Api, Operation, Webhook
from generator.render.names import NameAllocator, snake_case
from generator.render.pytypes import TypeMapper
from generator.schemas import first_json, resolved


@dataclass(frozen=True)
class EventPlan:
    name: str  # event type
    method: str
    data_type: str
    summary: str


class EventPlanner:
    """Plans what the API's webhooks need (`is_job`: whether an operation is a 202 job)."""

    def __init__(self, api: Api, types: TypeMapper, is_job: Callable[[Operation], bool]) -> None:
        self.api = api
        self.types = types
        self.is_job = is_job

    def events(self) -> list[EventPlan]:
        allocator = NameAllocator({"emit", "outbox", "endpoints"})
        plans = []
        for hook in self.api.webhooks:
            plans.append(self.event(hook, allocator))
        return plans

    def event(self, hook: Webhook, allocator: NameAllocator) -> EventPlan:
        data_type = "Any"
        body = hook.operation.request_body
        media = first_json(body.content) if body else None
        if media is not None and media.schema is not None:
            data = resolved(media.schema, self.api.schemas) or {}
            props = data.get("properties")
            if isinstance(props, Mapping) and "data" in props and "type" in props:
                data_type = self.types.type_of(props["data"])
            else:
                data_type = self.types.type_of(media.schema.data, name=media.schema.name)
        if data_type != "Any" and not data_type.startswith("dict["):
            data_type = f"{data_type} | dict[str, Any]"
        method = allocator.allocate(
            (hook.source, hook.name), snake_case(hook.name, fallback="event")
        )
        return EventPlan(
            name=hook.name,
            method=method,
            data_type=data_type,
            summary=hook.operation.summary or hook.operation.description,
        )

    def job_events(self) -> tuple[dict[str, str], bool]:
        """The event type a job's webhook carries when the job ends, per final status, as the
        spec declares it: the submit operation's callback, else one of the API's webhooks about
        jobs (named `job…`, or whose `data` is the 202 response's schema). The type values come
        from the event schema's `type` enum, else the webhook names: one value serves every
        status (`job.finished`); several are matched by their `.completed`/`.failed`/
        `.cancelled` suffix. Without a declaration: `job.<status>`."""
        submits = [op for op in self.api.operations if self.is_job(op)]
        job_schemas = set()
        for op in submits:
            response = op.response("202")
            for media in response.content if response else ():
                if media.schema is not None:
                    job_schemas.add(media.schema.name or id(media.schema))
        callbacks = [
            hook
            for hook in self.api.webhooks
            if hook.source == "callback"
            and any(hook.name.startswith(f"{op.id}.") for op in submits)
        ]
        subscribed = False
        hooks = callbacks
        if not hooks:
            hooks = [
                hook
                for hook in self.api.webhooks
                if hook.source != "callback"
                and (
                    re.match(r"(?i)jobs?([._-]|[A-Z]|$)", hook.name)
                    or self._event_data_schema(hook) in job_schemas
                )
            ]
            subscribed = bool(hooks)
        values: list[str] = []
        for hook in sorted(hooks, key=lambda h: h.name):
            declared = self._event_type_enum(hook)
            for value in declared or [hook.name]:
                if value not in values:
                    values.append(value)
        types: dict[str, str] = {}
        for status in ("completed", "failed", "cancelled"):
            exact = [v for v in values if v == status or re.search(rf"[._-]{status}$", v)]
            if exact:
                types[status] = exact[0]
            elif len(values) == 1:
                types[status] = values[0]
            else:
                types[status] = f"job.{status}"
        return types, subscribed

    def _event_body(self, hook: Webhook) -> Mapping[str, Any]:
        body = hook.operation.request_body
        media = first_json(body.content) if body else None
        if media is None or media.schema is None:
            return {}
        return resolved(media.schema, self.api.schemas) or {}

    def _event_type_enum(self, hook: Webhook) -> list[str]:
        props = self._event_body(hook).get("properties")
        kind = props.get("type") if isinstance(props, Mapping) else None
        enum = kind.get("enum") if isinstance(kind, Mapping) else None
        if not isinstance(enum, list):
            const = kind.get("const") if isinstance(kind, Mapping) else None
            enum = [const] if isinstance(const, str) else []
        return [v for v in enum if isinstance(v, str) and v]

    def _event_data_schema(self, hook: Webhook) -> object:
        props = self._event_body(hook).get("properties")
        data = props.get("data") if isinstance(props, Mapping) else None
        ref = data.get("$ref") if isinstance(data, Mapping) else None
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            return ref.rsplit("/", 1)[-1]
        return None

    def signature(self) -> tuple[str, str]:
        for hook in self.api.webhooks:
            sig = hook.signature
            if sig and sig.scheme == "stripe-style" and sig.signature_header:
                prefix = re.sub(r"-?signature$", "", sig.signature_header, flags=re.I)
                prefix = re.sub(r"[^A-Za-z0-9-]", "", prefix) or "Webhook"
                return "stripe", prefix
        return "standard", "Webhook"
