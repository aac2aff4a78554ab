"""Prove that apiforge's fast validation (`generator.spec.validate`: jsonschema-rs against the
official OAS schemas + our own semantic checks) agrees with openapi-spec-validator.

    .venv/bin/python bench/validation_parity.py [--corpus DIR] [--jobs N] [--timeout S] [FILE ...]

For every spec listed in ../shared/corpus/INDEX.tsv (or the files given) it runs

- the OLD path: openapi-spec-validator exactly as `validate.py` ran it before (its pure-Python
  `jsonschema` backend, forced with OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND=jsonschema,
  because with jsonschema-rs installed its "auto" backend would switch by itself), in a child
  process per spec with a timeout; its results are cached under bench/results/ by the spec's
  bytes and the library's version, since it takes minutes over the corpus;
- the NEW path: `generator.spec.validate.collect_errors` (every error, not only the 50 shown);

and compares, per spec: the verdict (valid / invalid / could not validate), the set of
pointers of the structural errors (the JSON-schema part, located by both the same way), and
the multiset of the semantic errors' messages (duplicate operationIds, undeclared path
parameters, bad defaults, ... — openapi-spec-validator reports these at no location, or at a
location relative to the schema they are in, so their pointers cannot be compared; apiforge
reports them at the node they are about). Prints each mismatch and a summary; exits 1 on any.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "corpus"
RESULTS = ROOT / "bench" / "results" / "validation_parity"


def _load(path: str) -> Any:
    """apiforge's own loader (what `validate` receives), without building the IR."""
    from generator.spec import check_root
    from generator.spec.load import load_document
    from generator.spec.refs import Resolver

    root = load_document(path)
    check_root(root)
    return Resolver(root)


def _pointer(path: Any) -> str:
    from generator.spec.sourcemap import escape

    return "".join("/" + escape(str(token)) for token in path)


def old_one(path: str) -> dict[str, Any]:
    """openapi-spec-validator's every error for `path`, as the previous validate.py ran it."""
    os.environ["OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND"] = "jsonschema"
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator
    from openapi_spec_validator.schemas import get_validator_backend

    assert get_validator_backend() == "jsonschema"
    try:
        resolver = _load(path)
    except Exception as exc:
        return {"status": "load-error", "detail": str(exc)[:300]}
    root = resolver.root
    version = str(root.data.get("openapi", ""))
    cls: Any = OpenAPIV30SpecValidator if version.startswith("3.0") else OpenAPIV31SpecValidator
    base_uri = root.path.resolve().as_uri() if root.path is not None else ""
    started = time.perf_counter()
    try:
        # what `iter_errors()` does, in its two phases, so each error says which it came from
        validator = cls(root.data, base_uri=base_uri)
        structural = list(validator.schema_validator.iter_errors(validator.schema))
        semantic = list(validator.root_validator(validator.schema_path))
    except RecursionError:
        return {"status": "error", "detail": "RecursionError"}
    except Exception as exc:
        return {"status": "error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    seconds = time.perf_counter() - started
    return {
        "status": "invalid" if structural or semantic else "valid",
        "seconds": seconds,
        "errors": [
            {
                "kind": "structural" if i < len(structural) else type(e).__name__,
                "pointer": _pointer(e.path),
                "message": e.message,
            }
            for i, e in enumerate(structural + semantic)
        ],
    }


def new_one(path: str) -> dict[str, Any]:
    from generator.spec.validate import collect_errors

    try:
        resolver = _load(path)
    except Exception as exc:
        return {"status": "load-error", "detail": str(exc)[:300]}
    started = time.perf_counter()
    try:
        errors = collect_errors(resolver)
    except Exception as exc:
        return {"status": "error", "detail": f"{type(exc).__name__}: {exc}"[:300]}
    seconds = time.perf_counter() - started
    return {
        "status": "invalid" if errors else "valid",
        "seconds": seconds,
        "errors": [
            {"kind": e.kind, "pointer": e.where.pointer, "legacy": e.legacy, "message": e.message}
            for e in errors
        ],
    }


def _old_path(path: Path) -> Path:
    from importlib.metadata import version

    digest = hashlib.sha256(
        path.read_bytes() + version("openapi-spec-validator").encode()
    ).hexdigest()
    return RESULTS / f"old-{digest}.json"


def _old_cached(path: Path, timeout: float) -> dict[str, Any]:
    cached = _old_path(path)
    if cached.exists():
        result: dict[str, Any] = json.loads(cached.read_text())
        return result
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--old-one", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "APIFORGE_NO_CACHE": "1"},
        )
        result = (
            json.loads(proc.stdout)
            if proc.returncode == 0
            else {"status": "error", "detail": proc.stderr[-300:]}
        )
    except subprocess.TimeoutExpired:
        result = {"status": "timeout", "detail": f"over {timeout:.0f} s"}
    if result["status"] != "timeout":
        RESULTS.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result))
    return result


