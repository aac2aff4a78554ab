"""Business logic of the Events operations of Media API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `media_api_server.interfaces.EventsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import EventsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class EventsHandler(EventsBase):
    async def stream_events(
        self,
        ctx: RequestContext,
        *,
        last_event_id: str | None = None,
    ) -> None | Reply[None]:
        """GET /v1/events: Follow events as they happen

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError
