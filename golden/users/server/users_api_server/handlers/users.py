"""Business logic of the Users operations of Users API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `users_api_server.interfaces.UsersBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import UsersBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class UsersHandler(UsersBase):
    async def list_users(
        self,
        ctx: RequestContext,
        *,
        limit: int = 20,
        starting_after: str | None = None,
    ) -> models.UserList | Reply[models.UserList]:
        """GET /v1/users: List users

        - security: bearerAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_user(
        self,
        ctx: RequestContext,
        *,
        body: models.UserCreate,
    ) -> models.User | Reply[models.User]:
        """POST /v1/users: Create a user

        - security: bearerAuth
        - problem details
        - idempotency (Idempotency-Key, optional)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_user(
        self,
        ctx: RequestContext,
        *,
        user_id: str,
    ) -> models.User | Reply[models.User]:
        """GET /v1/users/{userId}: Get a user

        - security: bearerAuth
        - problem details
        - ETag; If-None-Match → 304
        """
        raise NotImplementedError

    async def delete_user(
        self,
        ctx: RequestContext,
        *,
        user_id: str,
    ) -> None | Reply[None]:
        """DELETE /v1/users/{userId}: Delete a user

        - security: bearerAuth
        - problem details
        - If-Match → 412 when stale; 428 when missing
        """
        raise NotImplementedError

    async def update_user(
        self,
        ctx: RequestContext,
        *,
        user_id: str,
        body: models.UserUpdate,
    ) -> models.User | Reply[models.User]:
        """PATCH /v1/users/{userId}: Update a user

        - security: bearerAuth
        - problem details
        - If-Match → 412 when stale; 428 when missing
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
