"""What the shared transaction costs a POST, in requests per second, on each store.

    .venv/bin/python bench/transaction_bench.py [--repeat 3] [--duration 5] [--connections 8]
                                                [--stores sqlite,postgres] [--json FILE]

Generates the crash tests' payments server (one idempotent `POST /payments` that writes a row
and emits `payment.created`) and serves it with one uvicorn worker on 127.0.0.1 per
configuration, each with a fresh database:

- `separate` — as handlers did before the shared transaction: the row is written and
  committed on the handler's own connection to the same database, the event goes to the
  outbox on its own, and the idempotency layer stores the answer afterwards;
- `shared` — `async with ctx.transaction() as tx:` the row and `events(ctx, tx)`; the answer
  is stored in the same transaction.

Each store is measured with wrk (a unique `Idempotency-Key` per request, Lua script),
`separate` and `shared` alternating in every repetition; printed: the median requests/s of
each, the ratio shared/separate pair by pair (and its median), and the server's CPU time per
request (/proc). Webhooks are stored, not sent (no signing secret). PostgreSQL: a throwaway
cluster (initdb/pg_ctl, fsync off) on a free port, as the tests start it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.crash.harness import TABLE, generate_server  # noqa: E402
from tests.support import fresh_database, postgres_server, sql_query, uvicorn_server  # noqa: E402

HANDLER = '''
from __future__ import annotations

import asyncio
import os
import secrets
import threading
from typing import Any

from .. import models
from ..events import events
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext
from ..runtime.storage import connect_sqlite, parse_store_url

INSERT = "INSERT INTO crash_payments (idem_key, payment_id) VALUES (?, ?)"
_own: dict[str, Any] = {}
_lock = threading.Lock()


async def insert_on_own_connection(url: str, key: str, pid: str) -> None:
    """The handler's own write, committed by itself (what handlers did before)."""
    parsed = parse_store_url(url)
    if parsed.kind == "sqlite":
        def run() -> None:
            with _lock:
                conn = _own.get("sqlite") or _own.setdefault("sqlite", connect_sqlite(parsed.path))
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(INSERT, (key, pid))
                conn.execute("COMMIT")

        await asyncio.to_thread(run)
        return
    pool = _own.get("pg")
    if pool is None:
        from psycopg_pool import AsyncConnectionPool

        pool = _own["pg"] = AsyncConnectionPool(url, max_size=10, kwargs={"autocommit": True},
                                                open=False)
        await pool.open()
    async with pool.connection() as conn:
        await conn.execute(INSERT.replace("?", "%s"), (key, pid))


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        key = ctx.request.headers["idempotency-key"]
        payment = {"id": "pay_" + secrets.token_hex(8), "amount": body.amount, "charge": "ch_x"}
        if os.environ["BENCH_MODE"] == "shared":
            async with ctx.transaction() as tx:
                await tx.execute(INSERT, (key, payment["id"]))
                await events(ctx, tx).payment_created(payment)
        else:
            await insert_on_own_connection(ctx.services.store_url, key, payment["id"])
            await events(ctx).payment_created(payment)
        return Reply(payment, status=201)
'''

POST_LUA = """
wrk.method = "POST"
local counter = 0
local prefix = tostring(os.time()) .. "-" .. tostring(math.random(1, 1000000000))
request = function()
  counter = counter + 1
  local headers = {}
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = prefix .. "-" .. counter
  return wrk.format("POST", "/payments", headers, '{"amount": 100}')
end
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU of `pid` and its children so far (uvicorn's worker is a child)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for proc in [pid, *children(pid)]:
        fields = Path(f"/proc/{proc}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in found.read_text().split()] if found.exists() else []


def run_wrk(url: str, seconds: int, connections: int, script: Path) -> tuple[float, int]:
    done = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    rate = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    total = re.search(r"(\d+) requests in", done.stdout)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", done.stdout)
    if rate is None or total is None:
        raise SystemExit(f"wrk said:\n{done.stdout}{done.stderr}")
    if bad:
        raise SystemExit(f"{bad.group(1)} answers were not 2xx:\n{done.stdout}")
    return float(rate.group(1)), int(total.group(1))


def measure(
    project: Path, url: str, mode: str, state: Path, seconds: int, connections: int, lua: Path
) -> dict[str, float]:
    env = {
        "APIFORGE_STORE_URL": url,
        "APIFORGE_RATE_LIMIT_ENABLED": "0",
        "APIFORGE_LOG_LEVEL": "warning",
        "APIFORGE_METRICS_PATH": "",
        "BENCH_MODE": mode,
    }
    with uvicorn_server(
        "crash_server.main:app",
        cwd=state,
        env=env,
        pythonpath=[project],
        output=state / f"{mode}.log",
    ) as (base, proc):
        run_wrk(base, 1, 2, lua)  # warm-up: connections, pools, schema
        before = cpu_seconds(proc.pid)
        rate, total = run_wrk(base, seconds, connections, lua)
        cpu = cpu_seconds(proc.pid) - before
    return {"rps": rate, "cpu_ms_per_request": 1000 * cpu / max(total, 1)}


def fresh(store: str, admin: str | None, state: Path, name: str) -> str:
    if store == "sqlite":
        url = f"sqlite:///{state / (name + '.db')}"
    else:
        assert admin is not None
        url = fresh_database(admin, name)
    sql_query(url, TABLE)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: `make wrk` installs it from Debian's packages")
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="txbench-") as tmp, postgres_server() as admin:
        root = Path(tmp)
        project = generate_server(root, HANDLER)
        lua = root / "post.lua"
        lua.write_text(POST_LUA, encoding="utf-8")
        print(f"load before: {os.getloadavg()}", flush=True)
        for store in args.stores.split(","):
            runs = results.setdefault(store, {"separate": [], "shared": []})
            for i in range(args.repeat):
                for mode in ("separate", "shared"):
                    state = root / f"{store}-{mode}-{i}"
                    state.mkdir()
                    url = fresh(store, admin, state, f"bench_{mode}_{i}")
                    figures = measure(
                        project, url, mode, state, args.duration, args.connections, lua
                    )
                    runs[mode].append(figures)
                    print(f"{store} {mode} #{i}: {figures}", flush=True)
                    time.sleep(0.5)
        print(f"load after: {os.getloadavg()}")
    summary = {}
    for store, runs in results.items():
        sep = [r["rps"] for r in runs["separate"]]
        sh = [r["rps"] for r in runs["shared"]]
        ratios = [b / a for a, b in zip(sep, sh, strict=True)]
        summary[store] = {
            "separate_rps_median": statistics.median(sep),
            "shared_rps_median": statistics.median(sh),
            "shared_over_separate_pairs": [round(r, 3) for r in ratios],
            "shared_over_separate_median": round(statistics.median(ratios), 3),
            "cpu_ms_per_request_separate": statistics.median(
                r["cpu_ms_per_request"] for r in runs["separate"]
            ),
            "cpu_ms_per_request_shared": statistics.median(
                r["cpu_ms_per_request"] for r in runs["shared"]
            ),
        }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
