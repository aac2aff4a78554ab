"""Webhook verification: known-answer vectors for both schemes, and every rejection."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from templates.client.runtime import (
    WebhookVerificationError,
    sign_standard_webhook,
    sign_stripe_style,
    verify_webhook,
)

# The Standard Webhooks specification's published test vector.
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TS = 1614265330
SW_BODY = b'{"test": 2432232314}'
SW_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

STRIPE_SECRET = "whsec_test_acme_signing_secret"
STRIPE_BODY = b'{"id":"evt_1","type":"order.completed","data":{"total":4999}}'
STRIPE_TS = 1767225600


def sw_headers(
    signature: str = SW_SIGNATURE, timestamp: int = SW_TS, msg_id: str = SW_ID
) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


def stripe_hex(secret: str, timestamp: int, body: bytes) -> str:
    # Computed here independently of the runtime, straight from the contract.
    return hmac.new(
        secret.encode("utf-8"), str(timestamp).encode() + b"." + body, hashlib.sha256
    ).hexdigest()


def test_the_standard_webhooks_vector_is_reproduced_and_accepted() -> None:
    assert sign_standard_webhook(SW_ID, SW_TS, SW_BODY, SW_SECRET) == SW_SIGNATURE
    assert verify_webhook(SW_BODY, sw_headers(), SW_SECRET, now=SW_TS) == {"test": 2432232314}
    # case of header names does not matter; a secret without the prefix is the same key
    upper = {k.title(): v for k, v in sw_headers().items()}
    assert verify_webhook(SW_BODY, upper, SW_SECRET.removeprefix("whsec_"), now=SW_TS + 299) == {
        "test": 2432232314
    }


def test_standard_webhooks_several_signatures_and_rotated_secrets() -> None:
    other = "whsec_" + base64.b64encode(b"another-32-byte-key-for-rotation").decode()
    other_sig = sign_standard_webhook(SW_ID, SW_TS, SW_BODY, other)
    assert other_sig != SW_SIGNATURE
    # the header lists both signatures; only one of the receiver's secrets needs to match
    both = f"{other_sig} {SW_SIGNATURE}"
    assert verify_webhook(SW_BODY, sw_headers(both), [other], now=SW_TS)
    assert verify_webhook(
        SW_BODY,
        sw_headers(SW_SIGNATURE),
        ["whsec_" + base64.b64encode(b"x" * 32).decode(), SW_SECRET],
        now=SW_TS,
    )
    # unknown versions are ignored, not trusted
    with pytest.raises(WebhookVerificationError):
        verify_webhook(SW_BODY, sw_headers("v2," + SW_SIGNATURE[3:]), SW_SECRET, now=SW_TS)


@pytest.mark.parametrize(
    ("body", "headers", "secret", "now", "message"),
    [
        (b'{"test": 2432232315}', sw_headers(), SW_SECRET, SW_TS, "no webhook signature matches"),
        (
            SW_BODY,
            sw_headers(),
            "whsec_" + base64.b64encode(b"wrong-key").decode(),
            SW_TS,
            "no webhook signature matches",
        ),
        (SW_BODY, sw_headers(msg_id="msg_other"), SW_SECRET, SW_TS, "no webhook signature matches"),
        (SW_BODY, sw_headers(), SW_SECRET, SW_TS + 301, "too old"),
        (SW_BODY, sw_headers(), SW_SECRET, SW_TS - 301, "in the future"),
        (
            SW_BODY,
            {"webhook-id": SW_ID, "webhook-signature": SW_SIGNATURE},
            SW_SECRET,
            SW_TS,
            "missing",
        ),
        (SW_BODY, sw_headers(timestamp=-1), SW_SECRET, SW_TS, "not a unix time"),
    ],
    ids=[
        "tampered-body",
        "wrong-secret",
        "other-id",
        "old",
        "future",
        "no-timestamp",
        "bad-timestamp",
    ],
)
def test_standard_webhooks_rejections(
    body: bytes, headers: dict[str, str], secret: str, now: int, message: str
) -> None:
    with pytest.raises(WebhookVerificationError, match=message):
        verify_webhook(body, headers, secret, now=now)


def test_a_re_signed_old_delivery_with_shifted_timestamp_fails() -> None:
    # Replaying with a fresh timestamp header breaks the signature (the timestamp is signed).
    with pytest.raises(WebhookVerificationError, match="no webhook signature matches"):
        verify_webhook(SW_BODY, sw_headers(timestamp=SW_TS + 1000), SW_SECRET, now=SW_TS + 1000)


def test_stripe_style_vector_and_auto_detected_header() -> None:
    expected = stripe_hex(STRIPE_SECRET, STRIPE_TS, STRIPE_BODY)
    assert (
        sign_stripe_style(STRIPE_TS, STRIPE_BODY, STRIPE_SECRET) == f"t={STRIPE_TS},v1={expected}"
    )
    headers = {
        "Content-Type": "application/json",
        "Acme-Signature": f"t={STRIPE_TS},v1={expected}",
        "Acme-Webhook-Id": "evt_1",
    }
    assert verify_webhook(STRIPE_BODY, headers, STRIPE_SECRET, now=STRIPE_TS + 10) == json.loads(
        STRIPE_BODY
    )
    assert verify_webhook(
        STRIPE_BODY, headers, STRIPE_SECRET, now=STRIPE_TS, signature_header="acme-signature"
    )


def test_stripe_style_rotation_several_v1_and_several_secrets() -> None:
    old, new = "secret-old", "secret-new"
    header = f"t={STRIPE_TS},v1={stripe_hex(new, STRIPE_TS, STRIPE_BODY)},v1={stripe_hex(old, STRIPE_TS, STRIPE_BODY)},v0=deadbeef"
    assert verify_webhook(STRIPE_BODY, {"Stripe-Signature": header}, old, now=STRIPE_TS)
    assert verify_webhook(
        STRIPE_BODY, {"Stripe-Signature": header}, ["unrelated", new], now=STRIPE_TS
    )
    with pytest.raises(WebhookVerificationError):
        verify_webhook(STRIPE_BODY, {"Stripe-Signature": header}, ["unrelated"], now=STRIPE_TS)


@pytest.mark.parametrize(
    ("body", "header", "now", "message"),
    [
        (STRIPE_BODY + b" ", None, STRIPE_TS, "no webhook signature matches"),
        (STRIPE_BODY, f"t={STRIPE_TS},v1=" + "0" * 64, STRIPE_TS, "no webhook signature matches"),
        (STRIPE_BODY, None, STRIPE_TS + 301, "too old"),
        (STRIPE_BODY, None, STRIPE_TS - 301, "in the future"),
        (STRIPE_BODY, f"v1={'a' * 64}", STRIPE_TS, "no t="),
    ],
    ids=["tampered-body", "wrong-signature", "old", "future", "no-timestamp"],
)
def test_stripe_style_rejections(body: bytes, header: str | None, now: int, message: str) -> None:
    value = header or f"t={STRIPE_TS},v1={stripe_hex(STRIPE_SECRET, STRIPE_TS, STRIPE_BODY)}"
    with pytest.raises(WebhookVerificationError, match=message):
        verify_webhook(
            body,
            {"Acme-Signature": value},
            STRIPE_SECRET,
            now=now,
            signature_header="Acme-Signature",
        )


def test_wrong_secret_for_stripe_style() -> None:
    value = sign_stripe_style(STRIPE_TS, STRIPE_BODY, STRIPE_SECRET)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(STRIPE_BODY, {"Acme-Signature": value}, STRIPE_SECRET + "x", now=STRIPE_TS)


def test_tolerance_is_configurable_and_inclusive() -> None:
    value = sign_stripe_style(STRIPE_TS, STRIPE_BODY, STRIPE_SECRET)
    assert verify_webhook(STRIPE_BODY, {"X-Signature": value}, STRIPE_SECRET, now=STRIPE_TS + 300)
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify_webhook(
            STRIPE_BODY, {"X-Signature": value}, STRIPE_SECRET, now=STRIPE_TS + 31, tolerance=30
        )


def test_misuse_is_refused() -> None:
    with pytest.raises(WebhookVerificationError, match="no webhook signature header"):
        verify_webhook(STRIPE_BODY, {"Content-Type": "application/json"}, STRIPE_SECRET)
    with pytest.raises(TypeError):
        verify_webhook(STRIPE_BODY.decode(), {}, STRIPE_SECRET)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        verify_webhook(SW_BODY, sw_headers(), [], now=SW_TS)
    signed_text = sign_stripe_style(STRIPE_TS, b"not json", STRIPE_SECRET)
    with pytest.raises(WebhookVerificationError, match="not JSON"):
        verify_webhook(b"not json", {"Acme-Signature": signed_text}, STRIPE_SECRET, now=STRIPE_TS)
