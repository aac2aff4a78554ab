"""JSON pointers into parsed data: tokens to mapping keys and back, the node at a pointer."""

from __future__ import annotations

from typing import Any


def pointer_token(key: str) -> str:
    """A mapping key as a JSON pointer token."""
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def unescape(token: str) -> str:
    """A JSON pointer token as the mapping key it names (`pointer_token` undone)."""
    return token.replace("~1", "/").replace("~0", "~")


MISSING: Any = object()  # what `node_at` gives for a pointer to nothing


def node_at(data: Any, pointer: str) -> Any:
    """The node at the JSON pointer `pointer` ("" or "/a/0/b") of `data`, or `MISSING`."""
    node = data
    for raw in pointer[1:].split("/") if pointer else ():
        token = unescape(raw)
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return MISSING
    return node
