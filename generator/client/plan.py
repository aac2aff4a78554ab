"""The client plan: what `apiforge client` writes (its file list is `files.py`).

Naming (stable, documented in the generated README):

- resource: snake_case of the operation's first tag, or from its path when untagged
  (`resources`); two tags with the same snake_case get `_2`, `_3`… in sorted tag order; names
  the runtime base classes use are avoided (a trailing `_`);
- method: on a tagged resource snake_case of the operationId, on a path-derived one what it does
  (`list`, `create`, `retrieve`, `update`, `delete`, the action's name), collisions falling back
  to the operationId's name (`method_names`); `with_raw_response.<method>` returns `Raw[T]`
  (status, headers, ETag, replay flag, rate limit and the parsed value); an operation answering
  with bytes, or with events beside JSON, has a `<method>_stream` twin reading the body as it
  arrives;
- keyword arguments: snake_case of the parameter name, unique within the operation, never one of
  the fixed arguments (`body`, `idempotency_key`, `if_match`, `if_none_match`, `extra_headers`,
  `max_retries`, `timeout`);
- credentials: one constructor argument per security scheme, named after it (see
  `auth`).
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from generator.client.auth import (
    example_arguments,
    plan_auth,
    plan_security,
)
from generator.client.body_args import body_arguments, value_example
from generator.client.files import client_files
from generator.client.media import plan_media
from generator.client.method_names import (
    CLASS_SCOPE_NAMES,
    RESOURCE_NAMES,
    client_methods,
)
from generator.client.pages import PagePlan, plan_page
from generator.client.plan_types import (
    ChildPlan,
    ClientPlan,
    Kept,
    OperationPlan,
    ParamPlan,
    PathPart,
    ResourcePlan,
    WebhookPlan,
)
from generator.client.servers import plan_servers
from generator.errors import ApiforgeError, Problem
from generator.ir import Api, MediaType, Operation, Parameter, Webhook
from generator.models.build import models_for
from generator.models.inline import model_schemas
from generator.patterns.idempotency import key_header
from generator.patterns.pagination import resolve
from generator.render.escape import py_string
from generator.render.form_encoding import encoding_literal
from generator.render.names import NameAllocator, package_version, safe_identifier, snake_case
from generator.render.plan_cache import PlanCache, PlanInputs, resource_plans
from generator.render.pytypes import TypeMapper, is_plain_class, query_shape, query_style
from generator.render.resources import Resource
from generator.render.writer import (
    Deferred,
    WriteReport,
    marker_line,
    write_tree,
)
from generator.schemas import first_json, is_json

FIXED_ARGUMENTS = (
    "body",
    "idempotency_key",
    "if_match",
    "if_none_match",
    "extra_headers",
    "extra_query",
    "extra_body",
    "part_headers",
    "max_retries",
    "timeout",
)
# Locals and module names a method body uses: no keyword argument may shadow them.
_BODY_NAMES = (
    "headers",
    "cookies",
    "response",
    "options",
    "job",
    "raw",
    "models",
    "pydantic",
    "httpx",
)
_CONCURRENCY_HEADERS = {"if-match", "if-none-match"}
# The constructor's own arguments; security-scheme arguments avoid them.
CONSTRUCTOR_ARGUMENTS = (
    "base_url",
    "server",
    "timeout",
    "max_retries",
    "default_headers",
    "user_agent",
    "http_client",
    "transport",
    "sleep",
    "clock",
    "jitter",
    "wait_on_rate_limit",
    "max_retry_delay",
    "strict_response_validation",
)


def default_package_name(api: Api) -> str:
    return snake_case(f"{api.title} client", fallback="api_client")


def check_package_name(name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or safe_identifier(name) != name:
        raise ApiforgeError(
            Problem(f"--package {name!r} is not a usable Python package name"),
            "use lower-case letters, digits and underscores, e.g. `--package acme_client`",
        )
    return name


# a string parameter's `format` → what it takes (a string still passes as it is)
_DATE_TYPES = {"date": "datetime.date | str", "date-time": "datetime.datetime | str"}


def _example(type_expr: str) -> str:
    if type_expr.startswith("Literal["):
        return type_expr[len("Literal[") :].split(", ")[0].rstrip("]").split(" | ")[0]
    base = type_expr.split(" | ")[0]
    return {
        "str": '"..."',
        "int": "1",
        "float": "1.0",
        "bool": "True",
    }.get(base, "[]" if base.startswith("list[") else "{}" if base.startswith("dict[") else '"..."')


def body_example(api: Api, media: MediaType | None) -> str:
    """`{"name": value, ...}` of a body's required members, for the README ("{}" when it has
    none or no object schema)."""
    if media is None or media.schema is None:
        return "{}"
    data = resolve(api, media.schema.data)
    props = data.get("properties")
    if not isinstance(props, dict):
        return "{}"
    required = [r for r in data.get("required") or () if r in props]
    members = [f"{json.dumps(str(name))}: {value_example(api, props[name])}" for name in required]
    return "{" + ", ".join(members[:6]) + "}"


def _literal_example(type_expr: str) -> str:
    # the first literal of `Literal[a, b] | None`: parse it back rather than splitting text
    try:
        node = ast.parse(type_expr, mode="eval").body
    except SyntaxError:
        return '"..."'
    while isinstance(node, ast.BinOp):
        node = node.left
    if isinstance(node, ast.Subscript):
        inner = node.slice
        first = inner.elts[0] if isinstance(inner, ast.Tuple) else inner
        return ast.unparse(first)
    return '"..."'


class _Planner:
    def __init__(self, api: Api, mapper: TypeMapper, cache: PlanCache | None = None) -> None:
        self.api = api
        self.types = mapper
        self.auth = plan_auth(api, CONSTRUCTOR_ARGUMENTS)
        self.kept: dict[str, Kept] = {}  # module → its operations' views from the plan cache
        self.keys: dict[str, str | None] = {}  # module → its plan-cache key, when planned
        self.bodies = body_arguments(api, mapper, cache)  # every body's members, TypedDicts

    def params(self, op: Operation, allocator: NameAllocator) -> tuple[ParamPlan, ...]:
        pattern_headers = set(_CONCURRENCY_HEADERS)
        idem = op.patterns.idempotency
        if idem is not None:
            pattern_headers.add(idem.header.lower())
        order = {"path": 0, "query": 1, "header": 2, "cookie": 3}
        plans = []
        for p in sorted(
            (p for p in op.parameters if p.location in order),
            key=lambda p: order[p.location],
        ):
            if p.location == "header" and p.name.lower() in pattern_headers:
                continue
            plans.append(self.param(op, p, allocator))
        return tuple(plans)

    def param(self, op: Operation, p: Parameter, allocator: NameAllocator) -> ParamPlan:
        name = allocator.allocate((p.location, p.name), snake_case(p.name, fallback="param"))
        schema = p.schema
        type_expr = self.types.type_of(schema.data if schema else None, mode="param")
        if p.location in ("path", "header", "cookie") and type_expr.startswith(("list[", "dict[")):
            type_expr = "str"
        if type_expr == "str" and schema is not None:
            # the runtime writes a date as ISO 8601, a date-time as RFC 3339 (`_params.iso`)
            type_expr = _DATE_TYPES.get(str(schema.data.get("format")), type_expr)
        styled = query_style(p, query_shape(type_expr)) if p.location == "query" else None
        required = p.required or p.location == "path"
        example = (
            _literal_example(type_expr) if type_expr.startswith("Literal[") else _example(type_expr)
        )
        return ParamPlan(
            name=name,
            wire=p.name,
            location=p.location,
            type=type_expr,
            required=required,
            description=p.description,
            example=example,
            style=styled[0] if styled else "",
            explode=styled[1] if styled else True,
            deprecated=p.deprecated,
        )

    def path_parts(self, op: Operation, params: Sequence[ParamPlan]) -> tuple[PathPart, ...]:
        by_wire = {p.wire: p.name for p in params if p.location == "path"}
        parts: list[PathPart] = []
        for piece in re.split(r"(\{[^{}]*\})", op.path):
            if not piece:
                continue
            if piece.startswith("{") and piece.endswith("}") and piece[1:-1] in by_wire:
                parts.append(PathPart(None, by_wire[piece[1:-1]]))
            else:
                parts.append(PathPart(piece, None))
        return tuple(parts)

    def response_type(self, op: Operation) -> tuple[str | None, bool]:
        """(parse type or None for no body, whether any 2xx has a JSON body)."""
        types: list[str] = []
        for response in sorted(op.success_responses, key=lambda r: r.status):
            media = first_json(response.content)
            if media is None:
                continue
            schema = media.schema
            types.append(
                self.types.type_of(
                    schema.data if schema else None, name=schema.name if schema else None
                )
            )
        unique = list(dict.fromkeys(types))
        if not unique:
            return None, False
        if "Any" in unique:
            return "Any", True
        return " | ".join(unique), True

    def form_type(self, media: MediaType) -> str:
        """A form body's type: its model (the runtime sends its fields as form fields and its
        bytes as files) or a plain mapping."""
        schema = media.schema
        model = self.types.type_of(schema.data, name=schema.name) if schema else "Any"
        if model.startswith("models.") and is_plain_class(model):
            return f"{model} | Mapping[str, Any]"
        return "Mapping[str, Any]"

    def error_types(self, op: Operation) -> str:
        """The models of the JSON error bodies the operation declares, by status, as a dict
        expression ("" when none): a problem document is read as `ProblemDetails` anyway."""
        entries = []
        for response in op.error_responses:
            media = next(
                (
                    m
                    for m in response.content
                    if is_json(m.content_type) and "problem" not in m.content_type
                ),
                None,
            )
            if media is None or media.schema is None:
                continue
            model = self.types.type_of(media.schema.data, name=media.schema.name)
            if model.startswith("models.") and is_plain_class(model):
                entries.append(f"{py_string(response.status)}: {model}")
        return "{" + ", ".join(entries) + "}" if entries else ""

    def job_result(self, op: Operation) -> str:
        job = op.patterns.async_job
        status = self.api.operation(job.status_operation) if job and job.status_operation else None
        if status is None:
            return "Any"
        for response in sorted(status.success_responses, key=lambda r: r.status):
            media = first_json(response.content)
            if media is None or media.schema is None:
                continue
            data = media.schema.data
            props = data.get("properties")
            if isinstance(props, dict) and "result" in props:
                return self.types.type_of(props["result"])
        return "Any"

    def body(self, op: Operation) -> tuple[str | None, str, str, str]:
        """The body argument of `op`'s method: its type (None: no body), its kind (json, data,
        files, content), its media type and a form body's encodings (`encoding_literal`)."""
        if op.request_body is None or not op.request_body.content:
            return None, "json", "", ""
        media = first_json(op.request_body.content)
        if media is not None:
            schema = media.schema
            inner = self.types.type_of(
                schema.data if schema else None, name=schema.name if schema else None
            )
            if op.id in self.bodies.whole and not is_plain_class(inner):
                return self.bodies.whole[op.id], "json", media.content_type, ""  # TypedDicts
            if is_plain_class(inner) and inner.startswith("models."):  # a dict is taken too
                return f"{inner} | dict[str, Any]", "json", media.content_type, ""
            return inner, "json", media.content_type, ""
        media = op.request_body.content[0]
        ct = media.content_type.split(";")[0].strip().lower()
        if ct == "application/x-www-form-urlencoded":
            return (
                self.form_type(media),
                "data",
                media.content_type,
                encoding_literal(self.api, media),
            )
        if ct.startswith("multipart/"):
            return (
                self.form_type(media),
                "files",
                media.content_type,
                encoding_literal(self.api, media, part_headers=True),
            )
        return "bytes", "content", media.content_type, ""

    def body_args(self, op: Operation, allocator: NameAllocator) -> tuple[ParamPlan, ...]:
        """The body's members as keyword arguments, named after the parameters'
        (`body_args`)."""
        return tuple(
            ParamPlan(
                name=allocator.allocate(("body", m.wire), snake_case(m.wire, fallback="member")),
                wire=m.wire,
                location="body",
                type=m.type,
                required=m.required,
                description=m.description,
                example=m.example,
            )
            for m in self.bodies.by_operation.get(op.id, ())
        )

    def operation(self, op: Operation, name: str) -> OperationPlan:
        allocator = NameAllocator((*FIXED_ARGUMENTS, *_BODY_NAMES))
        params = self.params(op, allocator)
        body_args = self.body_args(op, allocator)
        body_type, body_kind, body_media, encoding = self.body(op)
        content = op.request_body.content if op.request_body else ()
        chosen = first_json(content) or (content[0] if content else None)
        parse_type, _ = self.response_type(op)
        answers = plan_media(op, self.types)
        conc = op.patterns.concurrency
        if_none_match = bool(conc and conc.if_none_match)
        job = op.patterns.async_job
        job_result = None
        page: PagePlan | None = None
        if job is not None and op.response("202") is not None:
            job_result = self.job_result(op)
            result = f"JobHandle[{job_result}]"
            parse_type = None
        elif answers.kind in ("text", "bytes", "sse"):
            parse_type = None
            result = {"text": "str", "bytes": "bytes"}.get(
                answers.kind, f"EventStream[{answers.event_type}]"
            )
        elif parse_type is None:
            result = "None"
        elif not if_none_match and (page := plan_page(op, self.api, self.types)) is not None:
            result = f"SyncPage[{page.item}, {parse_type}]"
        else:
            result = parse_type
            if if_none_match and "None" not in result.split(" | "):
                result = f"{result} | None"
        idem = op.patterns.idempotency
        return OperationPlan(
            op=op,
            name=name,
            method=op.method.upper(),
            path_parts=self.path_parts(op, params),
            params=params,
            body=body_type,
            body_args=body_args if body_type else (),
            body_required=bool(op.request_body and op.request_body.required),
            body_kind=body_kind,
            body_media_type=body_media,
            encoding=encoding,
            part_headers=tuple(
                (field, header)
                for field, entry in (chosen.encoding.items() if chosen else ())
                for header, _ in entry.open_headers
            )
            if body_kind == "files"
            else (),
            key_header=key_header(self.api, op),
            body_example=('b"..."' if body_kind == "content" else body_example(self.api, chosen))
            if body_type
            else "{}",
            result=result,
            parse_type=parse_type,
            parse_plain=parse_type is not None and is_plain_class(parse_type),
            idempotency_header=idem.header if idem else None,
            if_match=bool(conc and conc.if_match),
            if_match_required=bool(conc and conc.if_match_required),
            if_none_match=if_none_match,
            job_result=job_result,
            summary=op.summary,
            description=op.description,
            deprecated=op.deprecated,
            security=plan_security(op.patterns.security, self.auth),
            page=page,
            media=answers,
            errors=self.error_types(op),
        )

    def resources(self, cache: PlanCache | None = None) -> list[ResourcePlan]:
        """One plan per resource (`method_names.client_methods`). With `cache`, a resource's
        operations planned by an earlier run come from it."""
        layout = client_methods(self.api)
        groups = layout.resources
        classes = NameAllocator(
            {"Client", "AsyncClient", "Raw", "JobHandle", "AsyncJobHandle", "SyncPage"}
        )
        names = {g.path: classes.allocate(g.path, f"{g.pascal}Resource") for g in groups}
        plans = []
        for group in groups:
            children = tuple(
                ChildPlan(c, names[(*group.path, c)], _module_of(groups, (*group.path, c)))
                for c in group.children
            )
            resource = ResourcePlan(
                attribute=group.attribute,
                dotted=".".join(group.path),
                module=group.module,
                class_name=names[group.path],
                label=group.label,
                operations=(),
                children=children,
            )
            method_names = tuple(
                (layout.names[op.id].name, layout.names[op.id].source) for op in group.operations
            )
            make = functools.partial(self.resource_operations, group, method_names)
            bodies = tuple(
                (repr(self.bodies.by_operation.get(op.id)), self.bodies.whole.get(op.id))
                for op in group.operations
            )
            names_of = (repr(resource), method_names, bodies)
            ops, kept, key = resource_plans(cache, names_of, group.operations, Kept, make)
            if kept is not None:
                self.kept[group.module] = kept
            else:
                self.keys[group.module] = key
            plans.append(replace(resource, operations=ops))
        return plans

    def resource_operations(
        self, group: Resource, method_names: Sequence[tuple[str, str]]
    ) -> tuple[OperationPlan, ...]:
        """The plans of `group`'s operations, named `method_names` ((name, where it comes
        from) each)."""
        methods = NameAllocator((*CLASS_SCOPE_NAMES, *RESOURCE_NAMES, *group.children))
        ops = [
            replace(self.operation(op, methods.allocate(op.id, name)), named_by=source)
            for op, (name, source) in zip(group.operations, method_names, strict=True)
        ]
        return tuple(
            replace(
                plan,
                stream_name=methods.allocate(
                    ("stream", plan.op.id), plan.name.rstrip("_") + "_stream"
                ),
            )
            if plan.media.stream and not plan.job_result
            else plan
            for plan in ops
        )

    def webhooks(self) -> list[WebhookPlan]:
        allocator = NameAllocator({"verify_webhook", "parse_event"})
        plans = []
        for hook in self.api.webhooks:
            plans.append(self.webhook(hook, allocator))
        return plans

    def webhook(self, hook: Webhook, allocator: NameAllocator) -> WebhookPlan:
        type_expr = "Any"
        body = hook.operation.request_body
        if body is not None:
            media = first_json(body.content)
            if media is not None and media.schema is not None:
                type_expr = self.types.type_of(media.schema.data, name=media.schema.name)
        sig = hook.signature
        header = sig.signature_header if sig and sig.scheme == "stripe-style" else None
        name = allocator.allocate((hook.source, hook.name), "verify_" + snake_case(hook.name))
        return WebhookPlan(
            name=hook.name,
            function=name,
            type=type_expr,
            plain=is_plain_class(type_expr),
            signature_header=header,
            description=hook.operation.summary or hook.operation.description,
        )


