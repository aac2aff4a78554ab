"""The generated server's pattern layer, in requests per second.

    .venv/bin/python bench/server_bench.py [--repeat 3] [--duration 5] [--connections 16]
                                           [--only get,post] [--json FILE]

1. Generates the acme server into a temporary folder and writes two handlers: GET
   /v1/customers/{id} reads the customer and its version from the SQLite repository and
   answers it with its ETag; POST /v1/payments stores a payment in the SQLite repository.
2. Starts one uvicorn worker per configuration on 127.0.0.1 (each with its own SQLite file):

   - GET, layer off (`APIFORGE_PATTERNS_ENABLED=0`) / on (rate limit + ETag; limits in
     memory) / on with the rate limits in Redis (leases on, the default; and lease 1: one
     round trip per request);
   - POST, layer off (no key: the layer does not look at it) / on with a unique
     Idempotency-Key per request (wrk Lua script), records in SQLite / in Redis
     (`APIFORGE_REDIS_URL`, a throwaway redis-server; resources stay in SQLite).

   - observability (`--only obs`): GET with the layer on, with request ids, the access log
     line (to /dev/null) and the metrics, and with them taken out (`noobs_app.py`);
   - authentication (`--only auth`): GET with the layer on, with the spec's bearer check
     (a verifier that looks the token up in an in-memory dict) and with the security guard
     taken out of the same app (`noauth_app.py`), to measure what authenticating costs.
   - against bare FastAPI (`--only bare`): the generated GET with everything on (bearer
     authentication, rate limit, ETag, the SQLite repository, metrics, request ids) beside
     a bare FastAPI endpoint answering the same JSON from a dict (`bare_app.py`); its
     "ratio" column is the generated GET's requests/s over the bare one's, the median of the
     runs paired within each repetition.

3. Loads each with `wrk` (installed from Debian's packages when missing; `oha` or `hey` if
   one is on PATH instead; a Python load generator only if none is), alternating the
   configurations in every repetition so a busy machine hurts all alike, and prints the
   median requests/s of each, the layer's cost against its "off" twin, the machine's `uptime`
   load before and after, and every run. Any non-2xx answer fails the run. Also the server
   process's CPU time per request (/proc), which a busy machine disturbs far less than
   requests/s: the layer's CPU cost is 1 - (CPU/request off) / (CPU/request on), i.e. its
   throughput cost on an otherwise idle core (Redis' own CPU is not counted).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.support import redis_server, uvicorn_server  # noqa: E402

PACKAGE = "acme_bench"
CUSTOMER = {"email": "bench@example.com", "name": "Bench Mark"}
PAYMENT = {
    "amount": 5000,
    "currency": "usd",
    "customerId": "cus_01HTZ3A7B8C9D0E1F2G3H4J5K6",
    "paymentMethod": {"type": "card", "token": "tok_visa_4242"},
}
TOKEN = "bench-token"

CUSTOMERS = """
from __future__ import annotations

import secrets
from typing import Any

from .. import models
from ..interfaces import CustomersBase
from ..runtime.context import Reply, RequestContext


class CustomersHandler(CustomersBase):
    async def create_customer(self, ctx: RequestContext, *, body: models.CustomerCreate) -> Any:
        cid = "cus_" + secrets.token_hex(13).upper()
        value = {
            "id": cid,
            "tags": [],
            **body.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "createdAt": "2026-04-15T10:30:00Z",
            "updatedAt": "2026-04-15T10:30:00Z",
        }
        version = await ctx.repository("customers").create(cid, value)
        return Reply({**value, "version": version}, version=version)

    async def get_customer(self, ctx: RequestContext, *, customer_id: str) -> Any:
        found = await ctx.repository("customers").get(customer_id)
        if found is None:
            raise ctx.not_found(f"No customer {customer_id}.")
        return Reply({**found.value, "version": found.version}, version=found.version)
"""

PAYMENTS = """
from __future__ import annotations

import secrets
from typing import Any

from .. import models
from ..interfaces import PaymentsBase
from ..runtime.context import Reply, RequestContext


class PaymentsHandler(PaymentsBase):
    async def create_payment(self, ctx: RequestContext, *, body: models.PaymentCreate) -> Any:
        pid = "pay_" + secrets.token_hex(13).upper()
        value = {
            **body.model_dump(mode="json", by_alias=True, exclude_unset=True),
            "id": pid,
            "status": "succeeded",
            "amountRefunded": 0,
            "createdAt": "2026-04-15T10:30:00Z",
        }
        await ctx.repository("payments").create(pid, value)
        return Reply(value, headers={"Location": f"/v1/payments/{pid}"})
