"""The server's models built on first use: `BaseModel` and `RootModel` from the runtime
(`runtime/model_bases.py`, pydantic's with `defer_build`), and no `Model.model_rebuild()`
at the end of the module, which would build every model at import.

Built at import, Stripe's 1,800 models cost the server ~10 s of CPU before its first answer;
deferred, each route's adapter builds what the route names (see the runtime module).
"""

from __future__ import annotations

import ast
import re

_DEFERRED = ("BaseModel", "RootModel")
_REBUILD = re.compile(r"^[A-Za-z_]\w*\.model_rebuild\(\)\n", re.MULTILINE)


def deferred_models(text: str) -> str:
    """The models module `text` with its bases taken from the runtime (unchanged when it is
    not a module that parses or does not import them from pydantic)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text  # the plans report an unusable module themselves
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and node.module == "pydantic"):
            continue
        moved = [a.name for a in node.names if a.name in _DEFERRED and a.asname is None]
        if not moved:
            return text
        assert node.end_lineno is not None
        lines = text.split("\n")
        kept = ", ".join(
            f"{a.name} as {a.asname}" if a.asname else a.name
            for a in node.names
            if a.name not in moved
        )
        statement = (f"from pydantic import {kept}\n" if kept else "") + (
            f"from .runtime.model_bases import {', '.join(moved)}"
        )
        lines[node.lineno - 1 : node.end_lineno] = [statement]
        return _REBUILD.sub("", "\n".join(lines))
    return text
