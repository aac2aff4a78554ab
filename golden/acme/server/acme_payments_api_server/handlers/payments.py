"""Business logic of the Payments operations of Acme Payments API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `acme_payments_api_server.interfaces.PaymentsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import PaymentsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class PaymentsHandler(PaymentsBase):
    async def list_payments(
        self,
        ctx: RequestContext,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        customer_id: str | None = None,
        status: Literal["pending", "processing", "succeeded", "failed", "canceled"] | None = None,
    ) -> models.PaymentList | Reply[models.PaymentList]:
        """GET /v1/payments: List payments

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_payment(
        self,
        ctx: RequestContext,
        *,
        body: models.PaymentCreate,
    ) -> models.Payment | Reply[models.Payment]:
        """POST /v1/payments: Create a payment

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_payment(
        self,
        ctx: RequestContext,
        *,
        payment_id: str,
    ) -> models.Payment | Reply[models.Payment]:
        """GET /v1/payments/{paymentId}: Get a payment

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError
