"""Conformance: schemathesis against the generated server of every spec in specs/.

Each server is generated, its handlers are written by `examples.handler_modules` (every
operation answers its lowest declared 2xx with a valid instance of the response schema and the
declared response headers — never 501), and it is served under uvicorn on 127.0.0.1. Then
`st run` sends examples, coverage cases and fuzzed (positive and negative) requests and checks
every response: no 5xx, status code, Content-Type, headers and body as the spec declares.

Every check result is read from schemathesis's NDJSON event report; a failure fails the test
unless `EXCLUDED` names it with the reason (docs/reliability.md lists them). The counts are
printed (`pytest -s`) and kept in `conformance.json` under the session's temp dir. The specs
run three at a time.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

import pytest

from generator.spec import load_spec
from tests.reliability.examples import handler_modules
from tests.server.conftest import generate, serve, write_handler

pytest.importorskip("schemathesis")

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
ST = Path(sys.executable).with_name("st")
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
)
MAX_EXAMPLES = int(os.environ.get("CONFORMANCE_MAX_EXAMPLES", "6"))
SEED = 20260415


@dataclass(frozen=True)
class Failure:
    spec: str
    operation: str
    check: str
    code: str  # ST1xx
    status: int | None  # the response's status code
    mode: str  # positive (the request is valid per the spec) or negative
    content_type: str
    message: str
    body: str
    #: what was sent: method, URI, headers and the first 500 bytes of the body (for diagnosis)
    request: str = ""


@dataclass(frozen=True)
class Exclusion:
    reason: str
    applies: Callable[[Failure], bool]


PROBLEM_TYPE = '"type":"https://bare.example.com/problems/'


def _problem(f: Failure) -> bool:
    return f.content_type.startswith("application/problem+json")


#: Failures that are not bugs of the generated server, each with its reason.
EXCLUDED: tuple[Exclusion, ...] = (
    Exclusion(
        "the events of a text/event-stream answer: the example-based test handlers send one "
        "placeholder event, not one generated from the event schema (the stream's media type "
        "and framing are still checked; the client's SSE tests check real events)",
        lambda f: f.code == "ST108" and f.content_type.startswith("text/event-stream"),
    ),
    Exclusion(
        "a request the spec itself forbids (schemathesis's negative mode) answered with a 4xx "
        "problem (400 malformed header, 422 invalid body or parameter) on an operation whose "
        "spec declares neither that status nor a `default` response: no declared answer exists",
        lambda f: (
            f.mode == "negative"
            and f.code == "ST103"
            and f.status is not None
            and 400 <= f.status < 500
            and _problem(f)
        ),
    ),
    Exclusion(
        "bare.yaml deliberately declares no error responses, or errors that are not problem "
        "details (every lint rule fires on it): the server's 400/422/428 problem answers to "
        "invalid requests are right, the spec omits them or declares another error shape",
        lambda f: (
            f.spec == "bare"
            and f.code in ("ST103", "ST105", "ST108")
            and f.status in (400, 422, 428)
            and (_problem(f) or PROBLEM_TYPE in f.body)
        ),
    ),
)


@dataclass
class Outcome:
    spec: str
    cases: int = 0
    checks: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    excluded: list[tuple[Failure, str]] = field(default_factory=list)


def _request_text(request: dict[str, Any]) -> str:
    """One line per request: method, URI, headers, then the body's first 2,000 bytes."""
    body = (request.get("body") or {}).get("$base64", "")
    headers = {k: v for k, v in (request.get("headers") or {}).items() if k != "Authorization"}
    return (
        f"{request.get('method', '')} {request.get('uri', '')} {json.dumps(headers)} "
        + base64.b64decode(body).decode("utf-8", "replace")[:2000]
    )


def _read_events(spec: str, path: Path) -> Outcome:
    outcome = Outcome(spec)
    seen: set[tuple[str, str, str, int | None]] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        interactions = recorder.get("interactions", {})
        for case_id, checks in recorder.get("checks", {}).items():
            outcome.cases += 1
            for check in checks:
                outcome.checks += 1
                outcome.by_check[check["name"]] = outcome.by_check.get(check["name"], 0) + 1
                if check["status"] == "success":
                    continue
                info = check.get("failure_info") or {}
                failure = info.get("failure") or {}
                response = (interactions.get(case_id) or {}).get("response") or {}
                headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
                content = (response.get("content") or {}).get("$base64", "")
                case = (recorder.get("cases", {}).get(case_id) or {}).get("value") or {}
                mode = ((case.get("meta") or {}).get("generation") or {}).get("mode", "")
                found = Failure(
                    spec=spec,
                    mode=str(mode),
                    operation=str(failure.get("operation", recorder.get("label", "?"))),
                    check=check["name"],
                    code=str(failure.get("code", "")),
                    status=response.get("status_code"),
                    content_type=(headers.get("content-type") or [""])[0],
                    message=str(failure.get("message", failure.get("title", ""))),
                    body=base64.b64decode(content).decode("utf-8", "replace")[:500],
                    request=_request_text((interactions.get(case_id) or {}).get("request") or {}),
                )
                key = (found.operation, found.code, found.message[:200], found.status)
                if key in seen:
                    continue
                seen.add(key)
                reason = next((e.reason for e in EXCLUDED if e.applies(found)), None)
                if reason is None:
                    outcome.failures.append(found)
                else:
                    outcome.excluded.append((found, reason))
    return outcome


TOKEN = "conformance"


def permissive_verifier(plan: Any) -> str:
    """A verifier that accepts every credential with every scope: conformance is about what
    the operations answer once a caller is in (security itself: tests/server/test_security)."""
    lines = [
        "from .auth import VerifierBase",
        "from .runtime.security import Principal",
        "",
        "",
        "class Verifier(VerifierBase):",
        "    pass",
    ]
    for scheme in plan.schemes:
        if scheme.kind:
            lines += [
                "",
                f"    async def {scheme.method}(self, *credential, scopes, ctx):",
                "        return Principal('conformance', scopes=frozenset(scopes))",
            ]
    return "\n".join(lines) + "\n"


# One spec is prepared at a time. CPython 3.11's AST constructor keeps one recursion counter
# per interpreter, so two threads in ast.parse at once (the generator reading handler modules,
# pytest rewriting a module hypothesis imports lazily) can fail with "AST constructor
# recursion depth mismatch"; the waiting on servers and schemathesis still overlaps.
_PREPARING = Lock()


def _run_one(spec: Path, work: Path) -> tuple[Outcome, str]:
    """Generate, implement, serve and fuzz one spec; (outcome, schemathesis's output tail)."""
    project = work / "project"
    with _PREPARING:
        plan, _report, _missing = generate(spec, project, "conf_srv")
        doc = load_spec(str(spec)).resolver.root.data  # a Swagger 2.0 spec's 3.0 reading
        for module, source in handler_modules(plan, doc).items():
            write_handler(project, "conf_srv", module, source)
        (project / "conf_srv" / "verifier.py").write_text(permissive_verifier(plan))
    events = work / "events.ndjson"
    env = {"APIFORGE_RATE_LIMIT_DEFAULT": "1000000/minute", "APIFORGE_MAX_BODY_BYTES": "1048576"}
    with serve(project, "conf_srv", work / "state", env=env) as base:
        argv = [str(ST), "run", str(spec), "--url", base, "--checks", ",".join(CHECKS)]
        argv += ["--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED), "--no-shrink"]
        argv += ["--phases", "examples,coverage,fuzzing", "--workers", "2"]
        argv += ["--report", "ndjson", "--report-ndjson-path", str(events)]
        argv += ["--request-timeout", "10", "--warnings", "off"]
        argv += ["--header", f"Authorization: Bearer {TOKEN}", "--header", f"X-API-Key: {TOKEN}"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=work)
    tail = proc.stdout[-3000:] + proc.stderr[-3000:]
    if not events.exists():
        return Outcome(spec.stem), tail
    return _read_events(spec.stem, events), tail


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Outcome, str]]:
    """Every spec's run, three at a time (each is mostly waiting on its server)."""
    base = tmp_path_factory.mktemp("conformance")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {s.stem: pool.submit(_run_one, s, base / s.stem) for s in SPECS}
        found = {name: future.result() for name, future in futures.items()}
    summary = [
        {
            "spec": o.spec,
            "cases": o.cases,
            "checks": o.checks,
            "by_check": o.by_check,
            "failures": len(o.failures),
            "excluded": len(o.excluded),
            "excluded_reasons": sorted({r for _, r in o.excluded}),
        }
        for o, _tail in found.values()
    ]
    print(json.dumps(summary, indent=1))
    (tmp_path_factory.getbasetemp() / "conformance.json").write_text(json.dumps(summary))
    return found


@pytest.mark.parametrize("spec", SPECS, ids=[p.stem for p in SPECS])
def test_schemathesis_finds_no_nonconformance(
    spec: Path, outcomes: dict[str, tuple[Outcome, str]]
) -> None:
    outcome, tail = outcomes[spec.stem]
    assert outcome.checks > 0, tail
    shown = "\n\n".join(
        f"{f.operation} [{f.code} {f.check}] {f.mode} request; status {f.status} "
        f"{f.content_type}\n"
        f"{f.message[:600]}\nbody: {f.body[:300]}"
        for f in outcome.failures[:8]
    )
    assert not outcome.failures, f"{len(outcome.failures)} non-conformances:\n{shown}"
