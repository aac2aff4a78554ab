"""Verifying signed webhook deliveries: Standard Webhooks and Stripe-style `t=…,v1=…`.

Public API:

- `verify_webhook(raw_body, headers, secret, *, tolerance=300, now=None,
  signature_header=None) -> Any`: checks the signature over the raw body bytes and the
  timestamp (at most `tolerance` seconds old or in the future), then returns the body parsed
  as JSON. Raises `WebhookVerificationError` otherwise. `secret` may be a list: during a
  rotation any of them may have signed; a header may carry several signatures too.
  The scheme is chosen from the headers:
  - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature:
    v1,<base64> v1,<base64>`; the secret is `whsec_<base64>` (HMAC key = decoded part); signed
    content `{id}.{timestamp}.{body}`. The `svix-` prefixed headers are read the same way.
  - Stripe-style: `<Name>-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 hex of
    `{t}.{body}` keyed with the secret's UTF-8 bytes. `signature_header` names the header;
    without it, any header ending in `-signature` whose value has `t=` is used.
- `sign_standard_webhook(msg_id, timestamp, raw_body, secret) -> str` and
  `sign_stripe_style(timestamp, raw_body, secret) -> str`: header values, for testing your
  own webhook handlers.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ._errors import WebhookVerificationError

DEFAULT_TOLERANCE = 300
_STANDARD_PREFIXES = ("webhook", "svix")


def _standard_key(secret: str) -> bytes:
    encoded = secret.removeprefix("whsec_")
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WebhookVerificationError("the webhook secret is not whsec_<base64>") from exc


def _standard_signature(key: bytes, msg_id: str, timestamp: str, raw_body: bytes) -> str:
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def _stripe_signature(secret: str, timestamp: str, raw_body: bytes) -> str:
    signed = f"{timestamp}.".encode() + raw_body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def sign_standard_webhook(msg_id: str, timestamp: int, raw_body: bytes, secret: str) -> str:
    """The `webhook-signature` header value (`v1,<base64>`) a Standard Webhooks sender sends."""
    return "v1," + _standard_signature(_standard_key(secret), msg_id, str(timestamp), raw_body)


def sign_stripe_style(timestamp: int, raw_body: bytes, secret: str) -> str:
    """The `t=<unix>,v1=<hex>` header value a Stripe-style sender sends."""
    return f"t={timestamp},v1={_stripe_signature(secret, str(timestamp), raw_body)}"


def _timestamp(raw: str) -> int:
    raw = raw.strip()
    if not raw.isascii() or not raw.isdigit():
        raise WebhookVerificationError("the webhook timestamp is not a unix time")
    return int(raw)


def _check_tolerance(timestamp: int, now: float, tolerance: float) -> None:
    # Both directions: an old timestamp is a replay, a future one a way to extend a replay.
    if timestamp < now - tolerance:
        raise WebhookVerificationError("the webhook timestamp is too old")
    if timestamp > now + tolerance:
        raise WebhookVerificationError("the webhook timestamp is in the future")


def _any_match(expected: Sequence[str], received: Sequence[str]) -> bool:
    matched = False
    for want in expected:
        for got in received:
            # Keep comparing after a match so the time taken does not say which one matched.
            matched |= hmac.compare_digest(want.encode(), got.encode())
    return matched


def _verify_standard(
    raw_body: bytes,
    headers: Mapping[str, str],
    prefix: str,
    secrets: Sequence[str],
    now: float,
    tolerance: float,
) -> None:
    msg_id = headers.get(f"{prefix}-id")
    raw_timestamp = headers.get(f"{prefix}-timestamp")
    signature = headers.get(f"{prefix}-signature")
    if not msg_id or raw_timestamp is None or not signature:
        raise WebhookVerificationError(
            f"missing {prefix}-id, {prefix}-timestamp or {prefix}-signature header"
        )
    timestamp = _timestamp(raw_timestamp)
    received = [
        sig
        for version, _, sig in (part.partition(",") for part in signature.split())
        if version == "v1"
    ]
    expected = [
        _standard_signature(_standard_key(secret), msg_id, raw_timestamp.strip(), raw_body)
        for secret in secrets
    ]
    if not received or not _any_match(expected, received):
        raise WebhookVerificationError("no webhook signature matches")
    _check_tolerance(timestamp, now, tolerance)


def _verify_stripe_style(
    raw_body: bytes, value: str, secrets: Sequence[str], now: float, tolerance: float
) -> None:
    raw_timestamp: str | None = None
    received: list[str] = []
    for item in value.split(","):
        key, _, val = item.strip().partition("=")
        if key == "t":
            raw_timestamp = val
        elif key == "v1":
            received.append(val.lower())
    if raw_timestamp is None or not received:
        raise WebhookVerificationError("the signature header has no t= or no v1= entry")
    timestamp = _timestamp(raw_timestamp)
    expected = [_stripe_signature(secret, raw_timestamp.strip(), raw_body) for secret in secrets]
    if not _any_match(expected, received):
        raise WebhookVerificationError("no webhook signature matches")
    _check_tolerance(timestamp, now, tolerance)


def verify_webhook(
    raw_body: bytes,
    headers: Mapping[str, str],
    secret: str | Sequence[str],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
    signature_header: str | None = None,
) -> Any:
    """Verify a delivery and return its JSON body (see the module docstring)."""
    if not isinstance(cast(object, raw_body), bytes | bytearray):  # from untyped callers too
        # A parsed-and-reserialised body would not match the signature anyway.
        raise TypeError("verify_webhook needs the raw request body as bytes")
    given_secrets: list[object] = [secret] if isinstance(secret, str) else list(secret)
    secrets = [s for s in given_secrets if isinstance(s, str) and s]
    if not secrets or len(secrets) != len(given_secrets):
        raise ValueError("give at least one non-empty webhook secret")
    current = time.time() if now is None else now
    lowered = {key.lower(): value for key, value in headers.items()}
    body = bytes(raw_body)

    chosen = signature_header.lower() if signature_header is not None else None
    standard = next(
        (
            prefix
            for prefix in _STANDARD_PREFIXES
            if (chosen is None or chosen == f"{prefix}-signature")
            and f"{prefix}-signature" in lowered
        ),
        None,
    )
    if standard is not None:
        _verify_standard(body, lowered, standard, secrets, current, tolerance)
    else:
        if chosen is not None:
            value = lowered.get(chosen)
        else:
            value = next(
                (v for k, v in sorted(lowered.items()) if k.endswith("-signature") and "t=" in v),
                None,
            )
        if value is None:
            raise WebhookVerificationError(
                f"no {signature_header or 'webhook signature'} header in the delivery"
            )
        _verify_stripe_style(body, value, secrets, current, tolerance)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise WebhookVerificationError("the signed webhook body is not JSON") from exc
