"""How the corpus's form bodies declare their encoding: what the client's form writer must honour.

    .venv/bin/python bench/form_encodings.py [--json]

Every spec of ../shared/corpus/INDEX.tsv read (no validation); for each request body media type
`application/x-www-form-urlencoded` or `multipart/form-data`, the `encoding` entries counted by
how they write a property: `deepObject` (exploded or not), `form` (exploded or not), the
delimited styles, a `contentType` only, and bodies with no `encoding` at all. Prints a table
(or JSON) of form bodies and properties per style, overall and per media type.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT))

FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _style(style: str, explode: bool | None, content_type: str) -> str:
    if not style and explode is None:
        return "contentType only" if content_type else "empty entry"
    style = style or "form"
    exploded = style == "form" if explode is None else explode
    return f"{style}, {'explode' if exploded else 'no explode'}"


def count() -> dict[str, object]:
    from generator.errors import ApiforgeError
    from generator.spec import load_spec

    bodies: Counter[str] = Counter()  # (media, style) → form bodies using it at least once
    properties: Counter[str] = Counter()
    specs: Counter[str] = Counter()  # style → specs using it
    unreadable: list[str] = []
    rows = (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]
    for line in rows:
        path = line.split("\t", 1)[0]
        try:
            api = load_spec(str(CORPUS / path)).api
        except ApiforgeError:
            unreadable.append(path)
            continue
        seen: set[str] = set()
        for op in api.operations:
            body = op.request_body
            for media in body.content if body else ():
                kind = media.content_type.split(";")[0].strip().lower()
                if kind not in FORMS:
                    continue
                bodies[f"{kind}: all"] += 1
                styles = {
                    _style(e.style, e.explode, e.content_type) for e in media.encoding.values()
                }
                for e in media.encoding.values():
                    properties[f"{kind}: {_style(e.style, e.explode, e.content_type)}"] += 1
                for style in styles or {"no encoding"}:
                    bodies[f"{kind}: {style}"] += 1
                seen |= styles or {"no encoding"}
        specs.update(seen)
    return {
        "specs": len(rows) - len(unreadable),
        "unreadable": unreadable,
        "form bodies by style": dict(sorted(bodies.items())),
        "properties by style": dict(sorted(properties.items())),
        "specs by style": dict(sorted(specs.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    result = count()
    if parser.parse_args().json:
        print(json.dumps(result, indent=2))
        return
    print(f"specs read: {result['specs']} (unreadable: {len(result['unreadable'])})")  # type: ignore[arg-type]
    for title in ("form bodies by style", "properties by style", "specs by style"):
        print(f"\n{title}:")
        for key, n in result[title].items():  # type: ignore[attr-defined]
            print(f"  {n:6d}  {key}")


if __name__ == "__main__":
    main()
