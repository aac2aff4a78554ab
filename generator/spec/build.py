"""Raw document → typed IR. The last place that reads the spec's dicts.

Reading is lenient about shapes the validator would reject (a lint run must still say
something useful about a sloppy spec) and strict about references: a `$ref` that does not
resolve is an error with its location.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from generator.errors import ApiforgeError
from generator.ir import (
    HTTP_METHODS,
    Api,
    Encoding,
    Header,
    HttpMethod,
    MediaType,
    OAuthFlow,
    Operation,
    Parameter,
    ParamIn,
    RequestBody,
    Response,
    Schema,
    SecurityRequirement,
    SecurityScheme,
    Server,
    ServerVariable,
    Webhook,
    Where,
)
from generator.spec.load import gc_paused
from generator.spec.refs import Resolver

_PARAM_IN: tuple[ParamIn, ...] = ("path", "query", "header", "cookie")
_SCHEMA_PREFIX = "/components/schemas/"
_UNMADE = object()  # in `_shared`: not built yet (a parameter may build to None)


def _dict(node: Any) -> dict[str, Any]:
    return node if isinstance(node, dict) else {}


def _str(node: Any) -> str:
    return node if isinstance(node, str) else "" if node is None else str(node)


def _status(key: Any) -> str:
    """Response keys as the spec means them: "200", "2XX" (any case), "default"."""
    text = _str(key)
    return text if text == "default" else text.upper()


def _key(where: Where, key: str) -> Where:
    """`where.child(...)` for what needs no escaping: a literal key ("schema", "content"), an
    index, or a token `_escaped` already. The IR build makes ~15,000 of these; `child`'s
    general loop over its tokens was its largest single cost."""
    return Where(where.file, f"{where.pointer}/{key}")


def _escaped(token: Any) -> str:
    """A key as a JSON pointer token (RFC 6901), as `Where.child` writes it."""
    text = token if token.__class__ is str else str(token)
    if "~" in text or "/" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return text


def derive_operation_id(method: str, path: str) -> str:
    """A stable id for an operation without operationId: `get_v1_users_userId`."""
    slug = re.sub(r"[^0-9A-Za-z]+", "_", path).strip("_")
    return f"{method}_{slug}" if slug else method


class Builder:
    def __init__(self, resolver: Resolver) -> None:
        self.r = resolver
        self.root = Where(resolver.root.name, "")
        self.data = _dict(resolver.root.data)
        # What a `$ref` leads to depends only on the file it is written in and its text, and
        # specs repeat the same few hundred refs thousands of times: follow each once. (A ref
        # that fails raises before anything is remembered.)
        self._derefs: dict[tuple[str, str], tuple[Where, dict[str, Any]]] = {}
        self._schemas: dict[tuple[str, str], Schema] = {}
        self._properties: dict[Where, frozenset[str]] = {}
        # What a `$ref`'d parameter, response or header builds to depends only on the target
        # (and a response's status): GitHub's spec refers to the same few hundred 3,000
        # times. Built once each; the IR is immutable, so operations share them.
        self._shared: dict[tuple[str, str, str], Any] = {}

    # --- small pieces ------------------------------------------------------------

    def deref(self, where: Where, node: Any) -> tuple[Where, dict[str, Any]]:
        if not isinstance(node, dict):
            return where, {}
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return where, node
        key = (where.file, ref)
        found = self._derefs.get(key)
        if found is None:
            at, target = self.r.deref(where, node)
            found = self._derefs[key] = (at, _dict(target))
        return found

    def schema(self, where: Where, node: Any) -> Schema | None:
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return Schema(
                name=None, data=node, where=where, properties=self.properties(where, node)
            )
        key = (where.file, ref)
        schema = self._schemas.get(key)
        if schema is None:
            name: str | None = None
            target = self.r.target(where, ref)
            if target.pointer.startswith(_SCHEMA_PREFIX) and target.pointer.count("/") == 3:
                name = target.pointer[len(_SCHEMA_PREFIX) :].replace("~1", "/").replace("~0", "~")
            at, data = self.deref(where, node)
            schema = Schema(name=name, data=data, where=at, properties=self.properties(at, data))
            self._schemas[key] = schema
        return schema

    def properties(self, where: Where, data: Mapping[str, Any], depth: int = 0) -> frozenset[str]:
        """Top-level property names, through `$ref` and `allOf` (bounded: schemas recurse).

        `data` is the node at `where`, so the whole answer (depth 0) is remembered by it."""
        if depth == 0:
            known = self._properties.get(where)
            if known is not None:
                return known
        names = set(_dict(data.get("properties")))
        if depth < 8:
            for i, part in enumerate(data.get("allOf") or []):
                at, sub = self.deref(_key(where, f"allOf/{i}"), part)
                names |= self.properties(at, sub, depth + 1)
        result = frozenset(names)
        if depth == 0:
            self._properties[where] = result
        return result

    def content(self, where: Where, node: Any) -> tuple[MediaType, ...]:
        media = []
        for content_type, body in sorted(_dict(node).items()):
            at = _key(where, _escaped(content_type))
            body = _dict(body)
            media.append(
                MediaType(
                    _str(content_type),
                    self.schema(_key(at, "schema"), body.get("schema")),
                    at,
                    *self.examples(at, body),
                    self.encoding(at, body),
                )
            )
        return tuple(media)

    def encoding(self, where: Where, body: Mapping[str, Any]) -> dict[str, Encoding]:
        """A media type's `encoding`, by property name (entries that are not objects are left
        out: validation names them)."""
        found: dict[str, Encoding] = {}
        for name, entry in sorted(_dict(body.get("encoding")).items()):
            if not isinstance(entry, dict):
                continue
            explode = entry.get("explode")
            fixed, open_headers = self.part_headers(where, entry)
            found[_str(name)] = Encoding(
                _key(where, "encoding/" + _escaped(name)),
                style=_str(entry.get("style")),
                explode=explode if isinstance(explode, bool) else None,
                content_type=_str(entry.get("contentType")),
                allow_reserved=entry.get("allowReserved") is True,
                headers=fixed,
                open_headers=open_headers,
            )
        return found

    def part_headers(
        self, where: Where, entry: Mapping[str, Any]
    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, bool], ...]]:
        """An encoding entry's `headers` that have one value to send (`const`, a single `enum`
        value, a `default`), and the others with whether each is `required` (`Content-Type`
        is the entry's `contentType`, never a header)."""
        fixed: list[tuple[str, str]] = []
        others: list[tuple[str, bool]] = []
        for name, node in sorted(_dict(entry.get("headers")).items()):
            if name.lower() == "content-type":
                continue
            at, header = self.deref(where, node)
            _, schema = self.deref(at, header.get("schema"))
            enum = schema.get("enum")
            one = [schema["const"]] if "const" in schema else enum if isinstance(enum, list) else []
            if len(one) != 1 and "default" in schema:
                one = [schema["default"]]
            if len(one) == 1 and isinstance(one[0], str | int | float):
                value = str(one[0]).lower() if isinstance(one[0], bool) else str(one[0])
                fixed.append((_str(name), value))
            else:
                others.append((_str(name), header.get("required") is True))
        return tuple(fixed), tuple(others)

    def examples(
        self, where: Where, body: Mapping[str, Any]
    ) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """The values of a media type's `example` and `examples` (in the spec's order; an
        entry that cannot be followed or has only an `externalValue` is left out), and the
        names of those from `examples` (the last ones)."""
        found = [body["example"]] if "example" in body else []
        names: list[str] = []
        for name, entry in _dict(body.get("examples")).items():
            try:
                _, example = self.deref(_key(where, "examples/" + _escaped(name)), entry)
            except ApiforgeError:
                continue  # validation names the broken `$ref`
            if "value" in example:
                found.append(example["value"])
                names.append(_str(name))
        return tuple(found), tuple(names)

    def _once(self, where: Where, node: Any, kind: str, make: Callable[[], Any]) -> Any:
        """`make()`, once per `$ref` target and `kind` (see `_shared`)."""
        ref = node.get("$ref") if node.__class__ is dict else None
        if ref.__class__ is not str:
            return make()
        key = (where.file, ref, kind)
        found = self._shared.get(key, _UNMADE)
        if found is _UNMADE:
            found = self._shared[key] = make()
        return found

    def header(self, where: Where, name: str, node: Any) -> Header:
        made = self._once(where, node, "header " + name, lambda: self._header(where, name, node))
        return cast(Header, made)

    def _header(self, where: Where, name: str, node: Any) -> Header:
        at, data = self.deref(where, node)
        schema = self.schema(_key(at, "schema"), data.get("schema"))
        return Header(name, bool(data.get("required")), _str(data.get("description")), schema, at)

    def parameter(self, where: Where, node: Any) -> Parameter | None:
        made = self._once(where, node, "parameter", lambda: self._parameter(where, node))
        return cast("Parameter | None", made)

    def _parameter(self, where: Where, node: Any) -> Parameter | None:
        at, data = self.deref(where, node)
        location = data.get("in")
        name = data.get("name")
        if location not in _PARAM_IN or not isinstance(name, str):
            return None
        schema = self.schema(_key(at, "schema"), data.get("schema"))
        if schema is None and isinstance(data.get("content"), dict):
            media = self.content(_key(at, "content"), data["content"])
            schema = media[0].schema if media else None
        return Parameter(
            name=name,
            location=cast(ParamIn, location),
            required=bool(data.get("required")) or location == "path",
            description=_str(data.get("description")),
            deprecated=bool(data.get("deprecated")),
            schema=schema,
            where=at,
            style=_str(data.get("style")),
            explode=data["explode"] if isinstance(data.get("explode"), bool) else None,
        )

    def response(self, where: Where, status: str, node: Any) -> Response:
        made = self._once(
            where, node, "response " + status, lambda: self._response(where, status, node)
        )
        return cast(Response, made)

    def _response(self, where: Where, status: str, node: Any) -> Response:
        at, data = self.deref(where, node)
        headers = tuple(
            self.header(_key(at, "headers/" + _escaped(name)), _str(name), value)
            for name, value in sorted(_dict(data.get("headers")).items(), key=lambda kv: str(kv[0]))
            if _str(name).lower() != "content-type"
        )
        return Response(
            status=status,
            description=_str(data.get("description")),
            headers=headers,
            content=self.content(_key(at, "content"), data.get("content")),
            where=at,
        )

    def security(self, node: Any) -> tuple[SecurityRequirement, ...] | None:
        if not isinstance(node, list):
            return None
        return tuple(
            {
                str(k): tuple(_str(s) for s in (v if isinstance(v, list) else []))
                for k, v in req.items()
            }
            for req in node
            if isinstance(req, dict)
        )

    # --- operations --------------------------------------------------------------

    def operation(
        self,
        method: HttpMethod,
        path: str,
        where: Where,
        node: dict[str, Any],
        path_where: Where,
        path_item: dict[str, Any],
    ) -> Operation:
        params: dict[tuple[str, str], Parameter] = {}
        for base, listing in ((path_where, path_item), (where, node)):
            raw = listing.get("parameters")
            for i, item in enumerate(raw if isinstance(raw, list) else []):
                param = self.parameter(_key(base, f"parameters/{i}"), item)
                if param is not None:
                    key = param.name.lower() if param.location == "header" else param.name
                    params[(param.location, key)] = param  # operation level wins

        body = None
        if "requestBody" in node:
            at, data = self.deref(_key(where, "requestBody"), node["requestBody"])
            body = RequestBody(
                required=bool(data.get("required")),
                description=_str(data.get("description")),
                content=self.content(_key(at, "content"), data.get("content")),
                where=at,
            )

        responses = tuple(
            self.response(_key(where, "responses/" + _escaped(status)), _status(status), value)
            for status, value in sorted(
                _dict(node.get("responses")).items(), key=lambda kv: str(kv[0])
            )
        )
        extensions = {
            k: v
            for source in (path_item, node)
            for k, v in source.items()
            if str(k).startswith("x-")
        }
        tags = node.get("tags")
        return Operation(
            id=_str(node.get("operationId")) or derive_operation_id(method, path),
            method=method,
            path=path,
            tags=tuple(_str(t) for t in tags) if isinstance(tags, list) else (),
            summary=_str(node.get("summary")),
            description=_str(node.get("description")),
            deprecated=bool(node.get("deprecated")),
            parameters=tuple(params.values()),
            request_body=body,
            responses=responses,
            security=self.security(node.get("security")),
            extensions=extensions,
            where=where,
            path_where=path_where,
        )

    def routed_path(self, path: str, paths: dict[str, Any], where: Where) -> str:
        """A path key as a server routes it. OpenAPI's keys begin with `/` (validation says
        so); a key without it (`widgets/{id}`) is read as `/widgets/{id}`, which is what it
        means next to the server URL, unless the spec has that key as well."""
        if path.startswith("/"):
            return path
        if "/" + path in paths:
            raise ApiforgeError(
                self.r.problem(f"paths {path!r} and {'/' + path!r} are the same path", where),
                f"path keys begin with '/': merge the two entries under {'/' + path!r}",
            )
        return "/" + path

    def path_item_operations(
        self, path: str, where: Where, node: Any
    ) -> Iterator[tuple[Operation, dict[str, Any]]]:
        item_where, item = self.deref(where, node)
        for method in HTTP_METHODS:
            if isinstance(item.get(method), dict):
                # an operation behind a $ref is not OpenAPI, but real specs (DigitalOcean) do it
                op_where, raw = self.deref(_key(item_where, method), item[method])
                yield self.operation(method, path, op_where, raw, item_where, item), raw

    # --- the whole API -------------------------------------------------------------

    def build(self) -> Api:
        data, root = self.data, self.root
        operations: list[Operation] = []
        callbacks: list[Webhook] = []
        paths = _dict(data.get("paths"))
        for path, item in paths.items():
            at = _key(root, "paths/" + _escaped(path))
            routed = self.routed_path(_str(path), paths, at)
            for op, raw in self.path_item_operations(routed, at, item):
                operations.append(op)
                callbacks.extend(self.callbacks(op, raw))
        order = {m: i for i, m in enumerate(HTTP_METHODS)}
        operations.sort(key=lambda o: (o.path, order[o.method]))
        operations = self.unique_ids(operations)

        webhooks = [*callbacks]
        for key, source in (("webhooks", "webhooks"), ("x-webhooks", "x-webhooks")):
            for name, item in _dict(data.get(key)).items():
                for op, _ in self.path_item_operations(_str(name), root.child(key, name), item):
                    webhooks.append(Webhook(_str(name), source, op))  # type: ignore[arg-type]
        webhooks.sort(key=lambda w: (w.name, order[w.operation.method]))

        components = _dict(data.get("components"))
        schemas = {}
        for name, node in sorted(
            _dict(components.get("schemas")).items(), key=lambda kv: str(kv[0])
        ):
            at = _key(root, "components/schemas/" + _escaped(name))
            target, body = self.deref(at, node)
            schemas[_str(name)] = Schema(_str(name), body, target, self.properties(target, body))

        info = _dict(data.get("info"))
        return Api(
            title=_str(info.get("title")),
            version=_str(info.get("version")),
            description=_str(info.get("description")),
            openapi=_str(data.get("openapi")),
            servers=tuple(
                Server(
                    _str(s.get("url")),
                    _str(s.get("description")),
                    self.server_variables(s.get("variables")),
                )
                for s in (data.get("servers") or [])
                if isinstance(s, dict)
            ),
            operations=tuple(operations),
            webhooks=tuple(webhooks),
            schemas=schemas,
            security_schemes=self.security_schemes(components),
            security=self.security(data.get("security")) or (),
            extensions={k: v for k, v in data.items() if str(k).startswith("x-")},
            root=self.r.root.name,
            where=root,
        )

    def callbacks(self, op: Operation, raw: dict[str, Any]) -> Iterator[Webhook]:
        for name, node in sorted(_dict(raw.get("callbacks")).items()):
            at, callback = self.deref(op.where.child("callbacks", name), node)
            for expression, item in sorted(callback.items()):
                for cb_op, _ in self.path_item_operations(
                    _str(expression), at.child(expression), item
                ):
                    yield Webhook(f"{op.id}.{name}", "callback", cb_op)

    def security_schemes(self, components: dict[str, Any]) -> tuple[SecurityScheme, ...]:
        schemes = []
        for name, node in sorted(_dict(components.get("securitySchemes")).items()):
            at, data = self.deref(self.root.child("components", "securitySchemes", name), node)
            schemes.append(
                SecurityScheme(
                    name=_str(name),
                    type=_str(data.get("type")),
                    scheme=_str(data.get("scheme")).lower(),
                    location=_str(data.get("in")),
                    parameter_name=_str(data.get("name")),
                    where=at,
                    description=_str(data.get("description")),
                    bearer_format=_str(data.get("bearerFormat")),
                    flows=self.oauth_flows(data.get("flows")),
                    open_id_connect_url=_str(data.get("openIdConnectUrl")),
                )
            )
        return tuple(schemes)

    @staticmethod
    def server_variables(node: Any) -> tuple[ServerVariable, ...]:
        return tuple(
            ServerVariable(
                name=_str(name),
                default=_str(value.get("default")),
                enum=tuple(_str(e) for e in value.get("enum") or () if e is not None)
                if isinstance(value.get("enum"), list)
                else (),
                description=_str(value.get("description")),
            )
            for name, value in _dict(node).items()
            if isinstance(value, dict)
        )

    @staticmethod
    def oauth_flows(node: Any) -> tuple[OAuthFlow, ...]:
        flows = []
        for kind, flow in sorted(_dict(node).items()):
            if not isinstance(flow, dict):
                continue
            flows.append(
                OAuthFlow(
                    kind=_str(kind),
                    authorization_url=_str(flow.get("authorizationUrl")),
                    token_url=_str(flow.get("tokenUrl")),
                    refresh_url=_str(flow.get("refreshUrl")),
                    scopes=tuple(sorted(str(s) for s in _dict(flow.get("scopes")))),
                )
            )
        return tuple(flows)

    @staticmethod
    def unique_ids(operations: list[Operation]) -> list[Operation]:
        """Duplicate operationIds (invalid, but real) get a stable numeric suffix."""
        from dataclasses import replace

        seen: dict[str, int] = {}
        unique = []
        for op in operations:
            count = seen.get(op.id, 0) + 1
            seen[op.id] = count
            unique.append(op if count == 1 else replace(op, id=f"{op.id}_{count}"))
        return unique


def build_api(resolver: Resolver) -> Api:
    with gc_paused():
        return Builder(resolver).build()
