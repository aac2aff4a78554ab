"""Business logic of the Orders operations of Bare API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `bare_api_server.interfaces.OrdersBase`; `apiforge server` lists the
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
    async def list_orders(
        self,
        ctx: RequestContext,
        *,
        page: int | None = None,
    ) -> list[models.Order] | Reply[list[models.Order]]:
        """GET /orders: List orders

        - problem details
        - rate limit (RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_order(
        self,
        ctx: RequestContext,
        *,
        body: models.OrderInput,
    ) -> models.Order | Reply[models.Order]:
        """POST /orders: Place an order

        - problem details
        - idempotency (Idempotency-Key, optional)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
