"""Credential checks of Vault API.

Written once by apiforge and never overwritten: this file is yours. Implement one method per
security scheme (remove its `raise NotImplementedError`); until then the operations that need
it answer 501 and no one gets in. Return a `Principal` for a valid credential — its `id` keys
rate limits, idempotency keys and job ownership, its `tier` picks a rate limit
(`APIFORGE_RATE_LIMIT_TIERS`), its `scopes` are checked against each operation's — or None to
refuse (401). Give the same answer, in the same time, for an unknown user and a wrong
password; compare secrets with `hmac.compare_digest`, never `==`; run slow work (password
hashes) in a thread (`asyncio.to_thread`), never on the event loop.

Operations and the schemes they need:
- GET /v1/audit: oidc [audit]
- GET /v1/exports: queryKey
- GET /v1/session: cookieKey
- GET /v1/status: public (verifies bearerAuth when sent)
- GET /v1/whoami: public (verifies bearerAuth when sent)
- GET /v1/secrets: bearerAuth
- PUT /v1/secrets/{name}: apiKeyHeader or oauth [secrets:write]
- POST /v1/transfers: apiKeyHeader and basicAuth
"""

from __future__ import annotations

import asyncio  # noqa: F401
import hashlib  # noqa: F401
import hmac  # noqa: F401

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal


class Verifier(VerifierBase):
    async def api_key_header(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """apiKeyHeader: an API key in the header `X-Vault-Key`.

        For example, with a table of the SHA-256 of each issued key:

            digest = hashlib.sha256(key.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError

    async def basic_auth(
        self, username: str, password: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """basicAuth: `Authorization: Basic <base64 of username:password>`.

        For example, with a table of users and their scrypt hashes. An unknown user is
        checked against a dummy hash (of a random password), so both refusals take the
        same time and no one learns which users exist; the hash runs in a thread, as it
        takes tens of milliseconds during which the event loop would serve no one:

            user = USERS.get(username) or DUMMY_USER
            digest = await asyncio.to_thread(
                hashlib.scrypt, password.encode(), salt=user.salt, n=2**14, r=8, p=1
            )
            if not hmac.compare_digest(digest, user.hash) or user is DUMMY_USER:
                return None
            return Principal(user.id, tier=user.plan)
        """
        raise NotImplementedError

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

    async def cookie_key(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """cookieKey: an API key in the cookie `vault_session`.

        For example, with a table of the SHA-256 of each issued key:

            digest = hashlib.sha256(key.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError

    async def oauth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """oauth: `Authorization: Bearer <token>` (an OAuth2 access token).

        For example, with a table of the SHA-256 of each issued token:

            digest = hashlib.sha256(token.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError

    async def oidc(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """oidc: `Authorization: Bearer <token>` (an OpenID Connect token).

        For example, with a table of the SHA-256 of each issued token:

            digest = hashlib.sha256(token.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError

    async def query_key(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        """queryKey: an API key in the query `api_key`.

        For example, with a table of the SHA-256 of each issued key:

            digest = hashlib.sha256(key.encode()).hexdigest()
            account = ISSUED.get(digest)  # your store; a dict lookup by digest is constant time
            if account is None:
                return None
            return Principal(account.id, tier=account.plan, scopes=frozenset(account.scopes))
        """
        raise NotImplementedError
