"""Known-answer vectors for both webhook signature schemes, rotation, and verification."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

RUNTIME_SRC = Path(__file__).resolve().parents[3] / "templates" / "server" / "runtime"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """runtime/webhook_signing.py, imported from a copy of the runtime as generation makes."""
    root = tmp_path_factory.mktemp("whsign")
    package = "whsign_" + uuid.uuid4().hex[:8]
    (root / package / "runtime").mkdir(parents=True)
    (root / package / "__init__.py").touch()
    (root / package / "runtime" / "__init__.py").touch()
    for src in RUNTIME_SRC.glob("*.py"):
        shutil.copy2(src, root / package / "runtime" / src.name)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(f"{package}.runtime.webhook_signing")
    finally:
        sys.path.remove(str(root))


# The Standard Webhooks reference vector (standard-webhooks/libraries, the spec's test suite).
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TS = 1614265330
SW_BODY = b'{"test": 2432232314}'
SW_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

# Stripe-style: hex HMAC-SHA256 of "{t}.{body}" keyed with the secret string. The literal was
# computed outside apiforge with `openssl dgst -sha256 -hmac <secret>`; the test recomputes it.
ST_SECRET = "whsec_stripe_style_test_secret"
ST_TS = 1767225600
ST_BODY = b'{"id":"evt_01HTZ4K5M8N9P0Q1R2S3T4V5W6","type":"order.completed"}'
ST_HEX = "6671602c0069102627a54747f049188e4f6205122f8413b7c57ae55047f7c50f"


def test_standard_webhooks_reference_vector(ws: ModuleType) -> None:
    assert ws.sign_standard(SW_SECRET, SW_ID, SW_TS, SW_BODY) == SW_SIG
    headers = ws.WebhookSigner((SW_SECRET,)).headers(SW_ID, SW_BODY, SW_TS)
    assert headers == {
        "webhook-id": SW_ID,
        "webhook-timestamp": str(SW_TS),
        "webhook-signature": SW_SIG,
    }
    assert ws.verify_standard([SW_SECRET], headers, SW_BODY, now=SW_TS + 10) == SW_ID


def test_stripe_style_vector_computed_independently(ws: ModuleType) -> None:
    independent = hmac.new(
        ST_SECRET.encode(), f"{ST_TS}.".encode() + ST_BODY, hashlib.sha256
    ).hexdigest()
    assert independent == ST_HEX
    assert ws.sign_stripe(ST_SECRET, ST_TS, ST_BODY) == ST_HEX
    signer = ws.WebhookSigner((ST_SECRET,), scheme="stripe", header_prefix="Acme")
    headers = signer.headers("evt_01HTZ4K5M8N9P0Q1R2S3T4V5W6", ST_BODY, ST_TS)
    assert headers == {
        "Acme-Signature": f"t={ST_TS},v1={ST_HEX}",
        "Acme-Webhook-Id": "evt_01HTZ4K5M8N9P0Q1R2S3T4V5W6",
    }
    assert signer.signature_header == "Acme-Signature"
    assert ws.verify_stripe([ST_SECRET], headers["Acme-Signature"], ST_BODY, now=ST_TS) == ST_TS


@pytest.mark.parametrize("scheme", ["standard", "stripe"])
def test_rotation_signs_with_current_and_previous(ws: ModuleType, scheme: str) -> None:
    new, old, other = ws.generate_secret(), ws.generate_secret(), ws.generate_secret()
    signer = ws.WebhookSigner.from_settings(new, old, scheme=scheme)
    body, ts = b'{"id":"evt_1"}', 1_700_000_000
    headers = signer.headers("evt_1", body, ts)

    def verify(secrets: list[str]) -> None:
        if scheme == "standard":
            ws.verify_standard(secrets, headers, body, now=ts)
        else:
            ws.verify_stripe(secrets, headers[signer.signature_header], body, now=ts)

    value = headers[signer.signature_header]
    if scheme == "standard":
        assert len(value.split(" ")) == 2 and all(p.startswith("v1,") for p in value.split(" "))
    else:
        assert value.count("v1=") == 2 and value.startswith(f"t={ts},")
    verify([new])  # consumers that already moved on
    verify([old])  # consumers that still hold the previous secret
    with pytest.raises(ws.WebhookVerificationError):
        verify([other])


@pytest.mark.parametrize("scheme", ["standard", "stripe"])
def test_verification_rejects_tampering_and_stale_timestamps(ws: ModuleType, scheme: str) -> None:
    secret = ws.generate_secret()
    signer = ws.WebhookSigner((secret,), scheme=scheme)
    body, ts = b'{"id":"evt_2","amount":1}', 1_700_000_000
    headers = signer.headers("evt_2", body, ts)

    def verify(b: bytes, now: float) -> None:
        if scheme == "standard":
            ws.verify_standard([secret], headers, b, now=now)
        else:
            ws.verify_stripe([secret], headers[signer.signature_header], b, now=now)

    verify(body, ts + 299)
    with pytest.raises(ws.WebhookVerificationError):
        verify(b'{"id":"evt_2","amount":2}', ts)
    with pytest.raises(ws.WebhookVerificationError):
        verify(body, ts + 301)


def test_generated_secret_shape_and_key(ws: ModuleType) -> None:
    secret = ws.generate_secret()
    assert secret.startswith("whsec_")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    assert len(key) == 32 and ws.secret_key(secret) == key
    assert ws.generate_secret() != secret
    with pytest.raises(ValueError):
        ws.WebhookSigner(("whsec_not base64!",))
    with pytest.raises(ValueError):
        ws.WebhookSigner(())


def test_the_signer_never_shows_its_secrets(ws: ModuleType) -> None:
    signer = ws.WebhookSigner((SW_SECRET, "whsec_b2xkLXNlY3JldA=="), scheme="stripe")
    shown = f"{signer!r} {signer}"
    assert SW_SECRET not in shown and "whsec_" not in shown
    assert "stripe" in shown
