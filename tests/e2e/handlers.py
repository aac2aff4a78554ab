"""The business logic the end-to-end tests write into the generated acme server.

Plain source text, copied over `<package>/handlers/<tag>.py` (the create-once modules).

- payments: every execution of `create_payment` appends a row to an *executions ledger* (a
  SQLite file named by `E2E_LEDGER`) before it stores the payment and emits
  `payment.succeeded`; the tests count effects there. `metadata.handlerDelay` (seconds) makes
  the handler slow, so a retry can arrive while it still runs.
- customers: the versioned repository (ETag "v<version>", If-Match preconditions).
- reports: the 202 job; `type: refunds` fails with a problem, anything else completes after
  `E2E_JOB_SECONDS` with a typed result.
"""

PAYMENTS = """
from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sqlite3
from typing import Any

from .. import models
from ..events import events
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext


def record_execution(key: str, payment_id: str) -> None:
    with contextlib.closing(sqlite3.connect(os.environ["E2E_LEDGER"], timeout=10)) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS executions"
            " (seq INTEGER PRIMARY KEY, idempotency_key TEXT, payment_id TEXT)"
        )
        db.execute(
            "INSERT INTO executions (idempotency_key, payment_id) VALUES (?, ?)",
            (key, payment_id),
        )
        db.commit()


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        data = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        delay = float((data.get("metadata") or {}).get("handlerDelay", "0"))
        if delay:
            await asyncio.sleep(delay)
        pid = "pay_" + secrets.token_hex(13).upper()
        record_execution(ctx.request.headers.get("idempotency-key", ""), pid)
        value = {**data, "id": pid, "status": "succeeded", "amountRefunded": 0,
                 "createdAt": "2026-04-15T10:30:00Z"}
        await ctx.repository("payments").create(pid, value)
        await events(ctx).payment_succeeded(value)
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
        records = await ctx.repository("payments").list(limit=1000)
        data = [r.value for r in records if customer_id in (None, r.value["customerId"])]
        ids = [d["id"] for d in data]
        start = ids.index(starting_after) + 1 if starting_after in ids else 0
        page = data[start : start + limit]
        more = start + limit < len(data)
        return {"data": page, "nextCursor": page[-1]["id"] if more and page else None}

    async def get_payment(self, ctx: RequestContext, *, payment_id: str) -> Any:
        found = await ctx.repository("payments").get(payment_id)
        if found is None:
            raise ctx.not_found(f"No payment {payment_id}.")
        return found.value
"""

CUSTOMERS = """
from __future__ import annotations

import secrets
from typing import Any

from .. import models
from ..interfaces import CustomersBase
from ..runtime.context import Reply, RequestContext

NOW = "2026-04-15T10:30:00Z"


class CustomersHandler(CustomersBase):
    async def create_customer(self, ctx: RequestContext, *, body: models.CustomerCreate) -> Any:
        cid = "cus_" + secrets.token_hex(13).upper()
        data = body.model_dump(mode="json", by_alias=True, exclude_unset=True)
        value = {"id": cid, "tags": [], **data, "createdAt": NOW, "updatedAt": NOW}
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
        value = {**found.value, **body.model_dump(mode="json", by_alias=True, exclude_unset=True)}
        new_version = await repo.update(customer_id, value, expected_version=version)
        return Reply({**value, "version": new_version}, version=new_version)

    async def delete_customer(self, ctx: RequestContext, *, customer_id: str) -> Any:
        repo = ctx.repository("customers")
        found = await repo.get(customer_id)
        version = ctx.precondition(None if found is None else found.version)
        await repo.delete(customer_id, expected_version=version)
        return None
"""

REPORTS = """
from __future__ import annotations

import asyncio
import os
from typing import Any

from .. import models
from ..interfaces import ReportsBase
from ..runtime.context import JobContext
from ..runtime.problems import ProblemDetail


class ReportsHandler(ReportsBase):
    async def create_report(self, ctx: JobContext, *, body: models.ReportRequest) -> Any:
        await asyncio.sleep(float(os.environ.get("E2E_JOB_SECONDS", "0.2")))
        if body.type.value == "refunds":
            raise ProblemDetail(
                422, "report-too-large", "Report too large", "Narrow the date range."
            )
        return models.ReportResult(report_url=f"https://cdn.example.com/{body.type.value}.csv")
"""

ALL = {"payments": PAYMENTS, "customers": CUSTOMERS, "reports": REPORTS}
