"""`$ref` resolution across one document and the files it points to.

References are followed on demand: the builder asks for a node and gets the node it
finally points to, with the `Where` it lives at. Chains that loop are an error; recursive
schemas are not (schemas are never inlined, so their `$ref`s are never chased here).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from generator.errors import ApiforgeError, Problem
from generator.ir import Where
from generator.spec.load import Document, load_document


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class Resolver:
    def __init__(self, root: Document) -> None:
        self.root = root
        self._docs: dict[str, Document] = {root.name: root}

    @property
    def documents(self) -> list[Document]:
        return list(self._docs.values())

    def document(self, name: str) -> Document:
        doc = self._docs.get(name)
        if doc is None:
            doc = load_document(name)
            self._docs[name] = doc
        return doc

    def locate(self, where: Where) -> tuple[int, int]:
        return self.document(where.file).locate(where.pointer)

    def problem(self, message: str, where: Where) -> Problem:
        line, column = self.locate(where)
        return Problem(message, file=where.file, line=line, column=column, pointer=where.pointer)

    def get(self, where: Where, *, origin: Where | None = None) -> Any:
        """The node at `where`, without following a `$ref` it may be."""
        node: Any = self.document(where.file).data
        if not where.pointer:
            return node
        for raw in where.pointer[1:].split("/"):
            token = unescape(raw)
            if isinstance(node, dict):
                if token not in node:
                    break
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                break
        else:
            return node
        at = origin or where
        raise ApiforgeError(
            self.problem(f"$ref target #{where.pointer} does not exist in {where.file}", at),
            "fix the $ref or add the component it names",
        )

    def deref(self, where: Where, node: Any) -> tuple[Where, Any]:
        """Follow `node` (found at `where`) through `$ref`s to what it finally is."""
        seen: list[Where] = []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref_at = where.child("$ref")
            target = self.target(where, node["$ref"])
            if target in seen:
                chain = " → ".join(f"{w.file}#{w.pointer}" for w in [*seen, target])
                raise ApiforgeError(
                    self.problem(f"$ref cycle: {chain}", ref_at),
                    "a $ref must end at a real object, not come back to itself",
                )
            seen.append(target)
            node = self.get(target, origin=ref_at)
            where = target
        return where, node

    def target(self, where: Where, ref: str) -> Where:
        """Where a `$ref` written in `where.file` points to."""
        file_part, _, fragment = ref.partition("#")
        if "://" in file_part:
            raise ApiforgeError(
                self.problem(f"remote $ref {ref!r} is not followed", where.child("$ref")),
                "download the referenced file and refer to it by a relative path",
            )
        name = where.file
        if file_part:
            base = os.path.dirname(where.file) if where.file != "<stdin>" else ""
            name = os.path.normpath(os.path.join(base, unquote(file_part)))
            if name not in self._docs:
                if not Path(name).is_file():
                    raise ApiforgeError(
                        self.problem(f"$ref {ref!r}: no such file {name}", where.child("$ref")),
                        "fix the relative path of the $ref",
                    )
                self.document(name)
        pointer = unquote(fragment)
        if pointer and not pointer.startswith("/"):
            raise ApiforgeError(
                self.problem(
                    f"$ref {ref!r}: only JSON pointers (#/...) are supported", where.child("$ref")
                ),
            )
        return Where(name, pointer)
