"""Webhooks: the events an API sends, and whether they declare signature/id/timestamp headers."""

from __future__ import annotations

from generator.ir import Parameter, Webhook, WebhookSignatureSpec


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
