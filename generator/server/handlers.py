"""The user's handler modules and verifier, as regeneration finds them: the operations still
without an implementation (`missing_handlers`, `missing_verifiers`) and methods left in a
module that no longer owns them (`misplaced_handlers`).

Handler modules (`handlers/<resource>.py`) are the user's code: written once, never
overwritten, never deleted. When the grouping of operations changes (a tag added or renamed,
a spec that gains tags, a new resource split off), an implemented method can be left in a
module that no longer owns its operation: main.py wires the operation to a fresh stub in its
new module, and the user's code is silently not called. `misplaced_handlers` finds each such
method and says where it now belongs; nothing is moved or deleted.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from generator.log import logger
from generator.render.written import Stamp, seen_settled, stamp

if TYPE_CHECKING:
    from generator.server.plan_types import OperationPlan, ServerPlan
    from generator.server.security import SchemePlan

_log = logger()


@dataclass(frozen=True)
class Misplaced:
    module: str  # handlers/<module>.py, where the method is
    method: str
    owners: tuple[str, ...]  # "handlers/<module>.py (`<Class>`)" that own it now; () none
    label: str  # the operation's `GET /path`, "" when no operation has that method any more

    def message(self) -> str:
        where = f"{self.module}: `{self.method}`" + (f" ({self.label})" if self.label else "")
        if self.owners:
            return (
                f"warning: {where} now belongs in {' or '.join(self.owners)}; this module's "
                "method is no longer called: move it there (apiforge never deletes your code)"
            )
        return (
            f"warning: {where} matches no operation any more and is no longer called "
            "(apiforge never deletes your code)"
        )


def _handler_modules(folder: Path) -> dict[str, tuple[list[str], frozenset[str]]]:
    """Each module of `folder` (by name): the methods of its classes that look like handlers
    (`(self, ctx, ...)`) and are implemented (not only `raise NotImplementedError`), in file
    order, and every method it implements (`_parsed`). Parsing every module of a big API
    takes a while: the answers are kept between runs, one cache entry for the folder (a
    module each was ~290 cache reads on Stripe), each served again while its module's bytes
    (and apiforge's code) are the same. A module whose size and modification time are those
    seen by the last run, well before that run looked, is not even read again (as git trusts
    its index: a file changed within the clock's granularity of that look is read)."""
    import hashlib
    import os
    import time

    from generator.render.fingerprint import code_digest
    from generator.spec.load import cache_get, cache_put

    kind = "handler-modules3"
    material = f"{kind}\0{code_digest()}\0{folder.resolve()}"
    store = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
    looked = time.time_ns()
    cached = cache_get(kind, store)
    previous: dict[str, tuple[Stamp, bytes, list[str], frozenset[str]]] = {}
    last_look = 0  # when the last run looked at the folder
    if isinstance(cached, tuple) and len(cached) == 2 and isinstance(cached[1], dict):
        last_look, previous = cached
    kept: dict[str, tuple[Stamp, bytes, list[str], frozenset[str]]] = {}
    read = False  # a module read: its stamp is kept with this look's time, to trust later
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # no folder (yet)
        entries = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".py"):  # as glob("*.py")
            continue
        name = entry.name[:-3]
        hit = previous.get(name)
        try:
            stat = entry.stat()
            if hit is not None and seen_settled(stat, hit[0], last_look):
                kept[name] = hit
                continue
            source = Path(entry.path).read_bytes()
        except OSError:  # a directory, or gone meanwhile
            continue
        read = True
        digest = hashlib.sha256(source).digest()
        if hit is not None and hit[1] == digest:
            kept[name] = (stamp(stat), *hit[1:])
        else:
            kept[name] = (stamp(stat), digest, *_parsed(source))
    if read or kept.keys() != previous.keys():
        cache_put(kind, store, (looked, kept))
    return {name: (methods, implemented) for name, (_, _, methods, implemented) in kept.items()}


def _parsed(source: bytes) -> tuple[list[str], frozenset[str]]:
    """From one parse of a handler module: the methods of its classes that look like handlers
    (`(self, ctx, ...)`) and are implemented (not only `raise NotImplementedError`), in file
    order; and every method its classes implement (not stubs)."""
    try:
        tree = ast.parse(source.decode("utf-8"))
    except (SyntaxError, ValueError):
        return [], frozenset()
    handlers = [
        item.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, ast.AsyncFunctionDef | ast.FunctionDef)
        and [a.arg for a in item.args.args[:2]] == ["self", "ctx"]
        and not _is_stub(item)
    ]
    implemented = {
        item.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for item in node.body
        if isinstance(item, ast.AsyncFunctionDef | ast.FunctionDef) and not _is_stub(item)
    }
    return handlers, frozenset(implemented)


