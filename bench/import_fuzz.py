"""Random specs mixed from the shapes of tests/fuzz/shapes.py: does every generated project import?

    .venv/bin/python bench/import_fuzz.py [--specs 20] [--seed 1] [--keep DIR]

Each spec takes a random handful of parameters (names, headers, patterns, enums, formats,
bounds), component schemas (patterns, enums, bounds, names, a schema the models library
rejects) and operationIds from the shape lists, under a random OpenAPI version (3.0.3 or
3.1.0). Each is generated in-process (`generate`, validation off: the specs are deliberately
invalid), then, in a fresh interpreter, the client package and every module in it are
imported, the server's app is imported and its `/openapi.json` and `/docs` are built
(Starlette's test client, in process). A project that does not import, or a generation that
raises anything but our clear error, is a failure: the spec is kept under `--keep` (default
bench/results/import_fuzz/) to be turned into a test.

The suite's fixed table is tests/fuzz/test_generated_imports.py; this is the longer run.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.errors import ApiforgeError  # noqa: E402
from generator.pipeline.generate import generate  # noqa: E402
from tests.fuzz import shapes  # noqa: E402

_CHECK = """
import importlib, pkgutil, sys, warnings
warnings.simplefilter("ignore")
out, prefix = sys.argv[1], sys.argv[2]
sys.path[:0] = [out + "/client", out + "/server"]
client = importlib.import_module(prefix + "_client")
for module in pkgutil.walk_packages(client.__path__, client.__name__ + "."):
    importlib.import_module(module.name)
from fastapi.testclient import TestClient
app = importlib.import_module(prefix + "_server.main").app
with TestClient(app) as http:
    for path in ("/openapi.json", "/docs"):
        status = http.get(path).status_code
        assert status == 200, (path, status)
"""


def random_spec(rng: random.Random, index: int) -> dict[str, Any]:
    def some(items: list[Any], most: int) -> list[Any]:
        return rng.sample(items, k=rng.randint(1, min(most, len(items))))

    parameters: list[dict[str, Any]] = []
    for name in some(shapes.NAMES, 6):
        where = rng.choice(["query", "header", "cookie"])
        parameters.append({"name": name, "in": where, "schema": {"type": "string"}})
    for name in some(shapes.HEADERS, 4):
        parameters.append({"name": name, "in": "header", "schema": {"type": "string"}})
    kinds: list[dict[str, Any]] = [
        *({"type": "string", "pattern": p} for p in some(shapes.PATTERNS, 3)),
        *({"enum": e} for e in some(shapes.ENUMS, 2)),
        *({"type": t, "format": f} for t, f in some(shapes.FORMATS, 3)),
        *some(shapes.BOUNDS, 2),
    ]
    parameters += [{"name": f"k{i}", "in": "query", "schema": s} for i, s in enumerate(kinds)]
    properties = {f"p{i}": s for i, s in enumerate(some(kinds, 6))}
    for name in some(shapes.NAMES, 4):
        properties[name] = rng.choice(kinds)
    schemas: dict[str, Any] = {
        name: {"type": "object", "properties": dict(rng.sample(sorted(properties.items()), k=2))}
        for name in some(["404", "class", "None", "Field", "a-b", "a_b", "日本", "Thing"], 4)
    }
    schemas["Main"] = {"type": "object", "properties": properties}
    if rng.random() < 0.3:
        schemas["Rejected"] = {"type": "object", "required": "x"}
    paths: dict[str, Any] = {}
    template = rng.choice(["/items/{item_id}", "/items/{id}/{class}", "/items"])
    variables = [v.strip("{}") for v in template.split("/") if v.startswith("{")]
    path_parameters = [
        {
            "name": v,
            "in": rng.choice(["path", "query"]),
            "required": True,
            "schema": {"type": "string"},
        }
        for v in variables
    ]
    for i, name in enumerate(sorted(schemas)):
        ref = {"$ref": f"#/components/schemas/{name}"}
        operation_id = rng.choice([*shapes.OPERATION_IDS, f"op{i}"])
        paths[f"{template}/s{i}"] = {
            "post": {
                "operationId": operation_id,
                "parameters": path_parameters + rng.sample(parameters, k=min(8, len(parameters))),
                "requestBody": {"content": {"application/json": {"schema": ref}}},
                "responses": {
                    "200": {"description": "ok", "content": {"application/json": {"schema": ref}}}
                },
            }
        }
    openapi = rng.choice(["3.0.3", "3.1.0"])
    return {
        "openapi": openapi,
        "info": {"title": f"Fuzz {index}", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def run_one(spec: dict[str, Any], work: Path, index: int) -> str | None:
    """None when the project imports; else what went wrong."""
    path = work / f"fuzz{index}.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    out = work / f"out{index}"
    prefix = f"fz{index}"
    try:
        generate(str(path), out, package_prefix=prefix, validate=False, lint=False)
    except ApiforgeError as exc:
        return f"clear error (allowed, but look): {exc.render()[:300]}"
    except Exception as exc:  # a traceback for the user
        return f"generation crashed: {type(exc).__name__}: {exc}"[:500]
    proc = subprocess.run(
        [sys.executable, "-c", _CHECK, str(out), prefix],
        capture_output=True,
        text=True,
        timeout=300,
        env={"APIFORGE_STORE_URL": f"sqlite:///{work / f's{index}.db'}", "PATH": "/usr/bin:/bin"},
    )
    if proc.returncode != 0:
        return "does not import or serve: " + proc.stderr.strip().splitlines()[-1][:400]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--specs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", default=str(ROOT / "bench" / "results" / "import_fuzz"))
    args = parser.parse_args()
    logging.getLogger("apiforge").setLevel(logging.ERROR)
    rng = random.Random(args.seed)
    failures = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="import_fuzz_") as tmp:
        for index in range(args.specs):
            spec = random_spec(rng, index)
            problem = run_one(spec, Path(tmp), index)
            if problem is None:
                continue
            failures += not problem.startswith("clear error")
            keep = Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"seed{args.seed}_{index}.json").write_text(json.dumps(spec, indent=1))
            print(f"spec {index}: {problem}", flush=True)
    seconds = time.perf_counter() - started
    print(f"{args.specs} specs (seed {args.seed}): {failures} failures in {seconds:.0f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
