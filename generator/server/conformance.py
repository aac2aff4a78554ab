"""The server answers in its spec's words: what the planner derives so that it does.

- `plan_job_view`: the job resource as the schema of the spec's job status operation shows
  it (its field names, its status enumeration with the runtime's states mapped onto it), for
  the runtime's `JobView`; a located warning for each state or field without a counterpart.
- `declared_errors`: per operation, the error responses it declares, so a request error
  answers 400 where the spec lists 400 and not 422 (the runtime's `declared_status`).
- `mock_answers`: mock mode's `mocks.json`, the declared answer of every operation.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from generator.ir import Api, Operation, Response, Schema, Where
from generator.log import logger
from generator.schemas import (
    is_json,
    json_media,
    may_be_type,
    required_properties,
    resolved,
    resolved_data,
    schema_properties,
)
from generator.server.mock_values import value_of
from generator.server.plan_types import JobViewPlan, TagPlan

_log = logger()

#: Runtime state → how specs commonly spell it (compared without case, `_`, `-`, spaces).
STATE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "queued": (
        "queued", "pending", "waiting", "submitted", "created", "accepted", "notstarted",
        "new", "scheduled", "enqueued", "received", "initiated", "initialized", "open",
    ),
    "running": (
        "running", "inprogress", "processing", "started", "active", "executing", "working",
        "ongoing", "busy",
    ),
    "completed": (
        "completed", "succeeded", "success", "successful", "done", "finished", "complete",
        "ready", "processed", "ok",
    ),
    "failed": ("failed", "failure", "error", "errored", "fail"),
    "cancelled": ("cancelled", "canceled", "aborted", "stopped", "terminated", "revoked"),
}  # fmt: skip

#: A state the enumeration lacks is shown as the nearest one it has (in this order).
STATE_FALLBACKS: dict[str, tuple[str, ...]] = {
    "queued": ("running",),
    "running": ("queued",),
    "completed": (),
    "failed": ("cancelled",),
    "cancelled": ("failed",),
}

#: Runtime field → how specs commonly name it; `(name, types)`: the JSON types it may have.
FIELD_SYNONYMS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "id": (("id", "jobid", "uuid", "operationid", "taskid"), frozenset({"string"})),
    "status": (("status", "state", "jobstatus", "phase"), frozenset({"string"})),
    "createdAt": (
        ("createdat", "created", "createdon", "createtime", "submittedat", "creationtime"),
        frozenset({"string"}),
    ),
    "startedAt": (("startedat", "started", "starttime", "startedon"), frozenset({"string"})),
    "completedAt": (
        ("completedat", "finishedat", "endedat", "completed", "finished", "endtime"),
        frozenset({"string"}),
    ),
    "result": (("result", "output", "results", "outcome", "response", "data"), frozenset()),
    "error": (("error", "problem", "failure", "errordetail"), frozenset({"object"})),
    "callbackUrl": (("callbackurl", "callback", "webhookurl", "notifyurl"), frozenset({"string"})),
}

#: Response headers the runtime writes itself (a mock does not invent them).
RUNTIME_HEADERS = frozenset(
    {
        "etag", "retry-after", "content-type", "content-length", "x-request-id",
        "idempotent-replayed", "ratelimit", "ratelimit-policy", "ratelimit-limit",
        "ratelimit-remaining", "ratelimit-reset", "x-ratelimit-limit", "x-ratelimit-remaining",
        "x-ratelimit-reset", "www-authenticate", "allow", "set-cookie", "link",
    }
)  # fmt: skip


def normalized_name(text: str) -> str:
    """A field name as names are compared: lower case, without spaces, `_` and `-`."""
    return re.sub(r"[\s_\-]", "", text).lower()


def pointer_label(where: Where) -> str:
    """`file#pointer`: a node as the caches and warnings name it."""
    return f"{where.file}#{where.pointer}"


def job_schema(status_op: Operation | None, submit: Operation) -> Schema | None:
    """The schema of the job resource: the status operation's JSON answer, else the 202's."""
    responses = [*(status_op.success_responses if status_op else ()), submit.response("202")]
    for response in responses:
        media = json_media(response)
        if media is not None and media.schema is not None:
            schema: Schema = media.schema
            return schema
    return None


def plan_job_view(schema: Schema | None, schemas: Mapping[str, Schema]) -> JobViewPlan:
    """How the runtime's job shows as `schema` (None or a schema without properties: as is)."""
    data = resolved(schema, schemas) or {}
    props = schema_properties(data, schemas)
    if schema is None or not props:
        return JobViewPlan()
    fields = _job_fields(props, schemas)
    where = schema.where
    missing = sorted(set(required_properties(data, schemas)) - set(fields.values()))
    if missing:
        _log.warning(
            "warning: %s: the job resource's required %s %s no counterpart in the server's "
            "jobs: its answers leave %s out",
            pointer_label(where),
            "property" if len(missing) == 1 else "properties",
            ", ".join(f"`{m}`" for m in missing),
            "it" if len(missing) == 1 else "them",
        )
    statuses: dict[str, str] = {}
    if "status" in fields:
        at = where.child("properties", fields["status"])
        statuses = _map_states(props[fields["status"]], schemas, at)
    else:
        _log.warning(
            "warning: %s: the job resource has no status property: the server's answers "
            "about a job cannot say whether it has ended",
            pointer_label(where),
        )
    return JobViewPlan(fields, statuses, props.get(fields.get("result", "")))


def _job_fields(props: Mapping[str, Any], schemas: Mapping[str, Schema]) -> dict[str, str]:
    """Runtime job field → the job schema's property that shows it."""
    fields: dict[str, str] = {}
    by_norm = {normalized_name(name): name for name in props}
    for runtime, (names, types) in FIELD_SYNONYMS.items():
        name = next((by_norm[n] for n in names if n in by_norm), None)
        if name is None or name in fields.values():
            continue
        if types and not may_be_type(resolved_data(props[name], schemas), types):
            continue
        fields[runtime] = name
    return fields


def job_result_schema(schema: Schema | None, schemas: Mapping[str, Schema]) -> Any:
    """The schema of the property that shows a job's result (`result`, `output`, …), or
    None; what `plan_job_view` maps, without its warnings."""
    props = schema_properties(resolved(schema, schemas) or {}, schemas)
    name = _job_fields(props, schemas).get("result")
    return props[name] if name else None


def _map_states(prop: Any, schemas: Mapping[str, Schema], where: Where) -> dict[str, str]:
    enum = resolved_data(prop, schemas).get("enum")
    if not isinstance(enum, list) or not all(isinstance(v, str) for v in enum):
        return {}
    by_norm = {normalized_name(v): v for v in enum}
    direct = {
        state: next((by_norm[n] for n in names if n in by_norm), None)
        for state, names in STATE_SYNONYMS.items()
    }
    statuses: dict[str, str] = {}
    for state, value in direct.items():
        if value is None:
            value = next((direct[f] for f in STATE_FALLBACKS[state] if direct[f]), None)
            shown = f"`{value}`" if value else f"`{state}`, which the enumeration lacks"
            _log.warning(
                "warning: %s: the job status enumeration %s has no value for a %s job: "
                "it is shown as %s",
                pointer_label(where),
                enum,
                state,
                shown,
            )
        if value is not None and value != state:
            statuses[state] = value
    return statuses


# --- request errors in the declared status -------------------------------------------------

#: The statuses a request error may take (`problems.INTERCHANGEABLE` at runtime). 413 and
#: 415 stay as they are: they say more than 400, and a declared `default` covers them.
_REQUEST_ERRORS = frozenset({"400", "422"})


def declared_errors(operations: Iterable[Operation]) -> dict[str, dict[str, str]]:
    """Operation id → {declared error response key → the JSON media type it declares instead
    of problem+json, or ""}, for the operations where that changes an error answer: one of
    400/422 declared and not the other (nor `4XX`), or errors declared as plain JSON."""
    table: dict[str, dict[str, str]] = {}
    for op in operations:
        keys = {r.status: _plain_json(r) for r in op.error_responses}
        chooses = len(keys.keys() & _REQUEST_ERRORS) == 1 and "4XX" not in keys
        if chooses or any(keys.values()):  # what the runtime reads of them
            kept = {k: v for k, v in keys.items() if v or k in ("400", "422", "4XX")}
            table[op.id] = dict(sorted(kept.items()))
    return dict(sorted(table.items()))


