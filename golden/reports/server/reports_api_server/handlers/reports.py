"""Business logic of the Reports operations of Reports API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `reports_api_server.interfaces.ReportsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import ReportsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class ReportsHandler(ReportsBase):
    async def create_report(
        self,
        ctx: JobContext,
        *,
        body: models.ReportRequest,
    ) -> models.ReportResult | dict[str, Any]:
        """POST /v1/reports: Start generating a report

        - security: bearerAuth
        - problem details
        - rate limit (RateLimit + RateLimit-Policy; 429 + Retry-After)
        - idempotency (Idempotency-Key, optional)
        - 202 job: Location + Retry-After; the handler is the job's work
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
