"""Credential checks of Shop.

Written once by apiforge and never overwritten: this file is yours. Implement one method per
security scheme (remove its `raise NotImplementedError`); until then the operations that need
it answer 501 and no one gets in. Return a `Principal` for a valid credential — its `id` keys
rate limits, idempotency keys and job ownership, its `tier` picks a rate limit
(`APIFORGE_RATE_LIMIT_TIERS`), its `scopes` are checked against each operation's — or None to
refuse (401). Give the same answer, in the same time, for an unknown user and a wrong
password; compare secrets with `hmac.compare_digest`, never `==`; run slow work (password
hashes) in a thread (`asyncio.to_thread`), never on the event loop.

The spec declares no security: every operation is open to anyone.
"""

from __future__ import annotations

import asyncio  # noqa: F401
import hashlib  # noqa: F401
import hmac  # noqa: F401

from .auth import VerifierBase


class Verifier(VerifierBase):
    """This API declares no security scheme a server can check."""