def _plain_json(response: Response) -> str:
    """The JSON media type `response` declares when it declares no problem+json one."""
    types = [m.content_type.split(";", 1)[0].strip().lower() for m in response.content]
    if not types or any(t.endswith("problem+json") for t in types):
        return ""
    return next((t for t in types if t == "application/json" or t.endswith("+json")), "")


# --- the server's own paths ------------------------------------------------------------------

#: Paths the generated server serves itself: settings (probes, metrics) and FastAPI's own
#: (`openapi_url`, `docs_url`, `redoc_url`), with their defaults.
OWN_PATHS: dict[str, str] = {
    "health_path": "/healthz",
    "ready_path": "/readyz",
    "metrics_path": "/metrics",
    "openapi_url": "/openapi.json",
    "docs_url": "/docs",
    "redoc_url": "/redoc",
}
MOVED_PREFIX = "/_apiforge"


def moved_own_paths(api: Api) -> dict[str, str]:
    """The server's own paths that an operation of the spec also has, each moved under
    `/_apiforge` (the spec's operation wins the path), with a warning naming the operation."""
    taken = {op.path.rstrip("/") or "/": op for op in api.operations}
    moved: dict[str, str] = {}
    for name, path in OWN_PATHS.items():
        op = taken.get(path)
        if op is None:
            continue
        moved[name] = MOVED_PREFIX + path
        _log.warning(
            "warning: %s: %s is also where the server answers %s by default: it answers there "
            "at %s instead",
            pointer_label(op.where),
            path,
            name.replace("_url", "").replace("_path", "").replace("_", " "),
            moved[name],
        )
    return moved


# --- mock mode ------------------------------------------------------------------------------


def mock_answers(
    tags: Iterable[TagPlan], api: Api, job_result: Any = None, *, scope: str | None = None
) -> str:
    """`mocks.json`: handler attribute → method → its answer (see runtime/mock.py)."""
    return mocks_json(mock_modules(tags, api, job_result, scope=scope))


def mocks_json(modules: Mapping[str, str]) -> str:
    """`mocks.json` from its entries (`mock_modules`): byte for byte what one `json.dumps`
    of the whole gives."""
    # ASCII: a spec's example may hold a lone surrogate, which UTF-8 cannot write
    return _json_object(modules) + "\n"


def mock_modules(
    tags: Iterable[TagPlan],
    api: Api,
    job_result: Any = None,
    *,
    scope: str | None = None,
    partial: bool = False,
) -> dict[str, str]:
    """`mocks.json`'s entry of each of `tags` that has handler operations: its module's
    object (method → answer) as JSON text.

    Each answer is made from a few plain inputs (`_answer_inputs`) and the components its
    values look up, and kept between runs by those (`_MockMemo`, under `scope`: by default
    the API's title, which edits rarely change): a regeneration makes only new or changed
    answers (Stripe's 470 take ~1 s to make). `partial`: `tags` are not all of the API's
    (the others' entries were kept with their resources' plans), so the answers kept for
    the rest stay kept."""
    scope = f"title\0{api.title}" if scope is None else scope
    memo = _MockMemo(_Schemas(api), scope)
    modules: dict[str, str] = {}
    for tag in tags:
        methods: dict[str, str] = {}
        for plan in tag.handler_operations:
            if plan.kind == "job":
                inputs: tuple[Any, ...] = ("job", job_result)
            else:
                response = plan.op.response(str(plan.status))
                inputs = _answer_inputs(response, plan.status, plan.conditional)
                inputs = (*inputs, _mock_extras(plan.op, str(plan.status)))
            methods[plan.name] = memo.text(inputs)
        if methods:
            modules[tag.module] = _json_object(methods)
    memo.save(keep_previous=partial)
    return modules


def _answer_inputs(response: Response | None, status: int, conditional: bool) -> tuple[Any, ...]:
    """All `_answer` reads of an operation's answer, as plain data (its cache key)."""
    if response is None:
        return ("answer", status, None)
    media = json_media(response) or (response.content[0] if response.content else None)
    chosen = None
    if media is not None:
        data = media.schema.data if media.schema else {}
        chosen = (
            media.content_type,
            is_json(media.content_type),
            data,
            media.examples,
            media.example_names,
        )
    headers = tuple(
        (h.name, h.schema.data)
        for h in response.headers
        if h.name.lower() not in RUNTIME_HEADERS and h.schema is not None
    )
    etag = conditional or response.header("ETag") is not None
    return ("answer", status, (chosen, headers, etag))


