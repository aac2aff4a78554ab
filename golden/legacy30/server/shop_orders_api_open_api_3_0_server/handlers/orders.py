"""Business logic of the Orders operations of Shop Orders API (OpenAPI 3.0).

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `shop_orders_api_open_api_3_0_server.interfaces.OrdersBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import OrdersBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class OrdersHandler(OrdersBase):
    async def create_order(
        self,
        ctx: RequestContext,
        *,
        body: models.OrderCreate,
    ) -> models.Order | Reply[models.Order]:
        """POST /v1/orders: Place an order

        - security: bearerAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_order(
        self,
        ctx: RequestContext,
        *,
        order_id: str,
    ) -> models.Order | Reply[models.Order]:
        """GET /v1/orders/{orderId}: Get an order

        - security: bearerAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - ETag; If-None-Match → 304
        """
        raise NotImplementedError

    async def update_order(
        self,
        ctx: RequestContext,
        *,
        order_id: str,
        body: models.OrderUpdate,
    ) -> models.Order | Reply[models.Order]:
        """PATCH /v1/orders/{orderId}: Update an order

        - security: bearerAuth
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        - If-Match → 412 when stale; 428 when missing
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