"""

# the bench's credential check: one token, looked up in a dict (a realistic cheapest verifier)
VERIFIER = """
from __future__ import annotations

from .auth import VerifierBase
from .runtime.security import AuthContext, Principal

ISSUED = {"@TOKEN@": Principal("acct_bench")}


class Verifier(VerifierBase):
    async def bearer_auth(
        self, token: str, *, scopes: tuple[str, ...], ctx: AuthContext
    ) -> Principal | None:
        return ISSUED.get(token)
""".replace("@TOKEN@", TOKEN)

# the same app without request ids, access lines and metrics, for the "observability off" twin
NOOBS_APP = """
from PACKAGE.main import app
from PACKAGE.runtime.observability import METRICS, RequestIdMiddleware

METRICS.enabled = False
app.user_middleware[:] = [m for m in app.user_middleware if m.cls is not RequestIdMiddleware]
""".replace("PACKAGE", PACKAGE)

# what FastAPI alone does for a GET: the path parameter, a dict, its JSON
BARE_APP = """
from fastapi import FastAPI

app = FastAPI()
CUSTOMER = {"id": "cus_1", "email": "bench@example.com", "name": "Bench Mark", "version": 1}


@app.get("/v1/customers/{customer_id}")
async def get_customer(customer_id: str) -> dict[str, object]:
    return {**CUSTOMER, "id": customer_id}
"""

# the same app with the security guards taken out, for the "auth off" twin
NOAUTH_APP = """
from PACKAGE.main import app
from PACKAGE.runtime.security import AuthRequirement

for route in app.routes:
    guards = getattr(route, "guards", None)
    if guards is not None:  # the route's handler holds this very list
        guards[:] = [g for g in guards if not isinstance(g, AuthRequirement)]
""".replace("PACKAGE", PACKAGE)

POST_LUA = """
wrk.method = "POST"
local body = '%(body)s'
local prefix = "%(prefix)s-" .. tostring(math.random(1, 1000000000))
local counter = 0
local with_key = %(with_key)s
request = function()
  counter = counter + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer %(token)s",
  }
  if with_key then
    headers["Idempotency-Key"] = prefix .. "-" .. counter
  end
  return wrk.format("POST", "/v1/payments", headers, body)
end
"""


@dataclass
class Config:
    name: str
    kind: str  # get, post
    patterns: bool
    redis: bool = False
    key: bool = False
    baseline: str | None = None  # the "off" twin this is compared against
    lease: int | None = None  # APIFORGE_RATE_LIMIT_LEASE (None: the default)
    app: str = f"{PACKAGE}.main:app"
    runs: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # server CPU µs per request
    pid: int = 0
    base: str = ""
    path: str = ""


CONFIGS = [
    Config("GET off", "get", patterns=False),
    Config("GET rate limit + ETag", "get", patterns=True, baseline="GET off"),
    Config("GET rate limit (Redis) + ETag", "get", patterns=True, redis=True, baseline="GET off"),
    Config(
        "GET rate limit (Redis, lease 1: a round trip per request) + ETag",
        "get",
        patterns=True,
        redis=True,
        lease=1,
        baseline="GET off",
    ),
    Config("POST off", "post", patterns=False),
    Config("POST idempotency (SQLite)", "post", patterns=True, key=True, baseline="POST off"),
    Config(
        "POST idempotency (Redis)", "post", patterns=True, redis=True, key=True, baseline="POST off"
    ),
    Config("GET patterns, no authentication", "auth", patterns=True, app="noauth_app:app"),
    Config("GET patterns, no observability", "obs", patterns=True, app="noobs_app:app"),
    Config(
        "GET patterns + request ids, access log, metrics",
        "obs",
        patterns=True,
        baseline="GET patterns, no observability",
    ),
    Config(
        "GET patterns + bearer authentication",
        "auth",
        patterns=True,
        baseline="GET patterns, no authentication",
    ),
    Config("GET bare FastAPI", "bare", patterns=False, app="bare_app:app"),
    Config(
        "GET generated: auth, rate limit, ETag, SQLite, metrics, request ids",
        "bare",
        patterns=True,
        baseline="GET bare FastAPI",
    ),
]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def ensure_load_generator() -> str:
    for tool in ("wrk", "oha", "hey"):
        if shutil.which(tool):
            return tool
    print("installing wrk from Debian's packages", file=sys.stderr)
    for prefix in ([], ["sudo"]):
        with contextlib.suppress(OSError):
            subprocess.run([*prefix, "apt-get", "update", "-qq"], capture_output=True)
            subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", "wrk"], capture_output=True)
        if shutil.which("wrk"):
            return "wrk"
    print("wrk/oha/hey unavailable: falling back to a Python load generator", file=sys.stderr)
    return "python"


def generate(out: Path) -> Path:
    from generator.server.plan import write_server
    from generator.spec import load_spec

    spec = ROOT / "specs" / "acme.yaml"
    project = out / "project"
    write_server(
        load_spec(str(spec)).api, project, spec_source=spec, spec_name=spec.name, package=PACKAGE
    )
    handlers = project / PACKAGE / "handlers"
    (handlers / "customers.py").write_text(CUSTOMERS.lstrip())
    (handlers / "payments.py").write_text(PAYMENTS.lstrip())
    (project / PACKAGE / "verifier.py").write_text(VERIFIER.lstrip())
    (project / "noauth_app.py").write_text(NOAUTH_APP.lstrip())
    (project / "noobs_app.py").write_text(NOOBS_APP.lstrip())
    (project / "bare_app.py").write_text(BARE_APP.lstrip())
    return project


def env_for(config: Config, state: Path, redis_url: str) -> dict[str, str]:
    env = {
        "APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}",
        "APIFORGE_RATE_LIMIT_DEFAULT": "1000000000/minute",
        "APIFORGE_PATTERNS_ENABLED": "1" if config.patterns else "0",
        "APIFORGE_WEBHOOK_SECRETS": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if config.redis:
        env["APIFORGE_REDIS_URL"] = redis_url
    if config.lease is not None:
        env["APIFORGE_RATE_LIMIT_LEASE"] = str(config.lease)
    return env


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(tool: str, config: Config, seconds: float, connections: int, scripts: Path) -> float:
    url = config.base + config.path
    auth = f"Authorization: Bearer {TOKEN}"
    if tool == "wrk":
        cmd = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "-H", auth]
        if config.kind == "post":
            cmd += ["-s", str(scripts / f"post_{'key' if config.key else 'nokey'}.lua")]
        out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
        if "Non-2xx" in out or "Socket errors" in out:
            raise RuntimeError(f"{config.name}: errors under load:\n{out}")
        return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    if tool in ("oha", "hey") and config.kind != "post":
        flag = ["-z", f"{seconds}s"]
        cmd = [tool, *flag, "-c", str(connections), "-H", auth, url]
        if tool == "oha":
            cmd.insert(1, "--no-tui")
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return python_load(config, seconds, connections)


def python_load(config: Config, seconds: float, connections: int) -> float:
    """The fallback: asyncio + httpx, keep-alive, `connections` concurrent loops."""
    import asyncio

    async def run() -> float:
        limits = httpx.Limits(max_connections=connections)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=config.base, limits=limits, headers=headers) as c:
            done = 0
            stop = time.monotonic() + seconds

            async def loop() -> None:
                nonlocal done
                while time.monotonic() < stop:
                    if config.kind != "post":
                        r = await c.get(config.path)
                    else:
                        extra = {"Idempotency-Key": str(uuid.uuid4())} if config.key else {}
                        r = await c.post(config.path, json=PAYMENT, headers=extra)
                    r.raise_for_status()
                    done += 1

            started = time.monotonic()
            await asyncio.gather(*(loop() for _ in range(connections)))
            return done / (time.monotonic() - started)

    return asyncio.run(run())


def prepare(config: Config) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": str(uuid.uuid4())}
    if config.app == "bare_app:app":
        config.path = "/v1/customers/cus_1"
        assert httpx.get(config.base + config.path).status_code == 200
    elif config.kind in ("get", "auth", "obs", "bare"):
        created = httpx.post(config.base + "/v1/customers", json=CUSTOMER, headers=headers)
        assert created.status_code == 201, created.text
        config.path = f"/v1/customers/{created.json()['id']}"
        check = httpx.get(config.base + config.path, headers=headers)
        assert check.status_code == 200, check.text
        assert ("etag" in check.headers) == config.patterns
        assert ("x-ratelimit-limit" in check.headers) == config.patterns
    else:
        config.path = "/v1/payments"
        check = httpx.post(config.base + config.path, json=PAYMENT, headers=headers)
        assert check.status_code == 201, check.text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "3")))
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds before each config")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--only", default="", help="get, post, auth, obs, bare (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here too")
    args = parser.parse_args()
    kinds = set(args.only.split(",")) if args.only else {"get", "post", "auth", "obs", "bare"}
    configs = [c for c in CONFIGS if c.kind in kinds]

    tool = ensure_load_generator()
    load_before = uptime()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="apiforge-bench-")))
        project = generate(tmp)
        (tmp / "post_key.lua").write_text(
            POST_LUA
            % {
                "body": json.dumps(PAYMENT),
                "prefix": uuid.uuid4().hex,
                "with_key": "true",
                "token": TOKEN,
            }
        )
        (tmp / "post_nokey.lua").write_text(
            POST_LUA
            % {"body": json.dumps(PAYMENT), "prefix": "x", "with_key": "false", "token": TOKEN}
        )
        redis_url = stack.enter_context(redis_server())
        for i, config in enumerate(configs):
            state = tmp / f"state{i}"
            state.mkdir()
            base, proc = stack.enter_context(
                uvicorn_server(
                    config.app,
                    cwd=state,
                    pythonpath=[project],
                    env=env_for(config, state, redis_url),
                    output=Path(os.devnull),  # the access lines are written, then dropped
                    extra_args=["--no-access-log"],
                )
            )
            config.base, config.pid = base, proc.pid
            prepare(config)
            load(tool, config, args.warmup, args.connections, tmp)
        for rep in range(args.repeat):
            order = configs if rep % 2 == 0 else list(reversed(configs))
            for config in order:
                cpu_before = cpu_seconds(config.pid)
                rps = load(tool, config, args.duration, args.connections, tmp)
                cpu_used = cpu_seconds(config.pid) - cpu_before
                config.runs.append(rps)
                config.cpu.append(cpu_used / (rps * args.duration) * 1e6)
                print(
                    f"  run {rep + 1} {config.name}: {rps:,.0f} req/s, "
                    f"{config.cpu[-1]:,.0f} µs server CPU/request",
                    file=sys.stderr,
                )
    load_after = uptime()

    by_name = {c.name: c for c in configs}
    print(
        f"\nOne uvicorn worker (uvicorn {_version('uvicorn')}, "
        f"{'uvloop' if _has('uvloop') else 'asyncio'}, "
        f"{'httptools' if _has('httptools') else 'h11'}), load from {tool} "
        f"(1 thread, {args.connections} connections, {args.duration:g} s runs) on 127.0.0.1; "
        f"{args.repeat} alternating repetitions; "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs.\nuptime before: {load_before}\nuptime after:  {load_after}\n"
    )
    print(
        "| configuration | requests/s (median) | runs | cost of the layer | ratio (paired) | "
        "server CPU µs/request (median) | cost of the layer (CPU) |"
    )
    print("|---|---:|---|---:|---:|---:|---:|")
    results = []
    for c in configs:
        median = statistics.median(c.runs)
        cpu = statistics.median(c.cpu)
        cost = cpu_cost = ratio = ""
        if c.baseline and c.baseline in by_name:
            twin = by_name[c.baseline]
            base = statistics.median(twin.runs)
            cost = f"{(1 - median / base) * 100:.0f}%"
            paired = [a / b for a, b in zip(c.runs, twin.runs, strict=True)]
            ratio = f"{statistics.median(paired):.2f}x"
            base_cpu = statistics.median(twin.cpu)
            cpu_cost = f"{(1 - base_cpu / cpu) * 100:.0f}%"
        runs = ", ".join(f"{r:,.0f}" for r in c.runs)
        print(f"| {c.name} | {median:,.0f} | {runs} | {cost} | {ratio} | {cpu:,.0f} | {cpu_cost} |")
        results.append(
            {
                "name": c.name,
                "median": median,
                "runs": c.runs,
                "cost": cost,
                "ratio": ratio,
                "cpu_us": c.cpu,
            }
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "load_before": load_before,
                    "load_after": load_after,
                    "tool": tool,
                    "results": results,
                },
                indent=2,
            )
        )


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    main()
