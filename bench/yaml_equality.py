"""Prove that apiforge's YAML loader yields exactly what PyYAML's safe loader yields.

    .venv/bin/python bench/yaml_equality.py [--corpus DIR] [FILE ...]

For every `.yaml`/`.yml` file under ../shared/corpus (or the files given), parses the text
with `yaml.load(text, Loader=yaml.CSafeLoader)` and with `generator.spec.load.load_yaml`, and
compares the results strictly: the same types everywhere (a quoted date stays a str, an
unquoted one is a date; bool is not int), the same dict key order, datetimes by their repr
(timezone included), floats by repr (so -0.0 differs from 0.0) and NaN equal to NaN, and the
same sharing: an object reached twice in one result (an anchor and its aliases, or a
recursive structure) is reached twice at the same places in the other. A file PyYAML rejects
must be rejected with the same exception class and message. Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import math
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.spec.load import load_yaml  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
_SCALARS = (str, int, float, bool, bytes, type(None), datetime.date, datetime.datetime)


def difference(a: Any, b: Any) -> str | None:
    """Where and how `a` and `b` differ (a JSON-pointer-like path and the two values), or
    None when they are the same data, types and sharing included."""
    seen_a: dict[int, int] = {}  # id in a → id in b, for containers (sharing must match)
    seen_b: dict[int, int] = {}
    keep: list[Any] = []  # keep ids stable while comparing
    todo: list[tuple[Any, Any, str]] = [(a, b, "")]
    while todo:
        x, y, path = todo.pop()
        if type(x) is not type(y):
            return f"{path or '/'}: {type(x).__name__} {x!r:.80} vs {type(y).__name__} {y!r:.80}"
        if isinstance(x, (dict, list, set)):
            if id(x) in seen_a or id(y) in seen_b:
                if seen_a.get(id(x)) != id(y) or seen_b.get(id(y)) != id(x):
                    return f"{path or '/'}: shared differently (anchors/aliases)"
                continue
            seen_a[id(x)] = id(y)
            seen_b[id(y)] = id(x)
            keep.append((x, y))
        if isinstance(x, dict):
            if len(x) != len(y):
                return f"{path or '/'}: {len(x)} keys vs {len(y)}"
            for i, ((kx, vx), (ky, vy)) in enumerate(zip(x.items(), y.items(), strict=True)):
                where = f"{path}/{kx!s:.60}"
                if type(kx) is not type(ky) or _scalar_diff(kx, ky):
                    return f"{path or '/'}: key #{i} {kx!r:.80} vs {ky!r:.80}"
                todo.append((vx, vy, where))
        elif isinstance(x, (list, tuple)):
            if len(x) != len(y):
                return f"{path or '/'}: {len(x)} items vs {len(y)}"
            todo.extend(
                (vx, vy, f"{path}/{i}") for i, (vx, vy) in enumerate(zip(x, y, strict=True))
            )
        elif isinstance(x, (set, frozenset)):
            if {(type(v), _norm(v)) for v in x} != {(type(v), _norm(v)) for v in y}:
                return f"{path or '/'}: sets differ {x!r:.80} vs {y!r:.80}"
        elif isinstance(x, _SCALARS):
            if _scalar_diff(x, y):
                return f"{path or '/'}: {x!r:.80} vs {y!r:.80}"
        else:
            return f"{path or '/'}: unexpected type {type(x).__name__}"
    return None


def _norm(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, (float, datetime.date)):
        return repr(v)
    return v


def _scalar_diff(x: Any, y: Any) -> bool:
    if isinstance(x, float):
        return not (math.isnan(x) and math.isnan(y)) and repr(x) != repr(y)
    if isinstance(x, datetime.date):  # datetime included: == would ignore the timezone
        return repr(x) != repr(y)
    if isinstance(x, (tuple, frozenset)):
        return difference(x, y) is not None
    return bool(x != y)


def outcome(parse: Any, text: str) -> tuple[str, Any]:
    gc.disable()  # faster for both parsers, and changes nothing they return
    try:
        return "ok", parse(text)
    except Exception as exc:  # the class and message are what is compared
        return "error", exc
    finally:
        gc.enable()


def compare(text: str) -> tuple[str | None, bool]:
    """(None when both loaders agree on `text`, else what differs; whether PyYAML rejected
    the text)."""
    kind_a, ref = outcome(lambda t: yaml.load(t, Loader=yaml.CSafeLoader), text)
    kind_b, ours = outcome(lambda t: load_yaml(t)[0], text)
    rejected = kind_a == "error"
    if kind_a == "error" or kind_b == "error":
        if kind_a != kind_b:
            shown = ref if kind_a == "error" else ours
            who = "PyYAML" if kind_a == "error" else "ours"
            return f"only {who} raised {type(shown).__name__}: {shown}", rejected
        if type(ref) is not type(ours) or str(ref) != str(ours):
            diff = f"errors differ: {type(ref).__name__}: {ref} vs {type(ours).__name__}: {ours}"
            return diff, rejected
        return None, rejected
    return difference(ref, ours), rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    files = args.files or sorted(
        p for p in args.corpus.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
    )
    start = time.perf_counter()
    same = rejected = undecodable = 0
    differences: list[tuple[Path, str]] = []
    for path in files:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError:
            undecodable += 1  # apiforge refuses these before any YAML parser sees them
            continue
        diff, was_rejected = compare(text)
        if diff is None:
            same += 1
            rejected += was_rejected
        else:
            differences.append((path, diff))
            print(f"DIFFERENT {path}: {diff}", flush=True)
        gc.collect()
    elapsed = time.perf_counter() - start
    print(
        f"{len(files)} YAML files: {same} identical (of which {rejected} rejected by both with "
        f"the same error), {len(differences)} different, {undecodable} not UTF-8 (skipped); "
        f"{elapsed:.0f} s"
    )
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
