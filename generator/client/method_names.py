"""What each operation is called on its client resource (`client.customers.sources.list`).

- An operation whose resource comes from its path (`resources.py`: the spec has no tag for it)
  is named by what it does on that resource, as Stainless-generated SDKs name theirs:
  - an action path (`POST /v1/charges/{charge}/capture`, an action on `charges`) → the action
    (`capture`);
  - a path ending in a parameter (an item): GET → `retrieve`, PUT/PATCH/POST → `update`,
    DELETE → `delete`;
  - a path ending in a literal is a collection when another path adds a parameter to it
    (`/customers` beside `/customers/{customer}`), when its GET lists (pagination detected,
    an array, or an envelope of `data`/`items`/…), when its POST answers `201 Created`, or
    when it has no GET: GET → `list`, POST → `create`, PUT/PATCH → `update`, DELETE →
    `delete`; otherwise it is a singleton (`/v1/account`): GET → `retrieve`, POST/PUT/PATCH →
    `update`, DELETE → `delete`;
  - a last segment that is a call, not a thing: a custom method (`/{spec}:rollback`) or a
    phrase led by a verb (`/sendMessage`) → the call (`rollback`, `send_message`);
  - HEAD, OPTIONS and TRACE have no such name.
- A tagged operation keeps snake_case of its operationId (people wrote it, and it means
  something), without the resource's own name where it repeats it (`trimmed_name`):
  `issues/list-for-repo` on `client.issues` → `list_for_repo`, `createPayment` on
  `client.payments` → `create`. So does an untagged one that no rule above names.
- `x-apiforge-method-name: <identifier>` on an operation names it, tagged or not. A value that
  is not a plain identifier (a keyword, a builtin, `_`-led…) is ignored, with a located warning
  (`gaps`).

Collisions fall back, never to a number another operation could shift: the names the spec
states are claimed first, then the derived names that no other operation of the resource wants
and that are not another operation's operationId name; every operation whose name collides
(with another's, with a nested resource, with what every resource class has:
`with_raw_response`, `with_streaming_response` and the modules its annotations use) takes snake_case of its operationId
instead. Only when those collide too (two operationIds with the same snake_case) does one get
`_2`, in spec order, as before. So a method is renamed only when an operation of its own
resource that wants the same name is added.

`list` is a method name although it is a builtin: a resource class that has it spells the
builtin `builtins.list` in its annotations (`class_scope_safe`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import sys
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from generator.ir import Api, Operation, Where
from generator.patterns.pagination import list_body
from generator.render.env import templates_root
from generator.render.fingerprint import code_digest
from generator.render.names import NameAllocator, safe_identifier, snake_case, words
from generator.render.resources import (
    Resource,
    action_paths,
    group_operations,
    is_param,
    path_segments,
)

EXTENSION = "x-apiforge-method-name"
# Module names that annotations inside generated resource classes use: no method may shadow
# them.
CLASS_SCOPE_NAMES = ("models", "params", "httpx", "pydantic", "builtins", "functools")
# What every resource class has beside its methods.
RESOURCE_NAMES = ("with_raw_response", "with_streaming_response")
# Builtins a method may be named after: its class's annotations say `builtins.<name>`.
SHADOWABLE_BUILTINS = frozenset({"list"})

_ITEM = {
    "get": "retrieve",
    "put": "update",
    "patch": "update",
    "post": "update",
    "delete": "delete",
}
_COLLECTION = {
    "get": "list",
    "post": "create",
    "put": "update",
    "patch": "update",
    "delete": "delete",
}
# First words that make a path segment a call (RPC style: `/sendMessage`), not a resource.
# (words that are as often nouns or adjectives, `open`, `log`, `run`, `count`, are not)
_VERBS = frozenset(
    {
        "get",
        "set",
        "send",
        "add",
        "remove",
        "delete",
        "create",
        "update",
        "edit",
        "answer",
        "forward",
        "copy",
        "export",
        "import",
        "kick",
        "ban",
        "unban",
        "leave",
        "join",
        "pin",
        "unpin",
        "promote",
        "restrict",
        "stop",
        "start",
        "upload",
        "download",
        "find",
        "list",
        "check",
        "verify",
        "cancel",
        "approve",
        "reject",
        "execute",
        "validate",
        "generate",
        "reset",
        "refresh",
        "revoke",
        "fetch",
        "submit",
        "rename",
        "restore",
        "enable",
        "disable",
        "register",
        "unregister",
        "subscribe",
        "unsubscribe",
        "invite",
        "accept",
        "decline",
        "assign",
        "unassign",
        "attach",
        "detach",
        "publish",
        "unpublish",
        "resend",
    }
)
_LIST_FIELDS = frozenset({"data", "items", "results", "entries", "records", "values"})


@dataclass(frozen=True)
class MethodName:
    name: str  # the method's name on its resource
    # "extension", "crud", "action", "trimmed" or "operation_id" (also every fallback)
    source: str
    wanted: str = ""  # the name it wanted and could not have ("" when it got it)


@dataclass(frozen=True)
class NameProblem:
    where: Where
    subject: str  # `GET /path`
    what: str


def plain_identifier(name: str) -> bool:
    """A name usable as it is: what `safe_identifier` leaves alone, or a shadowable builtin."""
    return name in SHADOWABLE_BUILTINS or (bool(name) and safe_identifier(name) == name)


def stated_name(op: Operation) -> tuple[str | None, str | None]:
    """(the name `x-apiforge-method-name` states, what is wrong with it); (None, None) when the
    operation has no such extension."""
    if EXTENSION not in op.extensions:
        return None, None
    value = op.extensions[EXTENSION]
    if isinstance(value, str) and value.isascii() and plain_identifier(value):
        return value, None
    return None, (
        f"`{EXTENSION}` {value!r} is not a usable method name (an ASCII identifier that does "
        "not start with `_` and is not a keyword or a builtin other than `list`): it is ignored"
    )


def _collections(operations: Sequence[Operation], api: Api) -> frozenset[str]:
    """Paths ending in a literal that hold many things (see the module docstring)."""
    by_path: dict[str, list[Operation]] = {}
    for op in operations:
        by_path.setdefault(op.path, []).append(op)
    with_items = {  # `/a/b` of `/a/b/{id}`, `/a/b/{id}/c`…: paths that hold items
        tuple(parts[:n])
        for parts in (path_segments(p) for p in by_path)
        for n in range(1, len(parts))
        if is_param(parts[n])
    }
    found = set()
    for path, ops in by_path.items():
        parts = path_segments(path)
        if not parts or is_param(parts[-1]):
            continue
        get = next((op for op in ops if op.method == "get"), None)
        creates = any(op.method == "post" and op.response("201") for op in ops)
        if get is None or creates or tuple(parts) in with_items or _lists(get, api):
            found.add(path)
    return frozenset(found)


def _lists(op: Operation, api: Api) -> bool:
    """Whether a GET answers with many things: paginated, an array, or an envelope whose items
    are under a usual name (an object with some other array, `/charges/{charge}/dispute`, is
    one thing)."""
    if op.patterns.pagination is not None:
        return True
    found = list_body(op, api)
    return found is not None and (not found[0] or found[0][0].lower() in _LIST_FIELDS)


def _call(segment: str) -> str:
    """The call a last path segment names, "" when it names a thing: a custom method
    (`{spec}:deleteRevision`, `:rollback`) or a verb phrase (`getMe`, `send_message`)."""
    if ":" in segment:
        return "_".join(words(segment.rsplit(":", 1)[1]))
    said = words(segment)
    return "_".join(said) if len(said) > 1 and said[0] in _VERBS else ""


def derived_name(
    op: Operation, *, actions: frozenset[str], collections: frozenset[str]
) -> tuple[str, str]:
    """What an operation on a path-derived resource does to it, and whether that is a "crud"
    name or an "action"'s; ("", "") when nothing fits."""
    parts = path_segments(op.path)
    call = _call(parts[-1]) if parts else ""
    if op.path in actions or call:
        action = call or "_".join(words(parts[-1]))
        return (action, "action") if plain_identifier(action) else ("", "")
    if parts and is_param(parts[-1]):
        table = _ITEM
    else:
        table = _COLLECTION if op.path in collections else _ITEM  # a singleton is like an item
    return (table[op.method], "crud") if op.method in table else ("", "")


