"""Handler implementations the tests write into a generated acme server's handler modules.

Plain source text: the tests copy it over `<package>/handlers/<tag>.py` (never imported here).

Test hooks (environment of the server process): `TEST_PATCH_DELAY` widens update_customer's
read-write window; with `TEST_LEDGER=DIR`, create_payment and create_report append a line
(the pid) to `DIR/<name>.started` when they start and `DIR/<name>.done` when their side effect
is done (`payments`, `reports`), sleep `TEST_PAY_DELAY` seconds (payments), and wait while
`DIR/<name>.hold` exists — so a test counts executions and can kill the server mid-handler.
"""

LEDGER = """
import asyncio
import os
import time


def mark(name: str) -> None:
    ledger = os.environ.get("TEST_LEDGER")
    if ledger:
        with open(os.path.join(ledger, name), "a") as f:
            f.write(f"{os.getpid()}\\n")


async def hold(name: str) -> None:
    ledger = os.environ.get("TEST_LEDGER")
    if ledger:
        flag = os.path.join(ledger, name + ".hold")
        deadline = time.monotonic() + 60
        while os.path.exists(flag) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
"""

CUSTOMERS = """
from __future__ import annotations

import asyncio
import os
import secrets
from typing import Any

from .. import models
from ..interfaces import CustomersBase
from ..runtime.context import Reply, RequestContext

NOW = "2026-04-15T10:30:00Z"


class CustomersHandler(CustomersBase):
    async def create_customer(self, ctx: RequestContext, *, body: models.CustomerCreate) -> Any:
        cid = "cus_" + secrets.token_hex(13).upper()
        value = {
            "id": cid,
            "tags": [],
            **body.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "createdAt": NOW,
            "updatedAt": NOW,
        }
        version = await ctx.repository("customers").create(cid, value)
        return Reply({**value, "version": version}, version=version)

    async def get_customer(self, ctx: RequestContext, *, customer_id: str) -> Any:
        found = await ctx.repository("customers").get(customer_id)
        if found is None:
            raise ctx.not_found(f"No customer {customer_id}.")
        return Reply({**found.value, "version": found.version}, version=found.version)

    async def update_customer(
        self, ctx: RequestContext, *, customer_id: str, body: models.CustomerUpdate
    ) -> Any:
        repo = ctx.repository("customers")
        found = await repo.get(customer_id)
        version = ctx.precondition(None if found is None else found.version)
        assert found is not None
        delay = float(os.environ.get("TEST_PATCH_DELAY", "0"))
        if delay:
            await asyncio.sleep(delay)  # widen the read-write window: writers really race
        changes = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        value = {**found.value, **changes}
        new_version = await repo.update(customer_id, value, expected_version=version)
        return Reply({**value, "version": new_version}, version=new_version)

    async def delete_customer(self, ctx: RequestContext, *, customer_id: str) -> Any:
        repo = ctx.repository("customers")
        found = await repo.get(customer_id)
        version = ctx.precondition(None if found is None else found.version)
        await repo.delete(customer_id, expected_version=version)
        return None
"""

PAYMENTS = """
from __future__ import annotations

import asyncio
import os
import secrets
from typing import Any

from .. import models
from ..events import events
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext
from ._ledger import hold, mark


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        mark("payments.started")
        delay = float(os.environ.get("TEST_PAY_DELAY", "0"))
        if delay:
            await asyncio.sleep(delay)
        await hold("payments")
        pid = "pay_" + secrets.token_hex(13).upper()
        value = {
            **body.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "id": pid,
            "status": "succeeded",
            "amountRefunded": 0,
            "createdAt": "2026-04-15T10:30:00Z",
        }
        await ctx.repository("payments").create(pid, value)
        await events(ctx).payment_succeeded(value)
        mark("payments.done")
        return Reply(value, headers={"Location": f"/v1/payments/{pid}"})

    async def list_payments(
        self,
        ctx: RequestContext,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        customer_id: str | None = None,
        status: Any = None,
    ) -> Any:
        records = await ctx.repository("payments").list(limit=limit, after=starting_after)
        return {"data": [r.value for r in records], "nextCursor": None}

    async def get_payment(self, ctx: RequestContext, *, payment_id: str) -> Any:
        raise RuntimeError("secret-internal-detail: password=hunter2")
"""

REPORTS = """
from __future__ import annotations

import os
from typing import Any

from .. import models
from ..interfaces import ReportsBase
from ..runtime.context import JobContext
from ..runtime.problems import ProblemDetail
from ._ledger import hold, mark


class ReportsHandler(ReportsBase):
    async def create_report(self, ctx: JobContext, *, body: models.ReportRequest) -> Any:
        mark("reports.started")
        await hold("reports")
        if body.type.value == "payments" and os.environ.get("TEST_JOB_CRASH"):
            raise ValueError("the ledger does not balance")  # a bug: logged with its traceback
        if body.type.value == "refunds":
            who = ctx.principal.id if ctx.principal else "nobody"
            detail = f"Narrow the range (requested by {who})."
            raise ProblemDetail(422, "report-too-large", "Report too large", detail)
        mark("reports.done")
        return models.ReportResult(report_url=f"https://cdn.example.com/{body.type.value}.csv")
"""

# The acme verifier of the tests (written over `<package>/verifier.py`): every bearer token or
# API key is valid except those starting with "bad", and is its own principal id — so a test
# names a caller by its token. `TEST_TOKEN_TIERS` (a JSON object, token → tier) gives tiers.
VERIFIER = """
from __future__ import annotations

import json
import os

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal

TIERS = json.loads(os.environ.get("TEST_TOKEN_TIERS") or "{}")


def _principal(credential: str) -> Principal | None:
    if credential.startswith("bad"):
        return None
    return Principal(credential, tier=TIERS.get(credential))


class Verifier(VerifierBase):
    async def bearer_auth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return _principal(token)

    async def api_key_auth(
        self, key: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return _principal(key)

    async def allow_destination(self, url: str, principal: Principal | None) -> bool:
        return "refused-by-hook" not in url  # the hook may refuse what the checks allow
"""
