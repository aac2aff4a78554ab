"""Swagger 2.0 schemas and `$ref`s as OpenAPI 3.0 says them, for `swagger2`'s converter.

A local `$ref` gets its 3.0 prefix (`#/definitions/` → `#/components/schemas/`); a `$ref`
into another file brings what it names into the document (see `swagger2`'s docstring): a
schema as a component schema under a free name, a parameter or a response in place. The
schema's own 2.0 keywords (`x-nullable`, a string `discriminator`, `type: file`) are
converted on the way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from generator.spec.load import MISSING, Document, node_at, unescape

_REF_PREFIXES = {
    "#/definitions/": "#/components/schemas/",
    "#/parameters/": "#/components/parameters/",
    "#/responses/": "#/components/responses/",
}


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def ptr(base: str, *tokens: Any) -> str:
    for token in tokens:
        base = f"{base}/{escape(str(token))}"
    return base


def _local_ref(fragment: str) -> str:
    """`#<fragment>` (a pointer into the 2.0 document) as the converted document says it."""
    ref = "#" + fragment
    for old, new in _REF_PREFIXES.items():
        if ref.startswith(old):
            return new + ref[len(old) :]
    return ref


class RefConverter:
    """The converter's schemas and `$ref`s, the other files it reads, and where each
    converted pointer came from (`origins`)."""

    def __init__(
        self,
        data: dict[Any, Any],
        path: Path | None = None,
        load: Callable[[Path], Document] | None = None,
    ) -> None:
        self.src = data
        self.origins: dict[str, str] = {}
        # other files (see `swagger2`'s docstring)
        self.path = path.absolute() if path is not None else None
        self.load = load if path is not None else None
        self.files: dict[Path, Document | None] = {}  # read (None: cannot be read)
        self.file: Path | None = None  # the other file being converted; None: the document
        self.entry = ""  # the pointer of the `$ref` (in the document) that led into it
        self.brought: dict[tuple[Path, str], str] = {}  # (file, pointer) → the new `$ref`
        self.brought_schemas: dict[str, Any] = {}
        definitions = data.get("definitions")
        self.taken = {str(name) for name in definitions} if isinstance(definitions, dict) else set()

    def origin(self, converted: str, original: str) -> None:
        if converted != original:
            self.origins[converted] = original

    def ref(self, ref: Any, at: str = "") -> Any:
        """A schema's `$ref` (at `at`) as the converted document says it: a local one with
        its new prefix, one into another file to the component schema brought in for it."""
        target = self.target(ref)
        if target is None:
            return _local_ref(ref[1:]) if isinstance(ref, str) and ref.startswith("#/") else ref
        file, fragment = target
        if file == self.path:  # back into the document, from another file
            return _local_ref(fragment)
        known = self.brought.get(target)
        if known is not None:
            return known
        node = self.node(file, fragment)
        if node is MISSING:  # its reader names it: as the document wrote it, when it did
            return ref if self.file is None else self.as_written(file, fragment)
        tokens = [t for t in fragment.split("/") if t]
        name = unescape(tokens[-1]) if tokens else file.stem
        free, n = name, 1
        while free in self.taken:
            n += 1
            free = f"{name}{n}"
        self.taken.add(free)
        new = "#/components/schemas/" + escape(free)
        self.brought[target] = new  # before converting it: it may refer to itself
        self.brought_schemas[free] = None  # its place: before those it brings in
        self.origin(ptr("/components/schemas", free), self.entry if self.file else at)
        with self.reading(file, at):
            self.brought_schemas[free] = self.schema(node, fragment)
        return new

    def target(self, ref: Any) -> tuple[Path, str] | None:
        """(the other file, the pointer in it) that `ref` names; None for a `$ref` inside
        the document itself, a URL, or when other files are not read."""
        if self.load is None or self.path is None or not isinstance(ref, str):
            return None
        file_part, _, fragment = ref.partition("#")
        fragment = unquote(fragment)
        if not file_part:
            return None if self.file is None else (self.file, fragment)
        if "://" in file_part:
            return None
        file = Path(os.path.normpath((self.file or self.path).parent / unquote(file_part)))
        return None if file == self.path and self.file is None else (file, fragment)

    def other_file(self, ref: Any, at: str) -> tuple[Path, Any] | None:
        """(file, node) for a parameter's or a response's `$ref` into another file that can
        be read; None otherwise (the `$ref` stays as written)."""
        target = self.target(ref)
        if target is None:
            return None
        node = self.node(*target)
        return None if node is MISSING else (target[0], node)

    def node(self, file: Path, fragment: str) -> Any:
        if file == self.path:
            return node_at(self.src, fragment)
        if file not in self.files:
            assert self.load is not None
            self.files[file] = self.load(file) if file.is_file() else None
        doc = self.files[file]
        return MISSING if doc is None else node_at(doc.data, fragment)

    def as_written(self, file: Path, fragment: str) -> str:
        """A `$ref` to `file` as the converted document (in the 2.0 document's folder) would
        write it: what its reader reports when the file is not there."""
        assert self.path is not None
        relative = quote(os.path.relpath(file, self.path.parent).replace(os.sep, "/"))
        return f"{relative}#{quote(fragment, safe='/~')}" if fragment else relative

    @contextlib.contextmanager
    def reading(self, file: Path, at: str) -> Iterator[None]:
        """Convert in `file`'s terms (its local `$ref`s are into it) what the `$ref` at `at`
        brought in; the first such `$ref` in the document is where its messages point."""
        outer = (self.file, self.entry)
        self.file = None if file == self.path else file
        self.entry = self.entry if outer[0] is not None else at
        try:
            yield
        finally:
            self.file, self.entry = outer

    def body_parameter(self, param: dict[str, Any], at: str) -> dict[str, Any]:
        """A body or form parameter of another file, its schema converted in that file's
        terms now (its request body is made later, in the document's)."""
        if "schema" not in param:
            return param
        return {**param, "schema": self.schema(param["schema"], ptr(at, "schema"))}

    def schema(self, schema: Any, at: str) -> Any:
        """A 2.0 schema as 3.0: `$ref`s rewritten, `x-nullable`, string `discriminator`s and
        `type: file` converted, everything else as written. Instance data (`example`,
        `default`, `enum`) and extensions are not looked into."""
        if not isinstance(schema, dict):
            return schema
        out: dict[Any, Any] = {}
        for key, value in schema.items():
            if key == "$ref":
                out[key] = self.ref(value, ptr(at, "$ref"))
            elif key in ("properties", "patternProperties", "definitions") and isinstance(
                value, dict
            ):
                out[key] = {k: self.schema(v, ptr(at, key, k)) for k, v in value.items()}
            elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
                out[key] = self.schema(value, ptr(at, key))
            elif key in ("allOf", "anyOf", "oneOf", "items") and isinstance(value, list):
                out[key] = [self.schema(v, ptr(at, key, i)) for i, v in enumerate(value)]
            elif key == "x-nullable":
                if value is True and "$ref" not in schema:
                    out["nullable"] = True
                elif value is True:
                    out["allOf"] = [{"$ref": self.ref(schema["$ref"], ptr(at, "$ref"))}]
                    out["nullable"] = True
            elif key == "discriminator" and isinstance(value, str):
                out[key] = {"propertyName": value}
            elif key == "type" and value == "file":
                out["type"] = "string"
                out["format"] = "binary"
            else:
                out[key] = value
        if "allOf" in out and "$ref" in out and out.get("nullable") is True:
            del out["$ref"]  # a nullable `$ref`: 3.0 ignores siblings of `$ref`
        return out