def _fallback(op: Operation) -> str:
    return snake_case(op.id, fallback="operation")


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def trimmed_name(op: Operation, resource: str) -> str:
    """The operationId's name without the resource's own name where it repeats it: as a
    prefix (`issues/list-for-repo` on `issues` → `list_for_repo`, `repos/get` → `get`) or
    else as a suffix (`createPayment` on `payments` → `create`, `listPayments` → `list`);
    "" when it does not repeat it or nothing usable is left."""
    name = _fallback(op)
    for word in dict.fromkeys((resource, _singular(resource))):
        if not word:
            continue
        for left in (name.removeprefix(word + "_"), name.removesuffix("_" + word)):
            if left != name and plain_identifier(left) and not left[0].isdigit():
                return left
    return ""


def name_methods(
    operations: Sequence[Operation],
    wanted: Mapping[str, tuple[str, str]],
    taken: Iterable[str],
) -> dict[str, MethodName]:
    """One resource's method names, by operation id. `wanted`: operation id → (name, source)
    for those that want something else than their operationId's name; `taken`: names no
    method may have."""
    reserved = frozenset(taken)
    stated = [op.id for op in operations if wanted.get(op.id, ("", ""))[1] == "extension"]
    derived = [op.id for op in operations if op.id in wanted and op.id not in stated]
    claimed: dict[str, str] = {}  # name → operation id
    for tier in (stated, derived):
        counts: dict[str, int] = {}
        for op_id in tier:
            counts[wanted[op_id][0]] = counts.get(wanted[op_id][0], 0) + 1
        for op_id in tier:
            name = wanted[op_id][0]
            if counts[name] == 1 and name not in reserved and name not in claimed:
                claimed[name] = op_id
    by_id = {op_id: name for name, op_id in claimed.items()}
    while True:  # a derived name yields to the operationId name of any operation without one
        own = {_fallback(op) for op in operations if op.id not in by_id}
        clashes = [i for i, n in by_id.items() if wanted[i][1] != "extension" and n in own]
        if not clashes:
            break
        for op_id in clashes:
            del claimed[by_id.pop(op_id)]
    allocator = NameAllocator((*reserved, *claimed))
    result = {}
    for op in operations:
        if op.id in by_id:
            result[op.id] = MethodName(by_id[op.id], wanted[op.id][1])
        else:
            want = wanted.get(op.id, ("", ""))[0]
            result[op.id] = MethodName(
                allocator.allocate(op.id, _fallback(op)), "operation_id", wanted=want
            )
    return result


