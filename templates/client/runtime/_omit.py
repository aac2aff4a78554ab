"""Keyword arguments that were not given: `omit`, and the body a method builds from them.

- `omit` (of type `Omit`): the default of a keyword argument that is left out of the request
  when not given, so that `None` stays a value (sent as JSON `null`);
- `body_of(body, members, required=...)`: the request body of a method that takes either the
  whole body (`body=`) or its members as keyword arguments: `body` when given (then no member
  may be), else the given members by wire name (None when none is given and the body is
  optional).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final


@final
class Omit:
    """The type of `omit`: "not given" (falsy, one instance)."""

    _instance: Omit | None = None

    def __new__(cls) -> Omit:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "omit"


omit: Final = Omit()


def body_of(body: Any, members: Mapping[str, Any], *, required: bool) -> Any:
    """The body to send: `body` if given, else the members given (see the module)."""
    given = {name: value for name, value in members.items() if value is not omit}
    if body is not omit:
        if given:
            names = ", ".join(sorted(given))
            raise TypeError(f"pass either body= or its members as arguments, not both ({names})")
        return body
    if given or required:
        return given
    return None