_OWN = ("Duplicate ", "Operation ID ", "Path parameter ", "Unknown JSON Schema dialect")


def _identity(message: str, legacy: str) -> tuple[str, str]:
    """How a semantic error is compared: openapi-spec-validator's own checks by their message
    (they have no location there), the meta-schema and default checks (jsonschema's words
    there, jsonschema-rs's here) by the pointer openapi-spec-validator gave them."""
    if message.startswith("Required list has not defined properties: "):
        names = message.split(": ", 1)[1].strip("[]").split(", ")
        return ("message", "Required list ...: " + ", ".join(sorted(names)))
    if message.startswith(_OWN) or message.endswith("is not of type 'object', 'boolean'"):
        return ("message", message)
    return ("at", legacy)


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between the two results (empty when they agree)."""
    if old["status"] in ("load-error",) and new["status"] == "load-error":
        return []
    diffs: list[str] = []
    if old["status"] != new["status"]:
        diffs.append(
            f"verdict: old {old['status']} vs new {new['status']}"
            f" ({old.get('detail') or ''}{new.get('detail') or ''})"[:400]
        )
        return diffs
    if old["status"] != "invalid":
        return diffs
    old_struct = {e["pointer"] for e in old["errors"] if e["kind"] == "structural"}
    new_struct = {e["pointer"] for e in new["errors"] if e["kind"] == "structural"}
    if old_struct != new_struct:
        diffs.append(
            f"structural pointers: only old {sorted(old_struct - new_struct)[:5]}, "
            f"only new {sorted(new_struct - old_struct)[:5]}"
        )
    old_sem = Counter(
        _identity(e["message"], e["pointer"]) for e in old["errors"] if e["kind"] != "structural"
    )
    new_sem = Counter(
        _identity(e["message"], e["legacy"]) for e in new["errors"] if e["kind"] != "structural"
    )
    if old_sem != new_sem:
        diffs.append(
            f"semantic errors: only old {list((old_sem - new_sem).items())[:5]}, "
            f"only new {list((new_sem - old_sem).items())[:5]}"
        )
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--old-one", help=argparse.SUPPRESS)
    parser.add_argument("--old-only", action="store_true", help="only fill the old results")
    parser.add_argument(
        "--cached-only", action="store_true", help="compare only specs with an old result"
    )
    args = parser.parse_args(argv)
    if args.old_one:
        print(json.dumps(old_one(args.old_one)))
        return 0
    files = args.files or [
        args.corpus / line.split("\t", 1)[0]
        for line in (args.corpus / "INDEX.tsv").read_text().splitlines()[1:]
        if line.strip()
    ]
    mismatches = 0
    old_total = new_total = 0.0
    verdicts: Counter[str] = Counter()
    compared = 0
    for path in files:
        if args.cached_only and not _old_path(path).exists():
            continue
        compared += 1
        old = _old_cached(path, args.timeout)
        if args.old_only:
            print(f"{old['status']:10} {old.get('seconds', 0):7.2f}s {path}", flush=True)
            continue
        new = new_one(str(path))
        old_total += old.get("seconds", 0.0)
        new_total += new.get("seconds", 0.0)
        diffs = compare(old, new)
        verdicts[old["status"]] += 1
        if diffs:
            mismatches += 1
            print(f"MISMATCH {path}")
            for d in diffs:
                print(f"    {d}")
    if args.old_only:
        return 0
    print(
        f"{compared} specs ({dict(verdicts)}), {mismatches} mismatching; validation time "
        f"old {old_total:.1f} s, new {new_total:.1f} s"
    )
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
