"""The generated client on real APIs, measured for docs/client.md.

    .venv/bin/python bench/client_corpus.py [--part pagination|mypy|streams|all]
                                            [--mypy-specs 24] [--timeout 600] [--no-docs]

1. `pagination`: every spec of ../shared/corpus/INDEX.tsv read (no validation), and for each
   *list operation* (generator/patterns/pagination.py: a GET whose 2xx JSON body is an array
   or holds one array of items) the style detected — cursor, link, next_url, offset, page —
   or none; the undetected are split into those with a query parameter that looks like paging
   (a cursor, offset, page or page-size name) and those with none (lists answered whole).
2. `mypy`: `apiforge generate` on `--mypy-specs` corpus specs (a deterministic spread: every
   k-th spec by path with 1 to 300 operations, plus specs with the shapes the client must handle:
   Stripe-style cursors, Link headers, servers with variables, event streams), then
   `mypy --strict` on each generated package: every operation's client method type-checks,
   or the errors are listed.
3. `streams`: the client runtime against a local server: the traced peak memory of a 50 MB
   download read as `bytes` and written to a file through `BinaryStream.write_to`, and the time
   from the server writing the first Server-Sent Event to the client having it (median of 20).

Results go to bench/results/client.json (each part rewrites its own entry) and the tables to
docs/client.md unless `--no-docs`: only the sections it measures are rewritten, the rest of the page
is kept as written.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "client.json"
DOCS = ROOT / "docs" / "client.md"
sys.path.insert(0, str(ROOT))

# specs whose shapes the issue is about, measured whatever the spread picks
WANTED = (
    "stripe/spec3.2023-09-12.yaml",
    "apisguru/github.com__ghes-2.18__1.1.4.yaml",
    "openai/openapi.yaml",
    "apisguru/bitbucket.org__2.0.yaml",
    "twilio/twilio_sync_v1.json",
    "lithic/lithic-openapi.yml",
    "apisguru/slack.com__1.7.0.yaml",
    "svix/server-openapi.json",
)


def _where(path: str) -> str:
    """An error's file as the report names it: `models/NAME.py` for a module of the models
    package, else the file's own name."""
    parts = path.split("/")
    return "/".join(parts[-2:]) if len(parts) > 1 and parts[-2] == "models" else parts[-1]


def index() -> list[dict[str, str]]:
    lines = (CORPUS / "INDEX.tsv").read_text().splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"), strict=False)) for line in lines[1:] if line]


# --- 1. pagination -------------------------------------------------------------------------------


def pagination() -> dict[str, Any]:
    from generator.errors import ApiforgeError
    from generator.patterns import pagination as detect
    from generator.spec import load_spec

    paging_names = (
        detect._CURSOR_PARAMS
        | detect._OFFSET_PARAMS
        | detect._PAGE_PARAMS
        | frozenset(detect._LIMIT_PARAMS)
    )
    styles: Counter[str] = Counter()
    per_spec: dict[str, dict[str, int]] = {}
    unreadable: list[str] = []
    started = time.perf_counter()
    for row in index():
        path = row["path"]
        try:
            api = load_spec(str(CORPUS / path)).api
        except ApiforgeError:
            unreadable.append(path)
            continue
        counts: Counter[str] = Counter()
        for op in api.operations:
            spec = op.patterns.pagination
            listed = detect.list_body(op, api) is not None
            if spec is not None:
                counts[spec.style] += 1
            elif listed:
                query = {detect.normalized(p.name) for p in op.parameters if p.location == "query"}
                counts["undetected, paging parameters" if query & paging_names else "whole"] += 1
        if counts:
            per_spec[path] = dict(counts)
        styles.update(counts)
    return {
        "specs": len(index()) - len(unreadable),
        "unreadable": unreadable,
        "styles": dict(styles),
        "list_operations": sum(styles.values()),
        "per_spec": per_spec,
        "seconds": round(time.perf_counter() - started, 1),
    }


# --- 2. mypy --strict on generated clients -------------------------------------------------------


def chosen_specs(count: int) -> list[str]:
    rows = [
        r
        for r in index()
        if r.get("n_operations", "0").isdigit()
        and 1 <= int(r["n_operations"]) <= 300
        and not r.get("parse_note")
        and not r["path"].startswith("oai/")
    ]
    rows.sort(key=lambda r: r["path"])
    wanted = [w for w in WANTED if (CORPUS / w).is_file()]
    step = max(1, len(rows) // max(1, count - len(wanted)))
    spread = [r["path"] for r in rows[::step] if r["path"] not in wanted]
    return wanted + spread[: max(0, count - len(wanted))]


def mypy_one(spec: str, work: Path, timeout: float) -> dict[str, Any]:
    out = work / spec.replace("/", "__")
    started = time.perf_counter()
    env = {**os.environ, "NO_COLOR": "1", "APIFORGE_NO_PROGRESS": "1"}
    # `generate`, as the corpus sweep runs it (`apiforge client` alone lets the models library
    # read the file itself, which fails on a few specs `generate` handles: openai's)
    gen = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", str(CORPUS / spec), "-o", str(out),
         "--no-validate"],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip
    result: dict[str, Any] = {
        "spec": spec,
        "generate_seconds": round(time.perf_counter() - started, 1),
    }
    if gen.returncode != 0 or "client: wrote " not in gen.stdout:
        result.update(status="not generated", detail=gen.stderr.strip().splitlines()[-1:])
        return result
    package = gen.stdout.split("client: wrote ", 1)[1].split(" ", 1)[0]
    out = out / "client"
    client = "".join(p.read_text() for p in sorted((out / package / "resources").glob("*.py")))
    result["operations"] = client.count("RequestOptions(") // 2  # sync and async
    result["paginated"] = client.count("SyncPage(")
    started = time.perf_counter()
    try:
        checked = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", package],
            cwd=out, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        result.update(status="mypy timeout", mypy_seconds=timeout)
        return result
    result["mypy_seconds"] = round(time.perf_counter() - started, 1)
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    result["status"] = "ok" if checked.returncode == 0 else "mypy errors"
    result["errors"] = errors[:20]
    result["error_count"] = len(errors)
    # where: the models module (the spec's schemas) or the client's methods
    result["error_files"] = dict(Counter(_where(e.split(":", 1)[0]) for e in errors))
    return result


def mypy_part(
    count: int, timeout: float, only: str | None = None, before: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`only`: re-measure the specs whose path contains it, keeping `before`'s other results."""
    kept = {r["spec"]: r for r in (before or {}).get("results", [])} if only else {}
    results = []
    with tempfile.TemporaryDirectory(prefix="apiforge-client-mypy-") as tmp:
        for spec in chosen_specs(count):
            if only and not any(o in spec for o in only.split(",")) and spec in kept:
                results.append(kept[spec])
                continue
            print(f"  {spec}", flush=True)
            try:
                results.append(mypy_one(spec, Path(tmp), timeout))
            except subprocess.TimeoutExpired:
                results.append({"spec": spec, "status": "generate timeout"})
            print(f"    {results[-1]['status']}", flush=True)
    return {
        "specs": len(results),
        "ok": sum(r["status"] == "ok" for r in results),
        "operations": sum(r.get("operations", 0) for r in results),
        "results": results,
    }


# --- 3. streams ----------------------------------------------------------------------------------


def streams() -> dict[str, Any]:
    import tracemalloc
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from templates.client.runtime import BinaryStream, EventStream, RequestOptions, SyncAPIClient

    size, block = 50 * 1024 * 1024, bytes(range(256)) * 256
    first_sent: list[float] = []
    go_on = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path == "/file":
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                for _ in range(size // len(block)):
                    self.wfile.write(block)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            first_sent.append(time.perf_counter())
            self.wfile.write(b'data: {"n": 1}\n\n')
            self.wfile.flush()
            go_on.wait(5)
            self.wfile.write(b'data: {"n": 2}\n\n')

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    figures: dict[str, Any] = {}
    try:
        with SyncAPIClient(url) as client, tempfile.TemporaryDirectory() as tmp:
            for how in ("bytes", "write_to"):
                tracemalloc.start()
                started = time.perf_counter()
                if how == "bytes":
                    got = len(client.request(RequestOptions("GET", "/file")).http_response.content)
                else:
                    response = client.request(RequestOptions("GET", "/file"), stream=True)
                    got = BinaryStream(response).write_to(Path(tmp) / "f.bin")
                seconds = time.perf_counter() - started
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                assert got == size
                figures[how] = {"peak_mb": round(peak / 2**20, 2), "seconds": round(seconds, 2)}
            waits = []
            for _ in range(20):
                go_on.clear()
                response = client.request(RequestOptions("GET", "/events"), stream=True)
                with EventStream[str](response) as events:
                    for _event in events:
                        waits.append(time.perf_counter() - first_sent[-1])
                        go_on.set()
                        break
            figures["first_event_ms"] = {
                "median": round(statistics.median(waits) * 1000, 2),
                "max": round(max(waits) * 1000, 2),
                "runs": len(waits),
            }
    finally:
        httpd.shutdown()
    return figures


# --- the page ------------------------------------------------------------------------------------


def write_docs(results: dict[str, Any]) -> str:
    lines = [
        "# The generated client on real APIs",
        "",
        "Measured by `bench/client_corpus.py` (figures in `bench/results/client.json`); what the",
        "generated client does with pagination, bodies that are not JSON and newer servers is in",
        "its own README.",
        "",
    ]
    page = results.get("pagination")
    if page:
        total = page["list_operations"]
        lines += [
            "## Pagination styles across the corpus",
            "",
            f"{page['specs']} specs of the corpus read ({len(page['unreadable'])} cannot be"
            f" read), {total} list operations (a GET whose 2xx JSON body is an array or holds",
            f"one array of items); {page['seconds']} s.",
            "",
            "| style | list operations | share |",
            "|---|---:|---:|",
        ]
        order = [
            "cursor",
            "link",
            "next_url",
            "offset",
            "page",
            "undetected, paging parameters",
            "whole",
        ]
        for style in order:
            n = page["styles"].get(style, 0)
            lines.append(f"| {style} | {n} | {100 * n / max(1, total):.1f} % |")
        lines += [
            "",
            "*whole*: no query parameter that looks like paging — the list comes in one answer.",
            "*undetected, paging parameters*: a cursor, offset, page or page-size parameter, but",
            "nothing in the response that says where the next page starts (`x-apiforge-pagination`",
            "can state it).",
            "",
        ]
    checked = results.get("mypy")
    if checked:
        operations = {r["path"]: r.get("n_operations", "") for r in index()}
        in_client = sum(
            n
            for r in checked["results"]
            for f, n in r.get("error_files", {}).items()
            if f != "models.py" and not f.startswith("models/")
        )
        in_models = (
            sum(n for r in checked["results"] for f, n in r.get("error_files", {}).items())
            - in_client
        )
        lines += [
            "## `mypy --strict` on generated clients",
            "",
            f"{checked['ok']} of {checked['specs']} generated clients pass `mypy --strict`"
            f" ({checked['operations']} operations); {in_client} errors are in a client module",
            f"(`resources/*.py`, the methods of every operation), {in_models} in the models (`models/*.py`).",
            "What would fail there, the spec's schemas as datamodel-code-generator writes",
            "them, is mended before the module is used (`generator/models/fixes.py`): a",
            "`default` of another type than its member's (openai's `anyOf: [auto, integer]` with",
            "`default: auto`) is validated into the type or left out, a root model whose `root`",
            "admits None says so, and a subclass member an `allOf` redefines with a type its",
            "parent's refuses (just-eat's narrowed `const`) gets a `type: ignore[assignment]`.",
            "",
            "| spec | operations | paginated | mypy s | result |",
            "|---|---:|---:|---:|---|",
        ]
        for r in checked["results"]:
            where = ", ".join(f"{n} in {f}" for f, n in sorted(r.get("error_files", {}).items()))
            result = r["status"] + (f" ({where})" if where else "")
            lines.append(
                f"| {r['spec']} | {operations.get(r['spec'], '')} | {r.get('paginated', '')} | "
                f"{r.get('mypy_seconds', '')} | {result} |"
            )
        lines.append("")
    figures = results.get("streams")
    if figures:
        lines += [
            "## Streams",
            "",
            "| | traced peak memory | time |",
            "|---|---:|---:|",
            f"| 50 MB download as `bytes` | {figures['bytes']['peak_mb']} MB | {figures['bytes']['seconds']} s |",
            f"| 50 MB download, `BinaryStream.write_to(file)` | {figures['write_to']['peak_mb']} MB | {figures['write_to']['seconds']} s |",
            "",
            f"Time from the server writing the first Server-Sent Event to the client having it: "
            f"{figures['first_event_ms']['median']} ms median, {figures['first_event_ms']['max']} ms"
            f" at most ({figures['first_event_ms']['runs']} runs; the server sends the second event",
            "only after the client has the first).",
            "",
        ]
    return "\n".join(lines)


def _sections(page: str) -> list[tuple[str, str]]:
    """`page` cut before each `## ` heading: (heading line, text) pairs, the part before the
    first heading under the heading ""."""
    found: list[tuple[str, str]] = []
    heading, lines = "", []
    for line in page.splitlines(keepends=True):
        if line.startswith("## "):
            found.append((heading, "".join(lines)))
            heading, lines = line.rstrip("\n"), []
        lines.append(line)
    found.append((heading, "".join(lines)))
    return found


def merged_page(page: str, measured: str) -> str:
    """`page` with each section `measured` has replaced by its new text; the sections written
    by hand (method names, inline models, ...) and the page's introduction stay as they are,
    and a measured section the page lacks is added at its end."""
    if not page:
        return measured
    new = {h: text.rstrip("\n") + "\n\n" for h, text in _sections(measured) if h}
    out = [new.pop(h, text) if h else text for h, text in _sections(page)]
    if new:
        out[-1] = out[-1].rstrip("\n") + "\n\n"
        out += list(new.values())
    return "".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--part", choices=("pagination", "mypy", "streams", "all", "docs"), default="all"
    )
    parser.add_argument("--mypy-specs", type=int, default=24)
    parser.add_argument(
        "--only",
        default=None,
        help="mypy: re-measure only the specs whose path has one of these (comma-separated)",
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    parts: tuple[str, ...] = (
        ("pagination", "streams", "mypy") if args.part == "all" else (args.part,)
    )
    if args.part == "docs":  # only the page, from the results file
        parts = ()
    for part in parts:
        print(f"{part}:", flush=True)
        if part == "pagination":
            results[part] = pagination()
        elif part == "streams":
            results[part] = streams()
        else:
            results[part] = mypy_part(args.mypy_specs, args.timeout, args.only, results.get("mypy"))
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    if not args.no_docs:
        page = DOCS.read_text() if DOCS.is_file() else ""
        DOCS.write_text(merged_page(page, write_docs(results)))
        print(f"wrote {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
