"""The spec's `servers`: URL templates whose variables a client fills in.

Public API:

- `ServerVariable(default, enum=(), description="")`;
- `ServerURL(template, variables={}, description="")` and `.url(values)`: the template with
  each `{name}` replaced by `values[name]` when it is given (not None), else by the default.
  A value outside the variable's `enum`, or a value for a variable this server does not have,
  raises `ValueError` naming the choices — before anything is sent.

Generated clients list the spec's servers as `SERVERS` and take `server=` (an index into it,
the first by default) and one keyword per variable; an explicit `base_url=` wins over all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_VARIABLE = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class ServerVariable:
    default: str
    enum: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True, slots=True)
class ServerURL:
    template: str
    variables: Mapping[str, ServerVariable] = field(default_factory=dict[str, ServerVariable])
    description: str = ""

    def url(self, values: Mapping[str, str | None] | None = None) -> str:
        """The URL with the given values (None: the default) in place of the variables."""
        given = {k: v for k, v in (values or {}).items() if v is not None}
        unknown = sorted(set(given) - set(self.variables))
        if unknown:
            has = ", ".join(f"`{name}`" for name in self.variables) or "none"
            raise ValueError(
                f"the server {self.template} has no variable {', '.join(unknown)} "
                f"(its variables: {has})"
            )
        chosen: dict[str, str] = {}
        for name, variable in self.variables.items():
            value = str(given.get(name, variable.default))
            if variable.enum and value not in variable.enum:
                raise ValueError(
                    f"{value!r} is not a value of the server variable `{name}` "
                    f"(one of: {', '.join(variable.enum)})"
                )
            chosen[name] = value
        return _VARIABLE.sub(lambda m: chosen.get(m.group(1), m.group(0)), self.template)


def select_server(
    servers: tuple[ServerURL, ...], index: int, values: Mapping[str, str | None]
) -> str:
    """`servers[index]`'s URL with `values` (see `ServerURL.url`)."""
    if not 0 <= index < len(servers):
        raise ValueError(f"server={index}: the spec lists {len(servers)} server(s), from 0")
    return servers[index].url(values)


__all__ = ["ServerURL", "ServerVariable", "select_server"]
