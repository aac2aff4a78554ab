"""Business logic of the Secrets operations of Vault API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `vault_api_server.interfaces.SecretsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import SecretsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class SecretsHandler(SecretsBase):
    async def list_secrets(
        self,
        ctx: RequestContext,
    ) -> models.SecretList | Reply[models.SecretList]:
        """GET /v1/secrets: List the caller's secrets

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError

    async def put_secret(
        self,
        ctx: RequestContext,
        *,
        name: str,
        body: models.SecretValue,
    ) -> models.Secret | Reply[models.Secret]:
        """PUT /v1/secrets/{name}: Store a secret

        - security: apiKeyHeader or oauth [secrets:write]
        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
