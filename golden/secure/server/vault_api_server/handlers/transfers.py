"""Business logic of the Transfers operations of Vault API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `vault_api_server.interfaces.TransfersBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import TransfersBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class TransfersHandler(TransfersBase):
    async def create_transfer(
        self,
        ctx: RequestContext,
        *,
        body: models.TransferCreate,
    ) -> models.Transfer | Reply[models.Transfer]:
        """POST /v1/transfers: Move money between two accounts

        - security: apiKeyHeader and basicAuth
        - problem details
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
