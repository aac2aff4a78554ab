"""`make corpus`: generate the server and the client for every spec of ../shared/corpus.

    .venv/bin/python bench/corpus_sweep.py [--jobs 2] [--timeout 600] [--only SUBSTRING]
                                           [--specs-from FILE] [--keep DIR] [--results FILE]
                                           [--no-docs] [--docs-from FILE]

For each spec listed in the corpus's INDEX.tsv and swagger2/SOURCES.swagger2.tsv (the Swagger
2.0 specs, ordinary specs here; none is skipped: a spec that cannot be run is reported as such), or only those of `--specs-from FILE` (one path a line, relative to the
corpus or absolute; blank lines and `#` comments ignored) and/or whose path contains `--only`,
in `--jobs` worker processes:

1. `apiforge generate SPEC -o DIR` — DIR/server and DIR/client from one read of the spec, the
   models generated once, validation on as by default — with a timeout (`--timeout` seconds;
   the command's whole process group is killed);
2. when it exits 0 and reports both packages (`server: wrote PKG to ...` and
   `client: wrote PKG to ...` on stdout): `compileall` on both trees, then, in a fresh
   interpreter, import the server's `main` (it builds the FastAPI app), build the app's own
   OpenAPI document (what `/openapi.json` and `/docs` serve), import the client package,
   and list what they contain: the server's routes (method + path), the client's requests (the
   method and path template of every `RequestOptions(...)` in `resources/*.py`) and the classes of
   both `models.py`;
3. compare with the spec read independently (the raw document, path items' `$ref`s followed;
   it is read before generating, so its operation and schema counts are recorded for every
   spec it can read, whatever the outcome): every operation (method + path template,
   parameter names ignored) must be a route of the server and a request of the client, every
   `components/schemas` name must be a class of both models modules — unless the generator
   printed a warning naming it.

Warnings on stderr are of two kinds. Validation warnings (`warning: <problem>` lines, closed by
`warning: SPEC is not valid OpenAPI 3.x (N errors); generating anyway ...`) say that the spec is
invalid: recorded (`validation_errors`, `validation_warnings`), they excuse nothing. Every other
warning is the generator naming what it cannot support, and excuses the absence of what it
names.

Classes: **ok** (everything present; warnings allowed — "ok, with validation warnings" counts
the ok specs generated despite failing validation), **clear error** (exit 2 with a one-line
message and no traceback), **crash** (a traceback, another exit code, a timeout, output that
does not compile or import, or something missing that no warning named: a silent drop).

Results go to bench/results/corpus.json (corpus.subset.json for `--only` or `--specs-from`, so
that re-running some specs keeps the full run's; or `--results FILE`), rewritten after every
spec so that a stopped run keeps what it measured, with the specs that were not ok beside it,
one a line, in corpus.failed.txt (for `--specs-from`). A run of the whole index also writes
the tables and the reasons to docs/corpus.md, unless `--no-docs`; `--docs-from FILE` writes
docs/corpus.md from a results file without running anything (a stopped run's page says it is
partial).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "corpus.json"
SUBSET_RESULTS = ROOT / "bench" / "results" / "corpus.subset.json"  # --only, --specs-from
DOCS = ROOT / "docs" / "corpus.md"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
STATUSES = ("ok", "clear error", "crash")
_PARAM = re.compile(r"\{[^{}]*\}")
# `apiforge generate`'s report of what it wrote, one line per product
_WROTE = re.compile(r"^(server|client): wrote (\S+) to ", re.M)
# the line closing the validation warnings (generator/spec/validate.py)
_INVALID = re.compile(r"^warning: .*\bnot valid OpenAPI\b.*?\((\d+) errors?\).*generating anyway")

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
    # the server's models.py, or every module of the client's models/ package
    files = [path] if os.path.isfile(path) else sorted(
        os.path.join(path[:-3], f) for f in os.listdir(path[:-3]) if f.endswith(".py"))
    names = set()
    body = [n for f in files for n in ast.parse(open(f, encoding="utf-8").read()).body]
    for node in body:
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
    resources = os.path.join(client_dir, client_pkg, "resources")
    for module in sorted(m for m in os.listdir(resources) if m.endswith(".py")):
        tree = ast.parse(open(os.path.join(resources, module), encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "RequestOptions":
                if len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
                    path = template(node.args[1])
                    requests.add(f"{str(node.args[0].value).upper()} {path}")
except Exception as exc:
    out["errors"].append(f"client resources: {type(exc).__name__}: {exc}"[:300])
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
else:
    try:  # what /openapi.json and /docs serve
        main.app.openapi()
    except BaseException as exc:
        out["errors"].append(f"server /openapi.json: {type(exc).__name__}: {exc}"[:300])
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
    warnings: list[str] = field(default_factory=list)  # the generator's: they excuse
    missing: list[str] = field(default_factory=list)
    validation_errors: int = 0  # the spec is not valid OpenAPI: generated anyway, or not
    validation_warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def normalize(path: str) -> str:
    return _PARAM.sub("{}", path)


def _load(path: Path) -> Any:
    """The spec's data as apiforge reads it (YAML 1.2: `no:` is a key, a date a string)."""
    from generator.spec.load import load_document

    return load_document(str(path)).data


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
    if isinstance(doc, dict) and "swagger" in doc:  # Swagger 2.0: its schemas are definitions
        schemas = doc.get("definitions")
    return sorted(ops), sorted(str(k) for k in (schemas or {}))


def _run(
    argv: list[str], cwd: Path, timeout: float, extra: dict[str, str] | None = None
) -> tuple[int | None, str, str]:
    """(exit code, or None after a timeout; stdout; stderr). The command runs in a session of
    its own, so that a timeout (or ^C) kills what it forked too (`generate` forks the models
    step)."""
    env = {**os.environ, "NO_COLOR": "1", "APIFORGE_NO_PROGRESS": "1", **(extra or {})}
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    rc: int | None
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        rc = None
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _packages(stdout: str) -> dict[str, str]:
    return {product: pkg for product, pkg in _WROTE.findall(stdout)}


def _split_warnings(stderr: str) -> tuple[list[str], list[str], int]:
    """(the generator's warnings, the validation warnings, the validation error count).
    Validation runs before any model or plan is made, so its warnings come first, up to the
    `... is not valid OpenAPI 3.x (N errors); generating anyway` line that closes them."""
    lines = [line.strip() for line in stderr.splitlines() if line.lower().startswith("warning")]
    last, errors = -1, 0
    for i, line in enumerate(lines):
        if found := _INVALID.match(line):
            last, errors = i, int(found.group(1))
    return lines[last + 1 :], lines[: last + 1], errors


def _warned(item: str, warnings: list[str]) -> bool:
    return any(item in w for w in warnings)


def _error_message(stderr: str) -> str:
    """The one-line message of an exit 2: the `error:` line (validation warnings may come
    first), else the first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return next((ln for ln in lines if ln.lower().startswith("error")), lines[0] if lines else "")


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
            dest = Path(keep) / spec.strip("/").replace("/", "__")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(tmp, dest, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _sweep(result: Result, path: Path, tmp: Path, timeout: float) -> None:
    py = sys.executable
    # the spec read independently, first: its counts are recorded whatever the outcome
    contents: tuple[list[str], list[str]] | None = None
    unreadable = ""
    try:
        contents = spec_contents(path)
        result.operations, result.schemas = len(contents[0]), len(contents[1])
    except Exception as exc:
        unreadable = f"{type(exc).__name__}: {exc}"

    rc, out, err = _run(
        [py, "-m", "generator.cli", "generate", str(path), "-o", str(tmp)], ROOT, timeout
    )
    # the report names files relative to the corpus, never by this machine's paths
    err = err.replace(str(path)[: -len(result.spec)], "")
    result.warnings, result.validation_warnings, result.validation_errors = _split_warnings(err)
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if rc is None:
        result.status, result.reason = "crash", f"timeout after {timeout:g} s"
        return
    if "Traceback (most recent call last)" in err:
        result.status, result.reason = "crash", last[:300]
        return
    if rc == 2:
        # the report names specs relative to the corpus, never by this machine's paths
        message = _error_message(err)
        if not message:
            result.status, result.reason = "crash", "exit 2 without a message"
            return
        result.status, result.reason = "clear error", message[:300]
        return
    if rc != 0:
        result.status, result.reason = "crash", f"exit {rc}: {last[:300]}"
        return
    packages = _packages(out)
    for product in ("server", "client"):
        if product not in packages:
            result.status, result.reason = "crash", f"{product}: no package reported"
            return
    if contents is None:
        result.status = "crash"
        result.reason = f"generated, but the sweep cannot read the spec: {unreadable}"[:300]
        return
    ops, schemas = contents
    state = tmp / "state"
    state.mkdir()
    extra = {"APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}"}
    argv = [py, "-c", _INSPECT, str(tmp / "server"), str(tmp / "client")]
    argv += [packages["server"], packages["client"]]
    rc, out, err = _run(argv, state, timeout, extra)
    marker = out.rfind("@@RESULT@@")
    if rc is None or marker < 0:
        tail = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        if rc is None:
            tail = f"timeout after {timeout:g} s"
        result.status, result.reason = "crash", f"inspection failed: {tail[:300]}"
        return
    found = json.loads(out[marker + len("@@RESULT@@") :])
    if found["errors"]:
        result.status, result.reason = "crash", "; ".join(found["errors"])[:500]
        return
    routes = {normalize(r) for r in found["server_routes"]}
    requests = {normalize(r) for r in found["client_requests"]}
    from generator.models.class_names import model_class_names

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


# --- results and the docs page -------------------------------------------------------------


def _save(results: list[Result], out: Path, run: dict[str, Any]) -> None:
    """The results file (the run's settings, then one record per spec) and, beside it, the
    specs that were not ok, one a line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: r.spec)
    data = {"run": {**run, "done": len(results)}, "results": [asdict(r) for r in ordered]}
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    failed = "".join(f"{r.spec}\n" for r in ordered if r.status != "ok")
    _failed_list(out).write_text(failed, encoding="utf-8")


def _failed_list(results: Path) -> Path:
    return results.with_name(results.stem + ".failed.txt")


def _load_results(path: Path) -> tuple[list[Result], dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):  # the format before the run's settings were recorded
        data = {"run": {}, "results": data}
    return [Result.from_json(r) for r in data["results"]], dict(data.get("run") or {})


def index(corpus: Path) -> list[str]:
    """Every spec of the corpus: INDEX.tsv's, then the Swagger 2.0 ones (listed apart, in
    swagger2/SOURCES.swagger2.tsv), which are ordinary specs here."""
    specs = []
    for folder, listing in (("", "INDEX.tsv"), ("swagger2/", "swagger2/SOURCES.swagger2.tsv")):
        if (corpus / listing).is_file():
            rows = (corpus / listing).read_text(encoding="utf-8").splitlines()[1:]
            specs += [folder + row.split("\t", 1)[0] for row in rows if row.strip()]
    return specs


def specs_from(file: Path, corpus: Path) -> list[str]:
    """One spec path a line: relative to the corpus (as in INDEX.tsv), or absolute."""
    specs = []
    for line in file.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        path = Path(line)
        if path.is_absolute() and path.resolve().is_relative_to(corpus.resolve()):
            line = str(path.resolve().relative_to(corpus.resolve()))
        specs.append(line)
    return list(dict.fromkeys(specs))


def _share(n: int, total: int) -> str:
    return f"{100 * n / max(total, 1):.1f}%"


