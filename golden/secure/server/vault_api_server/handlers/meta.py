"""Business logic of the Meta operations of Vault API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `vault_api_server.interfaces.MetaBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import MetaBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class MetaHandler(MetaBase):
    async def get_audit(
        self,
        ctx: RequestContext,
    ) -> models.Caller | Reply[models.Caller]:
        """GET /v1/audit: Audit log (OpenID Connect)

        - security: oidc [audit]
        - problem details
        """
        raise NotImplementedError

    async def list_exports(
        self,
        ctx: RequestContext,
    ) -> models.Caller | Reply[models.Caller]:
        """GET /v1/exports: Exports (API key in the query string)

        - security: queryKey
        - problem details
        """
        raise NotImplementedError

    async def get_session(
        self,
        ctx: RequestContext,
    ) -> models.Caller | Reply[models.Caller]:
        """GET /v1/session: The browser session (API key in a cookie)

        - security: cookieKey
        - problem details
        """
        raise NotImplementedError

    async def get_status(
        self,
        ctx: RequestContext,
    ) -> models.Status | Reply[models.Status]:
        """GET /v1/status: Service status (public)

        - security: public (verifies bearerAuth when sent)
        - problem details
        """
        raise NotImplementedError

    async def who_am_i(
        self,
        ctx: RequestContext,
    ) -> models.Caller | Reply[models.Caller]:
        """GET /v1/whoami: Who is calling (public; names the caller when credentials are sent)

        - security: public (verifies bearerAuth when sent)
        - problem details
        """
        raise NotImplementedError