def _mock_extras(op: Operation, status: str) -> tuple[Any, ...]:
    """What else mock mode needs of an operation, as plain data: how its list pages (so the
    last page says it is the last) and its other declared responses (`Prefer: code=...`)."""
    p = op.patterns.pagination
    paging = None
    if p is not None:
        paging = {
            "style": p.style,
            "items": list(p.items),
            "param": p.param,
            "next": list(p.next),
            "has_more": list(p.has_more),
            "total": list(p.total),
            "first_page": p.first_page,
        }
    others = tuple(
        (r.status, _answer_inputs(r, 0, False)) for r in op.responses if r.status != status
    )
    return (paging, others)


def _extra_answers(
    extras: tuple[Any, ...], schemas: Mapping[str, Any], reads: set[str]
) -> dict[str, Any]:
    """The `paging` and `others` members of an answer, from `_mock_extras`."""
    paging, others = extras
    found: dict[str, Any] = {"paging": paging} if paging else {}
    alternatives = {}
    for key, inputs in others:
        made = _answer(inputs, schemas, reads)
        entry = {"candidates": made["candidates"][:1]}
        entry.update((k, made[k]) for k in ("headers", "media_type", "examples") if k in made)
        alternatives[key] = entry
    if alternatives:
        found["others"] = alternatives
    return found


def _answer(inputs: tuple[Any, ...], schemas: Mapping[str, Any], reads: set[str]) -> dict[str, Any]:
    """An operation's answer from its `_answer_inputs` (or a job's: `("job", result)`);
    `reads` gets the components it looked up."""
    if inputs[0] == "job":
        result = inputs[1]
        made = [
            value_of(result, schemas, reads=reads),
            value_of(result, schemas, examples=False, reads=reads),
        ]
        return {"status": 202, "job": True, "candidates": _unique(made)}
    _, status, response, *extras = inputs
    answer: dict[str, Any] = {"status": status, "candidates": [None]}
    if extras:
        answer.update(_extra_answers(extras[0], schemas, reads))
    if response is None:
        return answer
    media, headers, etag = response
    if media is not None:
        content_type, json_media, data, examples, names = media
        if names:
            named = examples[len(examples) - len(names) :]
            answer["examples"] = dict(zip(names, named, strict=True))
        made = [
            value_of(data, schemas, reads=reads),
            value_of(data, schemas, examples=False, reads=reads),
        ]
        answer["candidates"] = _unique([*examples, *made])
        if not json_media:
            answer["media_type"] = content_type
    values = {}
    for name, schema in headers:
        value = value_of(schema, schemas, reads=reads)
        if value is not None:
            values[name] = _header_text(value)
    if values:
        answer["headers"] = values
    if etag:
        answer["etag"] = True
    return answer


_MOCKS_KIND = "mocks1"


class _Schemas(Mapping[str, Any]):
    """The component schemas by name, and (looked up on demand) an operation's schema by its
    JSON pointer (`#/paths/~1returns/get/responses/200/content/application~1json/schema/...`):
    a `$ref` may point into another operation (Stoplight exports do), and the mock's value
    walker follows it there as it follows one to a component."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.components = {name: s.data for name, s in api.schemas.items()}

    def __getitem__(self, key: str) -> Any:
        if not key.startswith("#/"):
            return self.components[key]
        found = _in_operations(self.api, key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.components)

    def __len__(self) -> int:
        return len(self.components)


def _in_operations(api: Api, pointer: str) -> Any:
    """The node at `pointer` under an operation's request body or response schema, or None."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[2:].split("/")]
    if len(parts) < 7 or parts[0] != "paths":
        return None
    op = next((o for o in api.operations if (o.path, o.method) == (parts[1], parts[2])), None)
    if op is None:
        return None
    if parts[3] == "responses" and parts[5] == "content":
        response = op.response(parts[4])
        content, media_type, rest = (response.content if response else ()), parts[6], parts[7:]
    elif parts[3:5] == ["requestBody", "content"]:
        body = op.request_body
        content, media_type, rest = (body.content if body else ()), parts[5], parts[6:]
    else:
        return None
    media = next((m for m in content if m.content_type == media_type), None)
    if media is None or media.schema is None or not rest or rest[0] != "schema":
        return None
    node: Any = media.schema.data
    for part in rest[1:]:
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node if isinstance(node, Mapping) else None


