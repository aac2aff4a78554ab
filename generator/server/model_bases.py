"""The server's models built on first use: `BaseModel` and `RootModel` from the runtime
(`runtime/model_bases.py`, pydantic's with `defer_build`), and no `Model.model_rebuild()`
at the end of the module, which would build every model at import.

Built at import, Stripe's 1,800 models cost the server ~10 s of CPU before its first answer;
deferred, each route's adapter builds what the route names (see the runtime module).
"""

from __future__ import annotations

import re

from generator.models.format_checks import import_from_runtime

_REBUILD = re.compile(r"^[A-Za-z_]\w*\.model_rebuild\(\)\n", re.MULTILINE)


def deferred_models(text: str) -> str:
    """The models module `text` with its bases taken from the runtime (unchanged when it is
    not a module that parses or does not import them from pydantic)."""
    moved = import_from_runtime(text, ("BaseModel", "RootModel"), "model_bases")
    return text if moved == text else _REBUILD.sub("", moved)
