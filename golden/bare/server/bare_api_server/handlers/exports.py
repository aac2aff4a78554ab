"""Business logic of the Exports operations of Bare API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `bare_api_server.interfaces.ExportsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import ExportsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class ExportsHandler(ExportsBase):
    async def create_export(
        self,
        ctx: RequestContext,
        *,
        body: models.CreateExportRequest,
    ) -> models.CreateExportResponse | Reply[models.CreateExportResponse]:
        """POST /exports: Start an export

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
