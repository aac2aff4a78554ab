"""Swagger 2.0 → OpenAPI 3.0, in memory, after loading: every later stage reads 3.0.

`convert(doc)` takes the loaded 2.0 `Document` and gives a `ConvertedDocument`: the 3.0 data,
and a map from its JSON pointers back to the 2.0 document's, so every message (validation,
lint, build) still names the 2.0 file's line. The map only records where a converted subtree
came from (`/components/schemas/Pet` ← `/definitions/Pet`, a request body ← its `in: body`
parameter, ...); a pointer below a recorded one keeps its remaining tokens, and one with no
recorded ancestor is the same pointer in both documents (`/info/title`).

What 2.0 says that 3.0 cannot (a `tsv` collection format, `allowEmptyValue` outside a query,
a file parameter outside a form) is left out and said: one `Note` per place, located in the
2.0 document. The mapping follows the OpenAPI 3.0 specification's own "changes from 2.0" and
what swagger2openapi does: `definitions` → `components/schemas`, body and form parameters →
`requestBody` (media types from `consumes`), `produces` → response media types,
`securityDefinitions` → `components/securitySchemes`, `host`/`basePath`/`schemes` →
`servers`, `collectionFormat` → `style`/`explode`, `x-nullable` → `nullable`, a string
`discriminator` → `{propertyName: ...}`; `x-` extensions are kept where they are.

Other files (`$ref: ../common/types.json#/definitions/Error`, AutoRest's common types) are
2.0 too, so they are read and converted along with the document and brought into it: a
schema becomes a component schema (under its own name, or with `2`, `3`… when the document
has that name already), a parameter or a response is written in place (a body parameter goes
into the request body like a local one). The converted document then refers to no other file:
every later stage (validation, the IR, the models step and its cache) sees one document, and a
message about something brought in names the `$ref` that brought it. A file that cannot be
found is left to the reader of the converted document, which names the `$ref`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.spec.load import Document, unescape
from generator.spec.swagger2_refs import RefConverter, escape, ptr

OPENAPI_VERSION = "3.0.3"
_VERSION = "2"  # part of a converted document's digest: a change here is a new document
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
_DEFAULT_MEDIA = "application/json"
_FORM_MEDIA = ("multipart/form-data", "application/x-www-form-urlencoded")
# the parameter keywords that describe its value: they go into its 3.0 `schema`
_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
_OAUTH_FLOWS = {
    "implicit": "implicit",
    "password": "password",
    "application": "clientCredentials",
    "accessCode": "authorizationCode",
}


def is_swagger2(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("swagger", "")).strip() == "2.0"


@dataclass(frozen=True, slots=True)
class Note:
    """Something the 2.0 document says that the converted one does not: at `pointer` (2.0)."""

    kind: str
    message: str
    pointer: str


@dataclass(eq=False)
class ConvertedDocument(Document):
    """A 2.0 document read as 3.0: `data` is the converted document, `name`, `path` and
    `text` are the 2.0 file's; `locate` answers with the 2.0 file's lines."""

    original: Document | None = field(default=None, repr=False)
    origins: dict[str, str] = field(default_factory=dict, repr=False)
    notes: list[Note] = field(default_factory=list, repr=False)
    included: tuple[Document, ...] = field(default=(), repr=False)  # other files brought in

    @functools.cached_property
    def digest(self) -> str:
        """The converted document's own cache key: the 2.0 text's, the other files' it
        brought in, and the converter's."""
        import hashlib  # here: a cold lint does not need it

        assert self.original is not None
        texts = "/".join([self.original.digest, *(d.digest for d in self.included)])
        return hashlib.sha256(f"swagger2/{_VERSION}/{texts}".encode()).hexdigest()

    def original_pointer(self, pointer: str) -> str:
        """The 2.0 document's pointer for a converted document's `pointer`."""
        origins = self.origins
        head, rest = pointer, ""
        while True:
            found = origins.get(head)
            if found is not None:
                return found + rest
            if not head:
                return pointer
            head, _, last = head.rpartition("/")
            rest = f"/{last}{rest}"

    def locate(self, pointer: str) -> tuple[int, int]:
        assert self.original is not None
        return self.original.locate(self.original_pointer(pointer))

    def offset(self, pointer: str, line_starts: list[int]) -> int | None:
        return None  # the text is 2.0: nothing edits it by the converted document's pointers


def convert(doc: Document, load: Callable[[Path], Document] | None = None) -> ConvertedDocument:
    """The 3.0 reading of the 2.0 document `doc` (see the module docstring); `load` reads
    the other files its `$ref`s name (none are read without it, or for a document that is
    not a file)."""
    converter = _Converter(doc.data, doc.path, load)
    data = converter.run()
    return ConvertedDocument(
        name=doc.name,
        path=doc.path,
        text=doc.text,
        data=data,
        is_json=doc.is_json,
        original=doc,
        origins=converter.origins,
        notes=converter.notes,
        included=tuple(d for d in converter.files.values() if d is not None),
    )


def _dict(node: Any) -> dict[Any, Any]:
    return node if isinstance(node, dict) else {}


def _list(node: Any) -> list[Any]:
    return node if isinstance(node, list) else []


def _extensions(node: dict[Any, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if isinstance(k, str) and k.startswith("x-")}


def _media_list(node: Any) -> list[str] | None:
    if not isinstance(node, list):
        return None
    return [m for m in node if isinstance(m, str) and m.strip()]


class _Converter(RefConverter):
    """The 2.0 document as 3.0: its servers, paths and operations, parameters, bodies,
    responses and components (schemas and `$ref`s: `RefConverter`)."""

    def __init__(
        self,
        data: dict[Any, Any],
        path: Path | None = None,
        load: Callable[[Path], Document] | None = None,
    ) -> None:
        super().__init__(data, path, load)
        self.notes: list[Note] = []
        self.produces = _media_list(data.get("produces")) or [_DEFAULT_MEDIA]
        self.consumes = _media_list(data.get("consumes")) or [_DEFAULT_MEDIA]
        self.global_params = _dict(data.get("parameters"))

    def note(self, kind: str, message: str, pointer: str) -> None:
        self.notes.append(Note(kind, message, pointer))

    # --- the document ----------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        src = self.src
        out: dict[str, Any] = {"openapi": OPENAPI_VERSION}
        self.origin("/openapi", "/swagger")
        if "info" in src:
            out["info"] = src["info"]
        servers = self.servers()
        if servers:
            out["servers"] = servers
        out["paths"] = self.paths()
        components = self.components()
        if components:
            out["components"] = components
        for key in ("security", "tags", "externalDocs"):
            if key in src:
                out[key] = src[key]
        out.update(_extensions(src))
        if isinstance(src.get("x-ms-paths"), dict):
            self.note(
                "x-ms-paths",
                "`x-ms-paths` (AutoRest's paths with query strings) is kept as an extension; "
                "its operations are not read",
                "/x-ms-paths",
            )
        return out

    def servers(self) -> list[dict[str, Any]]:
        host = self.src.get("host")
        base = self.src.get("basePath")
        base = base if isinstance(base, str) else ""
        if base and not base.startswith("/"):
            base = "/" + base
        base = base.rstrip("/")
        if not isinstance(host, str) or not host:
            if not base:
                return []
            self.origin("/servers", "/basePath")
            return [{"url": base}]
        schemes = [s for s in _list(self.src.get("schemes")) if isinstance(s, str)] or ["https"]
        self.origin("/servers", "/host")
        return [{"url": f"{scheme}://{host}{base}"} for scheme in schemes]

    def components(self) -> dict[str, Any]:
        src = self.src
        out: dict[str, Any] = {}
        schemas = {
            str(name): self.schema(schema, f"/definitions/{escape(str(name))}")
            for name, schema in _dict(src.get("definitions")).items()
        }
        if schemas:
            self.origin("/components/schemas", "/definitions")
            for name in schemas:
                self.origin(ptr("/components/schemas", name), ptr("/definitions", name))
        parameters: dict[str, Any] = {}
        for name, param in self.global_params.items():
            at = ptr("/parameters", name)
            if isinstance(param, dict) and param.get("in") in ("body", "formData"):
                continue  # becomes part of each request body that uses it
            parameters[str(name)] = self.parameter(param, at, ptr("/components/parameters", name))
        if parameters:
            out["parameters"] = parameters
            self.origin("/components/parameters", "/parameters")
        responses = {
            str(code): self.response(
                response,
                ptr("/responses", code),
                ptr("/components/responses", code),
                self.produces,
            )
            for code, response in _dict(src.get("responses")).items()
        }
        if responses:
            out["responses"] = responses
            self.origin("/components/responses", "/responses")
        schemes = {
            str(name): self.security_scheme(scheme, ptr("/securityDefinitions", name), str(name))
            for name, scheme in _dict(src.get("securityDefinitions")).items()
        }
        if schemes:
            out["securitySchemes"] = schemes
            self.origin("/components/securitySchemes", "/securityDefinitions")
        schemas.update(self.brought_schemas)  # (last: bringing one in may bring in others)
        if schemas:
            out = {"schemas": schemas, **out}
        return out

    def security_scheme(self, scheme: Any, at: str, name: str) -> Any:
        if not isinstance(scheme, dict):
            return scheme
        kind = scheme.get("type")
        out: dict[str, Any] = {}
        if kind == "basic":
            out = {"type": "http", "scheme": "basic"}
        elif kind == "apiKey":
            out = {"type": "apiKey", "name": scheme.get("name"), "in": scheme.get("in")}
        elif kind == "oauth2":
            flow = scheme.get("flow")
            target = _OAUTH_FLOWS.get(flow) if isinstance(flow, str) else None
            if target is None:
                self.note("oauth2-flow", f"unknown OAuth2 flow {flow!r}: left out", at)
                out = {"type": "oauth2", "flows": {}}
            else:
                spec: dict[str, Any] = {}
                for key in ("authorizationUrl", "tokenUrl"):
                    if key in scheme:
                        spec[key] = scheme[key]
                spec["scopes"] = (
                    scheme.get("scopes") if isinstance(scheme.get("scopes"), dict) else {}
                )
                out = {"type": "oauth2", "flows": {target: spec}}
                self.origin(ptr("/components/securitySchemes", name, "flows", target), at)
        else:
            out = {"type": kind}
        if "description" in scheme:
            out["description"] = scheme["description"]
        out.update(_extensions(scheme))
        return out

    # --- paths and operations --------------------------------------------------------

    def paths(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for url, item in _dict(self.src.get("paths")).items():
            at = ptr("/paths", url)
            if not isinstance(item, dict) or (isinstance(url, str) and url.startswith("x-")):
                out[url] = item
                continue
            if "$ref" in item:
                self.note("path-ref", "a path item `$ref` is not followed in 2.0 input", at)
            shared = _list(item.get("parameters"))
            converted: dict[str, Any] = {}
            plain, _ = self.parameters(shared, ptr(at, "parameters"), ptr(at, "parameters"))
            if plain:
                converted["parameters"] = plain
            for method, operation in item.items():
                if method in _METHODS and isinstance(operation, dict):
                    converted[method] = self.operation(operation, ptr(at, method), shared, at)
                elif isinstance(method, str) and method.startswith("x-"):
                    converted[method] = operation
            out[str(url)] = converted
        return out

    def operation(
        self, op: dict[str, Any], at: str, shared: list[Any], path_at: str
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("tags", "summary", "description", "externalDocs", "operationId"):
            if key in op:
                out[key] = op[key]
        own = _list(op.get("parameters"))
        params, bodies = self.parameters(own, ptr(at, "parameters"), ptr(at, "parameters"))
        # parameters of the path item that the operation does not override: the plain ones
        # stay on the path item, a body or form field goes into this operation's body
        overridden = {self.param_key(p) for p, _ in bodies}
        _, shared_bodies = self.parameters(shared, ptr(path_at, "parameters"), None)
        bodies = [b for b in shared_bodies if self.param_key(b[0]) not in overridden] + bodies
        if params:
            out["parameters"] = params
        consumes = _media_list(op.get("consumes")) or self.consumes
        produces = _media_list(op.get("produces"))  # an operation's `[]` says: none
        produces = self.produces if produces is None else produces
        if bodies:
            out["requestBody"] = self.request_body(bodies, consumes, at)
        responses = _dict(op.get("responses"))
        out["responses"] = {
            str(code): (
                self.response(r, ptr(at, "responses", code), ptr(at, "responses", code), produces)
                if not (isinstance(code, str) and code.startswith("x-"))
                else r
            )
            for code, r in responses.items()
        }
        for key in ("deprecated", "security"):
            if key in op:
                out[key] = op[key]
        schemes = _list(op.get("schemes"))
        servers = _list(self.src.get("schemes")) or ["https"]  # as `servers` reads them
        if schemes and "host" in self.src and set(schemes) != set(servers):
            self.note(
                "operation-schemes",
                f"operation `schemes` {schemes} differ from the document's: not carried over "
                "(the operation uses the document's servers)",
                ptr(at, "schemes"),
            )
        out.update(_extensions(op))
        return out

    def param_key(self, param: Any) -> tuple[Any, Any]:
        return (param.get("name"), param.get("in")) if isinstance(param, dict) else (None, None)

    def parameters(
        self, params: list[Any], at: str, out_at: str | None
    ) -> tuple[list[Any], list[tuple[dict[str, Any], str]]]:
        """The plain parameters (converted, in order) and the body and form ones (with their
        2.0 pointers) of a parameter list at `at`; `out_at` is where the plain ones go."""
        plain: list[Any] = []
        bodies: list[tuple[dict[str, Any], str]] = []
        for i, param in enumerate(params):
            where = ptr(at, i)
            resolved, resolved_at = param, where
            ref = param.get("$ref") if isinstance(param, dict) else None
            other = self.other_file(ref, where)
            if other is not None:
                file, node = other
                if isinstance(node, dict) and node.get("in") in ("body", "formData"):
                    with self.reading(file, where):
                        bodies.append((self.body_parameter(node, where), where))
                elif out_at is not None:
                    with self.reading(file, where):
                        plain.append(self.parameter(node, where, ptr(out_at, len(plain))))
                continue
            if isinstance(ref, str) and ref.startswith("#/parameters/"):
                name = unescape(ref[len("#/parameters/") :])
                if name in self.global_params:
                    resolved = self.global_params[name]
                    resolved_at = ptr("/parameters", name)
            if isinstance(resolved, dict) and resolved.get("in") in ("body", "formData"):
                bodies.append((resolved, resolved_at))
                continue
            if out_at is None:
                continue
            converted_at = ptr(out_at, len(plain))
            if isinstance(ref, str):
                plain.append({"$ref": self.ref(ref)})
                self.origin(converted_at, where)
            else:
                plain.append(self.parameter(param, where, converted_at))
        return plain, bodies

    def parameter(self, param: Any, at: str, out_at: str) -> Any:
        """A plain (path, query, header) 2.0 parameter as 3.0: its value keywords → `schema`."""
        self.origin(out_at, at)
        if not isinstance(param, dict):
            return param
        if "$ref" in param:
            other = self.other_file(param["$ref"], at)
            if other is not None:
                with self.reading(other[0], at):
                    return self.parameter(other[1], at, out_at)
            return {**param, "$ref": self.ref(param["$ref"])}
        where = param.get("in")
        out: dict[str, Any] = {}
        for key in ("name", "in", "description", "required"):
            if key in param:
                out[key] = param[key]
        if param.get("allowEmptyValue") is not None:
            if where == "query":
                out["allowEmptyValue"] = param["allowEmptyValue"]
            else:
                self.note(
                    "allowEmptyValue",
                    f"`allowEmptyValue` on a parameter in {where}: OpenAPI 3 allows it only in "
                    "query; left out",
                    ptr(at, "allowEmptyValue"),
                )
        schema = self.value_schema(param, at)
        if schema.get("type") == "file":
            self.note(
                "file-parameter",
                f"a `type: file` parameter in {where}: files are form fields (in: formData); "
                "read as a binary string",
                ptr(at, "type"),
            )
            schema = {**schema, "type": "string", "format": "binary"}
        out["schema"] = schema
        self.origin(ptr(out_at, "schema"), at)
        if "x-nullable" in param:
            self.origin(ptr(out_at, "schema", "nullable"), ptr(at, "x-nullable"))
        style = self.style(param, at, str(where))
        out.update(style)
        out.update({k: v for k, v in _extensions(param).items() if k != "x-nullable"})
        return out

    def value_schema(self, param: dict[str, Any], at: str) -> dict[str, Any]:
        """The schema of a non-body parameter, form field, header or `items`: its value
        keywords, `items` converted the same way (a nested `collectionFormat` is dropped)."""
        schema: dict[str, Any] = {}
        for key in _SCHEMA_KEYS:
            if key in param:
                schema[key] = param[key]
        if isinstance(schema.get("items"), dict):
            items = schema["items"]
            if "$ref" in items:
                schema["items"] = self.schema(items, ptr(at, "items"))
            else:
                schema["items"] = self.value_schema(items, ptr(at, "items"))
                if "collectionFormat" in items and items.get("type") == "array":
                    self.note(
                        "collectionFormat",
                        "a nested array's `collectionFormat` has no OpenAPI 3 equivalent; left out",
                        ptr(at, "items", "collectionFormat"),
                    )
        if param.get("x-nullable") is True:
            schema["nullable"] = True
        for key, value in _extensions(param).items():
            if key not in ("x-nullable",) and key.startswith("x-ms-enum"):
                schema[key] = value  # AutoRest's enum names belong with the enum
        return schema

    def style(self, param: dict[str, Any], at: str, where: str) -> dict[str, Any]:
        """`collectionFormat` as 3.0 `style`/`explode` (2.0's default is csv)."""
        if param.get("type") != "array":
            return {}
        fmt = param.get("collectionFormat", "csv")
        if fmt == "csv":
            return {"style": "form", "explode": False} if where in ("query", "formData") else {}
        if fmt == "multi" and where in ("query", "formData"):
            return {"style": "form", "explode": True}
        if fmt == "ssv" and where in ("query", "formData"):
            return {"style": "spaceDelimited", "explode": False}
        if fmt == "pipes" and where in ("query", "formData"):
            return {"style": "pipeDelimited", "explode": False}
        self.note(
            "collectionFormat",
            f"`collectionFormat: {fmt}` in {where} has no OpenAPI 3 equivalent; "
            "left out (read as comma-separated)",
            ptr(at, "collectionFormat"),
        )
        return {"style": "form", "explode": False} if where == "query" else {}

    def request_body(
        self, bodies: list[tuple[dict[str, Any], str]], consumes: list[str], at: str
    ) -> dict[str, Any]:
        """The request body of an operation's body or form parameters (with their 2.0
        pointers), at `at` (the operation)."""
        body = [(p, a) for p, a in bodies if p.get("in") == "body"]
        form = [(p, a) for p, a in bodies if p.get("in") == "formData"]
        if not body:
            return self.form_body(form, consumes, at)
        for _, extra_at in body[1:]:
            self.note("body", "a second `in: body` parameter: left out", extra_at)
        if form:
            self.note(
                "formData",
                "form parameters beside an `in: body` one: left out (only one body)",
                form[0][1],
            )
        return self.body(*body[0], consumes, at)

    def body(
        self, param: dict[str, Any], param_at: str, consumes: list[str], at: str
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "description" in param:
            out["description"] = param["description"]
        media = [m for m in consumes if m not in _FORM_MEDIA] or [_DEFAULT_MEDIA]
        schema = param.get("schema", {})
        out["content"] = {}
        self.origin(ptr(at, "requestBody"), param_at)
        for m in media:
            out["content"][m] = {"schema": self.schema(schema, ptr(param_at, "schema"))}
            self.origin(ptr(at, "requestBody", "content", m, "schema"), ptr(param_at, "schema"))
        if param.get("required"):
            out["required"] = True
        if isinstance(param.get("name"), str):
            out["x-codegen-request-body-name"] = param["name"]
        out.update(_extensions(param))
        return out

    def form_body(
        self, form: list[tuple[dict[str, Any], str]], consumes: list[str], at: str
    ) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        encoding: dict[str, Any] = {}
        fields: list[tuple[str, str]] = []  # (property name, the form parameter's pointer)
        has_file = False
        self.origin(ptr(at, "requestBody"), form[0][1])
        for param, param_at in form:
            name = str(param.get("name", ""))
            schema = self.value_schema(param, param_at)
            if schema.get("type") == "file":
                has_file = True
                schema = {**schema, "type": "string", "format": "binary"}
            if "description" in param:
                schema["description"] = param["description"]
            properties[name] = schema
            fields.append((name, param_at))
            if param.get("required"):
                required.append(name)
            style = self.style(param, param_at, "formData")
            if style:
                encoding[name] = style
            if param.get("allowEmptyValue") is not None:
                self.note(
                    "allowEmptyValue",
                    "`allowEmptyValue` on a form field has no OpenAPI 3 equivalent; left out",
                    ptr(param_at, "allowEmptyValue"),
                )
        media = [m for m in consumes if m in _FORM_MEDIA]
        if not media:
            media = [_FORM_MEDIA[0] if has_file else _FORM_MEDIA[1]]
        elif has_file and _FORM_MEDIA[0] not in media:
            self.note(
                "formData",
                "a file form field, but `consumes` has no multipart/form-data: read as multipart",
                form[0][1],
            )
            media = [_FORM_MEDIA[0]]
        schema_out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema_out["required"] = required
        content: dict[str, Any] = {}
        for m in media:
            content[m] = {"schema": schema_out}
            if encoding:
                content[m]["encoding"] = encoding
            for name, param_at in fields:
                self.origin(
                    ptr(at, "requestBody", "content", m, "schema", "properties", name), param_at
                )
        out: dict[str, Any] = {"content": content}
        if required:
            out["required"] = True
        return out

    # --- responses and schemas -------------------------------------------------------

    def response(self, response: Any, at: str, out_at: str, produces: list[str]) -> Any:
        self.origin(out_at, at)
        if not isinstance(response, dict):
            return response
        if "$ref" in response:
            other = self.other_file(response["$ref"], at)
            if other is not None:
                with self.reading(other[0], at):
                    return self.response(other[1], at, out_at, produces)
            return {"$ref": self.ref(response["$ref"])}
        out: dict[str, Any] = {"description": response.get("description", "")}
        headers = _dict(response.get("headers"))
        if headers:
            out["headers"] = {}
            for name, header in headers.items():
                header_at = ptr(at, "headers", name)
                if not isinstance(header, dict):
                    out["headers"][name] = header
                    continue
                converted: dict[str, Any] = {}
                if "description" in header:
                    converted["description"] = header["description"]
                converted["schema"] = self.value_schema(header, header_at)
                self.origin(ptr(out_at, "headers", name, "schema"), header_at)
                if header.get("type") == "array" and header.get("collectionFormat", "csv") != "csv":
                    self.note(
                        "collectionFormat",
                        f"`collectionFormat: {header['collectionFormat']}` in a header has no "
                        "OpenAPI 3 equivalent; left out (read as comma-separated)",
                        ptr(header_at, "collectionFormat"),
                    )
                converted.update(_extensions(header))
                out["headers"][name] = converted
        examples = _dict(response.get("examples"))
        content: dict[str, Any] = {}
        for m in produces:
            entry: dict[str, Any] = {}
            if "schema" in response:
                entry["schema"] = self.schema(response["schema"], ptr(at, "schema"))
                self.origin(ptr(out_at, "content", m, "schema"), ptr(at, "schema"))
            if m in examples:  # without a schema too: the example says what the body is
                entry["example"] = examples[m]
                self.origin(ptr(out_at, "content", m, "example"), ptr(at, "examples", m))
            if entry:
                content[m] = entry
        if content:
            out["content"] = content
        for m in examples:
            if m not in content:
                self.note(
                    "example",
                    f"an example for {m}, which the operation does not produce: left out",
                    ptr(at, "examples", m),
                )
        out.update(_extensions(response))
        return out
