"""Business logic of the Customers operations of Acme Payments API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `acme_payments_api_server.interfaces.CustomersBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import CustomersBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class CustomersHandler(CustomersBase):
    async def list_customers(
        self,
        ctx: RequestContext,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        email: str | None = None,
    ) -> models.CustomerList | Reply[models.CustomerList]:
        """GET /v1/customers: List customers

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_customer(
        self,
        ctx: RequestContext,
        *,
        body: models.CustomerCreate,
    ) -> models.Customer | Reply[models.Customer]:
        """POST /v1/customers: Create a customer

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_customer(
        self,
        ctx: RequestContext,
        *,
        customer_id: str,
    ) -> models.Customer | Reply[models.Customer]:
        """GET /v1/customers/{customerId}: Get a customer

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - ETag; If-None-Match → 304
        """
        raise NotImplementedError

    async def delete_customer(
        self,
        ctx: RequestContext,
        *,
        customer_id: str,
    ) -> None | Reply[None]:
        """DELETE /v1/customers/{customerId}: Delete a customer

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - If-Match → 412 when stale; 428 when missing
        """
        raise NotImplementedError

    async def update_customer(
        self,
        ctx: RequestContext,
        *,
        customer_id: str,
        body: models.CustomerUpdate,
    ) -> models.Customer | Reply[models.Customer]:
        """PATCH /v1/customers/{customerId}: Update a customer

        - security: bearerAuth or apiKeyAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - idempotency (Idempotency-Key, required)
        - If-Match → 412 when stale; 428 when missing
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
