"""`make corpus`: generate the server and the client for every spec of ../shared/corpus.

    .venv/bin/python bench/corpus_sweep.py [--jobs 2] [--timeout 600] [--only SUBSTRING]
                                           [--no-docs] [--keep DIR]

For each spec listed in the corpus's INDEX.tsv (none is skipped: a spec that cannot be run is
reported as such), in `--jobs` worker processes:

1. `apiforge server SPEC -o DIR/server` and `apiforge client SPEC -o DIR/client`, each with a
   timeout (`--timeout` seconds);
2. when both exit 0: `compileall` on both trees, then, in a fresh interpreter, import the
   server's `main` (it builds the FastAPI app) and the client package, and list what they
   contain: the server's routes (method + path), the client's requests (the method and path
   template of every `RequestOptions(...)` in `_client.py`) and the classes of both
   `models.py`;
3. compare with the spec read independently (the raw document, path items' `$ref`s followed):
   every operation (method + path template, parameter names ignored) must be a route of the
   server and a request of the client, every `components/schemas` name must be a class of
   both models modules — unless the generator printed a warning naming it.

Classes: **ok** (everything present; warnings allowed), **clear error** (exit 2 with a one-line
message and no traceback, from either command), **crash** (a traceback, another exit code, a
timeout, output that does not compile or import, or something missing that no warning named:
a silent drop). Results go to bench/results/corpus.json and, unless `--no-docs`, the table and
the reasons to docs/corpus.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "corpus.json"
DOCS = ROOT / "docs" / "corpus.md"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAM = re.compile(r"\{[^{}]*\}")

# Runs in a fresh interpreter inside the output directory: compile, import, list contents.
_INSPECT = r"""
import ast, compileall, json, sys, importlib, os
server_dir, client_dir, server_pkg, client_pkg = sys.argv[1:5]
out = {"compiled": True, "errors": []}
for d in (server_dir, client_dir):
    if not compileall.compile_dir(d, quiet=2, force=True):
        out["compiled"] = False
        out["errors"].append(f"compileall failed in {os.path.basename(d)}")
def models(path):
    names = set()
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif type(node).__name__ == "TypeAlias":
            names.add(node.name.id)
    return sorted(names)
