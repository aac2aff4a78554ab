"""Webhooks: the events an API sends, and whether they declare signature/id/timestamp headers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from generator.ir import Api, Parameter, Webhook, WebhookSignatureSpec, Where
from generator.lint.model import Hit, Rule, join_words, rule

if TYPE_CHECKING:
    from generator.lint.fix_plan import Fixer, FixPlan
    from generator.lint.model import Finding


def _header(params: list[Parameter], *tests: str) -> Parameter | None:
    for param in params:
        name = param.name.lower()
        if any(_matches(name, t) for t in tests):
            return param
    return None


def _matches(name: str, test: str) -> bool:
    if test.startswith("*"):
        return name.endswith(test[1:])
    if test.endswith("*"):
        return name.startswith(test[:-1])
    return name == test


def detect(hook: Webhook) -> WebhookSignatureSpec | None:
    op = hook.operation
    headers = [p for p in op.parameters if p.location == "header"]
    signature = _header(
        headers, "webhook-signature", "*-signature", "*-signature-256", "x-signature*", "signature"
    )
    id_header = _header(
        headers,
        "webhook-id",
        "*-webhook-id",
        "*-event-id",
        "*-delivery",
        "*-delivery-id",
        "*-message-id",
    )
    timestamp = _header(headers, "webhook-timestamp", "*-timestamp", "*-signature-timestamp")
    payload_has_id = any(
        "id" in m.schema.properties
        for m in (op.request_body.content if op.request_body else ())
        if m.schema
    )
    if signature is None and id_header is None and timestamp is None:
        return (
            None
            if not payload_has_id
            else WebhookSignatureSpec("custom", None, None, None, payload_has_id, op.where)
        )
    if signature is not None and signature.name.lower() == "webhook-signature":
        scheme = "standard-webhooks"
    elif signature is not None and "t=" in signature.description and "v1=" in signature.description:
        scheme = "stripe-style"
    else:
        scheme = "custom"
    evidence = signature or id_header or timestamp
    assert evidence is not None
    return WebhookSignatureSpec(
        scheme=scheme,  # type: ignore[arg-type]
        signature_header=signature.name if signature else None,
        id_header=id_header.name if id_header else None,
        timestamp_header=timestamp.name if timestamp else None,
        payload_has_id=payload_has_id,
        where=evidence.where,
    )


# --- lint rules ------------------------------------------------------------------------


def _label(hook: Webhook) -> str:
    kind = "callback" if hook.source == "callback" else "webhook"
    return f"{kind} `{hook.name}` ({hook.operation.method.upper()})"


@rule(
    "webhook-signature-missing",
    "warning",
    "a webhook without a declared signature header",
    "webhooks",
)
def signature_missing(api: Api) -> Iterator[Hit]:
    for hook in api.webhooks:
        if hook.signature is None or hook.signature.signature_header is None:
            yield Hit(
                f"{_label(hook)}: declare a signature header parameter (e.g. Standard Webhooks "
                "`webhook-signature` with `webhook-id` and `webhook-timestamp`, or "
                "`Acme-Signature: t=…,v1=…`) so consumers can verify the sender and reject replays",
                hook.operation.where,
                hook.operation,
                hook.name,
            )


@rule(
    "webhook-id-missing",
    "warning",
    "a webhook whose payload has no `id` (nor an id header) consumers can dedupe on",
    "webhooks",
)
def id_missing(api: Api) -> Iterator[Hit]:
    for hook in api.webhooks:
        sig = hook.signature
        if sig is not None and (sig.payload_has_id or sig.id_header):
            continue
        op = hook.operation
        body = op.request_body
        where = (
            body.content[0].schema.where
            if body and body.content and body.content[0].schema
            else None
        )
        yield Hit(
            f"{_label(hook)}: add an `id` property to the payload (or a `webhook-id` header), "
            "the same on every delivery attempt, so consumers can drop duplicates",
            where or (body.where if body else op.where),
            op,
            hook.name,
        )


RULES: tuple[Rule, ...] = (signature_missing, id_missing)


# --- the fixes -------------------------------------------------------------------------------

# Standard Webhooks (https://www.standardwebhooks.com): name → (component, description, type)
STANDARD_HEADERS: dict[str, tuple[str, str, str]] = {
    "webhook-id": (
        "WebhookId",
        "The message's id, the same on every delivery attempt: drop a message already seen.",
        "string",
    ),
    "webhook-timestamp": (
        "WebhookTimestamp",
        "When the message was sent (Unix seconds); reject one too far from now (replays).",
        "integer",
    ),
    "webhook-signature": (
        "WebhookSignature",
        "The signatures, e.g. `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, space-separated.",
        "string",
    ),
}


def _same_header(name: str) -> Callable[[str, Any], bool]:
    def same(_: str, value: Any) -> bool:
        return (
            isinstance(value, dict)
            and value.get("in") == "header"
            and str(value.get("name", "")).lower() == name
        )

    return same


def _add_headers(
    finding: Finding, plan: FixPlan, names: tuple[str, ...]
) -> tuple[Where, str] | None:
    op = finding.operation
    if op is None:
        return None
    first = None
    added = []
    for name in names:
        if plan.has_parameter(op, name):
            continue
        component, description, kind = STANDARD_HEADERS[name]
        param = {
            "name": name,
            "in": "header",
            "required": True,
            "description": description,
            "schema": {"type": kind},
        }
        where = plan.component("parameters", component, param, _same_header(name))
        at = plan.add_parameter(op, name, where)
        first = first or at
        added.append(f"`{name}`")
    if first is None:
        return None
    return (
        first,
        f"{plan.label(finding)}: added the Standard Webhooks header{'s' if len(added) > 1 else ''} {join_words(added)}",
    )


def fix_signature(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    return _add_headers(finding, plan, tuple(STANDARD_HEADERS))


def fix_id(finding: Finding, plan: FixPlan) -> tuple[Where, str] | None:
    return _add_headers(finding, plan, ("webhook-id",))


FIXES: dict[str, Fixer] = {
    "webhook-signature-missing": fix_signature,
    "webhook-id-missing": fix_id,
}
