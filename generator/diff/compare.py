"""Comparing two patterned IRs: operations matched by method and path template (path
parameter names aside), then by operationId for the ones that moved; their parameters,
request bodies, responses and security; the servers; the webhooks. The production patterns
are compared first (`generator.diff.patterns`) and claim what they explain (a 202 that became
a 200 is `async-became-sync`, not also a removed status)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import NamedTuple

from generator.diff.model import Change, Reach
from generator.diff.patterns import Claims, compare_patterns, compare_webhooks
from generator.diff.schemas import Comparer, Direction, Found
from generator.ir import Api, MediaType, Operation, Parameter, Where
from generator.spec.refs import Resolver

_Params = Mapping[tuple[str, str], Parameter]  # by location and name (a header's lower case)
_PARAM = re.compile(r"\{[^}/]*\}")
# schema facets → the change kind, by where the schema is
_REQUEST = {
    "type-changed": "request-type-changed",
    "enum-narrowed": "request-enum-narrowed",
    "constraint-narrowed": "request-constraint-narrowed",
    "pattern-added": "request-pattern-added",
    "property-removed": "request-property-removed",
    "property-became-required": "request-property-became-required",
    "property-added-required": "request-property-added-required",
    "property-added-optional": "request-property-added-optional",
}
_PARAMETER = {
    "type-changed": "parameter-type-changed",
    "enum-narrowed": "parameter-enum-narrowed",
    "constraint-narrowed": "parameter-constraint-narrowed",
    "pattern-added": "parameter-pattern-added",
}
_RESPONSE = {
    "type-changed": "response-type-changed",
    "became-nullable": "response-property-became-nullable",
    "enum-value-added": "response-enum-value-added",
    "property-removed": "response-property-removed",
    "property-became-optional": "response-property-became-optional",
    "property-added": "response-property-added",
}
_PAYLOAD_NARROWED = {
    "type-changed",
    "became-nullable",
    "property-removed",
    "property-became-optional",
}


class Shared(NamedTuple):
    """A change found in a schema, as one operation reaches it."""

    change: Change
    reach: tuple[Reach, ...]


def template(path: str) -> str:
    """A path with its parameters' names left out: `/a/{id}` and `/a/{key}` are one path."""
    return _PARAM.sub("{}", path)


def _key(op: Operation) -> tuple[str, str]:
    return (op.method, template(op.path))


class Diff:
    """The changes from `old` to `new`, each side read with its resolver."""

    def __init__(self, old: Api, old_resolver: Resolver, new: Api, new_resolver: Resolver) -> None:
        self.old, self.new = old, new
        self.schemas = Comparer(old_resolver, new_resolver)
        self._made: dict[tuple[int, str, bool], Change] = {}

    def changes(self) -> list[Change]:
        first: dict[tuple[str, str, str, str], Change] = {}
        reaches: dict[tuple[str, str, str, str], dict[tuple[int, int], Reach]] = {}
        keys: dict[int, tuple[str, str, str, str]] = {}  # a shared change's key, by its id
        for item in self._all():
            change, reach = (
                (item.change, item.reach) if isinstance(item, Shared) else (item, item.reach)
            )
            key = keys.get(id(change))
            if key is None:
                key = keys[id(change)] = change.key
            if key not in first:
                first[key] = change
                reaches[key] = {}
            pairs = reaches[key]
            for pair in reach:
                pairs.setdefault((id(pair[0]), id(pair[1])), pair)
        return [
            replace(change, reach=tuple(reaches[key].values())) for key, change in first.items()
        ]

    def _all(self) -> Iterator[Change | Shared]:
        yield from self._servers()
        new_by_key = {_key(op): op for op in self.new.operations}
        old_keys = {_key(op) for op in self.old.operations}
        new_by_id = {op.id: op for op in self.new.operations}
        moved_to: set[tuple[str, str]] = set()
        for old_op in self.old.operations:
            new_op = new_by_key.get(_key(old_op))
            if new_op is not None:
                yield from self.operation(old_op, new_op)
                continue
            moved = new_by_id.get(old_op.id)
            if moved is not None and _key(moved) not in old_keys:
                moved_to.add(_key(moved))
                yield Change(
                    "operation-moved",
                    f"{old_op.label} moved to {moved.label} (operationId `{old_op.id}`)",
                    old_op.where,
                    moved.where,
                    ((old_op, moved),),
                )
                continue
            kind = "deprecated-operation-removed" if old_op.deprecated else "operation-removed"
            yield Change(
                kind,
                f"{old_op.label} removed" + (" (it was deprecated)" if old_op.deprecated else ""),
                old_op.where,
                self._nearest_path(old_op),
                ((old_op, None),),
            )
        for new_op in self.new.operations:
            if _key(new_op) not in old_keys and _key(new_op) not in moved_to:
                yield Change(
                    "operation-added",
                    f"{new_op.label} added",
                    None,
                    new_op.where,
                    ((None, new_op),),
                )
        yield from compare_webhooks(self.old, self.new, self._payload)

    def _nearest_path(self, old_op: Operation) -> Where:
        for op in self.new.operations:
            if template(op.path) == template(old_op.path):
                return op.path_where
        return Where(self.new.root, "/paths")

    def _servers(self) -> Iterator[Change]:
        new_urls = {s.url.rstrip("/") for s in self.new.servers}
        if not self.new.servers:
            return  # no servers: "/" of wherever the spec is served, as before or not
        for i, server in enumerate(self.old.servers):
            if server.url.rstrip("/") not in new_urls:
                yield Change(
                    "server-removed",
                    f"server {server.url} removed",
                    Where(self.old.root, f"/servers/{i}"),
                    Where(self.new.root, "/servers"),
                )

    # --- one operation --------------------------------------------------------------------

    def operation(self, old: Operation, new: Operation) -> Iterator[Change | Shared]:
        reach = ((old, new),)
        if new.deprecated and not old.deprecated:
            yield Change(
                "operation-deprecated", f"{new.label} deprecated", old.where, new.where, reach
            )
        claims = Claims()
        yield from compare_patterns(old, new, claims)
        yield from self._parameters(old, new, claims)
        yield from self._request_body(old, new)
        yield from self._responses(old, new, claims)
        yield from self._security(old, new)

    def _parameters(self, old: Operation, new: Operation, claims: Claims) -> Iterator[Change]:
        olds: _Params = {(p.location, _name(p)): p for p in old.parameters}
        news: _Params = {(p.location, _name(p)): p for p in new.parameters}
        yield from self._parameters_gone(old, new, olds, news, claims)
        yield from self._parameters_now(old, new, olds, news, claims)

    def _parameters_gone(
        self,
        old: Operation,
        new: Operation,
        olds: _Params,
        news: _Params,
        claims: Claims,
    ) -> Iterator[Change]:
        """The old parameters the new operation lacks: renamed, moved or removed."""
        reach = ((old, new),)
        old_path = [p for p in old.parameters if p.location == "path"]
        renamed = _renamed_path_parameters(old, new)
        for (location, name), p in olds.items():
            if (location, name) in news or claims.header(location, name):
                continue
            if location == "path" and p.name in renamed:
                q = new.parameter(renamed[p.name], "path")
                yield Change(
                    "path-parameter-renamed",
                    f"{new.label}: path parameter `{p.name}` renamed `{renamed[p.name]}`",
                    p.where,
                    q.where if q else new.where,
                    reach,
                    argument=p.name,
                    argument_in="path",
                )
                continue
            moved = next((q for (loc, n), q in news.items() if n == name and loc != location), None)
            if moved is not None and (moved.location, _name(moved)) not in olds:
                yield Change(
                    "parameter-moved",
                    f"{new.label}: parameter `{p.name}` moved from {location} to {moved.location}",
                    p.where,
                    moved.where,
                    reach,
                    argument=p.name,
                    argument_in=location,
                )
                continue
            if location == "path" and p in old_path:
                continue  # a path parameter goes with its path: the path changed
            yield Change(
                "parameter-removed",
                f"{new.label}: {location} parameter `{p.name}` removed",
                p.where,
                new.where,
                reach,
                argument=p.name,
                argument_in=location,
            )

    def _parameters_now(
        self,
        old: Operation,
        new: Operation,
        olds: _Params,
        news: _Params,
        claims: Claims,
    ) -> Iterator[Change]:
        """The new operation's parameters: added, made required, narrowed."""
        reach = ((old, new),)
        for (location, name), q in news.items():
            was = olds.get((location, name))
            if claims.header(location, name):
                continue
            if was is None:
                if any(n == name and loc != location for loc, n in olds):
                    continue  # reported as moved
                if location == "path":
                    continue  # renamed, or the path is new
                required = q.required
                yield Change(
                    "parameter-added-required" if required else "parameter-added-optional",
                    f"{new.label}: {'required' if required else 'optional'} {location} "
                    f"parameter `{q.name}` added",
                    old.where,
                    q.where,
                    reach,
                    argument=q.name,
                    argument_in=location,
                )
                continue
            if q.required and not was.required:
                yield Change(
                    "parameter-became-required",
                    f"{new.label}: {location} parameter `{q.name}` became required",
                    was.where,
                    q.where,
                    reach,
                    argument=q.name,
                    argument_in=location,
                )
            if was.schema is not None and q.schema is not None:
                label = f"{new.label}: {location} parameter `{q.name}`"
                for found in self.schemas.compare(
                    was.schema.where, was.schema.data, q.schema.where, q.schema.data, "request", ""
                ):
                    kind = _PARAMETER.get(found.facet)
                    if kind is None:
                        continue  # properties of an object parameter: rare, left out
                    inner = f" ({found.field.lstrip('.')})" if found.field.strip(".") else ""
                    yield Change(
                        kind,
                        f"{label}{inner}: {found.detail}",
                        found.old,
                        found.new,
                        reach,
                        argument=q.name,
                        argument_in=location,
                    )

    def _request_body(self, old: Operation, new: Operation) -> Iterator[Change | Shared]:
        reach = ((old, new),)
        obody, nbody = old.request_body, new.request_body
        if nbody is None:
            return
        if nbody.required and (obody is None or not obody.required):
            yield Change(
                "request-body-became-required",
                f"{new.label}: request body became required",
                obody.where if obody else old.where,
                nbody.where,
                reach,
                body=True,
            )
        if obody is None:
            return
        ntypes = {_media_key(m): m for m in nbody.content}
        for media in obody.content:
            nmedia = ntypes.get(_media_key(media))
            if nmedia is None:
                if not ntypes:
                    continue
                yield Change(
                    "request-media-type-removed",
                    f"{new.label}: request media type `{media.content_type}` removed",
                    media.where,
                    nbody.where.child("content"),
                    reach,
                    body=True,
                )
                continue
            yield from self._media(media, nmedia, "request", f"{new.label} request body", reach)

    def _responses(
        self, old: Operation, new: Operation, claims: Claims
    ) -> Iterator[Change | Shared]:
        reach = ((old, new),)
        news = {r.status: r for r in new.responses}
        for response in old.responses:
            nresponse = news.get(response.status)
            if nresponse is None:
                if claims.status(response.status) or _covered(response.status, news):
                    continue
                success = response.status[0] in "23"
                yield Change(
                    "response-status-removed" if success else "error-response-removed",
                    f"{new.label}: response {response.status} removed",
                    response.where,
                    new.where.child("responses"),
                    reach,
                )
                continue
            ntypes = {_media_key(m): m for m in nresponse.content}
            for media in response.content:
                nmedia = ntypes.get(_media_key(media))
                if nmedia is None:
                    if not ntypes or claims.status(response.status):
                        continue
                    yield Change(
                        "response-media-type-removed",
                        f"{new.label}: response {response.status} media type "
                        f"`{media.content_type}` removed",
                        media.where,
                        nresponse.where,
                        reach,
                    )
                    continue
                if response.status[0] == "2":
                    label = f"{new.label} response {response.status}"
                    yield from self._media(media, nmedia, "response", label, reach)

    def _media(
        self,
        old: MediaType,
        new: MediaType,
        direction: Direction,
        label: str,
        reach: tuple[Reach, ...],
    ) -> Iterator[Shared]:
        if old.schema is None or new.schema is None:
            return
        kinds = _REQUEST if direction == "request" else _RESPONSE
        body = direction == "request"
        for found in self.schemas.compare(
            old.schema.where, old.schema.data, new.schema.where, new.schema.data, direction, label
        ):
            kind = kinds.get(found.facet)
            if kind is None:
                continue
            # one Change per schema change, whichever operations reach it (Stripe's shared
            # schemas: ~40,000 reaches of ~100 changes)
            made = self._made.get((id(found), kind, body))
            if made is None:
                made = self._made[(id(found), kind, body)] = _schema_change(
                    kind, found, (), label, body
                )
            yield Shared(made, reach)

    def _payload(self, old: Operation, new: Operation, name: str) -> Iterator[Change]:
        """A webhook's payload: what the receiver reads (a response, in its direction)."""
        obody, nbody = old.request_body, new.request_body
        if obody is None or nbody is None:
            return
        ntypes = {_media_key(m): m for m in nbody.content}
        for media in obody.content:
            nmedia = ntypes.get(_media_key(media))
            if nmedia is None or media.schema is None or nmedia.schema is None:
                continue
            for found in self.schemas.compare(
                media.schema.where,
                media.schema.data,
                nmedia.schema.where,
                nmedia.schema.data,
                "response",
                f"webhook {name} payload",
            ):
                if found.facet in _PAYLOAD_NARROWED:
                    change = _schema_change(
                        "webhook-payload-narrowed", found, ((old, new),), f"webhook {name} payload"
                    )
                    yield Change(
                        change.kind,
                        f"webhook `{name}`: {change.message}",
                        change.old,
                        change.new,
                        change.reach,
                        model=change.model,
                        prop=change.prop,
                        webhook=name,
                    )

    def _security(self, old: Operation, new: Operation) -> Iterator[Change]:
        osec, nsec = old.patterns.security, new.patterns.security
        if osec is None or nsec is None or nsec.public:
            return
        reach = ((old, new),)
        at_old, at_new = osec.where, nsec.where
        if osec.public:
            yield Change(
                "security-requirement-added",
                f"{new.label}: now requires {_alternatives(nsec.alternatives)} (it was public)",
                at_old,
                at_new,
                reach,
            )
            return
        tightened = scopes = False
        for alternative in osec.alternatives:
            have = dict(alternative)
            fits = [b for b in nsec.alternatives if all(name in have for name, _ in b)]
            if any(all(set(s) <= set(have[name]) for name, s in b) for b in fits):
                continue
            if fits:
                scopes = True
            else:
                tightened = True
        if tightened:
            yield Change(
                "security-requirement-added",
                f"{new.label}: security {_alternatives(osec.alternatives)} → "
                f"{_alternatives(nsec.alternatives)}",
                at_old,
                at_new,
                reach,
            )
        elif scopes:
            yield Change(
                "security-scope-added",
                f"{new.label}: scopes {_alternatives(osec.alternatives)} → "
                f"{_alternatives(nsec.alternatives)}",
                at_old,
                at_new,
                reach,
            )