def template(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template(node.left), template(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Call):
        return "{}"
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None
requests = set()
try:
    tree = ast.parse(open(os.path.join(client_dir, client_pkg, "_client.py"), encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "RequestOptions":
            if len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
                path = template(node.args[1])
                requests.add(f"{str(node.args[0].value).upper()} {path}")
except Exception as exc:
    out["errors"].append(f"client _client.py: {type(exc).__name__}: {exc}"[:300])
out["client_requests"] = sorted(requests)
for side, d, pkg in (("server", server_dir, server_pkg), ("client", client_dir, client_pkg)):
    try:
        out[f"{side}_models"] = models(os.path.join(d, pkg, "models.py"))
    except Exception as exc:
        out[f"{side}_models"] = []
        out["errors"].append(f"{side} models.py: {type(exc).__name__}: {exc}"[:300])
sys.path[:0] = [server_dir, client_dir]
routes = set()
def walk(items, prefix):
    for route in items:
        inner = getattr(route, "original_router", None)
        if inner is not None:  # an included router (FastAPI includes them lazily)
            context = getattr(route, "include_context", None)
            walk(inner.routes, prefix + str(getattr(context, "prefix", "") or ""))
            continue
        for method in sorted(getattr(route, "methods", None) or ()):
            routes.add(f"{method} {prefix}{route.path}")
try:
    main = importlib.import_module(server_pkg + ".main")
    walk(main.app.routes, "")
except BaseException as exc:
    import traceback
    out["errors"].append("server import: " + traceback.format_exc().strip().splitlines()[-1][:300])
out["server_routes"] = sorted(routes)
try:
    importlib.import_module(client_pkg)
except BaseException as exc:
    import traceback
    out["errors"].append("client import: " + traceback.format_exc().strip().splitlines()[-1][:300])
print("@@RESULT@@" + json.dumps(out))
"""


@dataclass
class Result:
    spec: str
    status: str = "crash"  # ok, clear error, crash
    reason: str = ""
    seconds: float = 0.0
    operations: int = 0
    schemas: int = 0
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def normalize(path: str) -> str:
    return _PARAM.sub("{}", path)


def _load(path: Path) -> Any:
    import yaml

    text = path.read_bytes()
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except ValueError:
            pass
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


def _pointer(doc: Any, fragment: str) -> Any:
    for token in fragment.lstrip("/").split("/") if fragment.strip("/") else ():
        token = token.replace("~1", "/").replace("~0", "~")
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def spec_contents(path: Path) -> tuple[list[str], list[str]]:
    """(operations as 'METHOD /path/{}', component schema names) of the raw spec."""
    doc = _load(path)
    ops: set[str] = set()
    paths = doc.get("paths") if isinstance(doc, dict) else None
    for template, item in (paths or {}).items():
        base, where = path, doc
        for _ in range(5):
            if not (isinstance(item, dict) and isinstance(item.get("$ref"), str)):
                break
            ref = item["$ref"]
            file, _, fragment = ref.partition("#")
            if file:
                base = (base.parent / file).resolve()
                where = _load(base)
            item = _pointer(where, fragment)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            if isinstance(item.get(method), dict):
                ops.add(f"{method.upper()} {normalize(str(template))}")
    components = doc.get("components") if isinstance(doc, dict) else None
    schemas = components.get("schemas") if isinstance(components, dict) else None
    return sorted(ops), sorted(str(k) for k in (schemas or {}))


def _run(argv: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, str]:
    env = {**os.environ, "NO_COLOR": "1", "APIFORGE_NO_PROGRESS": "1"}
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or b"").decode("utf-8", "replace")
        return None, out, err
    return (
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def _package(stdout: str) -> str | None:
    found = re.search(r"^wrote (\S+) to ", stdout, re.M)
    return found.group(1) if found else None


def _warnings(stderr: str) -> list[str]:
    return [line.strip() for line in stderr.splitlines() if line.lower().startswith("warning")]


def _warned(item: str, warnings: list[str]) -> bool:
    return any(item in w for w in warnings)


def sweep_one(spec: str, corpus: str, timeout: float, keep: str | None) -> Result:
    started = time.monotonic()
    result = Result(spec)
    path = Path(corpus) / spec
    tmp = Path(tempfile.mkdtemp(prefix="apiforge-corpus-"))
    try:
        _sweep(result, path, tmp, timeout)
    except Exception as exc:  # the sweep itself must never lose a spec
        result.status = "crash"
        result.reason = f"sweep error: {type(exc).__name__}: {exc}"[:300]
    finally:
        if keep:
            dest = Path(keep) / spec.replace("/", "__")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(tmp, dest, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _sweep(result: Result, path: Path, tmp: Path, timeout: float) -> None:
    py = sys.executable
    packages: dict[str, str] = {}
    for product in ("server", "client"):
        out_dir = tmp / product
        rc, out, err = _run(
            [py, "-m", "generator.cli", product, str(path), "-o", str(out_dir)], ROOT, timeout
        )
        result.warnings += [f"{product}: {w}" for w in _warnings(err)]
        last = err.strip().splitlines()[-1] if err.strip() else ""
        if rc is None:
            result.status, result.reason = "crash", f"{product}: timeout after {timeout:.0f} s"
            return
        if "Traceback (most recent call last)" in err:
            result.status, result.reason = "crash", f"{product}: {last[:300]}"
            return
        if rc == 2:
            message = next((ln for ln in err.splitlines() if ln.strip()), "")
            if not message:
                result.status, result.reason = "crash", f"{product}: exit 2 without a message"
                return
            result.status, result.reason = "clear error", f"{product}: {message.strip()[:300]}"
            return
        if rc != 0:
            result.status, result.reason = "crash", f"{product}: exit {rc}: {last[:300]}"
            return
        pkg = _package(out)
        if pkg is None:
            result.status, result.reason = "crash", f"{product}: no package reported"
            return
        packages[product] = pkg
    try:
        ops, schemas = spec_contents(path)
    except Exception as exc:
        result.status = "crash"
        result.reason = f"generated, but the sweep cannot read the spec: {exc}"[:300]
        return
    result.operations, result.schemas = len(ops), len(schemas)
    state = tmp / "state"
    state.mkdir()
    env_extra = {"APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}"}
    argv = [py, "-c", _INSPECT, str(tmp / "server"), str(tmp / "client")]
    argv += [packages["server"], packages["client"]]
    rc, out, err = _run_env(argv, state, timeout, env_extra)
    marker = out.rfind("@@RESULT@@")
    if rc is None or marker < 0:
        tail = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        result.status, result.reason = "crash", f"inspection failed: {tail[:300]}"
        return
    found = json.loads(out[marker + len("@@RESULT@@") :])
    if found["errors"]:
        result.status, result.reason = "crash", "; ".join(found["errors"])[:500]
        return
    routes = {normalize(r) for r in found["server_routes"]}
    requests = {normalize(r) for r in found["client_requests"]}
    from generator.render.models import model_class_names

    classes = model_class_names(schemas)
    missing: list[str] = []
    for op in ops:
        template = op.partition(" ")[2]
        for side, have in (("server", routes), ("client", requests)):
            if op not in have and not _warned(template, result.warnings):
                missing.append(f"{side}: operation {op}")
    for side in ("server", "client"):
        defined = set(found[f"{side}_models"])
        for name in schemas:
            if classes[name] not in defined and not _warned(name, result.warnings):
                missing.append(f"{side}: schema {name} (class {classes[name]})")
    result.missing = missing
    if missing:
        result.status = "crash"
        result.reason = f"silent drop: {len(missing)} missing, e.g. {missing[0]}"[:300]
        return
    result.status, result.reason = "ok", ""


def _run_env(
    argv: list[str], cwd: Path, timeout: float, extra: dict[str, str]
) -> tuple[int | None, str, str]:
    env = {**os.environ, "NO_COLOR": "1", **extra}
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return None, "", "timeout"
    return (
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def _save(results: list[Result], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([asdict(r) for r in sorted(results, key=lambda r: r.spec)], indent=1))


def index(corpus: Path) -> list[str]:
    rows = (corpus / "INDEX.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return [row.split("\t", 1)[0] for row in rows if row.strip()]


def write_docs(results: list[Result], elapsed: float, jobs: int, timeout: float) -> str:
    counts = Counter(r.status for r in results)
    total = len(results)
    ok = counts.get("ok", 0)
    warned = [r for r in results if r.warnings]
    lines = [
        "# Corpus sweep",
        "",
        "`make corpus` (`bench/corpus_sweep.py`) generates the server and the client for every "
        "spec listed in `../shared/corpus/INDEX.tsv` and classifies each: **ok** (both "
        "generated, both trees compile, the server's `main` and the client package import, and "
        "every operation (method + path) and every `components/schemas` name of the spec is in "
        "both outputs — the server's routes, the client's requests, both `models.py` — or a "
        "warning names what is left out), **clear error** (exit 2 with one message, no "
        "traceback), **crash** (a traceback, another exit code, a timeout, output that does not "
        "compile or import, or a silent drop).",
        "",
        f"Last run: {total} specs, {jobs} processes, {timeout:.0f} s timeout per command, "
        f"{elapsed / 60:.1f} minutes.",
        "",
        "| result | specs | share |",
        "|---|---:|---:|",
    ]
    for status in ("ok", "clear error", "crash"):
        n = counts.get(status, 0)
        lines.append(f"| {status} | {n} | {100 * n / max(total, 1):.1f}% |")
    lines += [
        "",
        f"ok: **{ok}/{total} ({100 * ok / max(total, 1):.1f}%)**; of the specs that load "
        f"(not a clear error): {ok}/{total - counts.get('clear error', 0)}. "
        f"Specs with warnings: {len(warned)}.",
        "",
        "## Clear errors and crashes",
        "",
        "| spec | result | reason |",
        "|---|---|---|",
    ]
    for r in sorted(results, key=lambda r: (r.status, r.spec)):
        if r.status != "ok":
            reason = r.reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{r.spec}` | {r.status} | {reason} |")
    lines += ["", "## Warnings (constructs the generators do not support, named)", ""]
    if not warned:
        lines.append("None.")
    for r in sorted(warned, key=lambda r: r.spec):
        shown = sorted(set(r.warnings))
        lines.append(f"- `{r.spec}`: {len(shown)} warnings, e.g. {shown[0][:200]}")
    lines += [
        "",
        "## Every spec",
        "",
        "| spec | result | operations | schemas | seconds |",
        "|---|---|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: r.spec):
        lines.append(f"| `{r.spec}` | {r.status} | {r.operations} | {r.schemas} | {r.seconds} |")
    text = "\n".join(lines) + "\n"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--only", default=None, help="only specs whose path contains this")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--keep", default=None, help="copy each spec's outputs under this dir")
    parser.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    specs = index(corpus)
    if args.only:
        specs = [s for s in specs if args.only in s]
    started = time.monotonic()
    results: list[Result] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {
            pool.submit(sweep_one, spec, str(corpus), args.timeout, args.keep): spec
            for spec in specs
        }
        for n, future in enumerate(as_completed(futures), 1):
            try:
                result = future.result()
            except Exception as exc:
                result = Result(futures[future], "crash", f"sweep worker died: {exc}"[:300])
            results.append(result)
            _save(results, Path(args.results))  # a run cut short keeps what it measured
            print(
                f"[{n}/{len(specs)}] {result.status:11} {result.seconds:6.1f}s {result.spec}"
                + (f"  — {result.reason[:160]}" if result.reason else ""),
                flush=True,
            )
    elapsed = time.monotonic() - started
    _save(results, Path(args.results))
    counts = Counter(r.status for r in results)
    print(
        f"{len(results)} specs in {elapsed / 60:.1f} min: "
        + ", ".join(f"{k} {counts.get(k, 0)}" for k in ("ok", "clear error", "crash"))
    )
    if not args.no_docs and not args.only:
        DOCS.write_text(write_docs(results, elapsed, args.jobs, args.timeout), encoding="utf-8")
        print(f"wrote {DOCS.relative_to(ROOT)}")
    return 0 if counts.get("crash", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
