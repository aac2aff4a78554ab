"""`$ref` resolution across one document and the files it points to.

References are followed on demand: the builder asks for a node and gets the node it
finally points to, with the `Where` it lives at. Chains that loop are an error; recursive
schemas are not (schemas are never inlined, so their `$ref`s are never chased here).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin

from generator.errors import ApiforgeError, Problem
from generator.ir import Where
from generator.spec import gitref, remote
from generator.spec.load import MISSING, Document, load_document, node_at, parse_document
from generator.spec.swagger2 import ConvertedDocument


class UnresolvedRef(ApiforgeError):
    """A `$ref` that leads to no node: its file is missing, its pointer names nothing, it is
    remote, or it comes back to itself. `at` is where the `$ref` is written, `ref` its text,
    `reason` why it cannot be resolved (validation reports that as one of its problems)."""

    def __init__(self, problem: Problem, hint: str, *, at: Where, ref: str, reason: str) -> None:
        super().__init__(problem, hint)
        self.at = at
        self.ref = ref
        self.reason = reason


class Resolver:
    def __init__(self, root: Document) -> None:
        self.root = root
        self._docs: dict[str, Document] = {root.name: root}
        # one Document per file, however a `$ref` spells its path (`./a.yaml`, `x/../a.yaml`)
        self._real: dict[str, Document] = {}
        if root.path is not None:
            self._real[os.path.realpath(root.path)] = root

    @property
    def documents(self) -> list[Document]:
        return list({id(d): d for d in self._docs.values()}.values())

    def document(self, name: str) -> Document:
        doc = self._docs.get(name)
        if doc is None:
            real = os.path.realpath(name) if name != "<stdin>" else None
            doc = self._real.get(real) if real is not None else None
            if doc is None:
                doc = load_document(name)
                if real is not None:
                    self._real[real] = doc
            self._docs[name] = doc
        return doc

    def remote_document(self, where: Where, ref: str, url: str) -> str:
        """The name of the document at `url` (a `$ref` at `where` names it), fetched if the
        user allows it (see `remote`)."""
        if url in self._docs:
            return url
        ref_at = where.child("$ref")
        refused = None
        if not remote.is_remote(url):
            refused = "only http and https URLs are followed"
        elif not remote.allowed():
            refused = "remote references are not followed unless allowed"
        if refused is not None:
            raise UnresolvedRef(
                self.problem(f"remote $ref {ref!r} is not followed: {refused}", ref_at),
                remote.ALLOW_HINT + "; or download the file and refer to it by a relative path",
                at=ref_at,
                ref=ref,
                reason=refused,
            )
        body = remote.fetch(url, self.problem(f"remote $ref {ref!r}", ref_at))
        self._docs[url] = parse_document(url, None, body)
        return url

    def fetch_remote(self) -> None:
        """Fetch every remote document the spec's `$ref`s name, and the ones those name, now:
        later stages (the models step reads them from `remote.mirror_dir()`) may not ask the
        resolver. Only when remote references are allowed; a document without `://` in its
        text has none."""
        if not remote.allowed():
            return
        done: set[str] = set()
        while pending := [d for d in self.documents if d.name not in done]:
            for doc in pending:
                done.add(doc.name)
                if remote.is_remote(doc.name) or b"://" in doc.text:
                    for where, ref in _refs(Where(doc.name, ""), doc.data):
                        file_part = ref.partition("#")[0]
                        if "://" in file_part or (file_part and remote.is_remote(doc.name)):
                            self.remote_document(where, ref, urljoin(doc.name, file_part))

    def locate(self, where: Where) -> tuple[int, int]:
        return self.document(where.file).locate(where.pointer)

    def written_pointer(self, where: Where) -> str:
        """The pointer of `where` in its file as written (a Swagger 2.0 file's own pointer
        for a node of its 3.0 reading)."""
        doc = self.document(where.file)
        if isinstance(doc, ConvertedDocument):
            return doc.original_pointer(where.pointer)
        return where.pointer

    def problem(self, message: str, where: Where) -> Problem:
        line, column = self.locate(where)
        pointer = self.written_pointer(where)
        return Problem(message, file=where.file, line=line, column=column, pointer=pointer)

    def get(self, where: Where, *, origin: Where | None = None, ref: str = "") -> Any:
        """The node at `where`, without following a `$ref` it may be. `origin` is where the
        `$ref` (`ref`) that led here is written, when one did: then a missing node is an
        UnresolvedRef."""
        node = node_at(self.document(where.file).data, where.pointer)
        if node is not MISSING:
            return node
        at = origin or where
        problem = self.problem(f"$ref target #{where.pointer} does not exist in {where.file}", at)
        hint = "fix the $ref or add the component it names"
        if origin is None:
            raise ApiforgeError(problem, hint)
        reason = f"#{where.pointer} does not exist in {where.file}"
        raise UnresolvedRef(problem, hint, at=origin, ref=ref, reason=reason)

    def deref(self, where: Where, node: Any) -> tuple[Where, Any]:
        """Follow `node` (found at `where`) through `$ref`s to what it finally is."""
        seen: list[Where] = []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            ref_at = where.child("$ref")
            target = self.target(where, ref)
            if target in seen:
                chain = " → ".join(f"{w.file}#{w.pointer}" for w in [*seen, target])
                raise UnresolvedRef(
                    self.problem(f"$ref cycle: {chain}", ref_at),
                    "a $ref must end at a real object, not come back to itself",
                    at=ref_at,
                    ref=ref,
                    reason=f"it is a cycle: {chain}",
                )
            seen.append(target)
            node = self.get(target, origin=ref_at, ref=ref)
            where = target
        return where, node

    def target(self, where: Where, ref: str) -> Where:
        """Where a `$ref` written in `where.file` points to."""
        file_part, _, fragment = ref.partition("#")
        name = where.file
        if "://" in file_part or (file_part and remote.is_remote(where.file)):
            name = self.remote_document(where, ref, urljoin(where.file, file_part))
        elif file_part:
            name = _relative(where.file, unquote(file_part))
            if name not in self._docs:
                if not Path(name).is_file() and not gitref.exists(name):
                    ref_at = where.child("$ref")
                    raise UnresolvedRef(
                        self.problem(f"$ref {ref!r}: no such file {name}", ref_at),
                        "fix the relative path of the $ref",
                        at=ref_at,
                        ref=ref,
                        reason=f"file not found: {name}",
                    )
                self.document(name)
        pointer = unquote(fragment)
        if pointer and not pointer.startswith("/"):
            ref_at = where.child("$ref")
            raise UnresolvedRef(
                self.problem(f"$ref {ref!r}: only JSON pointers (#/...) are supported", ref_at),
                "",
                at=ref_at,
                ref=ref,
                reason="only JSON pointers (#/...) are supported",
            )
        return Where(name, pointer)


def _relative(file: str, relative: str) -> str:
    """The file `relative` names, written in `file` (a `REF:PATH` of git's: at that commit)."""
    in_git = gitref.split(file) if not Path(file).exists() else None
    if in_git is not None:
        ref, path = in_git
        return f"{ref}:{os.path.normpath(os.path.join(os.path.dirname(path), relative))}"
    base = os.path.dirname(file) if file != "<stdin>" else ""
    return os.path.normpath(os.path.join(base, relative))


def _refs(where: Where, node: Any) -> Iterator[tuple[Where, str]]:
    """Every string `$ref` under `node` (at `where`), with where its mapping is, in the
    order they are written."""
    todo = [(where, node)]
    while todo:
        at, node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield at, ref
            items = [(at.child(k), v) for k, v in node.items() if isinstance(v, (dict, list))]
        elif isinstance(node, list):
            items = [(at.child(i), v) for i, v in enumerate(node) if isinstance(v, (dict, list))]
        else:
            continue
        todo.extend(reversed(items))  # popped in their order
