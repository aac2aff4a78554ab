"""Per-resource plans kept between runs (cache kind `plans1/`).

Planning every operation of a big spec for both trees is most of a regeneration's own work,
and a new operation changes one resource. The planners (`server._Planner.tags`,
`client._Planner.resources`) ask this cache for each resource's operation plans by a key of
everything those plans are made from:

- the API as a whole (`PlanCache.base`): apiforge's code and Python's version, the tree
  (server, client), the root file's name, the document without `paths` (components, security,
  root extensions, `info`...) by its `marshal` bytes, every other file its `$ref`s read by
  the digest of its text, the models' class names, and the facts one operation's plan takes
  from others: every 202 job operation with its status and cancel operations (their
  contents and ids), and whatever the planner adds (`facts`, e.g. the API's rate-limit
  family);
- the resource: its names as allocated across the API (module, classes, method names — a
  new operation beside them can change them), and each operation's id, method, path and its
  path item's `marshal` bytes (what the IR builds it from; a path item whose text points
  into `#/paths` makes the whole of `paths` part of every key).

The client keeps its body arguments there too (`body_arguments`), keyed as a resource
whose operations are those with a body.

Equal keys mean equal plans. A served plan's warnings are said again from what planning said
the first time (`located.recorded` / `replay`), their lines looked up in the file as it is
now. The cache is off when warnings could not all be recorded (`recording_complete`), when
the document is not plain data, and for plans made from an `Api` without its document.

The store is one entry per tree, spec and package (like the fragment cache): the previous
run's resources, of which this run keeps only those it used.
"""

from __future__ import annotations

import hashlib
import marshal
import pickle
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from generator.ir import Api, Operation
from generator.spec.load import pointer_token
from generator.spec.located import Said, recorded, recording_complete, replay

_KIND = "plans1"
T = TypeVar("T")
P = TypeVar("P")


class _Kept(Protocol):
    """What a planner keeps of a resource: at least its operations as templates see them."""

    @property
    def views(self) -> tuple[Any, ...]: ...


K = TypeVar("K", bound=_Kept)


Blocks = Mapping[str, tuple[bytes, bytes | memoryview]]  # token → (its SHA-256, its text)
# in a path item's text: an escape (`\/`, `\x23`) can spell `#/paths` where the text does not
_ESCAPE, _INTO_PATHS = re.compile(rb"\\"), re.compile(rb"#/paths")


class PlanInputs:
    """What the IR was built from, for the plan cache: the root document's parsed data and
    the digests of every other file it read (name, SHA-256 of its text). Its digests are made
    once, for the server's plans and the client's.

    `blocks`: for a root document read block by block (`Document.entry_blocks`), its
    top-level entries and the entries of its `paths`, each by the hash of its text — equal
    text means equal data, so the digests are those hashes instead of the data's `marshal`
    bytes (~20 ms of Stripe's)."""

    def __init__(
        self,
        data: Mapping[str, Any],
        others: tuple[tuple[str, str], ...] = (),
        blocks: tuple[Blocks | None, Blocks | None] = (None, None),
    ) -> None:
        self.data = data
        self.others = others
        self.blocks = blocks
        self._digests: tuple[bytes, dict[str, bytes], bytes] | None = None

    def digests(self) -> tuple[bytes, dict[str, bytes], bytes]:
        """(the document without `paths`, each path item by its routed path, and all of
        `paths` when a path item's text points into it — else b"") by their `marshal` bytes
        or their texts' hashes. ValueError when the document is not plain data."""
        if self._digests is None:
            paths = self.data.get("paths")
            inward = False
            items: dict[str, bytes] = {}
            top, texts = self.blocks
            texts = texts or {}
            for key, item in paths.items() if isinstance(paths, Mapping) else ():
                path = str(key)
                block = texts.get(pointer_token(key)) if isinstance(key, str) else None
                if block is not None and _ESCAPE.search(block[1]) is None:
                    digest = block[0]
                    inward = inward or _INTO_PATHS.search(block[1]) is not None
                else:
                    raw = marshal.dumps(item, 2)
                    inward = inward or b"#/paths" in raw
                    digest = hashlib.sha256(raw).digest()
                items[path if path.startswith("/") else "/" + path] = digest
            if top is not None:
                rest = _digest(("texts", [(t, h) for t, (h, _) in top.items() if t != "paths"]))
            else:
                rest = _digest({k: v for k, v in self.data.items() if k != "paths"})
            whole = _digest(sorted(items.items())) if inward else b""
            self._digests = (rest, items, whole)
        return self._digests


def _digest(value: Any) -> bytes:
    return hashlib.sha256(marshal.dumps(value, 2)).digest()