def _module_of(groups: Sequence[Resource], path: tuple[str, ...]) -> str:
    return next(g.module for g in groups if g.path == path)


def plan_client(
    api: Api,
    *,
    spec_source: Path | str,
    spec_name: str,
    package: str | None = None,
    models: tuple[str | Deferred, Mapping[str, str]] | None = None,
    inputs: PlanInputs | None = None,
) -> ClientPlan:
    """Everything `apiforge client` writes for `api`. `spec_source` is what the models step
    reads (the root file's path, or the spec text from stdin); `spec_name` is the spec's name
    as messages and markers show it. `models`: the models module's text (or a `Deferred`
    one) and the schema → class map of the classes it defines, when the caller has them
    (`apiforge generate`); otherwise they come from `models_for`. `inputs`: what `api` was
    built from, for the per-resource plan cache (`plan_cache`; None: no cache)."""
    package = check_package_name(package or default_package_name(api))
    marker = marker_line(spec_name)
    models_source: str | Deferred
    classes: Mapping[str, str]
    lifted = model_schemas(api)  # the component schemas and the operations' inline ones
    if models is None:
        models_source, classes = models_for(
            lifted, spec_source, marker=marker, used_in="client methods"
        )
    else:
        models_source, classes = models
    mapper = TypeMapper({k: s.data for k, s in lifted.schemas.items()}, classes)
    scope = f"{marker}\0{package}"
    cache = PlanCache("client", scope, api, inputs, classes)
    planner = _Planner(api, mapper, cache)
    version = package_version(api.version)
    taken = [*CONSTRUCTOR_ARGUMENTS, *(a.argument for a in planner.auth if a.argument)]
    servers = plan_servers(api, taken)
    plan = ClientPlan(
        package=package,
        distribution=package.replace("_", "-"),
        version=version,
        api_version=api.version,
        title=api.title,
        description=api.description,
        spec_name=spec_name,
        base_url=servers.default_url,
        servers=servers,
        user_agent=f"{package}/{version}",
        resources=planner.resources(cache),
        auth=planner.auth,
        auth_example=example_arguments(api, planner.auth),
        log_env=f"{package.upper()}_LOG",
        webhooks=planner.webhooks(),
    )
    plan.files = client_files(
        plan,
        planner.kept,
        planner.keys,
        cache,
        typed_dicts=planner.bodies.typed_dict_list(),
        models_source=models_source,
        keep=frozenset(classes.values()),
        marker=marker,
        scope=scope,
    )
    return plan


def write_client(
    api: Api,
    out_dir: Path | str,
    *,
    spec_source: Path | str,
    spec_name: str,
    package: str | None = None,
) -> tuple[ClientPlan, WriteReport]:
    plan = plan_client(api, spec_source=spec_source, spec_name=spec_name, package=package)
    return plan, write_tree(plan.files, out_dir)


__all__ = ["ClientPlan", "plan_client", "py_string", "write_client"]