@dataclass(frozen=True)
class ClientMethods:
    """The client's resources and every operation's method name."""

    resources: list[Resource]
    names: dict[str, MethodName]  # operation id → its name
    problems: list[NameProblem]

    def paths(self) -> dict[str, str]:
        """Operation id → `client.<resource>.<method>`, for every operation."""
        return {
            op.id: ".".join(("client", *r.path, self.names[op.id].name))
            for r in self.resources
            for op in r.operations
        }


#: The last answer of `client_methods`, with what it was for: planning the client and
#: listing its gaps ask for the same one within a run (0.08 s on Stripe each).
_last: tuple[Api, frozenset[str], ClientMethods] | None = None


def client_methods(api: Api, reserved: frozenset[str] | None = None) -> ClientMethods:
    """The client's grouping (`resources.group_operations`; `reserved`: the client's own
    attribute names, `runtime_reserved()` by default) and the names of its methods."""
    global _last
    if reserved is None:
        reserved = runtime_reserved()
    if _last is not None and _last[0] is api and _last[1] == reserved:
        return _last[2]
    _last = (api, reserved, _client_methods(api, reserved))
    return _last[2]


def _client_methods(api: Api, reserved: frozenset[str]) -> ClientMethods:
    nested = frozenset({*CLASS_SCOPE_NAMES, *RESOURCE_NAMES})
    resources = group_operations(api, reserved=reserved | nested, reserved_nested=nested)
    untagged = [op for op in api.operations if not op.tags]
    actions = action_paths(untagged)
    collections = _collections(untagged, api)
    names: dict[str, MethodName] = {}
    problems: list[NameProblem] = []
    for resource in resources:
        wanted: dict[str, tuple[str, str]] = {}
        for op in resource.operations:
            stated, problem = stated_name(op)
            if problem:
                problems.append(NameProblem(op.where.child(EXTENSION), op.label, problem))
            if stated is not None:
                wanted[op.id] = (stated, "extension")
            else:
                name, kind = ("", "")
                if not op.tags:
                    name, kind = derived_name(op, actions=actions, collections=collections)
                if not name and resource.path:
                    name, kind = trimmed_name(op, resource.path[-1]), "trimmed"
                if name:
                    wanted[op.id] = (name, kind)
        taken = (*CLASS_SCOPE_NAMES, *RESOURCE_NAMES, *resource.children)
        named = name_methods(resource.operations, wanted, taken)
        for op in resource.operations:
            method = named[op.id]
            if method.wanted and wanted[op.id][1] == "extension":
                problems.append(
                    NameProblem(
                        op.where.child(EXTENSION),
                        op.label,
                        f"`{EXTENSION}` {method.wanted!r} collides with another name of "
                        f"`client.{'.'.join(resource.path)}`: the method is `{method.name}`",
                    )
                )
        names.update(named)
    return ClientMethods(resources, names, problems)


