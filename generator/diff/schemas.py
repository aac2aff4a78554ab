"""Comparing two versions of a schema, in the direction data flows: what a request schema no
longer accepts (a client's bodies and arguments are refused), what a response schema may now
send that it did not (a client reads what it does not expect).

`$ref`s are followed on each side with that side's resolver; a component schema is compared
once per direction, whichever operations reach it (`Comparer` remembers), and recursive schemas
stop where they come back to a pair already being compared."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

from generator.ir import Where
from generator.spec.refs import Resolver, UnresolvedRef

Direction = Literal["request", "response"]
_COMPONENT = "/components/schemas/"
_UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
_LOWER = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
_MAX_DEPTH = 64
# top-level keys of an OpenAPI document: what is under them is not a schema of its own
_NOT_SCHEMAS = frozenset({"paths", "components", "webhooks", "info", "servers", "security"})
_SUFFIX = {"items": "[]", "additionalProperties": "{}"}  # how a value's label goes on


@dataclass(frozen=True, slots=True)
class Found:
    """One change in a schema: `facet` says what (`property-removed`, `type-changed`, ...);
    `field` is the value's path from its component (`Customer.address.city`) or from where the
    schema is written (`request body.address`); `model`/`prop` name the model field it is."""

    facet: str
    detail: str
    field: str
    old: Where
    new: Where
    model: str = ""
    prop: str = ""


def _component(where: Where) -> str:
    """The name of the schema at `where` when it is one of its own: a component
    (`#/components/schemas/X`), a top-level entry of a schemas file (`schemas.yaml#/X`), or a
    whole file (`customer.yaml`); "" for a schema written inside another."""
    pointer = where.pointer
    if pointer.startswith(_COMPONENT):
        name = pointer[len(_COMPONENT) :]
        return name if "/" not in name else ""
    if not pointer:
        return PurePosixPath(where.file.replace(":", "/")).stem
    if pointer.count("/") == 1 and pointer[1:] not in _NOT_SCHEMAS:
        return pointer[1:].replace("~1", "/").replace("~0", "~")
    return ""


def _types(node: Mapping[str, Any]) -> frozenset[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        types = {declared}
    elif isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        types = set(declared)
    else:
        return None
    if node.get("nullable") is True:
        types.add("null")
    return frozenset(types)


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _show(values: Any) -> str:
    import json

    return ", ".join(json.dumps(v, ensure_ascii=False, default=str) for v in values)


class Comparer:
    def __init__(self, old: Resolver, new: Resolver) -> None:
        self.old, self.new = old, new
        self._memo: dict[tuple[Any, ...], tuple[Found, ...]] = {}
        self._active: set[tuple[Any, ...]] = set()

    def compare(
        self,
        old_where: Where,
        old_node: Any,
        new_where: Where,
        new_node: Any,
        direction: Direction,
        label: str,
        model: str = "",
        depth: int = 0,
    ) -> tuple[Found, ...]:
        """The changes from the old schema to the new one, read in `direction`."""
        try:
            ow, onode = self.old.deref(old_where, old_node)
            nw, nnode = self.new.deref(new_where, new_node)
        except UnresolvedRef:
            return ()  # a broken `$ref` is lint's and validation's to report
        if not isinstance(onode, dict) or not isinstance(nnode, dict) or depth > _MAX_DEPTH:
            return ()
        # a schema of its own on either side (the new side's name first: what the client's
        # model is called now) is reported under its name, once for every operation
        name = _component(nw) or _component(ow)
        if name:
            label, model = name, name
        key = (ow, nw, direction, label)
        done = self._memo.get(key)
        if done is not None:
            return done
        if key in self._active:
            return ()
        self._active.add(key)
        try:
            if onode == nnode:  # the same text: only what its `$ref`s reach may differ
                found = tuple(self._refs_only(ow, nw, onode, direction, label, model, depth))
            else:
                found = tuple(self._compare(ow, onode, nw, nnode, direction, label, model, depth))
        finally:
            self._active.discard(key)
        # once each: a change deep in a shared schema is reached along many paths
        found = tuple(dict.fromkeys(found))
        self._memo[key] = found
        return found

    def _refs_only(
        self,
        ow: Where,
        nw: Where,
        node: dict[str, Any],
        direction: Direction,
        label: str,
        model: str,
        depth: int,
    ) -> list[Found]:
        """The changes behind the `$ref`s of a schema written the same on both sides (a
        walk for its `$ref`s costs a fraction of comparing it: Stripe's schemas are mostly
        unchanged from one version to the next)."""
        out: list[Found] = []
        todo: list[tuple[tuple[str | int, ...], Any, str]] = [((), node, label)]
        while todo:
            tokens, sub, at_label = todo.pop()
            if isinstance(sub, dict):
                if tokens and isinstance(sub.get("$ref"), str):
                    out.extend(
                        self.compare(
                            ow.child(*tokens),
                            sub,
                            nw.child(*tokens),
                            sub,
                            direction,
                            at_label,
                            model,
                            depth + 1,
                        )
                    )
                    continue
                in_properties = tokens[-1:] == ("properties",)
                for k, v in sub.items():
                    if isinstance(v, (dict, list)):
                        more = f"{at_label}.{k}" if in_properties else at_label + _SUFFIX.get(k, "")
                        todo.append(((*tokens, k), v, more))
            elif isinstance(sub, list):
                for i, v in enumerate(sub):
                    if isinstance(v, (dict, list)):
                        todo.append(((*tokens, i), v, at_label))
        return out

    def _compare(
        self,
        ow: Where,
        onode: dict[str, Any],
        nw: Where,
        nnode: dict[str, Any],
        direction: Direction,
        label: str,
        model: str,
        depth: int,
    ) -> list[Found]:
        out: list[Found] = []

        def add(facet: str, detail: str, o: Where = ow, n: Where = nw, prop: str = "") -> None:
            out.append(Found(facet, detail, label, o, n, model, prop))

        self._values(onode, nnode, direction, add)
        out.extend(self._properties(ow, onode, nw, nnode, direction, label, model, depth))
        for key, suffix in _SUFFIX.items():
            old_sub, new_sub = onode.get(key), nnode.get(key)
            if isinstance(old_sub, dict) and isinstance(new_sub, dict):
                out.extend(
                    self.compare(
                        ow.child(key),
                        old_sub,
                        nw.child(key),
                        new_sub,
                        direction,
                        label + suffix,
                        model,
                        depth + 1,
                    )
                )
        for key in ("oneOf", "anyOf"):
            old_list, new_list = onode.get(key), nnode.get(key)
            if not isinstance(old_list, list) or not isinstance(new_list, list):
                continue
            if len(old_list) != len(new_list):
                continue  # alternatives added or removed: not matched one by one
            for i, (a, b) in enumerate(zip(old_list, new_list, strict=True)):
                out.extend(
                    self.compare(
                        ow.child(key, i), a, nw.child(key, i), b, direction, label, model, depth + 1
                    )
                )
        return out

    @staticmethod
    def _values(
        onode: dict[str, Any], nnode: dict[str, Any], direction: Direction, add: Any
    ) -> None:
        """Types, enums and bounds of the value itself."""
        otypes, ntypes = _types(onode), _types(nnode)
        if direction == "request":
            if otypes is not None and ntypes is not None:
                lost = set(otypes - ntypes)
                if "integer" in lost and "number" in ntypes:
                    lost.discard("integer")
                if lost:
                    add("type-changed", f"type {_show(sorted(otypes))} → {_show(sorted(ntypes))}")
            oenum, nenum = onode.get("enum"), nnode.get("enum")
            if isinstance(nenum, list):
                if isinstance(oenum, list):
                    lost_values = [v for v in oenum if v not in nenum]
                    if lost_values:
                        add("enum-narrowed", f"no longer accepts {_show(lost_values)}")
                elif otypes is None or "null" not in otypes or len(otypes) > 1:
                    add("enum-narrowed", f"now accepts only {_show(nenum)}")
            for key in _UPPER + _LOWER:
                new_bound, old_bound = _number(nnode.get(key)), _number(onode.get(key))
                if new_bound is None or new_bound == old_bound:
                    continue
                lower = key in _LOWER
                if old_bound is not None and (new_bound > old_bound) != lower:
                    continue  # the bound moved outwards: more is accepted
                if lower and old_bound is None and new_bound <= 0 and key != "exclusiveMinimum":
                    continue  # `minimum: 0` on a value that had no bound: usually a count
                was = f"{old_bound:g}" if old_bound is not None else "none"
                add("constraint-narrowed", f"`{key}` {was} → {new_bound:g}")
            pattern = nnode.get("pattern")
            if isinstance(pattern, str) and pattern != onode.get("pattern"):
                add("pattern-added", f"must now match `{pattern}`")
            return
        if otypes is not None and ntypes is not None:
            gained = set(ntypes - otypes)
            if "integer" in gained and "number" in otypes:
                gained.discard("integer")  # every integer was a number already
            if gained == {"null"}:
                add("became-nullable", "may now be null")
            elif gained:
                add("type-changed", f"type {_show(sorted(otypes))} → {_show(sorted(ntypes))}")
        oenum, nenum = onode.get("enum"), nnode.get("enum")
        if isinstance(oenum, list) and isinstance(nenum, list):
            gained_values = [v for v in nenum if v not in oenum]
            if gained_values:
                add("enum-value-added", f"may now be {_show(gained_values)}")

    def _properties(
        self,
        ow: Where,
        onode: dict[str, Any],
        nw: Where,
        nnode: dict[str, Any],
        direction: Direction,
        label: str,
        model: str,
        depth: int,
    ) -> list[Found]:
        oprops, oreq = self._object(self.old, ow, onode)
        nprops, nreq = self._object(self.new, nw, nnode)
        if not oprops or not nprops:
            return []
        out: list[Found] = []

        def add(facet: str, name: str, detail: str, o: Where, n: Where) -> None:
            out.append(Found(facet, detail, f"{label}.{name}", o, n, model, name))

        for name, (where, _) in oprops.items():
            if name not in nprops:
                add("property-removed", name, "property removed", where, nw)
        for name, (where, _) in nprops.items():
            if name in oprops:
                continue
            if direction == "request":
                facet = "property-added-required" if name in nreq else "property-added-optional"
                what = "required" if name in nreq else "optional"
                add(facet, name, f"{what} property added", ow, where)
            else:
                add("property-added", name, "property added", ow, where)
        for name in sorted(set(oprops) & set(nprops)):
            (o_at, o_sub), (n_at, n_sub) = oprops[name], nprops[name]
            if direction == "request" and name in nreq and name not in oreq:
                add("property-became-required", name, "property became required", o_at, n_at)
            if direction == "response" and name in oreq and name not in nreq:
                add("property-became-optional", name, "property became optional", o_at, n_at)
            out.extend(
                self.compare(
                    o_at, o_sub, n_at, n_sub, direction, f"{label}.{name}", model, depth + 1
                )
            )
        return out

    @staticmethod
    def _object(
        resolver: Resolver, where: Where, node: dict[str, Any], depth: int = 0
    ) -> tuple[dict[str, tuple[Where, Any]], set[str]]:
        """An object schema's properties (with where each is written) and its required names,
        its `allOf` parts' included."""
        props: dict[str, tuple[Where, Any]] = {}
        required: set[str] = set()
        own = node.get("properties")
        if isinstance(own, dict):
            at = where.child("properties")
            for name, sub in own.items():
                props[str(name)] = (at.child(str(name)), sub)
        names = node.get("required")
        if isinstance(names, list):
            required.update(n for n in names if isinstance(n, str))
        parts = node.get("allOf")
        if isinstance(parts, list) and depth < 8:
            for i, part in enumerate(parts):
                try:
                    part_at, part_node = resolver.deref(where.child("allOf", i), part)
                except UnresolvedRef:
                    continue
                if isinstance(part_node, dict):
                    more, more_required = Comparer._object(resolver, part_at, part_node, depth + 1)
                    for name, value in more.items():
                        props.setdefault(name, value)
                    required |= more_required
        return props, required
