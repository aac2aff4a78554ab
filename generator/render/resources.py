"""Which resource each operation belongs to: the grouping the client's resource modules and the
server's router and handler modules share.

- A tagged operation belongs to the resource of its first tag (`payments`): snake_case of the
  tag; two tags with the same snake_case get `_2`, `_3`… in sorted tag order.
- An untagged operation belongs to a resource derived from its path: the literal segments
  after any version prefix (`/v1/customers/{customer}/sources` → `customers.sources`), nested
  resources being attributes of their parent. A last literal segment right after a parameter,
  on a path that only answers POST and that no other path extends, is an action on the
  resource it follows (`/v1/charges/{charge}/capture` → `charges`), not a resource of its own;
  so is a last literal segment after a collection's path (one with items), on a path with one
  operation that no other path extends (`GET /v1/customers/search` → `customers`), or after
  any other path when that operation is a POST (`POST /v1/apps/secrets/delete`).
  A path with no literal segment belongs to `default`.
- Every resource has a flat module name (its path joined by `_`), unique among all resources.

Names are pure functions of the spec's operations, sorted, so regeneration is deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.ir import Api, Operation
from generator.render.names import NameAllocator, pascal_case, safe_identifier, snake_case

# `v1`, `v2beta1`, `v1.2`, `2023-10-01`: a version prefix, not a resource
_VERSION = re.compile(r"v\d+([._]\d+)*([a-z]+\d*)?|\d{4}-\d{2}-\d{2}", re.IGNORECASE)
_MAX_MODULE = 64  # characters of a module (file) name


@dataclass(frozen=True)
class Resource:
    path: tuple[str, ...]  # attribute names from the client: ("customers", "sources")
    module: str  # flat module name, unique among the resources: "customers_sources"
    pascal: str  # class-name stem: "CustomersSources"
    label: str  # what it groups, for docstrings: a tag, or a path
    operations: tuple[Operation, ...]  # in spec order
    children: tuple[str, ...] = ()  # attribute names of its nested resources, sorted

    @property
    def attribute(self) -> str:
        return self.path[-1]


def is_param(segment: str) -> bool:
    return segment.startswith("{") and segment.endswith("}")


@functools.lru_cache(maxsize=4096)
def path_segments(path: str) -> tuple[str, ...]:
    """A path's segments after any version prefix (asked ~2,000 times per tree on Stripe's
    ~300 paths: kept)."""
    parts = tuple(s for s in path.split("/") if s)
    while parts and not is_param(parts[0]) and _VERSION.fullmatch(parts[0]):
        parts = parts[1:]
    return parts


def action_paths(operations: Sequence[Operation]) -> frozenset[str]:
    """Paths whose last literal segment is an action on the resource before it: a POST after
    an item (`/charges/{charge}/capture`), or the one operation of a path that ends a
    collection's path with a word (`GET /customers/search`, `POST /secrets/delete`). The
    last answer is kept: the client asks twice for the same operations."""
    global _last_actions
    asked = tuple((op.path, op.method) for op in operations)
    if _last_actions is None or _last_actions[0] != asked:
        _last_actions = (asked, _action_paths(operations))
    return _last_actions[1]


_last_actions: tuple[tuple[tuple[str, str], ...], frozenset[str]] | None = None


def _action_paths(operations: Sequence[Operation]) -> frozenset[str]:
    methods: dict[str, set[str]] = {}
    for op in operations:
        methods.setdefault(op.path, set()).add(op.method.lower())
    segments = {p: path_segments(p) for p in methods}
    extended = {tuple(parts[:n]) for parts in segments.values() for n in range(1, len(parts))}
    paths = {tuple(parts) for parts in segments.values()}
    # collections of items: the prefixes an item parameter follows
    collections = {
        tuple(parts[:n])
        for parts in segments.values()
        for n in range(1, len(parts))
        if is_param(parts[n])
    }

    def is_action(path: str, verbs: set[str]) -> bool:
        parts = segments[path]
        if len(parts) < 2 or is_param(parts[-1]) or tuple(parts) in extended:
            return False  # an item, or a resource other paths go on from
        if is_param(parts[-2]):
            return verbs == {"post"}
        parent = tuple(parts[:-1])
        # a GET under a plain path (`/preview/lines`) is a list of its own, not an action
        return len(verbs) == 1 and (
            parent in collections or (verbs == {"post"} and parent in paths)
        )

    return frozenset(path for path, verbs in methods.items() if is_action(path, verbs))


def _path_key(path: str, is_action: bool) -> tuple[str, ...]:
    literals = [s for s in path_segments(path) if not is_param(s)]
    if is_action:
        literals = literals[:-1]
    names = tuple(snake_case(s, fallback="resource") for s in literals)
    return names or ("default",)


def group_operations(
    api: Api,
    *,
    reserved: Iterable[str] = (),
    reserved_nested: Iterable[str] = (),
    reserved_modules: Iterable[str] = (),
) -> list[Resource]:
    """The API's resources, parents before children, sorted by path. `reserved` /
    `reserved_nested`: names no top-level / nested resource attribute may take (they get a
    trailing `_`); `reserved_modules`: module names to avoid."""
    operations = list(api.operations)
    tags = sorted({op.tags[0] for op in operations if op.tags})
    tag_names = NameAllocator()
    tag_key: dict[str, tuple[str, ...]] = {
        t: (tag_names.allocate(t, snake_case(t, fallback="default")),) for t in tags
    }
    actions = action_paths([op for op in operations if not op.tags])
    by_key: dict[tuple[str, ...], list[Operation]] = {}
    labels: dict[tuple[str, ...], str] = {}
    key: tuple[str, ...]
    for op in operations:
        if op.tags:
            key = tag_key[op.tags[0]]
            labels.setdefault(key, op.tags[0])
        else:
            key = _path_key(op.path, op.path in actions)
        by_key.setdefault(key, []).append(op)
    # every parent of a nested resource exists, even with no operation of its own
    for nested in list(by_key):
        for n in range(1, len(nested)):
            by_key.setdefault(nested[:n], [])
    avoid, avoid_nested = frozenset(reserved), frozenset(reserved_nested)
    modules = NameAllocator(reserved_modules)
    safe: dict[tuple[str, ...], tuple[str, ...]] = {}
    for key in sorted(by_key):  # a parent sorts before its children
        parent = safe[key[:-1]] if len(key) > 1 else ()
        safe[key] = (*parent, safe_identifier(key[-1], avoid=avoid_nested if parent else avoid))
    below: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for key in by_key:
        if len(key) > 1:
            below.setdefault(key[:-1], []).append(key)
    resources = []
    for key in sorted(by_key):
        path = safe[key]
        stem = "_".join(path)
        if len(stem) > _MAX_MODULE:
            stem = safe_identifier(stem[:_MAX_MODULE], fallback="resource")
        module = modules.allocate(key, stem)
        children = sorted(safe[k][-1] for k in below.get(key, ()))
        resources.append(
            Resource(
                path=path,
                module=module,
                pascal=pascal_case(module, fallback="Default"),
                label=labels.get(key, "/" + "/".join(key)),
                operations=tuple(by_key[key]),
                children=tuple(children),
            )
        )
    return resources


def owner_of(resources: Sequence[Resource]) -> dict[str, Resource]:
    """Operation id → its resource."""
    return {op.id: r for r in resources for op in r.operations}