class PlanCache:
    """One tree's resource plans from the previous run (see the module docstring)."""

    def __init__(
        self,
        tree: str,
        scope: str,
        api: Api,
        inputs: PlanInputs | None,
        classes: Mapping[str, str],
        facts: object = None,
    ) -> None:
        from generator.spec.load import cache_dir, cache_get

        self.store: str | None = None
        self.base = b""
        # key → (the kept value's pickle, the warnings its planning said): each resource
        # pickled once, when planned (pickling the whole store again was ~0.05 s per tree)
        self.previous: dict[str, tuple[bytes, tuple[Said, ...]]] = {}
        self.used: dict[str, tuple[bytes, tuple[Said, ...]]] = {}
        self.said: dict[str, tuple[Said, ...]] = {}  # planned this run, kept once `keep` has it
        self.hits = 0
        self.misses = 0
        self._paths: dict[str, bytes] = {}
        self._ops = {op.id: op for op in api.operations}
        if inputs is None or cache_dir() is None or not recording_complete():
            return
        from generator.render.fingerprint import code_digest

        try:
            base = self._base(tree, api, inputs, classes, facts)
        except (ValueError, TypeError, RecursionError):  # not plain data: never cached
            return
        self.base = base
        material = f"{_KIND}\0{sys.version}\0{code_digest()}\0{tree}\0{scope}"
        self.store = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
        found = cache_get(_KIND, self.store)
        self.previous = found if isinstance(found, dict) else {}

    def _base(
        self,
        tree: str,
        api: Api,
        inputs: PlanInputs,
        classes: Mapping[str, str],
        facts: object,
    ) -> bytes:
        rest, self._paths, inward = inputs.digests()
        jobs = []
        for op in api.operations:
            job = op.patterns.async_job
            if job is None:
                continue
            involved = (op.id, job.status_operation or "", job.cancel_operation or "")
            jobs.append((*involved, *(self._op_digest(i) or b"" for i in involved)))
        material = (  # (the store's key has apiforge's code and Python's version)
            tree,
            api.root,
            rest,
            inputs.others,
            _digest(sorted(classes.items())),
            _digest(jobs),
            _digest(facts),
            inward,
        )
        return _digest(material)

    def _op_digest(self, op_id: str) -> bytes | None:
        op = self._ops.get(op_id)
        item = self._paths.get(op.path) if op is not None else None
        if op is None or item is None:
            return None
        return _digest((op.id, op.method, op.path, item))

    def key(self, names: object, operations: Sequence[Operation]) -> str | None:
        """The key of one resource's plans: `names` (what was allocated to it, plain data)
        and its operations. None: not one to keep."""
        if self.store is None:
            return None
        parts: list[Any] = [self.base]
        for op in operations:
            digest = self._op_digest(op.id)
            if digest is None or self._ops[op.id] is not op:
                return None
            parts.append(digest)
        try:
            parts.append(_digest(names))
        except (ValueError, TypeError):
            return None
        return hashlib.sha256(marshal.dumps(tuple(parts), 2)).hexdigest()

    def served(self, key: str | None) -> object | None:
        """What `keep` kept under `key` last run (its warnings said again), or None."""
        if key is None:
            return None
        hit = self.used.get(key) or self.previous.get(key)
        if hit is None:
            return None
        try:
            value: object = pickle.loads(hit[0])
        except Exception:  # an entry that does not load (a class since changed): planned anew
            return None
        self.used[key] = hit
        self.hits += 1
        replay(hit[1])
        return value

    def plan(self, key: str | None, make: Callable[[], T]) -> T:
        """`make()`, its warnings recorded (for a later run to say) and said."""
        if key is None:
            return make()
        with recorded() as said:
            value = make()
        self.said[key] = tuple(said)
        self.misses += 1
        replay(said)
        return value

    def keep(self, key: str | None, value: object) -> None:
        """Keep `value` (what a later run with this key is served) for a resource `plan`
        made this run."""
        if key is not None and key in self.said:
            blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            self.used[key] = (blob, self.said.pop(key))

    def save(self) -> None:
        """Store this run's resources (only those: the store does not grow)."""
        from generator.spec.load import cache_put

        if self.store is not None and (self.misses or len(self.used) != len(self.previous)):
            cache_put(_KIND, self.store, self.used)


def resource_plans(
    cache: PlanCache | None,
    names: object,
    operations: Sequence[Operation],
    kind: type[K],
    make: Callable[[], tuple[P, ...]],
) -> tuple[tuple[P, ...], K | None, str | None]:
    """One resource's operation plans: served from `cache` (what a planner kept, a `kind`,
    its views linked back to `operations`) or made by `make()`. Returns the plans, what was
    served (None when made), and the key to `keep` made plans under (None when served)."""
    if cache is None:
        return make(), None, None
    key = cache.key(names, operations)
    kept = cache.served(key)
    if isinstance(kept, kind):
        pairs = zip(kept.views, operations, strict=True)
        return tuple(with_op(view, op) for view, op in pairs), kept, None
    return cache.plan(key, make), None, key


def with_op(view: P, op: Operation) -> P:
    """The plan `view` (kept with an `OperationView` as its `op`) was made from: the same
    values, with the operation itself."""
    plan = object.__new__(type(view))
    plan.__dict__.update(view.__dict__)
    plan.__dict__["op"] = op
    return plan


def kept(kind: str, material: Any, make: Callable[[], T]) -> T:
    """`make()` — a function of `material` (plain data) and apiforge's code that computes
    and warns — kept between runs (cache kind `kind`) with what it said, which is said again
    when it is served (`replay`: lines looked up anew). Made and not kept when caching is
    off, when the logger would drop a warning before it is recorded, or when `material` is
    not plain data."""
    from generator.spec.load import cache_dir, cache_get, cache_put

    if cache_dir() is None or not recording_complete():
        return make()
    from generator.render.fingerprint import code_digest

    try:
        key = hashlib.sha256(
            marshal.dumps((kind, sys.version, code_digest(), material), 2)
        ).hexdigest()
    except (ValueError, TypeError, RecursionError):
        return make()
    hit = cache_get(kind, key)
    if isinstance(hit, tuple) and len(hit) == 2:
        replay(hit[1])
        value: T = hit[0]
        return value
    with recorded() as said:
        made = make()
    cache_put(kind, key, (made, tuple(said)))
    replay(said)
    return made


__all__ = ["PlanCache", "PlanInputs", "kept", "resource_plans", "with_op"]