def write_docs(results: list[Result], run: dict[str, Any]) -> str:
    counts = Counter(r.status for r in results)
    total = len(results)
    ok = counts.get("ok", 0)
    ok_invalid = sum(1 for r in results if r.status == "ok" and r.validation_errors)
    invalid = sum(1 for r in results if r.validation_errors)
    warned = [r for r in results if r.warnings]
    listed = int(run.get("listed", total))
    lines = ["# Corpus sweep", ""]
    if not run.get("complete", True) or total < listed:
        lines += [
            f"> **Partial run.** Stopped after {total} of {listed} specs. `make corpus` "
            "rewrites this page with the whole corpus.",
            "",
        ]
    lines += [
        "`make corpus` (`bench/corpus_sweep.py`) runs `apiforge generate` (the server and the "
        "client from one read of the spec; validation on, as by default) on every spec listed "
        "in the corpus's `INDEX.tsv` (`--corpus DIR`; by default a `shared/corpus` folder beside "
        "the checkout) and classifies each: **ok** (both generated, both "
        "trees compile, the server's `main` and the client package import, the server's "
        "`/openapi.json` builds, and every operation "
        "(method + path) and every `components/schemas` name of the spec is in both outputs — "
        "the server's routes, the client's requests, both `models.py` — or a generator warning "
        "names what is left out), **clear error** (exit 2 with one message, no traceback), "
        "**crash** (a traceback, another exit code, a timeout, output that does not compile or "
        "import, or a silent drop). A spec that is not valid OpenAPI is generated anyway, with "
        "warnings (`--strict` would make them an error): such a spec is still ok when its "
        "output is, and is counted as **ok, with validation warnings** too; validation "
        "warnings never excuse a missing operation or schema.",
        "",
        "To measure again, from the repository's root after `make .venv/.installed`: `make "
        'corpus` (`CORPUS_ARGS="--corpus DIR --jobs N"` for another corpus or more processes) '
        "rewrites this page; `.venv/bin/python bench/corpus_sweep.py --only SUBSTRING` or "
        "`--specs-from FILE` runs some specs and leaves the page alone.",
        "",
    ]
    elapsed = float(run.get("elapsed_s", 0.0))
    jobs, timeout = run.get("jobs", "?"), float(run.get("timeout", 0.0))
    lines += [
        f"Measured: {total} specs, {jobs} processes, {timeout:.0f} s timeout per command, "
        f"{elapsed / 60:.1f} minutes.",
        "",
        "| result | specs | share |",
        "|---|---:|---:|",
        f"| ok | {ok} | {_share(ok, total)} |",
        f"| ok, with validation warnings (counted in ok too) | {ok_invalid} "
        f"| {_share(ok_invalid, total)} |",
    ]
    for status in STATUSES[1:]:
        n = counts.get(status, 0)
        lines.append(f"| {status} | {n} | {_share(n, total)} |")
    lines += [
        "",
        f"ok: **{ok}/{total} ({_share(ok, total)})**, of which {ok_invalid} generated despite "
        f"validation warnings; of the specs that load (not a clear error): "
        f"{ok}/{total - counts.get('clear error', 0)}. Specs that fail validation: {invalid}. "
        f"Specs with generator warnings: {len(warned)}.",
        "",
        "## Clear errors and crashes",
        "",
        "| spec | result | reason |",
        "|---|---|---|",
    ]
    failures = [r for r in sorted(results, key=lambda r: (r.status, r.spec)) if r.status != "ok"]
    for r in failures:
        reason = r.reason.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{r.spec}` | {r.status} | {reason} |")
    if not failures:
        lines.append("| none | | |")
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
        "Operations and schemas are counted in the spec itself (0 when the sweep cannot read "
        "it); validation errors are those `apiforge generate` reported.",
        "",
        "| spec | result | operations | schemas | validation errors | seconds |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: r.spec):
        lines.append(
            f"| `{r.spec}` | {r.status} | {r.operations} | {r.schemas} | "
            f"{r.validation_errors} | {r.seconds} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per command")
    parser.add_argument("--only", default=None, help="only specs whose path contains this")
    parser.add_argument(
        "--specs-from", default=None, help="only the specs listed in FILE, one path a line"
    )
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument(
        "--docs-from", default=None, help="write docs/corpus.md from this results file, only"
    )
    parser.add_argument("--keep", default=None, help="copy each spec's outputs under this dir")
    parser.add_argument(
        "--results",
        default=None,
        help=f"results file (default: {RESULTS.relative_to(ROOT)}, or for --only or --specs-from "
        f"{SUBSET_RESULTS.relative_to(ROOT)}, so a partial re-run keeps the full run's)",
    )
    args = parser.parse_args(argv)
    if args.docs_from:
        results, run = _load_results(Path(args.docs_from))
        if not run.get("whole_index", False):
            parser.error(f"{args.docs_from} is not a run of the whole index")
        DOCS.write_text(write_docs(results, run), encoding="utf-8")
        print(f"wrote {DOCS.relative_to(ROOT)} from {args.docs_from}")
        return 0
    corpus = Path(args.corpus)
    specs = index(corpus)
    if args.specs_from:
        specs = specs_from(Path(args.specs_from), corpus)
    if args.only:
        specs = [s for s in specs if args.only in s]
    whole = not (args.only or args.specs_from)
    run: dict[str, Any] = {
        "corpus": str(corpus),
        "jobs": args.jobs,
        "timeout": args.timeout,
        "listed": len(specs),
        "whole_index": whole,
        "complete": False,
        "elapsed_s": 0.0,
    }
    results_path = Path(args.results) if args.results else RESULTS if whole else SUBSET_RESULTS
    started = time.monotonic()
    results: list[Result] = []
    pool = ProcessPoolExecutor(max_workers=args.jobs)
    try:
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
            run["elapsed_s"] = round(time.monotonic() - started, 1)
            _save(results, results_path, run)  # a run cut short keeps what it measured
            invalid = f", {result.validation_errors} validation errors"
            print(
                f"[{n}/{len(specs)}] {result.status:11} {result.seconds:6.1f}s {result.spec} "
                f"({result.operations} ops, {result.schemas} schemas"
                f"{invalid if result.validation_errors else ''})"
                + (f"  — {result.reason[:160]}" if result.reason else ""),
                flush=True,
            )
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        print(
            f"\nstopped after {len(results)} of {len(specs)} specs; their results are in "
            f"{results_path}"
            + (f" (`--docs-from {results_path}` writes docs/corpus.md from them)" if whole else ""),
            file=sys.stderr,
        )
        return 130
    pool.shutdown()
    elapsed = time.monotonic() - started
    run.update(complete=True, elapsed_s=round(elapsed, 1))
    _save(results, results_path, run)
    counts = Counter(r.status for r in results)
    ok_invalid = sum(1 for r in results if r.status == "ok" and r.validation_errors)
    print(
        f"{len(results)} specs in {elapsed / 60:.1f} min: "
        + ", ".join(f"{k} {counts.get(k, 0)}" for k in STATUSES)
        + f" (ok with validation warnings {ok_invalid})"
    )
    failed = len(results) - counts.get("ok", 0)
    if failed:
        print(f"not ok: {failed}; re-run them with --specs-from {_failed_list(results_path)}")
    if whole and not args.no_docs:
        DOCS.write_text(write_docs(results, run), encoding="utf-8")
        print(f"wrote {DOCS.relative_to(ROOT)}")
    return 0 if counts.get("crash", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
