"""Business logic of the Refunds operations of Acme Payments API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `acme_payments_api_server.interfaces.RefundsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import RefundsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class RefundsHandler(RefundsBase):
    async def list_refunds(
        self,
        ctx: RequestContext,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        payment_id: str | None = None,
    ) -> models.RefundList | Reply[models.RefundList]:
        """GET /v1/refunds: List refunds

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_refund(
        self,
        ctx: RequestContext,
        *,
        body: models.RefundCreate,
    ) -> models.Refund | Reply[models.Refund]:
        """POST /v1/refunds: Refund a payment

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_refund(
        self,
        ctx: RequestContext,
        *,
        refund_id: str,
    ) -> models.Refund | Reply[models.Refund]:
        """GET /v1/refunds/{refundId}: Get a refund

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError
