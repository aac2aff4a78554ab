"""The server plan: which files `apiforge server` writes, with which context.

The generated project (package `<pkg>`):

- `<pkg>/main.py` — `create_app(settings=None, *, handlers=None)` and the module-level `app`;
- `<pkg>/settings.py` — the runtime's `Settings` plus the store URLs this server needs;
- `<pkg>/models.py` — Pydantic v2 models (datamodel-code-generator);
- `<pkg>/interfaces.py` — one base class per resource: the typed interface handlers implement;
  every method answers 501 until a handler overrides it;
- `<pkg>/routers/<resource>.py` — one router per resource: typed parameters and bodies,
  declared status codes, response models, and every pattern the operation declares;
- `<pkg>/handlers/<resource>.py` — hand-written business logic, created once, never
  overwritten; a regeneration that finds a method in a module that no longer owns it warns
  where it now belongs (`handlers.misplaced_handlers`);
- `<pkg>/jobs.py` (202 jobs), `<pkg>/events.py` (webhook events) when the spec has them;
- `<pkg>/runtime/` — templates/server/runtime, copied verbatim.

Naming (stable): module = the operation's resource (`resources.group_operations`: its first
tag, else its path, `customers_sources` for `/v1/customers/{id}/sources`), unique in sorted
order; method = snake_case of the operationId, unique within its tag; keyword
arguments = snake_case of parameter names, never `self`, `ctx` or `body`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.ir import Api, Operation, Parameter
from generator.models.build import models_for
from generator.models.inline import model_schemas
from generator.render.escape import py_literal
from generator.render.form_encoding import encoding_literal, is_form
from generator.render.names import NameAllocator, package_version, safe_identifier, snake_case
from generator.render.plan_cache import PlanCache, PlanInputs, resource_plans
from generator.render.pytypes import (
    TypeMapper,
    is_plain_class,
    query_shape,
    query_style,
    union_members,
)
from generator.render.resources import Resource, group_operations
from generator.render.writer import (
    Deferred,
    WriteReport,
    marker_line,
    write_tree,
)
from generator.schemas import component_name, first_json
from generator.schemas import resolved as _resolved
from generator.schemas import resolved_data as _resolved_data
from generator.server.conformance import (
    declared_errors,
    job_result_schema,
    job_schema,
    moved_own_paths,
    plan_job_view,
)
from generator.server.error_views import plan_error_views
from generator.server.events import EventPlanner
from generator.server.files import server_files
from generator.server.handlers import (
    MissingHandler,
    misplaced_handlers,
    missing_handlers,
    missing_verifiers,
)
from generator.server.nulls import NullRules
from generator.server.params import constraints, default_literal
from generator.server.params import file_type as _file_type
from generator.server.params import scalar_enum as _scalar_enum
from generator.server.params import text_formats as _text_formats
from generator.server.path_names import aliased_path_names, wire_named_path
from generator.server.plan_types import (
    JobViewPlan,
    Kept,
    OperationPlan,
    ParamPlan,
    ServerPlan,
    TagPlan,
)
from generator.server.security import auth_plan, scheme_plans
from generator.server.settings import problem_base, settings_rows
from generator.spec.located import warn_at

# Module names that annotations inside generated classes use: no method may shadow them.
_CLASS_SCOPE_NAMES = ("models", "httpx", "pydantic")

_CONCURRENCY_HEADERS = frozenset({"if-match", "if-none-match"})
_HANDLER_ARGUMENTS = ("self", "ctx", "body")
_API_RATE_LIMIT_KEYS = ("x-rate-limit", "x-ratelimit")
_FAMILIES = ("x-ratelimit", "ratelimit", "ietf")
_FAMILY_HEADERS = {
    "x-ratelimit": "X-RateLimit-Limit/-Remaining/-Reset",
    "ratelimit": "RateLimit-Limit/-Remaining/-Reset",
    "ietf": "RateLimit + RateLimit-Policy",
}


def default_package_name(api: Api) -> str:
    return snake_case(f"{api.title} server", fallback="api_server")


def check_package_name(name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or safe_identifier(name) != name:
        raise ApiforgeError(
            Problem(f"--package {name!r} is not a usable Python package name"),
            "use lower-case letters, digits and underscores, e.g. `--package acme_server`",
        )
    return name


_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _pystr(value: str) -> str:
    from generator.render.escape import py_string

    return py_string(value)


def _tuple(values: Sequence[str]) -> str:
    """A tuple literal of strings."""
    from generator.render.escape import py_tuple

    return py_tuple([_pystr(v) for v in values])


def _kind_patterns(kind: str, submit: Operation | None, media_types: Sequence[str]) -> list[str]:
    """The patterns a route's docstring lists for its kind (a job, its status or cancel
    route) and its request media types."""
    patterns: list[str] = []
    if kind == "job":
        patterns.append("202 job: Location + Retry-After; the handler is the job's work")
    elif kind == "job_status":
        patterns.append(f"served from the job store (jobs of {submit.id if submit else '?'})")
    elif kind == "job_cancel":
        patterns.append("cancels a job in the job store")
    if media_types:
        patterns.append("415 unless Content-Type is " + ", ".join(media_types))
    return patterns


class _Planner:
    def __init__(self, api: Api, mapper: TypeMapper) -> None:
        self.api = api
        self.types = mapper
        self.api_family = self._api_rate_limit()
        self.kept: dict[str, Kept] = {}  # module → its operations' views from the plan cache
        self.keys: dict[str, str | None] = {}  # module → its plan-cache key, when planned
        self.job_ops: dict[str, tuple[str, Operation]] = {}  # status/cancel op id → kind, submit
        for op in api.operations:
            job = op.patterns.async_job
            if job is None or op.response("202") is None or job.status_operation is None:
                continue
            self.job_ops.setdefault(job.status_operation, ("job_status", op))
            if job.cancel_operation:
                self.job_ops.setdefault(job.cancel_operation, ("job_cancel", op))

    def _api_rate_limit(self) -> str | None:
        """The family every operation gets when the API declares rate limits as a whole
        (a root `x-rate-limit` / `x-ratelimit` extension: true or a family name)."""
        for key in _API_RATE_LIMIT_KEYS:
            value = self.api.extensions.get(key)
            if isinstance(value, str) and value.lower() in _FAMILIES:
                return value.lower()
            if value is True or isinstance(value, Mapping):
                families = [
                    op.patterns.rate_limit.family
                    for op in self.api.operations
                    if op.patterns.rate_limit
                ]
                return max(sorted(set(families)), key=families.count) if families else "ratelimit"
        return None

    def is_job(self, op: Operation) -> bool:
        job = op.patterns.async_job
        return bool(job and op.response("202") is not None and job.status_operation)

    def jobs_base_path(self) -> str:
        for op in self.api.operations:
            job = op.patterns.async_job
            if self.is_job(op) and job and job.status_operation:
                status = self.api.operation(job.status_operation)
                if status is not None:
                    return re.sub(r"/\{[^/}]*\}/?$", "", status.path) or "/"
        return "/jobs"

    # -- parameters ------------------------------------------------------------------

    def params(self, op: Operation, kind: str) -> tuple[ParamPlan, ...]:
        skip = set(_CONCURRENCY_HEADERS)
        idem = op.patterns.idempotency
        if idem is not None:
            skip.add(idem.header.lower())
        allocator = NameAllocator(_HANDLER_ARGUMENTS)
        order = {"path": 0, "query": 1, "header": 2, "cookie": 3}
        query = tuple(sorted({p.name for p in op.parameters if p.location == "query"}))
        plans = []
        for p in sorted(
            (p for p in op.parameters if p.location in order), key=lambda p: order[p.location]
        ):
            if p.location == "header" and p.name.lower() in skip:
                continue
            loose = kind in ("job_status", "job_cancel")
            plans.append(self.param(p, allocator, loose=loose, query=query))
        return wire_named_path(op, plans, _HANDLER_ARGUMENTS)

    def param(
        self,
        p: Parameter,
        allocator: NameAllocator,
        *,
        loose: bool,
        query: tuple[str, ...] = (),
    ) -> ParamPlan:
        """`query`: the wire names of the operation's query parameters."""
        name = allocator.allocate((p.location, p.name), snake_case(p.name, fallback="param"))
        schema = _resolved(p.schema, self.api.schemas)
        type_expr = self.types.type_of(p.schema.data if p.schema else None, mode="param")
        if p.location in ("path", "header", "cookie") and type_expr.startswith(("list[", "dict[")):
            type_expr = "str"
        styled = query_style(p, query_shape(type_expr)) if p.location == "query" else None
        if styled is not None:
            return self.styled_param(p, name, type_expr, styled, query)
        if type_expr == "Any":
            type_expr = "str"
        marker = {"path": "Path", "query": "Query", "header": "Header", "cookie": "Cookie"}[
            p.location
        ]
        kwargs: list[str] = []
        if p.location != "path":
            kwargs.append(f"alias={_pystr(p.name)}")
        if schema is not None and not loose:
            kwargs += constraints(
                schema,
                type_expr,
                f"{p.location} parameter {p.name!r}",
                p.schema.where if p.schema is not None else None,
            )
        if p.description:
            from generator.render.escape import one_line

            kwargs.append(f"description={_pystr(one_line(p.description, limit=300))}")
        required = p.required or p.location == "path"
        default: str | None = None
        handler_type = type_expr
        if not required:
            default = default_literal(schema, type_expr)
            if default is None:
                default = "None"
                if "None" not in type_expr.split(" | "):
                    handler_type = f"{type_expr} | None"
        # an enum of numbers or booleans: the wire's text becomes that scalar before the
        # `Literal` compares it (pydantic does not convert text for a Literal)
        from_text = {"": "", "number": ", NUMBER_FROM_TEXT", "bool": ", FROM_TEXT"}[
            _scalar_enum(schema)
        ]
        if "None" in type_expr.split(" | ") and type_expr != "str | None":
            # a nullable number or boolean: the text `null` is its null (a string's is text)
            from_text += ", NULL_FROM_TEXT"
        formats = _text_formats(schema) if type_expr.replace(" | None", "") == "str" else ()
        if formats:  # the handler still gets the text; the text is checked
            from_text += f", text_format({', '.join(_pystr(f) for f in formats)})"
        annotation = f"Annotated[{handler_type}, {marker}({', '.join(kwargs)}){from_text}]"
        return ParamPlan(
            name=name,
            wire=p.name,
            location=p.location,
            type=handler_type,
            annotation=annotation,
            default=default,
            description=p.description,
        )

    def styled_param(
        self,
        p: Parameter,
        name: str,
        type_expr: str,
        styled: tuple[str, bool],
        query: tuple[str, ...],
    ) -> ParamPlan:
        """A query parameter FastAPI's `Query` cannot read (an object, a list of objects, a
        delimited list): the endpoint gets it from the runtime's `styled_query` dependency,
        which reads the spec's `style` / `explode` forms and validates the value as
        `type_expr`."""
        style, explode = styled
        args = [_pystr(p.name), type_expr, f"style={_pystr(style)}", f"explode={explode}"]
        if p.required:
            args.append("required=True")
        if style == "form" and explode:
            names = self._property_names(p.schema.data if p.schema else None)
            if names:
                args.append(f"properties={_tuple(names)}")
            else:  # a free-form object: every key the operation's other parameters leave
                others = [n for n in query if n != p.name]
                if others:
                    args.append(f"exclude={_tuple(others)}")
        handler_type = type_expr
        default: str | None = None
        if not p.required:
            default = "None"
            if "None" not in union_members(type_expr):
                handler_type = f"{type_expr} | None"
        return ParamPlan(
            name=name,
            wire=p.name,
            location=p.location,
            type=handler_type,
            annotation=f"Annotated[{handler_type}, Depends(styled_query({', '.join(args)}))]",
            default=default,
            description=p.description,
        )

    def _property_names(self, schema: Any, depth: int = 0) -> list[str]:
        """The properties an object schema declares, through `$ref`, `allOf`, `anyOf` and
        `oneOf` (sorted, each once)."""
        if not isinstance(schema, Mapping) or depth > 8:
            return []
        name = component_name(schema.get("$ref"))
        if name is not None:
            target = self.api.schemas.get(name)
            return self._property_names(target.data if target else None, depth + 1)
        props = schema.get("properties")
        names = set(props) if isinstance(props, Mapping) else set()
        for key in ("allOf", "anyOf", "oneOf"):
            parts = schema.get(key)
            for part in parts if isinstance(parts, list) else ():
                names.update(self._property_names(part, depth + 1))
        return sorted(n for n in names if isinstance(n, str))

    def route_path(self, op: Operation, params: Sequence[ParamPlan]) -> str:
        by_wire = {p.wire: p.name for p in params if p.location == "path"}
        # the endpoint's other arguments: FastAPI refuses a route whose path variable has the
        # name of one (`Cannot use Query for path param ...`)
        used: set[str] = {p.name for p in params if p.location != "path"} | {"body"}
        warned: set[str] = set()

        wire_named = aliased_path_names(op, params, _HANDLER_ARGUMENTS)

        def replace(match: re.Match[str]) -> str:
            wire = match.group(1)
            if wire in wire_named:  # read by its alias: errors name it as the spec does
                return "{" + wire + "}"
            name = by_wire.get(wire)
            if name is None:  # a variable no `in: path` parameter declares: not passed on
                name = snake_case(wire, fallback="param")
                if name in used and wire not in warned:
                    warned.add(wire)
                    self._warn_undeclared_variable(op, wire)
            # a variable the path repeats (Cloudflare's /accounts/{account_id}/…/accounts/
            # {account_id}) must have one name per segment for Starlette; the handler gets the first
            unique, n = name, 2
            while unique in used:
                unique, n = f"{name}_{n}", n + 1
            used.add(unique)
            return "{" + unique + "}"

        return re.sub(r"\{([^{}/]*)\}", replace, op.path)

    @staticmethod
    def _warn_undeclared_variable(op: Operation, wire: str) -> None:
        clash = next((p for p in op.parameters if p.name == wire and p.location != "path"), None)
        if clash is None:
            return
        warn_at(
            clash.where,
            f"{op.label}: parameter {wire!r} is declared `in: {clash.location}`, but its name "
            "is a variable of the path template and no `in: path` parameter declares it; the "
            f"server reads {wire!r} from the {clash.location} and does not pass the path "
            "segment to the handler (declare it `in: path` if that is what it is)",
        )

    # -- bodies and responses --------------------------------------------------------

    def body(
        self, op: Operation
    ) -> tuple[str | None, str | None, str | None, str | None, tuple[str, ...]]:
        """(kind, handler type, endpoint annotation, default, media types)."""
        rb = op.request_body
        if rb is None or not rb.content:
            return None, None, None, None, ()
        media_types = tuple(dict.fromkeys(m.content_type for m in rb.content))
        media = first_json(rb.content)
        if media is None:
            model = self.form_class(op)
            if model is None:
                return "raw", "bytes", None, None, media_types
            if rb.required:
                return "form", model, None, None, media_types
            return "form", f"{model} | None", None, "None", media_types
        schema = media.schema
        inner = self.types.type_of(
            schema.data if schema else None, name=schema.name if schema else None
        )
        if rb.required:
            return "json", inner, f"Annotated[{inner}, Body()]", None, media_types
        optional = inner if inner == "Any" or "None" in inner.split(" | ") else f"{inner} | None"
        return "json", optional, f"Annotated[{optional}, Body()]", "None", media_types

    def null_check(self, op: Operation, name: str) -> tuple[str | None, dict[str, Any]]:
        """The guard of a JSON body's nulls (`refuse_nulls`) and the rules it reads
        (nulls.py): a `null` body, where the body is optional and its schema's `type`
        excludes null (FastAPI takes it for no body; a schema with no `type` admits null,
        whatever its `properties` or `oneOf` members say), and members whose schema refuses
        null (the models take null for every optional member)."""
        rb = op.request_body
        media = first_json(rb.content) if rb else None
        if rb is None or media is None:
            return None, {}
        rules = NullRules(self.api.schemas)
        root = rules.body(media.schema, f"{name}.body")
        body = False
        if not rb.required:
            data = _resolved(media.schema, self.api.schemas) or {}
            declared = data.get("type")
            types = declared if isinstance(declared, list) else [declared] if declared else []
            body = bool(types) and "null" not in types and data.get("nullable") is not True
        if root is None and not body:
            return None, {}
        if root is None:  # the router may have no rules at all
            return f"refuse_nulls({{}}, None, body={body})", {}
        return f"refuse_nulls(_NULLS, {py_literal(root)}, body={body})", rules.table()

    def form_class(self, op: Operation) -> str | None:
        """What a form body is read into for the handler (`form_values.form_value`), when
        every media type of the body is a form with a schema: its model class, or for a schema
        without one (a nested inline form, as Stripe's, gets no model) the validated members
        as `dict[str, Any]`."""
        rb = op.request_body
        if rb is None or not rb.content or not all(is_form(m) for m in rb.content):
            return None
        schema = rb.content[0].schema
        if schema is None:
            return None
        model = self.types.type_of(schema.data, name=schema.name)
        if model.startswith("models.") and is_plain_class(model):
            return model
        return "dict[str, Any]" if _resolved(schema, self.api.schemas) else None

    def body_check(self, op: Operation) -> str | None:
        """The guard of a body that is not JSON: a form is checked against its schema's type,
        any other body only for being there when it is required."""
        rb = op.request_body
        assert rb is not None
        form = next((m for m in rb.content if m.content_type.lower() in _FORM_TYPES), None)
        schema = form.schema if form else None
        model = self.types.type_of(schema.data, name=schema.name) if schema is not None else "Any"
        # an inline schema (lifted or not): a model of its fields, made at start (it reads
        # the fields as form values, which a strict model of the schema would refuse)
        if not is_plain_class(model) or (schema is not None and schema.name is None):
            model = self.form_fields(_resolved(schema, self.api.schemas) or {}) or model
        if model == "Any" and not rb.required:
            return None
        encoding = encoding_literal(self.api, form) if form is not None else ""
        return f"require_body({model}, required={rb.required}" + (
            f", encoding={encoding})" if encoding else ")"
        )

    def form_fields(self, schema: Mapping[str, Any]) -> str | None:
        """`form_model({wire name: (type, constraints, required)})` for an inline object."""
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return None
        required = set(schema.get("required") or ())
        fields = []
        for name, prop in props.items():
            data = _resolved_data(prop, self.api.schemas)
            type_expr = _file_type(data) or self.types.type_of(data, mode="param")
            kwargs = dict(
                k.split("=", 1) for k in constraints(data, type_expr, f"form field {name!r}")
            )
            bounds = "{" + ", ".join(f"{_pystr(k)}: {v}" for k, v in kwargs.items()) + "}"
            fields.append(f"{_pystr(str(name))}: ({type_expr}, {bounds}, {name in required})")
        return "form_model({" + ", ".join(fields) + "})"

    def response_type(self, op: Operation) -> str | None:
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
            return None
        if "Any" in unique:
            return "Any"
        return " | ".join(unique)

    def job_result(self, op: Operation) -> str:
        """The type of a job's result: the job schema's `result` (or `output`, `data`, … as
        the job view maps it)."""
        job = op.patterns.async_job
        status = self.api.operation(job.status_operation) if job and job.status_operation else None
        if status is None:
            return "Any"
        result = job_result_schema(job_schema(status, op), self.api.schemas)
        return "Any" if result is None else self.types.type_of(result)

    def job_view(self) -> JobViewPlan:
        """The job resource as the first job's status operation shows it."""
        submit = next(op for op in self.api.operations if self.is_job(op))
        job = submit.patterns.async_job
        status = self.api.operation(job.status_operation) if job and job.status_operation else None
        return plan_job_view(job_schema(status, submit), self.api.schemas)

    def statuses(self, op: Operation) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
        codes: list[int] = []
        empty: list[int] = []
        # an operation that only redirects (GET /badge → 301) answers its 3xx
        answers = op.success_responses or tuple(r for r in op.responses if r.status_class == "3")
        for response in answers:
            if response.status.isdigit():
                code = int(response.status)
                codes.append(code)
                if not response.content:
                    empty.append(code)
        if not codes:
            codes = [200]
        codes.sort()
        return codes[0], tuple(codes), tuple(sorted(empty))

    # -- operations ------------------------------------------------------------------

    def result(
        self, op: Operation, kind: str, status: int, response_type: str | None
    ) -> tuple[str, str | None, str | None]:
        """What the handler returns (its annotation), the route's response model, and the
        request body's callback URL property of a job that calls back."""
        if kind == "job":
            result_type = self.job_result(op)
            plain = ("Any", "dict[str, Any]")
            result = result_type if result_type in plain else f"{result_type} | dict[str, Any]"
            job = op.patterns.async_job
            callback = None
            if job and job.callback_url and op.request_body is not None:
                callback = self._callback_property(op)
            return result, None, callback
        if kind in ("job_status", "job_cancel"):
            return "Any", None, None
        value = response_type or "None"
        result = f"{value} | Reply[{value}]" if value != "Any" else "Any"
        response_model = response_type if response_type and response_type != "Any" else None
        if status in (204, 205, 304):  # FastAPI refuses a response model on a bodiless status
            response_model = None
        return result, response_model, None

    def operation(
        self, op: Operation, methods: NameAllocator, endpoints: NameAllocator
    ) -> OperationPlan:
        kind = "job" if self.is_job(op) else "handler"
        submit: Operation | None = None
        if op.id in self.job_ops:
            kind, submit = self.job_ops[op.id]
        params = self.params(op, kind)
        name = methods.allocate(op.id, snake_case(op.id, fallback="operation"))
        endpoint = endpoints.allocate(op.id, f"{name}_endpoint")
        body_kind, body_type, body_annotation, body_default, media_types = self.body(op)
        if body_kind == "form" and kind == "job":  # a job's payload keeps the body's bytes
            body_kind, body_type, body_default = "raw", "bytes", None
        null_check, null_rules = self.null_check(op, name) if body_kind == "json" else (None, {})
        status, statuses, empty = self.statuses(op)
        response_type = self.response_type(op)
        conc = op.patterns.concurrency
        idem = op.patterns.idempotency
        rl = op.patterns.rate_limit
        family = rl.family if rl else self.api_family
        conditional = op.method in ("get", "head") and bool(
            conc and (conc.etag or conc.if_none_match)
        )
        if_match = bool(conc and conc.if_match) and op.method not in ("get", "head")
        if_match_required = bool(
            conc and conc.if_match and (conc.if_match_required or "428" in conc.responses)
        )
        result, response_model, callback_property = self.result(op, kind, status, response_type)
        auth = auth_plan(op, self.api)
        patterns: list[str] = []
        if auth is not None:
            patterns.append(f"security: {auth.summary}")
        patterns.append("problem details")
        if family:
            patterns.append(f"rate limit ({_FAMILY_HEADERS[family]}; 429 + Retry-After)")
        if idem:
            patterns.append(
                f"idempotency ({idem.header}, {'required' if idem.required else 'optional'})"
            )
        if conditional:
            patterns.append("ETag; If-None-Match → 304")
        if if_match:
            patterns.append(
                "If-Match → 412 when stale" + ("; 428 when missing" if if_match_required else "")
            )
        patterns += _kind_patterns(kind, submit, media_types)
        return OperationPlan(
            op=op,
            kind=kind,
            name=name,
            endpoint=endpoint,
            method=op.method.upper(),
            route_path=self.route_path(op, params),
            params=params,
            body_kind=body_kind,
            body_type=body_type,
            body_annotation=body_annotation,
            body_default=body_default,
            media_types=media_types,
            body_check=self.body_check(op) if body_kind in ("raw", "form") else null_check,
            null_rules=null_rules,
            result=result,
            response_model=response_model,
            status=status,
            statuses=statuses,
            empty=empty,
            conditional=conditional,
            rate_limit=family,
            idempotency_header=idem.header if idem else None,
            idempotency_required=bool(idem and idem.required),
            if_match=if_match,
            if_match_required=if_match_required,
            job_name=op.id if kind == "job" else None,
            callback_property=callback_property,
            auth=auth,
            summary=op.summary or op.description,
            patterns=tuple(patterns),
        )

    def _callback_property(self, op: Operation) -> str | None:
        from generator.patterns.async_jobs import CALLBACK_PROPERTIES

        rb = op.request_body
        for media in rb.content if rb else ():
            if media.schema is not None:
                found = sorted(CALLBACK_PROPERTIES & media.schema.properties)
                if found:
                    return found[0]
        return None

    def resource_operations(self, group: Resource) -> tuple[OperationPlan, ...]:
        """The plans of `group`'s operations (method and endpoint names unique in it)."""
        methods = NameAllocator(_CLASS_SCOPE_NAMES)
        endpoints = NameAllocator({"router"})
        return tuple(self.operation(op, methods, endpoints) for op in group.operations)

    def tags(self, cache: PlanCache | None = None) -> list[TagPlan]:
        """One router and one handler module per resource (`resources.group_operations`, the
        client's grouping). Module names are also file names and fields of main.Handlers
        (never `field`, which its class body calls). With `cache`, a resource's operations
        planned by an earlier run come from it (`plan_cache`)."""
        groups = group_operations(self.api, reserved_modules={"runtime", "field", "dataclass"})
        classes = NameAllocator({"Reply", "RequestContext", "JobContext", "Any"})
        plans = []
        for group in groups:
            if not group.operations:
                continue  # a parent of nested resources only: nothing to route
            base = classes.allocate(("base", group.path), f"{group.pascal}Base")
            handler = classes.allocate(("handler", group.path), f"{group.pascal}Handler")
            names = (group.label, group.module, base, handler)
            make = functools.partial(self.resource_operations, group)
            ops, kept, key = resource_plans(cache, names, group.operations, Kept, make)
            if kept is not None:
                self.kept[group.module] = kept
            else:
                self.keys[group.module] = key
            plans.append(TagPlan(group.label, group.module, base, handler, ops))
        return plans


def plan_server(
    api: Api,
    *,
    spec_source: Path | str,
    spec_name: str,
    package: str | None = None,
    models: tuple[str | Deferred, Mapping[str, str]] | None = None,
    inputs: PlanInputs | None = None,
) -> ServerPlan:
    """Everything `apiforge server` writes for `api` (see the module docstring).

    `models`: the models module's text (or a `Deferred` one) and the schema → class map of
    the classes it defines, when the caller has them (`apiforge generate`); otherwise they come
    from `models_for`, which also warns about the classes the module lacks. `inputs`: what
    `api` was built from, for the per-resource plan cache (`plan_cache`; None: no cache)."""
    package = check_package_name(package or default_package_name(api))
    marker = marker_line(spec_name)
    models_source: str | Deferred
    classes: Mapping[str, str]
    lifted = model_schemas(api)  # the component schemas and the operations' inline ones
    if models is None:
        models_source, classes = models_for(lifted, spec_source, marker=marker, used_in="routers")
    else:
        models_source, classes = models
    mapper = TypeMapper({k: s.data for k, s in lifted.schemas.items()}, classes)
    planner = _Planner(api, mapper)
    scope = f"{marker}\0{package}"
    cache = PlanCache(
        "server",
        scope,
        api,
        inputs,
        classes,
        facts=(planner.api_family, sorted((k, v[0], v[1].id) for k, v in planner.job_ops.items())),
    )
    plan, error_views = _server_plan(api, planner, mapper, planner.tags(cache), package, spec_name)
    plan.files = server_files(
        plan,
        api,
        planner.kept,
        planner.keys,
        cache,
        models_source=models_source,
        marker=marker,
        scope=scope,
        error_views=error_views,
    )
    return plan


def _server_plan(
    api: Api,
    planner: _Planner,
    mapper: TypeMapper,
    tags: list[TagPlan],
    package: str,
    spec_name: str,
) -> tuple[ServerPlan, dict[str, Any]]:
    """The server `tags` make (its file list apart): events, jobs, and what the operations
    declare across the API; with its error views (`error_views.json`'s content)."""
    event_planner = EventPlanner(api, mapper, planner.is_job)
    events = event_planner.events()
    all_ops = [o for t in tags for o in t.operations]
    has_jobs = any(o.kind == "job" for o in all_ops)
    scheme, prefix = event_planner.signature()
    job_event_types, job_event_subscribed = event_planner.job_events() if has_jobs else ({}, False)
    job_view = planner.job_view() if has_jobs else JobViewPlan()
    error_views = plan_error_views((o.op for o in all_ops), api.schemas)
    base = problem_base(api)
    plan = ServerPlan(
        package=package,
        distribution=package.replace("_", "-"),
        version=package_version(api.version),
        api_version=api.version,
        title=api.title or "API",  # FastAPI refuses an empty title
        description=api.description,
        spec_name=spec_name,
        tags=tags,
        events=events,
        has_jobs=has_jobs,
        jobs_base_path=planner.jobs_base_path(),
        has_idempotency=any(o.idempotency_header for o in all_ops),
        has_rate_limits=any(o.rate_limit for o in all_ops),
        has_outbox=bool(events) or any(o.callback_property for o in all_ops) or has_jobs,
        signature_scheme=scheme,
        signature_prefix=prefix,
        schemes=scheme_plans(api),
        has_auth=any(o.auth for o in all_ops),
        settings=settings_rows(base),
        problem_base=base,
        job_event_types=job_event_types,
        job_event_subscribed=job_event_subscribed,
        job_view=job_view,
        declared_errors=declared_errors(o.op for o in all_ops),
        has_error_views=bool(error_views),
        moved_paths=moved_own_paths(api),
    )
    return plan, error_views


def write_server(
    api: Api,
    out_dir: Path | str,
    *,
    spec_source: Path | str,
    spec_name: str,
    package: str | None = None,
) -> tuple[ServerPlan, WriteReport, list[MissingHandler]]:
    plan = plan_server(api, spec_source=spec_source, spec_name=spec_name, package=package)
    report = write_tree(plan.files, out_dir)
    misplaced_handlers(plan, out_dir)  # warns: user code is never moved or deleted
    return plan, report, missing_handlers(plan, out_dir)


__all__ = [
    "MissingHandler",
    "ServerPlan",
    "missing_handlers",
    "missing_verifiers",
    "plan_server",
    "write_server",
]
