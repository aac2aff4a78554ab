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

    .venv/bin/python bench/yaml_equality.py --blocks [--split-bytes N] [--mutations N] [FILE ...]

also checks the block-by-block reader (`generator.spec.blocks.load_yaml_blocks`, what big files
go through when a cache is on) against the whole parse, on every file: with blocks split down
to `--split-bytes` (small, so even small files split into many blocks), the data must be the
same as above, a text the whole parse rejects must be refused (so the whole parse gives its
error), and the source map put together from the blocks' maps must answer every pointer of
the whole map (and pointers that do not exist) with the same offset; read again with the
blocks' cache, nothing is parsed and the data is the same. Then, for every file of at least
`--mutate-min` bytes, `--mutations` random one-line edits (a description line changed, a line
inserted, a line deleted; seeded), each read with the original's blocks cached and the
production split size, compared the same way with the whole parse of the edited text.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import math
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import generator.spec.blocks as blocks  # noqa: E402
import generator.spec.load as load  # noqa: E402
from generator.spec.blocks import load_yaml_blocks  # noqa: E402
from generator.spec.fast_yaml import json_tree, load_fast  # noqa: E402
from generator.spec.load import load_yaml  # noqa: E402
from generator.spec.sourcemap import (  # noqa: E402
    SourceMap,
    _BlockIndex,
    _index_json,
    _index_yaml,
    _line_starts_str,
    _RymlIndex,
)

CORPUS = ROOT.parent / "shared" / "corpus"
_SCALARS = (str, int, float, bool, bytes, type(None), datetime.date, datetime.datetime)


def difference(
    a: Any, b: Any, allowed: Callable[[Any, Any], str | None] | None = None, seen: Any = None
) -> str | None:
    """Where and how `a` and `b` differ (a JSON-pointer-like path and the two values), or
    None when they are the same data, types and sharing included. `allowed(x, y)` names a
    documented difference between two scalars (None: not one); each one met is counted in
    the Counter `seen` instead of being a difference."""
    seen_a: dict[int, int] = {}  # id in a → id in b, for containers (sharing must match)
    seen_b: dict[int, int] = {}
    keep: list[Any] = []  # keep ids stable while comparing
    todo: list[tuple[Any, Any, str]] = [(a, b, "")]
    while todo:
        x, y, path = todo.pop()
        if allowed is not None and (type(x) is not type(y) or _scalar_diff(x, y)):
            kind = allowed(x, y)
            if kind is not None:
                seen[kind] += 1
                continue
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
    kind_a, ref = outcome(lambda t: yaml.load(t, Loader=load.Yaml12Loader), text)
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


