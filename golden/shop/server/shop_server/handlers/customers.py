"""Business logic of the /customers operations of Shop.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `shop_server.interfaces.CustomersBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import CustomersBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class CustomersHandler(CustomersBase):
    async def get_customers(
        self,
        ctx: RequestContext,
        *,
        starting_after: str | None = None,
        limit: int = 10,
    ) -> models.CustomerList | Reply[models.CustomerList]:
        """GET /v1/customers: List customers

        - problem details
        """
        raise NotImplementedError

    async def post_customers(
        self,
        ctx: RequestContext,
        *,
        body: models.CustomerInput,
    ) -> models.Customer | Reply[models.Customer]:
        """POST /v1/customers: Create a customer

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_customers_customer(
        self,
        ctx: RequestContext,
        *,
        customer: str,
    ) -> models.Customer | Reply[models.Customer]:
        """GET /v1/customers/{customer}: Retrieve a customer

        - problem details
        """
        raise NotImplementedError

    async def post_customers_customer(
        self,
        ctx: RequestContext,
        *,
        customer: str,
        body: models.CustomerInput | None = None,
    ) -> models.Customer | Reply[models.Customer]:
        """POST /v1/customers/{customer}: Update a customer

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def delete_customers_customer(
        self,
        ctx: RequestContext,
        *,
        customer: str,
    ) -> None | Reply[None]:
        """DELETE /v1/customers/{customer}: Delete a customer

        - problem details
        """
        raise NotImplementedError
