"""Business logic of the Reports operations of Media API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `media_api_server.interfaces.ReportsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import ReportsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class ReportsHandler(ReportsBase):
    async def export_report(
        self,
        ctx: RequestContext,
        *,
        report_id: str,
    ) -> None | Reply[None]:
        """GET /v1/reports/{reportId}/export: Export a report as CSV

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError
