"""`make demo` end to end: `python -m generator.demo` in a subprocess, into a temporary
directory, with one handler module already there (create-once: the demo must keep it)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OWN_REPORTS_HANDLER = """
from __future__ import annotations

from typing import Any

from .. import models
from ..interfaces import ReportsBase
from ..runtime.context import JobContext


class ReportsHandler(ReportsBase):
    async def create_report(self, ctx: JobContext, *, body: models.ReportRequest) -> Any:
        return models.ReportResult(report_url="https://example.test/kept-by-the-demo.csv")
"""


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    handlers = out / "server" / "acme_server" / "handlers"
    handlers.mkdir(parents=True)
    (handlers / "reports.py").write_text(OWN_REPORTS_HANDLER.lstrip())

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "generator.demo", "--dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    output = done.stdout
    assert done.returncode == 0, output + done.stderr
    assert done.stderr == ""

    expected = [
        # inspect and lint
        r"Acme Payments API 2026-04-15: 14 operations, 4 webhooks",
        r"\$ apiforge lint specs/acme.yaml\n  no findings",
        r"\n  \d+:\d+ +error +[a-z-]+ ",
        r"\d+ findings: \d+ errors?, .* \(exit 1\)",
        # generation: the demo wrote two handler modules and kept ours
        r"demo handlers and verifier written to .*: payments\.py, customers\.py, verifier\.py\)",
        r"\$ apiforge generate specs/acme.yaml -o .* --package-prefix acme\n",
        r"wrote acme_server to .*1 handler files created, 4 kept",
        r"wrote acme_client to ",
        r"lint: no findings",
        r"listening on http://127\.0\.0\.1:\d+",
        # who calls: 401 without a token or with a made-up one, 200 with the demo's
        r'GET /v1/payments with no token → 401, WWW-Authenticate: Bearer realm="Acme Payments API"',
        r'with a made-up token → 401, WWW-Authenticate: Bearer realm="Acme Payments API", '
        r'error="invalid_token"',
        r"GET /v1/payments with demo-token → 200",
        # the idempotent retry: lost once, replayed, executed once
        r"→ 201 sent by the server, lost on the way\n\s+the client retries after 0\.5 s",
        r"→ 201, Idempotent-Replayed: true",
        r"server ledger: 1 execution for this key",
        # 429 honoured
        r"→ 429, Retry-After: (\d+)  \(the client sleeps \1 s, then retries\)\n.*→ 200",
        # 412 resolved by read_modify_write
        r'If-Match "v1" → 412 Precondition Failed → read again\n'
        r'.*GET /v1/customers/\{id\} → 200, ETag "v2"\n'
        r'.*PATCH /v1/customers/\{id\} If-Match "v2" → 200, ETag "v3"',
        r"tags \['vip'\] \(both writes kept\)",
        # the job, with our handler's result
        r"POST /v1/reports → 202: job job_\w+ queued, Retry-After: 1",
        r"wait\(\): queued → (running → )?completed",
        r"result: https://example\.test/kept-by-the-demo\.csv",
        r"== 5\. Server stopped",
    ]
    for pattern in expected:
        assert re.search(pattern, output), f"{pattern!r} not in:\n{output}"

    port = int(re.search(r"listening on http://127\.0\.0\.1:(\d+)", output)[1])  # type: ignore[index]
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0  # the server is gone
    assert (out / "server" / "data" / "ledger.db").exists()
    assert "kept-by-the-demo" in (handlers / "reports.py").read_text()
