"""The models step without the component schemas datamodel-code-generator cannot take.

One schema the library rejects (a shape its own schema model refuses, such as `required: x`
or `type: file`; a `$ref` to itself; a name-map collision) used to stop the whole generation.
`isolate` finds such schemas and runs the library again with each of them replaced by the
empty schema `{}`: every `$ref` to it still resolves (to a class of `Any`), the rest of the
models are what they would have been, and the module says at its end which schemas were left
out and why (`left_out` reads it back, so a cached module tells its story too). The plans then
type those schemas `Any` where they are used, and the warning names each one.

A schema is found from the library's error when it names one (`#/components/schemas/<name>`),
else by bisection: blanking half of the remaining schemas and keeping the half whose blanking
lets the run succeed. Both are bounded (`MAX_RUNS` runs of the library in all), so a spec the
library cannot take for another reason still ends with the library's error.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from generator.errors import ApiforgeError
from generator.ir import Schema, Where
from generator.render.escape import one_line
from generator.spec.located import problem_at

# Runs of the library after the failed one, at most: each is a whole run (~11 s on Stripe's
# 1,300 schemas), and bisecting 1,300 names takes 11.
MAX_RUNS = 14
_NOTE = "# apiforge-left-out: "
_NOTE_LINE = re.compile(r"^# apiforge-left-out: ([A-Za-z0-9]+): (.*)$", re.MULTILINE)
_AT_PATH = re.compile(r"Error at schema path '[^']*': ")
_SCHEMA_PATH = re.compile(r"#/components/schemas/([^'\"\s/#]+)")

Run = Callable[[Mapping[str, Any], Mapping[str, Any]], str]


def isolate(
    subset: Mapping[str, Any], options: Mapping[str, Any], error: Exception, run: Run
) -> str | None:
    """The module of `subset` with the schemas `run` (the library) fails on left out and named
    at its end; None when leaving schemas out does not help within `MAX_RUNS` runs."""
    schemas = _schemas(subset)
    if not schemas:
        return None
    blanked: dict[str, str] = {}  # subset name → why it was left out
    runs = 0
    while runs < MAX_RUNS:
        reason = _first_line(error)
        culprit = _named(error, schemas, blanked)
        if culprit is None:
            found, used = _bisect(subset, options, schemas, blanked, run, MAX_RUNS - runs)
            runs += used
            if found is None:
                return None
            culprit = found
        blanked[culprit] = reason
        runs += 1
        try:
            text = run(_blank(subset, blanked), options)
        except RecursionError:
            raise
        except Exception as exc:
            error = exc
            continue
        return text + _notes(blanked)
    return None


def left_out(text: str) -> dict[str, str]:
    """The schemas (by their name in the library's input) a module says it left out, and why."""
    if _NOTE not in text:  # most modules: one substring search, not a line-anchored regex
        return {}  # over all of Stripe's 1.5 MB (~0.01 s of every regeneration)
    return {m.group(1): m.group(2) for m in _NOTE_LINE.finditer(text)}


def _schemas(subset: Mapping[str, Any]) -> list[str]:
    components = subset.get("components")
    schemas = components.get("schemas") if isinstance(components, Mapping) else None
    return sorted(schemas) if isinstance(schemas, Mapping) else []


def _named(error: Exception, schemas: list[str], blanked: Mapping[str, str]) -> str | None:
    """The first schema the library's error names that is not left out yet."""
    known = set(schemas)
    for match in _SCHEMA_PATH.finditer(str(error)):
        name = unquote(match.group(1))
        if name in known and name not in blanked:
            return name
    return None


def _bisect(
    subset: Mapping[str, Any],
    options: Mapping[str, Any],
    schemas: list[str],
    blanked: Mapping[str, str],
    run: Run,
    budget: int,
) -> tuple[str | None, int]:
    """One schema whose blanking (with half of the others, then fewer) lets the run succeed,
    and the runs it took; (None, runs) when blanking every remaining schema does not."""
    suspects = [name for name in schemas if name not in blanked]
    used = 0

    def succeeds(extra: list[str]) -> bool:
        nonlocal used
        used += 1
        try:
            run(_blank(subset, {**blanked, **dict.fromkeys(extra, "")}), options)
        except RecursionError:
            raise
        except Exception:
            return False
        return True

    if not suspects or not succeeds(suspects):
        return None, used
    while len(suspects) > 1:
        if used >= budget:
            return None, used
        half = suspects[: len(suspects) // 2]
        suspects = half if succeeds(half) else suspects[len(half) :]
    return suspects[0], used


def _blank(subset: Mapping[str, Any], blanked: Mapping[str, str]) -> dict[str, Any]:
    components = dict(subset["components"])
    components["schemas"] = {
        name: ({} if name in blanked else schema) for name, schema in components["schemas"].items()
    }
    return {**subset, "components": components}


def _notes(blanked: Mapping[str, str]) -> str:
    lines = [
        "",
        "# apiforge: these component schemas were left out (datamodel-code-generator could not",
        "# take them); each is a class of Any here and typed Any where the API uses it.",
        *(f"{_NOTE}{name}: {reason}" for name, reason in sorted(blanked.items())),
    ]
    return "\n".join(lines) + "\n"


def _first_line(exc: BaseException) -> str:
    """The error's first line, folded and cut short, safe as the rest of a comment line."""
    lines = str(exc).strip().splitlines()
    # the path names the schema by its name in the library's input, not the spec's: the
    # warning names it at its place in the spec instead
    text = _AT_PATH.sub("", lines[0] if lines else "")
    return one_line(f"{type(exc).__name__}: {text}", limit=300)


__all__ = ["MAX_RUNS", "isolate", "left_out"]


@contextlib.contextmanager
def refs_located(schemas: Mapping[str, Schema]) -> Iterator[None]:
    """Around the models step: when it fails and a component schema's `$ref` names a file
    that does not exist (the library's own error names the file, not the line), the error
    is that `$ref`, at its line."""
    try:
        yield
    except ApiforgeError:
        for schema in schemas.values():
            for where, ref, target in _file_refs(schema.data, schema.where):
                if not os.path.isfile(target):
                    problem = problem_at(where, f"$ref {ref!r}: no such file {target}")
                    raise ApiforgeError(problem, "fix the relative path of the $ref") from None
        raise


def _file_refs(node: Any, where: Where) -> Iterator[tuple[Where, str, str]]:
    """(where, ref, the file it names) of each `$ref` to another local file in `node`."""
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            file_part = ref.partition("#")[0]
            if file_part and "://" not in file_part:
                base = os.path.dirname(where.file)
                target = os.path.normpath(os.path.join(base, unquote(file_part)))
                yield where.child("$ref"), ref, target
        for key, value in node.items():
            if isinstance(value, Mapping | list):
                yield from _file_refs(value, where.child(str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _file_refs(value, where.child(str(index)))
