"""Business logic of the Completions operations of Media API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `media_api_server.interfaces.CompletionsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import CompletionsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class CompletionsHandler(CompletionsBase):
    async def create_completion(
        self,
        ctx: RequestContext,
        *,
        body: models.CompletionRequest,
    ) -> models.Completion | Reply[models.Completion]:
        """POST /v1/completions: Complete a prompt

        - security: bearerAuth
        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