class _MockMemo:
    """Answers' texts from the previous run of the same spec and package (`scope`), each
    kept with the components it looked up and a digest of them: served again only when its
    inputs are the same (the key: their `marshal` bytes, unambiguous for plain data) and
    every component it read is unchanged. Inputs or components that are not plain data
    (`marshal` refuses them) are never kept."""

    def __init__(self, schemas: Mapping[str, Any], scope: str) -> None:
        from generator.spec.load import cache_dir, cache_get

        self.schemas = schemas
        self.store: str | None = None
        self.previous: dict[str, tuple[tuple[str, ...], str, str]] = {}
        self.used: dict[str, tuple[tuple[str, ...], str, str]] = {}
        self.misses = 0
        self._digests: dict[str, bytes | None] = {}
        if cache_dir() is not None:
            from generator.render.fingerprint import code_digest

            material = f"{_MOCKS_KIND}\0{sys.version}\0{code_digest()}\0{scope}"
            self.store = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
            found = cache_get(_MOCKS_KIND, self.store)
            self.previous = found if isinstance(found, dict) else {}

    def text(self, inputs: tuple[Any, ...]) -> str:
        """`json.dumps` of the answer made from `inputs` (see `_answer`)."""
        key = self._key(inputs) if self.store is not None else None
        if key is not None:
            hit = self.used.get(key) or self.previous.get(key)
            if hit is not None and self._reads_digest(hit[0]) == hit[1]:
                self.used[key] = hit
                return hit[2]
        reads: set[str] = set()
        text = json.dumps(
            _answer(inputs, self.schemas, reads), indent=1, sort_keys=True, default=str
        )
        if key is not None:
            names = tuple(sorted(reads))
            digest = self._reads_digest(names)
            if digest is not None:
                self.used[key] = (names, digest, text)
                self.misses += 1
        return text

    def save(self, *, keep_previous: bool = False) -> None:
        """Keep this run's answers (only those: the store does not grow), and with
        `keep_previous` the previous run's too (this run did not ask for all the API's)."""
        from generator.spec.load import cache_put

        if self.store is None:
            return
        if keep_previous:
            if self.misses:
                cache_put(_MOCKS_KIND, self.store, {**self.previous, **self.used})
        elif self.misses or len(self.used) != len(self.previous):
            cache_put(_MOCKS_KIND, self.store, self.used)

    def _key(self, inputs: tuple[Any, ...]) -> str | None:
        try:
            return hashlib.sha256(marshal.dumps(inputs, 2)).hexdigest()
        except (ValueError, RecursionError):  # not plain data
            return None

    def _reads_digest(self, names: tuple[str, ...]) -> str | None:
        """SHA-256 over the components `names` (an absent one counts as absent)."""
        h = hashlib.sha256()
        for name in names:
            if name not in self._digests:
                self._digests[name] = self._component(name)
            digest = self._digests[name]
            if digest is None:
                return None
            h.update(digest)
        return h.hexdigest()

    def _component(self, name: str) -> bytes | None:
        if name not in self.schemas:
            return hashlib.sha256(b"absent").digest()
        try:
            return hashlib.sha256(marshal.dumps((name, self.schemas[name]), 2)).digest()
        except (ValueError, RecursionError):
            return None


def _json_object(values: Mapping[str, str]) -> str:
    """`json.dumps(..., indent=1, sort_keys=True)` of an object whose values are given as
    their own `json.dumps(..., indent=1)`: the same text (JSON strings hold no newline, so
    every newline of a value is indentation to shift)."""
    if not values:
        return "{}"
    items = [
        f" {json.dumps(k)}: {values[k].replace(chr(10), chr(10) + ' ')}" for k in sorted(values)
    ]
    return "{\n" + ",\n".join(items) + "\n}"


def _unique(values: list[Any]) -> list[Any]:
    """`values` without repeats, in order (JSON values: compared by their text)."""
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(json.dumps(value, sort_keys=True, default=str), value)
    return list(seen.values())


def _header_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_header_text(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k},{_header_text(v)}" for k, v in value.items())
    return str(value)
