"""Where `apiforge diff` and Optic (`optic diff --json`) agree, by kind of change, on version
pairs of the corpus: each tool's changes mapped to a family both can say (an operation removed,
a parameter made required, a response property removed…) per operation, then counted: found by
both, by apiforge only, by Optic only.

    .venv/bin/python bench/diff_agreement.py [--timeout 300] [OLD NEW ...]

Optic is installed by bench/diff_bench.py. Without pairs, the corpus pairs of
bench/diff_corpus.py that Optic gets through in the time given. Optic compares only what
changed as data and says nothing of what it means, so its "changed" entries map to a family
only where the before/after values say which way they went (a `maxLength` lowered).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.diff_corpus import CORPUS, PAIRS, run_apiforge  # noqa: E402

OPTIC = ROOT / "bench" / ".peers" / "node_modules" / ".bin" / "optic"
# apiforge's kinds → the family they are reported under here
FAMILY = {
    "operation-removed": "operation removed",
    "deprecated-operation-removed": "operation removed",
    "operation-moved": "operation removed",
    "operation-added": "operation added",
    "parameter-removed": "parameter removed",
    "parameter-moved": "parameter removed",
    "parameter-added-required": "parameter added",
    "parameter-added-optional": "parameter added",
    "parameter-became-required": "parameter became required",
    "parameter-type-changed": "parameter narrowed",
    "parameter-enum-narrowed": "parameter narrowed",
    "parameter-constraint-narrowed": "parameter narrowed",
    "parameter-pattern-added": "parameter narrowed",
    "request-property-removed": "request property removed",
    "request-property-added-required": "request property added",
    "request-property-added-optional": "request property added",
    "request-property-became-required": "request property became required",
    "response-property-removed": "response property removed",
    "response-property-added": "response property added",
    "response-status-removed": "response status removed",
    "error-response-removed": "response status removed",
}
_UPPER = ("maxLength", "maximum", "maxItems")
_LOWER = ("minLength", "minimum", "minItems")


def ours(old: Path, new: Path) -> set[tuple[str, str]]:
    data, _, error = run_apiforge(old, new)
    if data is None:
        sys.exit(f"apiforge diff failed: {error}")
    found = set()
    for change in data["changes"]:  # type: ignore[attr-defined]
        family = FAMILY.get(change["kind"])
        if family is None:
            continue
        for op in change["operations"]:
            found.add((family, op))
    return found


def _narrowed(attribute: dict[str, Any]) -> bool:
    key = attribute["key"].rsplit("/", 1)[-1]
    before, after = attribute.get("before"), attribute.get("after")
    if attribute["change"] == "added":
        return key in (*_UPPER, *_LOWER, "pattern", "enum")
    if attribute["change"] != "changed":
        return False
    if key in _UPPER and isinstance(before, (int, float)) and isinstance(after, (int, float)):
        return after < before
    if key in _LOWER and isinstance(before, (int, float)) and isinstance(after, (int, float)):
        return after > before
    if key == "enum" and isinstance(before, list) and isinstance(after, list):
        return any(v not in after for v in before)
    return key in ("type", "pattern")


def _properties(
    attributes: list[dict[str, Any]], where: str, found: set[tuple[str, str]], op: str
) -> None:
    for a in attributes:
        key = a["key"]
        if "/properties/" not in key:
            continue
        if key.endswith(("/required",)) and a["change"] == "changed" and a.get("after") is True:
            found.add((f"{where} property became required", op))
        elif a["change"] in ("added", "removed") and key.rsplit("/", 2)[-2] == "properties":
            found.add((f"{where} property {a['change']}", op))
        elif (
            a["change"] == "changed"
            and isinstance(a.get("after"), dict)
            and a["after"].get("required") is True
            and (a.get("before") or {}).get("required") is False
        ):
            found.add((f"{where} property became required", op))


def optic(old: Path, new: Path, timeout: float) -> set[tuple[str, str]] | str:
    """Optic's changes by family and operation, or why it gave none."""
    env = {**os.environ, "OPTIC_TELEMETRY_LEVEL": "off"}
    try:
        proc = subprocess.run(
            [str(OPTIC), "diff", str(old), str(new), "--json"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"no answer within {timeout:.0f} s"
    try:
        data = json.loads(proc.stdout[proc.stdout.index("{") :])
    except ValueError:
        said = (proc.stdout + proc.stderr).strip().splitlines()
        return f"failed (exit {proc.returncode}{': ' + said[0][:80] if said else ', no output'})"
    found: set[tuple[str, str]] = set()
    for op in data.get("operations", []):
        name = op["name"]
        if op["change"] in ("added", "removed"):
            found.add((f"operation {op['change']}", name))
            continue
        for p in op.get("parameters", []):
            if p["change"] in ("added", "removed"):
                found.add((f"parameter {p['change']}", name))
                continue
            for a in p.get("attributes", []):
                if a["key"] == "/required" and a.get("after") is True:
                    found.add(("parameter became required", name))
                elif a["key"].startswith("/schema") and _narrowed(a):
                    found.add(("parameter narrowed", name))
        for ct in (op.get("requestBody") or {}).get("contentTypes", []):
            _properties(ct.get("attributes", []), "request", found, name)
        for response in op.get("responses", []):
            status = str(response.get("name", "")).split()[0]
            if response["change"] == "removed":
                found.add(("response status removed", name))
            if not status.startswith("2"):
                continue  # apiforge compares the bodies of success responses only
            for ct in response.get("contentTypes", []):
                _properties(ct.get("attributes", []), "response", found, name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="*", type=Path)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    given = list(zip(args.pairs[::2], args.pairs[1::2], strict=True))
    pairs = given or [(CORPUS / a, CORPUS / b) for a, b in PAIRS]
    table: dict[str, Counter[str]] = {}
    for old, new in pairs:
        theirs = optic(old, new, args.timeout)
        if isinstance(theirs, str):
            print(f"{old.name} → {new.name}: Optic {theirs}")
            continue
        mine = ours(old, new)
        print(
            f"{old.name} → {new.name}: both {len(mine & theirs)}, apiforge only {len(mine - theirs)}, Optic only {len(theirs - mine)}",
            flush=True,
        )
        for family, op in sorted(mine ^ theirs):
            side = "apiforge only" if (family, op) in mine else "Optic only"
            print(f"    {side}: {family}: {op}")
        for item in mine | theirs:
            side = (
                "both"
                if item in mine and item in theirs
                else "apiforge"
                if item in mine
                else "optic"
            )
            table.setdefault(item[0], Counter())[side] += 1
    print(
        "\n| family (per operation) | both | apiforge only | Optic only |\n| --- | --- | --- | --- |"
    )
    for family in sorted(table):
        row = table[family]
        print(f"| {family} | {row['both']} | {row['apiforge']} | {row['optic']} |")


if __name__ == "__main__":
    main()
