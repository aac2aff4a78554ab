"""The client plan's part for the spec's `servers`: which base URLs the client knows.

Every server whose URL is absolute (`http(s)://`, variables allowed) is listed in the generated
`SERVERS`, in spec order; the default base URL is the first one with its variables' defaults.
The constructor takes `server=` (an index into `SERVERS`) when there are several, and one
keyword argument per variable (the union over the servers, first use first; typed as a
`Literal` of its `enum` when every server that has it agrees on one); `base_url=` wins over
them. A server the client cannot use (a relative URL, another scheme) is named in a warning,
and when it is the first one the warning says which server became the default instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.ir import Api, Server
from generator.log import logger
from generator.render.escape import py_literal, py_string
from generator.render.names import NameAllocator, snake_case

_log = logger()
_ABSOLUTE = re.compile(r"https?://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%{}-]*")
_VARIABLE = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class VariablePlan:
    name: str  # as the spec spells it
    argument: str  # the constructor's keyword
    type: str  # `Literal["eu", "us"]` or `str`
    description: str
    default: str  # the first server's that has it
    enum: tuple[str, ...]  # () when any value goes
    example: str  # a Python expression for the README


@dataclass(frozen=True)
class ServerPlan:
    expression: str  # `ServerURL(...)`
    template: str
    description: str


@dataclass(frozen=True)
class ServersPlan:
    servers: tuple[ServerPlan, ...]
    variables: tuple[VariablePlan, ...]
    default_url: str | None

    @property
    def choosable(self) -> bool:
        """Whether the constructor resolves `base_url` from `server=` and variables (else it
        is `DEFAULT_BASE_URL` or required)."""
        return len(self.servers) > 1 or bool(self.variables)


def _fill(server: Server) -> str:
    defaults = {v.name: v.default for v in server.variables}
    return _VARIABLE.sub(lambda m: defaults.get(m.group(1), m.group(0)), server.url)


def usable(server: Server) -> bool:
    """An absolute http(s) URL once its variables have their defaults, every `{...}` of it a
    declared variable."""
    names = set(_VARIABLE.findall(server.url))
    declared = {v.name for v in server.variables}
    return bool(_ABSOLUTE.fullmatch(server.url)) and names <= declared and "{" not in _fill(server)


def plan_servers(api: Api, taken: Iterable[str]) -> ServersPlan:
    """`taken`: constructor arguments the variables' keywords must avoid."""
    kept = [s for s in api.servers if usable(s)]
    for index, server in enumerate(api.servers):
        if server in kept:
            continue
        instead = f"; the default base URL is {_fill(kept[0])!r}" if index == 0 and kept else ""
        _log.warning(
            "warning: servers[%d] %r is not an absolute http(s) URL the client can use%s",
            index,
            server.url,
            instead,
        )
    allocator = NameAllocator(taken)
    enums: dict[str, set[tuple[str, ...]]] = {}
    described: dict[str, str] = {}
    defaults: dict[str, str] = {}
    for server in kept:
        for variable in server.variables:
            enums.setdefault(variable.name, set()).add(variable.enum)
            described.setdefault(variable.name, variable.description)
            defaults.setdefault(variable.name, variable.default)
    variables = []
    for name, kinds in enums.items():
        enum = next(iter(kinds)) if len(kinds) == 1 else ()  # servers disagree: any string
        literal = ", ".join(py_literal(e) for e in enum)
        variables.append(
            VariablePlan(
                name=name,
                argument=allocator.allocate(name, snake_case(name, fallback="variable")),
                type=f"Literal[{literal}]" if enum else "str",
                description=described[name],
                default=defaults[name],
                enum=enum,
                example=py_string(enum[-1] if enum else defaults[name]),
            )
        )
    return ServersPlan(
        servers=tuple(ServerPlan(_expression(s), s.url, s.description) for s in kept),
        variables=tuple(variables),
        default_url=_fill(kept[0]) if kept else None,
    )


def _expression(server: Server) -> str:
    parts = [py_string(server.url)]
    if server.variables:
        entries = []
        for v in server.variables:
            args = [py_string(v.default)]
            if v.enum:
                items = ", ".join(py_string(e) for e in v.enum)
                args.append(f"({items},)" if len(v.enum) == 1 else f"({items})")
            entries.append(f"{py_string(v.name)}: ServerVariable({', '.join(args)})")
        parts.append("{" + ", ".join(entries) + "}")
    if server.description:
        parts.append(f"description={py_string(server.description)}")
    return f"ServerURL({', '.join(parts)})"


__all__ = ["ServersPlan", "VariablePlan", "plan_servers", "usable"]