HandlerModules = dict[str, tuple[list[str], frozenset[str]]]


def handler_modules(plan: ServerPlan, out_dir: Path | str) -> HandlerModules:
    """What `misplaced_handlers` and `missing_handlers` read of the handler modules: read it
    once for both (`modules=`) when nothing writes them in between."""
    return _handler_modules(Path(out_dir) / plan.package / "handlers")


def misplaced_handlers(
    plan: ServerPlan, out_dir: Path | str, *, modules: HandlerModules | None = None
) -> list[Misplaced]:
    """Every implemented handler method in `handlers/*.py` whose operation another module owns
    now (or that no operation has any more), each also logged as a warning."""
    owners: dict[str, list[tuple[str, OperationPlan]]] = {}
    for tag in plan.handler_tags:
        for op in tag.handler_operations:
            owners.setdefault(op.name, []).append((tag.module, op))
    classes = {t.module: t.handler_class for t in plan.handler_tags}
    found: list[Misplaced] = []
    if modules is None:
        modules = handler_modules(plan, out_dir)
    for module, (methods, _) in modules.items():
        if module == "__init__":
            continue
        for method in methods:
            owned = owners.get(method, [])
            if any(m == module for m, _ in owned):
                continue
            found.append(
                Misplaced(
                    module=f"handlers/{module}.py",
                    method=method,
                    owners=tuple(f"handlers/{m}.py (`{classes[m]}`)" for m, _ in owned),
                    label=owned[0][1].op.label if owned else "",
                )
            )
    for item in found:
        _log.warning("%s", item.message())
    return found


__all__ = ["HandlerModules", "Misplaced", "handler_modules", "misplaced_handlers"]


@dataclass(frozen=True)
class MissingHandler:
    module: str  # handlers/<module>.py
    method: str
    label: str  # GET /path
    operation_id: str


# --- handlers that are still missing ----------------------------------------------------


def _is_stub(node: ast.AsyncFunctionDef | ast.FunctionDef) -> bool:
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return not body
    exc = body[0].exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def missing_handlers(
    plan: ServerPlan, out_dir: Path | str, *, modules: HandlerModules | None = None
) -> list[MissingHandler]:
    """Operations whose handler module does not implement them (no method, or a method that
    only raises NotImplementedError), in tag and operation order."""
    missing: list[MissingHandler] = []
    if modules is None:
        modules = handler_modules(plan, out_dir)
    for tag in plan.handler_tags:
        implemented = modules[tag.module][1] if tag.module in modules else frozenset()
        for op in tag.handler_operations:
            if op.name not in implemented:
                missing.append(
                    MissingHandler(f"handlers/{tag.module}.py", op.name, op.op.label, op.op.id)
                )
    return missing


def missing_verifiers(plan: ServerPlan, out_dir: Path | str) -> list[SchemePlan]:
    """Security schemes whose method in the user's `verifier.py` is missing or a stub: the
    operations that need them answer 501 (fail closed)."""
    checkable = [s for s in plan.schemes if s.kind]
    if not checkable:
        return []
    try:
        implemented = _implemented((Path(out_dir) / plan.package / "verifier.py").read_bytes())
    except OSError:
        implemented = frozenset()
    return [s for s in checkable if s.method not in implemented]


def _implemented(source: bytes) -> frozenset[str]:
    """The methods a module implements (not stubs). Parsing a big module takes a while, so
    the answer is cached by the module's bytes and apiforge's code."""
    import hashlib

    from generator.render.fingerprint import code_digest
    from generator.spec.load import cache_get, cache_put

    key = hashlib.sha256(code_digest().encode() + b"\0" + source).hexdigest()
    hit = cache_get("handlers1", key)
    if isinstance(hit, frozenset):
        return hit
    result = _parsed(source)[1]
    cache_put("handlers1", key, result)
    return result
