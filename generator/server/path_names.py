"""Path variables named as the spec names them: the route keeps a variable's wire name and
the endpoint reads it by alias, so a refused value is located as the caller wrote it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from generator.ir import Operation
from generator.render.escape import py_string
from generator.server.plan_types import ParamPlan

_TEMPLATE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def aliased_path_names(
    op: Operation, params: Sequence[ParamPlan], reserved: Sequence[str]
) -> set[str]:
    """The path variables the route keeps under their wire names (the endpoint reads them by
    alias), so that a refused value is located as the spec names it (`paymentId`, not
    `payment_id`). Not: names Starlette cannot route by, a variable the path repeats, or a
    name another endpoint argument has (FastAPI would take that argument for the variable)."""
    variables = re.findall(r"\{([^{}/]*)\}", op.path)
    taken = {p.name for p in params} | set(reserved)
    return {
        p.wire
        for p in params
        if p.location == "path"
        and p.wire != p.name
        and _TEMPLATE_NAME.fullmatch(p.wire)
        and variables.count(p.wire) == 1
        and p.wire not in taken
        and not p.wire.startswith("_")
    }


def wire_named_path(
    op: Operation, params: list[ParamPlan], reserved: Sequence[str]
) -> tuple[ParamPlan, ...]:
    """The path parameters the route names by wire name, read by their alias."""
    aliased = aliased_path_names(op, params, reserved)

    def with_alias(p: ParamPlan) -> ParamPlan:
        alias = f"alias={py_string(p.wire)}"
        if "Path()" in p.annotation:
            return dataclasses.replace(
                p, annotation=p.annotation.replace("Path()", f"Path({alias})", 1)
            )
        return dataclasses.replace(
            p, annotation=p.annotation.replace("Path(", f"Path({alias}, ", 1)
        )

    return tuple(with_alias(p) if p.location == "path" and p.wire in aliased else p for p in params)
