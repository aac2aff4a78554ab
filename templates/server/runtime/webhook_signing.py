"""Signing outgoing webhooks, and verifying them (for consumers and for tests).

Two schemes, both real conventions:

- ``standard`` (the default) — Standard Webhooks (https://www.standardwebhooks.com):
  headers ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64>``; the
  signed content is ``{id}.{timestamp}.{body}``; secrets are ``whsec_<base64>`` and the HMAC
  key is the *decoded* bytes. Several signatures are separated by spaces.
- ``stripe`` — the reference's Stripe-style ``<Prefix>-Signature: t=<unix>,v1=<hex>``, the hex
  HMAC-SHA256 of ``{t}.{body}``, keyed (like Stripe and the reference) with the secret string's
  UTF-8 bytes as given; several signatures are several ``v1=`` members. The event id travels in
  ``<Prefix>-Webhook-Id``.

Secret rotation: a signer holds the current secret first and the previous one(s) after it and
signs with every one of them, so consumers that still hold the old secret keep verifying while
they move to the new one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as _secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Scheme = Literal["standard", "stripe"]

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300  # consumers reject signatures older (or newer) than 5 minutes


class WebhookVerificationError(Exception):
    """The signature is missing, malformed, stale, or matches none of the secrets."""


def generate_secret(nbytes: int = 32) -> str:
    """A new random signing secret in the Standard Webhooks form ``whsec_<base64>``."""
    return SECRET_PREFIX + base64.b64encode(_secrets.token_bytes(nbytes)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret: the decoded bytes after ``whsec_``.

    A secret without the prefix is used as its UTF-8 bytes."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except binascii.Error as exc:
            raise ValueError("webhook secret: whsec_ must be followed by base64") from exc
    return secret.encode()


def sign_standard(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One Standard Webhooks signature, ``v1,<base64>``."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def sign_stripe(secret: str, timestamp: int, body: bytes) -> str:
    """One Stripe-style signature: the hex HMAC-SHA256 of ``{t}.{body}``."""
    content = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class WebhookSigner:
    """Signs a body for delivery. ``secrets``: the current secret first, then previous ones."""

    secrets: tuple[str, ...] = field(repr=False)  # never in a repr, a log line or an error
    scheme: Scheme = "standard"
    header_prefix: str = "Webhook"  # the stripe scheme's header names: <Prefix>-Signature

    def __post_init__(self) -> None:
        if not self.secrets or not all(self.secrets):
            raise ValueError("a webhook signer needs at least one non-empty secret")
        if self.scheme not in ("standard", "stripe"):
            raise ValueError(f"unknown webhook signature scheme {self.scheme!r}")
        if self.scheme == "standard":
            for s in self.secrets:
                secret_key(s)  # fail early on a malformed whsec_ secret

    @classmethod
    def from_settings(
        cls,
        secret: str,
        previous_secret: str = "",
        scheme: Scheme = "standard",
        header_prefix: str = "Webhook",
    ) -> WebhookSigner:
        secrets = (secret, previous_secret) if previous_secret else (secret,)
        return cls(secrets, scheme, header_prefix)

    @property
    def signature_header(self) -> str:
        return (
            "webhook-signature" if self.scheme == "standard" else f"{self.header_prefix}-Signature"
        )

    def headers(self, msg_id: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        """The headers to send with ``body`` (``Content-Type`` excluded)."""
        ts = int(time.time()) if timestamp is None else timestamp
        if self.scheme == "standard":
            sigs = " ".join(sign_standard(s, msg_id, ts, body) for s in self.secrets)
            return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sigs}
        members = ",".join(f"v1={sign_stripe(s, ts, body)}" for s in self.secrets)
        return {
            f"{self.header_prefix}-Signature": f"t={ts},{members}",
            f"{self.header_prefix}-Webhook-Id": msg_id,
        }


def _header(headers: Mapping[str, str], name: str) -> str:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    raise WebhookVerificationError(f"missing header {name}")


def _check_age(timestamp: int, tolerance: int, now: float | None) -> None:
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("timestamp outside the tolerance window")


def verify_standard(
    secrets: Sequence[str],
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> str:
    """Verify a Standard Webhooks delivery against any of ``secrets``; returns the message id."""
    msg_id = _header(headers, "webhook-id")
    try:
        timestamp = int(_header(headers, "webhook-timestamp"))
    except ValueError as exc:
        raise WebhookVerificationError("webhook-timestamp is not an integer") from exc
    _check_age(timestamp, tolerance, now)
    received = [p for p in _header(headers, "webhook-signature").split(" ") if p.startswith("v1,")]
    for secret in secrets:
        expected = sign_standard(secret, msg_id, timestamp, body)
        for sig in received:
            if hmac.compare_digest(expected.encode(), sig.encode()):
                return msg_id
    raise WebhookVerificationError("no signature matches")


def verify_stripe(
    secrets: Sequence[str],
    header_value: str,
    body: bytes,
    *,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> int:
    """Verify a Stripe-style ``t=…,v1=…`` header against any of ``secrets``; returns ``t``."""
    timestamp: int | None = None
    received: list[str] = []
    for part in header_value.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError as exc:
                raise WebhookVerificationError("t= is not an integer") from exc
        elif key == "v1":
            received.append(value)
    if timestamp is None or not received:
        raise WebhookVerificationError("signature header lacks t= or v1=")
    _check_age(timestamp, tolerance, now)
    for secret in secrets:
        expected = sign_stripe(secret, timestamp, body)
        for sig in received:
            if hmac.compare_digest(expected.encode(), sig.encode()):
                return timestamp
    raise WebhookVerificationError("no signature matches")
