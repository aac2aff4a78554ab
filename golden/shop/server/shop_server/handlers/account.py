"""Business logic of the /account operations of Shop.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `shop_server.interfaces.AccountBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import AccountBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class AccountHandler(AccountBase):
    async def get_account(
        self,
        ctx: RequestContext,
    ) -> models.Account | Reply[models.Account]:
        """GET /v1/account: Retrieve your account

        - problem details
        """
        raise NotImplementedError

    async def post_account(
        self,
        ctx: RequestContext,
        *,
        body: models.Account | None = None,
    ) -> models.Account | Reply[models.Account]:
        """POST /v1/account: Change your account's settings

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
