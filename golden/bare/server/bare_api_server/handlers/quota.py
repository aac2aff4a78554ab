"""Business logic of the Quota operations of Bare API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `bare_api_server.interfaces.QuotaBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import QuotaBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class QuotaHandler(QuotaBase):
    async def get_quota(
        self,
        ctx: RequestContext,
    ) -> models.GetQuotaResponse | Reply[models.GetQuotaResponse]:
        """GET /quota: Get the caller's quota

        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError
