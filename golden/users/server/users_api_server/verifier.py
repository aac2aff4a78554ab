"""Credential checks of Users API.

Written once by apiforge and never overwritten: this file is yours. Implement one method per
security scheme (remove its `raise NotImplementedError`); until then the operations that need
it answer 501 and no one gets in. Return a `Principal` for a valid credential — its `id` keys
rate limits, idempotency keys and job ownership, its `tier` picks a rate limit
(`APIFORGE_RATE_LIMIT_TIERS`), its `scopes` are checked against each operation's — or None to
refuse (401). Give the same answer, in the same time, for an unknown user and a wrong
password; compare secrets with `hmac.compare_digest`, never `==`; run slow work (password
hashes) in a thread (`asyncio.to_thread`), never on the event loop.

Operations and the schemes they need:
- GET /v1/users: bearerAuth
- POST /v1/users: bearerAuth
- GET /v1/users/{userId}: bearerAuth
- DELETE /v1/users/{userId}: bearerAuth
- PATCH /v1/users/{userId}: bearerAuth
"""

from __future__ import annotations

import asyncio  # noqa: F401
import hashlib  # noqa: F401
import hmac  # noqa: F401

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal


class Verifier(VerifierBase):
    async def bearer_auth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """bearerAuth: `Authorization: Bearer <token>` (a bearer token).

        For example, with a table of the SHA-256 of each issued token:

            digest = hashlib.sha256(token.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError
