"""Warnings that name the spec node they are about, as `file:line:column (#pointer)`.

Rendering happens after loading, from the IR, which records `Where` (file and JSON pointer)
but not lines: lines come from the source map of the last spec `load_spec` read, built only
when a warning is actually given. A node of a file that spec did not read (a plan built from
a hand-made `Api`) is named by file and pointer alone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from generator.errors import Problem
from generator.ir import Where

if TYPE_CHECKING:
    from generator.spec.refs import Resolver

_log = logging.getLogger("apiforge")
_last: list[Resolver] = []  # the resolver of the spec loaded last (one at most)
_said: set[str] = set()  # the warnings given since then: a plan made twice says each once


def remember(resolver: Resolver) -> None:
    """Locate later warnings in the files `resolver` read (`load_spec` calls this)."""
    _last[:] = [resolver]
    _said.clear()


def problem_at(where: Where, message: str) -> Problem:
    """`message` about the node at `where`, with its line when the loaded spec has the file."""
    for resolver in _last:
        if any(doc.name == where.file for doc in resolver.documents):
            try:
                return resolver.problem(message, where)
            except Exception:  # a pointer the source map cannot follow: file and pointer only
                break
    return Problem(message, file=where.file, pointer=where.pointer)


def warn_at(where: Where, message: str) -> None:
    """Say `message` as a warning that names `where` (file:line:column and pointer), once
    per loaded spec."""
    text = problem_at(where, message).render()
    if text not in _said:
        _said.add(text)
        _log.warning("warning: %s", text)


__all__ = ["problem_at", "remember", "warn_at"]
