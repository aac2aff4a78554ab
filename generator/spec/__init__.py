"""Reading a spec: load (YAML/JSON, cached), resolve `$ref`s, validate, build the IR."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from generator.errors import ApiforgeError, Problem
from generator.ir import Api
from generator.log import logger
from generator.spec.build import build_api
from generator.spec.load import Document, load_document
from generator.spec.located import remember
from generator.spec.refs import Resolver
from generator.spec.swagger2 import ConvertedDocument, convert, is_swagger2

SWAGGER_HINT = (
    "apiforge reads Swagger 2.0, OpenAPI 3.0 and 3.1; convert older versions first, "
    "e.g. `npx swagger2openapi spec.yaml -o openapi.yaml`"
)
MAX_NOTES = 20  # conversion notes shown one by one; the rest are counted by kind


class SpecText(str):
    """A spec's text that no file holds (a Swagger 2.0 document's 3.0 reading, or a spec whose
    `$ref`s reach files outside its folder), and the folder its `$ref`s to other files are
    relative to (None: the working directory)."""

    folder: Path | None

    def __new__(cls, text: str, folder: Path | None) -> SpecText:
        made = super().__new__(cls, text)
        made.folder = folder
        return made


@dataclass(frozen=True)
class LoadedSpec:
    api: Api
    resolver: Resolver

    @property
    def source(self) -> Path | str:
        """What the models generator reads: the file, or the spec's text (stdin, or a
        Swagger 2.0 document's 3.0 reading, which no file holds)."""
        root = self.resolver.root
        folder = root.path.parent.absolute() if root.path is not None else None
        # The library refuses a file outside the folder of what it reads (`../common/…`):
        # it reads the spec from the folder that holds every file the spec names, then.
        files = [d.path.absolute().parent for d in self.resolver.documents if d.path is not None]
        base = Path(os.path.commonpath([folder, *files])) if folder is not None else None
        if isinstance(root, ConvertedDocument) or base != folder:
            data = root.data
            if folder is not None and base is not None and base != folder:
                data = _refs_from(data, folder, base)
            return SpecText(json.dumps(data, ensure_ascii=False, default=str), base)
        return root.path if root.path is not None else root.text.decode("utf-8", "replace")


def _refs_from(node: Any, folder: Path, base: Path) -> Any:
    """`node` with each `$ref` to another file, written relative to `folder`, made relative
    to `base` instead."""
    if isinstance(node, dict):
        out = {k: _refs_from(v, folder, base) for k, v in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#") and "://" not in ref:
            file_part, sep, fragment = ref.partition("#")
            moved = os.path.relpath(os.path.normpath(folder / unquote(file_part)), base)
            out["$ref"] = moved.replace(os.sep, "/") + sep + fragment
        return out
    if isinstance(node, list):
        return [_refs_from(v, folder, base) for v in node]
    return node


def read_swagger2(doc: Document) -> Document:
    """`doc` read as OpenAPI 3.0 when it is Swagger 2.0, saying (on the "apiforge" logger)
    what the conversion could not carry over, each at its place in the 2.0 file."""
    if not is_swagger2(doc.data):
        return doc
    converted = convert(doc, load=lambda path: load_document(str(path)))
    log = logger()
    notes = sorted(converted.notes, key=lambda n: doc.locate(n.pointer))
    for note in notes[:MAX_NOTES]:
        line, column = doc.locate(note.pointer)
        problem = Problem(
            f"Swagger 2.0: {note.message}",
            file=doc.name,
            line=line,
            column=column,
            pointer=note.pointer,
        )
        log.warning("warning: %s", problem.render())
    if len(notes) > MAX_NOTES:
        kinds = Counter(n.kind for n in notes[MAX_NOTES:])
        shown = ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items()))
        log.warning("warning: … and %d more Swagger 2.0 notes (%s)", len(notes) - MAX_NOTES, shown)
    return converted


def check_root(doc: Document) -> None:
    data = doc.data
    if not isinstance(data, dict):
        raise ApiforgeError(
            Problem(
                f"the document is a {type(data).__name__}, not an OpenAPI object",
                file=doc.name,
                line=1,
            ),
            "an OpenAPI document is a mapping that starts with `openapi: 3.1.0`",
        )
    if "swagger" in data:
        raise ApiforgeError(
            Problem(f"this is Swagger {data['swagger']}, not OpenAPI 3", file=doc.name, line=1),
            SWAGGER_HINT,
        )
    version = data.get("openapi")
    if not isinstance(version, str) or not version.startswith(("3.0", "3.1")):
        line, column = doc.locate("/openapi") if "openapi" in data else (1, 1)
        shown = repr(version) if version is not None else "missing"
        raise ApiforgeError(
            Problem(
                f"`openapi` version is {shown}",
                file=doc.name,
                line=line,
                column=column,
                pointer="/openapi",
            ),
            "apiforge reads OpenAPI 3.0.x and 3.1.x documents (`openapi: 3.1.0`)",
        )


def load_spec(
    source: str,
    *,
    validate: bool = False,
    strict: bool = True,
    locate_ahead: bool = False,
    resolved: Callable[[Resolver], None] | None = None,
) -> LoadedSpec:
    """Read `source` (a path or "-"), optionally validate it, and build the patterned IR.

    Validation errors raise ApiforgeError when `strict`; otherwise they are warnings on the
    "apiforge" logger and the spec is used as it is (`generator.spec.validate.validate`).
    `locate_ahead`: the caller will locate many nodes of the root file (`lint`); its source
    map may be made meanwhile on another core (`Document.locate_ahead`). `resolved` is called
    with the resolver before the IR is built (`generate` starts validating then, in another
    process)."""
    from generator.patterns import attach_patterns

    document = load_document(source)
    if locate_ahead and not is_swagger2(document.data):
        document.locate_ahead()
    root = read_swagger2(document)
    check_root(root)
    resolver = Resolver(root)
    resolver.fetch_remote()
    remember(resolver)  # later warnings (rendering) name lines in these files
    if resolved is not None:
        resolved(resolver)
    api = build_api(resolver)
    if validate:
        from generator.spec.validate import validate as run_validation

        run_validation(resolver, strict=strict)
    return LoadedSpec(attach_patterns(api), resolver)
