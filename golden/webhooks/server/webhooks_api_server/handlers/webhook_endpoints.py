"""Business logic of the WebhookEndpoints operations of Webhooks API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `webhooks_api_server.interfaces.WebhookEndpointsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import WebhookEndpointsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class WebhookEndpointsHandler(WebhookEndpointsBase):
    async def list_webhook_endpoints(
        self,
        ctx: RequestContext,
    ) -> models.ListWebhookEndpointsResponse | Reply[models.ListWebhookEndpointsResponse]:
        """GET /v1/webhook-endpoints: List webhook endpoints

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError

    async def create_webhook_endpoint(
        self,
        ctx: RequestContext,
        *,
        body: models.WebhookEndpointCreate,
    ) -> models.WebhookEndpointWithSecret | Reply[models.WebhookEndpointWithSecret]:
        """POST /v1/webhook-endpoints: Register a webhook endpoint

        - security: bearerAuth
        - problem details
        - idempotency (Idempotency-Key, optional)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