def compare_blocks(
    raw: bytes, cached: dict[Any, Any] | None = None
) -> tuple[str, str | None, dict[Any, Any] | None, tuple[int, int]]:
    """Read `raw` block by block (with `cached` blocks) and whole; (how it was read: "blocks",
    "whole" when the reader refused it, "rejected" when the whole parse raised too; what
    differs or None; the blocks' entries; how many blocks were parsed, of how many)."""
    text = raw.decode("utf-8-sig")
    kind, ref = outcome(load_yaml, text)
    gc.disable()
    try:
        loaded = load_yaml_blocks(raw, hashlib.sha256(raw).hexdigest(), cached)
    except Exception as exc:  # it must never raise: refusing is how it reports trouble
        return "blocks", f"load_yaml_blocks raised {type(exc).__name__}: {exc}", None, (0, 0)
    finally:
        gc.enable()
    if kind == "error":
        if loaded is not None:
            return "blocks", f"read block by block, but the whole parse raised: {ref}", None, (0, 0)
        return "rejected", None, None, (0, 0)
    if loaded is None:
        return "whole", None, None, (0, 0)
    data, layout, entries = loaded
    counts = (layout.parsed, len(layout.leaves))
    whole, tree = ref
    diff = difference(whole, data)
    if diff is not None:
        return "blocks", f"data: {diff}", None, counts
    starts = _line_starts_str(text)
    reference = _index_yaml(text, starts, tree)
    index = _BlockIndex(layout)
    smap = SourceMap(reference, raw, starts)
    for pointer, offset in reference.items():
        found = index.offset(pointer, starts)
        if found != offset:
            return "blocks", f"source map: {pointer} at {found}, not {offset}", None, counts
        if index.locate(pointer) != smap.locate(pointer):
            where = f"{index.locate(pointer)}, not {smap.locate(pointer)}"
            return "blocks", f"source map: {pointer} located at {where}", None, counts
    some = list(reference)[:: max(1, len(reference) // 200)]
    for pointer in ("/nope", "/", "//", *(p + "/~x" for p in some), *(p + "/" for p in some)):
        found = index.offset(pointer, starts)
        if found != reference.get(pointer) or index.locate(pointer) != smap.locate(pointer):
            return "blocks", f"source map: missing {pointer} at {found}", None, counts
    again = load_yaml_blocks(raw, hashlib.sha256(raw).hexdigest(), entries)
    if again is None or again[1].parsed or again[2] is not entries:
        return "blocks", "read again with its blocks cached, it parsed again", None, counts
    diff = difference(whole, again[0])
    if diff is not None:
        return "blocks", f"data read from the blocks' cache: {diff}", None, counts
    return "blocks", None, entries, counts


# --- against ruamel.yaml's YAML 1.2 reading (--ruamel) -------------------------------------
#
# ruamel.yaml in 1.2 mode goes beyond the core schema in a few ways; where the two readings
# differ in one of these ways, the difference is counted by kind, not reported:
_BEYOND_CORE_NUMBER = re.compile(r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+)|[-+]?[0-9._eE+-]+")


def ruamel_allowed(ours: Any, theirs: Any) -> str | None:
    """The documented difference between our scalar and ruamel.yaml's, if it is one."""
    if type(ours) is str and isinstance(theirs, datetime.date):
        return "timestamp: ruamel.yaml still reads dates in 1.2 mode; a str for us"
    if (
        type(ours) is str
        and type(theirs) in (int, float)
        and ("_" in ours or "0b" in ours or ours[:1] in "+-")
        and _BEYOND_CORE_NUMBER.fullmatch(ours)
    ):
        return "number with `_`, `0b` or a signed `0x`/`0o`: a str in the core schema"
    return None


def ruamel_load(text: str) -> Any:
    from ruamel.yaml import YAML  # a dev dependency: only this check needs it

    reader = YAML(typ="safe", pure=True)  # pure: the C reader follows YAML 1.1
    return reader.load(text)


def _tab(message: str) -> bool:
    return "tab character" in message or "'\\t'" in message


def compare_ruamel(text: str, seen: Counter[str]) -> str | None:
    """None when our reading of `text` is ruamel.yaml's 1.2 reading, but for the documented
    differences (counted in `seen`), else what differs."""
    kind_a, theirs = outcome(ruamel_load, text)
    kind_b, ours = outcome(lambda t: load_yaml(t)[0], text)
    tab = [x for k, x in ((kind_a, theirs), (kind_b, ours)) if k == "error" and _tab(str(x))]
    if tab and kind_a != kind_b:
        seen["file: a tab libyaml and ruamel.yaml read differently (syntax, not the schema)"] += 1
        return None
    if kind_a == "error" and kind_b == "error":
        seen["rejected by both (messages differ: two libraries)"] += 1
        return None
    if kind_a == "error":
        name = type(theirs).__name__
        if name == "DuplicateKeyError":
            seen["file: duplicate keys (ruamel.yaml refuses them; the last wins for us)"] += 1
            return None
        if name == "ConstructorError" and "tag:yaml.org,2002:value" in str(theirs):
            seen["file: a plain `=` (YAML 1.1's value key) ruamel.yaml refuses (a str for us)"] += 1
            return None
        if isinstance(theirs, ValueError) and re.search(r"out of range|must be in", str(theirs)):
            seen["file: an impossible date ruamel.yaml refuses (a str for us)"] += 1
            return None
        return f"only ruamel.yaml raised {name}: {str(theirs)[:200]}"
    if kind_b == "error":
        return f"only ours raised {type(ours).__name__}: {str(ours)[:200]}"
    return difference(ours, theirs, ruamel_allowed, seen)


# --- the rapidyaml reader (--fast) against the PyYAML one -----------------------------------


def compare_fast(text: str, counts: Counter[str]) -> str | None:
    """None when `fast_yaml.load_fast` refuses `text` or reads exactly what `load_yaml`
    reads, with a source map answering every pointer of the whole map (and pointers that do
    not exist) with the same offset; else what differs."""
    gc.disable()
    try:
        fast = load_fast(text)
    except Exception as exc:  # it must never raise: refusing is how it reports trouble
        return f"load_fast raised {type(exc).__name__}: {exc}"
    finally:
        gc.enable()
    kind, ref = outcome(load_yaml, text)
    if fast is None:
        counts["refused (read by PyYAML)"] += 1
        return None
    if kind == "error":
        return f"read by rapidyaml, but PyYAML raised: {ref}"
    data, tree = fast
    diff = difference(ref[0], data)
    if diff is not None:
        return f"data: {diff}"
    starts = _line_starts_str(text)
    reference = _index_yaml(text, starts, ref[1])
    index = _RymlIndex(tree, starts)
    some = list(reference)[:: max(1, len(reference) // 200)]
    others = ("/nope", "/", "//", "/~2", *(p + "/~x" for p in some), *(p + "/9999" for p in some))
    smap = SourceMap(reference, text.encode(), starts)
    for pointer in (*reference, *others):
        found = index.get(pointer)
        if found != reference.get(pointer):
            return f"source map: {pointer} at {found}, not {reference.get(pointer)}"
        diff = _located_differently(index, smap, pointer)
        if diff is not None:
            return diff
    counts["read by rapidyaml, the same"] += 1
    if index._tree is None:
        counts["  of which the source map needed PyYAML's compose"] += 1
    counts["  pointers compared"] += len(reference) + len(others)
    return None


def _located_differently(index: _RymlIndex, whole: SourceMap, pointer: str) -> str | None:
    """None when the line and column `index` gives `pointer` in bytes (what a cold lint
    prints) are those of the whole map; else what differs."""
    found = index.locate(pointer)
    expected = whole.locate(pointer)
    if found is not None and found != expected:
        return f"source map: {pointer} located at {found}, not {expected}"
    return None


def compare_json_map(text: str, counts: Counter[str]) -> str | None:
    """None when the source map of the JSON `text` from rapidyaml's tree (what a cold run
    uses) answers every pointer of `_index_json`'s whole map, and pointers that do not
    exist, the same; else what differs."""
    try:
        data = json.loads(text)
    except ValueError:
        counts["JSON: not JSON (refused before any map)"] += 1
        return None
    tree = json_tree(text)
    if tree is None:
        counts["JSON: rapidyaml refused (the whole map is made)"] += 1
        return None
    starts = _line_starts_str(text)
    reference = _index_json(text)
    lazy = _RymlIndex(tree, starts, data)
    some = list(reference)[:: max(1, len(reference) // 200)]
    others = ("/nope", "/", "//", "/~2", *(p + "/~x" for p in some), *(p + "/9999" for p in some))
    smap = SourceMap(reference, text.encode(), starts)
    for pointer in (*reference, *others):
        found = lazy.get(pointer)
        if found != reference.get(pointer):
            return f"JSON source map: {pointer} at {found}, not {reference.get(pointer)}"
        diff = _located_differently(lazy, smap, pointer)
        if diff is not None:
            return f"JSON {diff}"
    counts["JSON: map from rapidyaml's tree, the same"] += 1
    if lazy._tree is None:
        counts["  of which needed the whole map for some pointer"] += 1
    counts["  JSON pointers compared"] += len(reference) + len(others)
    return None


_DESCRIPTION = re.compile(rb"^ *(?:- )?description:", re.M)


def mutate(raw: bytes, rng: random.Random, how: str) -> bytes:
    """`raw` with one line changed (a description line when there is one), inserted (a copy
    of a line, a blank or a comment line) or deleted."""
    lines = raw.split(b"\n")
    at = rng.randrange(len(lines))
    if how == "edit":
        described = [m.start() for m in _DESCRIPTION.finditer(raw)]
        if described and rng.random() < 0.7:
            at = raw.count(b"\n", 0, rng.choice(described))
            if rng.random() < 0.5 and at + 1 < len(lines):
                at += 1  # the text of a folded description, or the next key
        line = lines[at]
        letters = [i for i, c in enumerate(line) if 97 <= c <= 122]
        if letters:
            i = rng.choice(letters)
            lines[at] = line[:i] + rng.choice([b"q", b"x", b"word "]) + line[i + 1 :]
        else:
            lines[at] = line + b" x"
    elif how == "insert":
        choice = rng.random()
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip(b" "))]
        new = lines[rng.randrange(len(lines))] if choice < 0.5 else indent + b"# inserted"
        lines.insert(at, b"" if choice > 0.8 else new)
    else:
        del lines[at]
    return b"\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--blocks", action="store_true", help="check the block-by-block reader")
    parser.add_argument(
        "--ruamel", action="store_true", help="also compare with ruamel.yaml's 1.2 reading (slow)"
    )
    parser.add_argument(
        "--fast", action="store_true", help="also check the rapidyaml reader, source map included"
    )
    parser.add_argument("--split-bytes", type=int, default=1024)
    parser.add_argument("--mutations", type=int, default=9, help="per big file (--blocks)")
    parser.add_argument("--mutate-min", type=int, default=load.CACHE_MIN_BYTES)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    files = args.files or sorted(
        p for p in args.corpus.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()
    )
    start = time.perf_counter()
    same = rejected = undecodable = 0
    differences: list[tuple[Path, str]] = []
    read: Counter[str] = Counter()
    leaves: list[int] = []
    beyond: Counter[str] = Counter()  # documented differences from ruamel.yaml, by kind
    fast: Counter[str] = Counter()
    ruamel_same = 0
    for path in files:
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            undecodable += 1  # apiforge refuses these before any YAML parser sees them
            continue
        diff, was_rejected = compare(text)
        if diff is None and args.fast:
            diff = compare_fast(text, fast)
            if diff is not None:
                diff = f"rapidyaml reader: {diff}"
        if diff is None and args.ruamel:
            diff = compare_ruamel(text, beyond)
            ruamel_same += diff is None
            if diff is not None:
                diff = f"against ruamel.yaml: {diff}"
        if diff is None and args.blocks:
            production = blocks.BLOCK_SPLIT_BYTES
            blocks.BLOCK_SPLIT_BYTES = args.split_bytes
            try:
                how, diff, _, (_, count) = compare_blocks(raw)
            finally:
                blocks.BLOCK_SPLIT_BYTES = production
            read[how] += 1
            if how == "blocks" and diff is None:
                leaves.append(count)
            if diff is not None:
                diff = f"block by block: {diff}"
        if diff is None:
            same += 1
            rejected += was_rejected
        else:
            differences.append((path, diff))
            print(f"DIFFERENT {path}: {diff}", flush=True)
        gc.collect()
        done = same + len(differences) + undecodable
        if done % 250 == 0:
            print(f"... {done} of {len(files)} files, {len(differences)} different", flush=True)
    elapsed = time.perf_counter() - start
    print(
        f"{len(files)} YAML files: {same} identical (of which {rejected} rejected by both with "
        f"the same error), {len(differences)} different, {undecodable} not UTF-8 (skipped); "
        f"{elapsed:.0f} s"
    )
    if args.fast and not args.files:
        for path in sorted(args.corpus.rglob("*.json")):
            try:
                text = path.read_bytes().decode("utf-8-sig")
            except UnicodeDecodeError:
                continue
            diff = compare_json_map(text, fast)
            if diff is not None:
                differences.append((path, diff))
                print(f"DIFFERENT {path}: {diff}", flush=True)
            gc.collect()
    if args.fast:
        print("rapidyaml reader:")
        order = [
            "read by rapidyaml, the same",
            "  of which the source map needed PyYAML's compose",
            "  pointers compared",
            "refused (read by PyYAML)",
        ]
        for kind in order + sorted(set(fast) - set(order)):
            print(f"  {fast[kind]:8d}  {kind}")
    if args.ruamel:
        print(f"ruamel.yaml (1.2): {ruamel_same} files the same but for these differences:")
        for kind, count in sorted(beyond.items()):
            print(f"  {count:6d}  {kind}")
    if args.blocks:
        print(
            f"block by block (split at {args.split_bytes} bytes): {read['blocks']} read by "
            f"blocks ({sum(leaves)} blocks, up to {max(leaves, default=0)} in one file), "
            f"{read['whole']} refused (read whole), {read['rejected']} refused and rejected "
            "by the whole parse too"
        )
        mutated = mutations(files, args, differences)
        print(
            f"one-line edits of {mutated['files']} files of >= {args.mutate_min} bytes: "
            f"{mutated['total']} edits ({mutated['edit']} changed, {mutated['insert']} "
            f"inserted, {mutated['delete']} deleted lines): {mutated['blocks']} read by "
            f"blocks, identical, re-parsing {mutated['parsed']} of their {mutated['leaves']} "
            f"blocks (at most {mutated['max_parsed']} for one edit); "
            f"{mutated['whole']} refused (read whole), {mutated['rejected']} rejected by "
            f"both; {mutated['different']} different; {time.perf_counter() - start:.0f} s "
            "in all"
        )
    sys.exit(1 if differences else 0)


def mutations(
    files: list[Path], args: argparse.Namespace, differences: list[tuple[Path, str]]
) -> Counter[str]:
    rng = random.Random(args.seed)
    counts: Counter[str] = Counter()
    for path in files:
        if args.mutations <= 0 or path.stat().st_size < args.mutate_min:
            continue
        raw = path.read_bytes()
        try:
            raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
        how, diff, entries, _ = compare_blocks(raw)
        if diff is not None:
            continue  # already reported by the first pass
        counts["files"] += 1
        for i in range(args.mutations):
            kind = ("edit", "insert", "delete")[i % 3]
            edited = mutate(raw, rng, kind)
            how, diff, _, (parsed, count) = compare_blocks(edited, entries)
            counts["total"] += 1
            counts[kind] += 1
            counts[how] += 1
            if how == "blocks" and diff is None:
                counts["parsed"] += parsed
                counts["max_parsed"] = max(counts["max_parsed"], parsed)
                counts["leaves"] += count
            if diff is not None:
                counts["different"] += 1
                differences.append((path, f"{kind} edit: {diff}"))
                print(f"DIFFERENT {path} after a one-line {kind}: {diff}", flush=True)
            gc.collect()
    return counts


if __name__ == "__main__":
    main()