def runtime_reserved() -> frozenset[str]:
    """Public names of the runtime's client base classes (methods, properties, attributes)."""
    return _reserved_in((templates_root() / "client" / "runtime" / "_base.py").read_text())


_reserved_memo: dict[str, frozenset[str]] = {}


def _reserved_in(source: str) -> frozenset[str]:
    """`runtime_reserved` of the module `source`, kept between runs (`reserved1/`, by the
    source, apiforge's code and Python's version: parsing it was ~0.02 s of every run)."""
    from generator.spec.load import remembered

    material = f"reserved1\0{sys.version}\0{code_digest()}\0{source}"
    key = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
    found = remembered(_reserved_memo, "reserved1", key, frozenset, lambda: _parse_reserved(source))
    assert found is not None  # `_parse_reserved` always gives one
    return found


def _parse_reserved(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in (
            "_BaseClient",
            "SyncAPIClient",
            "AsyncAPIClient",
        ):
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                ):
                    names.add(item.attr)
    return frozenset(n for n in names if not n.startswith("_"))


@functools.lru_cache(maxsize=4096)
def class_scope_safe(type_expr: str, shadowed: frozenset[str]) -> str:
    """`type_expr` with each builtin in `shadowed` (method names of the class whose signature
    it is in) spelled `builtins.<name>`: inside the class body the bare name is the method.
    Tokens, not text, are rewritten, so string literals (`Literal["list"]`) stay as they are."""
    if not any(name in type_expr for name in shadowed):
        return type_expr
    lines = type_expr.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    offsets = []
    previous = ""
    for token in tokenize.generate_tokens(io.StringIO(type_expr).readline):
        if token.type == tokenize.NAME and token.string in shadowed and previous != ".":
            offsets.append(starts[token.start[0] - 1] + token.start[1])
        previous = token.string
    for offset in reversed(offsets):
        type_expr = f"{type_expr[:offset]}builtins.{type_expr[offset:]}"
    return type_expr


__all__ = [
    "EXTENSION",
    "ClientMethods",
    "MethodName",
    "NameProblem",
    "class_scope_safe",
    "client_methods",
    "derived_name",
    "name_methods",
    "stated_name",
]