def _schema_change(
    kind: str, found: Found, reach: tuple[Reach, ...], root: str, body: bool = False
) -> Change:
    """The change a schema change is; `root` is the label the comparison started from (its
    values' paths go on from the model's name, or from it)."""
    base = found.model or root
    path = found.field[len(base) :] if found.field.startswith(base) else found.prop
    path = path.replace("[]", "").replace("{}", "").strip(".")
    return Change(
        kind,
        f"`{found.field}`: {found.detail}",
        found.old,
        found.new,
        reach,
        model=found.model,
        prop=path if found.prop else "",
        body=body,
    )


def _name(p: Parameter) -> str:
    return p.name.lower() if p.location == "header" else p.name


def _media_key(media: MediaType) -> str:
    return media.content_type.split(";")[0].strip().lower()


def _covered(status: str, news: Mapping[str, object]) -> bool:
    """Whether a removed status is still declared by a range (`4XX`)."""
    return f"{status[0]}XX" in news or f"{status[0]}xx" in news


def _renamed_path_parameters(old: Operation, new: Operation) -> dict[str, str]:
    """Old path parameter name → new, where the templates match and the names differ."""
    onames = _PARAM.findall(old.path)
    nnames = _PARAM.findall(new.path)
    return {a.strip("{}"): b.strip("{}") for a, b in zip(onames, nnames, strict=False) if a != b}


def _alternatives(alternatives: Iterable[Iterable[tuple[str, tuple[str, ...]]]]) -> str:
    shown = []
    for alternative in alternatives:
        parts = [f"{name}[{' '.join(scopes)}]" if scopes else name for name, scopes in alternative]
        shown.append(" + ".join(parts) or "none")
    return " or ".join(shown) or "none"
