"""Cheaper cache keys of a regeneration, still changing with every change they stand for."""

from __future__ import annotations

import copy
from typing import Any

from generator.models.inline import inline_digest

DOC: dict[str, Any] = {
    "paths": {
        "/a": {
            "post": {
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"n": {"default": 1}}}
                        }
                    }
                }
            }
        }
    }
}
KEY = "#/paths/~1a/post/requestBody/content/application~1json/schema"


def test_the_inline_digest_follows_the_lifted_data_and_nothing_else() -> None:
    names = {"Thing": "Thing", KEY: "PostARequest"}
    first = inline_digest(DOC, names)
    assert inline_digest(copy.deepcopy(DOC), dict(names)) == first
    for value in (True, 1.0, "1", 2, None):  # equal in Python (True == 1.0 == 1), not here
        edited = copy.deepcopy(DOC)
        schema = edited["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]
        schema["schema"]["properties"]["n"]["default"] = value
        assert inline_digest(edited, names) != first, value
    assert inline_digest(DOC, {"Thing": "Thing"}) != first  # no lifted schema any more
    unusual = copy.deepcopy(DOC)  # a value marshal cannot write: still a digest
    unusual["paths"]["/a"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "x-when"
    ] = object.__new__(type("Opaque", (), {"__repr__": lambda self: "<opaque>"}))
    assert inline_digest(unusual, names) != first
