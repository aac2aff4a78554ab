"""Business logic of the Widgets operations of Bare API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `bare_api_server.interfaces.WidgetsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import WidgetsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class WidgetsHandler(WidgetsBase):
    async def list_widgets(
        self,
        ctx: RequestContext,
    ) -> list[models.Widget] | Reply[list[models.Widget]]:
        """GET /widgets: List widgets

        - problem details
        """
        raise NotImplementedError

    async def create_widget(
        self,
        ctx: RequestContext,
        *,
        body: models.WidgetInput,
    ) -> models.Widget | Reply[models.Widget]:
        """POST /widgets: Create a widget

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_widget(
        self,
        ctx: RequestContext,
        *,
        widget_id: str,
    ) -> models.Widget | Reply[models.Widget]:
        """GET /widgets/{widgetId}: Get a widget

        - problem details
        """
        raise NotImplementedError

    async def update_widget(
        self,
        ctx: RequestContext,
        *,
        widget_id: str,
        body: models.WidgetInput,
    ) -> models.Widget | Reply[models.Widget]:
        """PATCH /widgets/{widgetId}: Update a widget

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
