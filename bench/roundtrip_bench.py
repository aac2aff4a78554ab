"""What a round-trip YAML library would keep of the corpus's YAML files: why `lint --fix`
inserts text instead (docs/lint.md, "Why text insertion").

    python -m venv bench/.peers/ruamel && bench/.peers/ruamel/bin/pip install ruamel.yaml
    bench/.peers/ruamel/bin/python bench/roundtrip_bench.py [--corpus DIR] [--width N]

ruamel.yaml is not a dependency of apiforge: run this with any interpreter that has it. For
every `.yaml`/`.yml` spec of INDEX.tsv, loads it with ruamel.yaml's round-trip loader
(`YAML(typ="rt")`, `preserve_quotes`, the file's own mapping indentation and sequence
offset, an unlimited line width) and dumps it again without
any change, then counts the files that come back byte for byte and, for the others, the lines
that differ (the lines of the original that the output does not have, counted as multisets:
a lower bound of a line diff, in linear time). Files over `--max-bytes` are left out (ruamel.yaml
is pure Python: minutes for the biggest); the time of the largest one read is printed.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


def guess_indent(text: str) -> tuple[int, int]:
    """The file's mapping indentation and how far its sequences' dashes sit right of their
    key (0: `key:` then `- item`; 2: `key:` then `  - item`), from the first of each."""
    mapping = offset = None
    previous: tuple[int, bool] | None = None  # the last line's indent, ends with `:`
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if previous and previous[1]:
            if stripped.startswith("- ") and offset is None:
                offset = indent - previous[0]
            elif indent > previous[0] and mapping is None:
                mapping = indent - previous[0]
        if mapping is not None and offset is not None:
            break
        previous = (indent, stripped.rstrip().endswith(":"))
    return mapping or 2, max(offset or 0, 0)


def round_trip(text: str, width: int) -> str:
    """Load and dump `text` with ruamel.yaml, set up as well as it can be for this file."""
    from ruamel.yaml import YAML

    mapping, offset = guess_indent(text)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = width
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    out = io.StringIO()
    yaml.dump(yaml.load(text), out)
    return out.getvalue()


def main() -> None:
    import ruamel.yaml

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--width", type=int, default=1 << 30)
    parser.add_argument("--max-bytes", type=int, default=300_000)
    args = parser.parse_args()
    rows = [line.split("\t") for line in (args.corpus / "INDEX.tsv").read_text().splitlines()[1:]]
    paths = [
        args.corpus / r[0]
        for r in rows
        if r[0].endswith((".yaml", ".yml"))
        and (args.corpus / r[0]).stat().st_size <= args.max_bytes
    ]
    same = failed = 0
    changed_files: list[tuple[int, int, str]] = []  # (lines differing, lines, path)
    total_lines = total_changed = 0
    for path in paths:
        text = path.read_text(encoding="utf-8-sig")
        try:
            out = round_trip(text, args.width)
        except Exception:  # ruamel.yaml refuses it (so does PyYAML, mostly)
            failed += 1
            continue
        lines = text.splitlines(keepends=True)
        total_lines += len(lines)
        if out == text:
            same += 1
            continue
        differing = sum((Counter(lines) - Counter(out.splitlines(keepends=True))).values())
        total_changed += differing
        changed_files.append((differing, len(lines), str(path.relative_to(args.corpus))))
    print(
        f"ruamel.yaml {ruamel.yaml.__version__}: {len(paths)} YAML specs, {same} come back "
        f"byte for byte, {len(changed_files)} changed, {failed} refused"
    )
    print(f"lines that differ after a no-op round trip: {total_changed:,} of {total_lines:,}")
    for differing, lines, path in sorted(changed_files, reverse=True)[:8]:
        print(f"  {differing:7,} of {lines:7,} lines  {path}")
    biggest = max(paths, key=lambda p: p.stat().st_size)
    text = biggest.read_text(encoding="utf-8-sig")
    start = time.perf_counter()
    round_trip(text, args.width)
    size = len(text.encode()) / 1e6
    print(
        f"{biggest.relative_to(args.corpus)} ({size:.1f} MB): load + dump "
        f"{time.perf_counter() - start:.1f} s"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
