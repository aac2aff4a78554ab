"""Business logic of the /customers/sources operations of Shop.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `shop_server.interfaces.CustomersSourcesBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import CustomersSourcesBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class CustomersSourcesHandler(CustomersSourcesBase):
    async def get_customers_customer_sources(
        self,
        ctx: RequestContext,
        *,
        customer: str,
    ) -> list[models.Source] | Reply[list[models.Source]]:
        """GET /v1/customers/{customer}/sources: List a customer's payment sources

        - problem details
        """
        raise NotImplementedError

    async def post_customers_customer_sources(
        self,
        ctx: RequestContext,
        *,
        customer: str,
        body: models.Source,
    ) -> models.Source | Reply[models.Source]:
        """POST /v1/customers/{customer}/sources: Attach a payment source

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def post_customers_customer_sources_id_verify(
        self,
        ctx: RequestContext,
        *,
        customer: str,
        id_: str,
        body: models.PostCustomersCustomerSourcesIdVerifyRequest | None = None,
    ) -> models.Source | Reply[models.Source]:
        """POST /v1/customers/{customer}/sources/{id}/verify: Verify a bank account source

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
