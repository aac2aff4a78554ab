"""Inline object schemas of operations → named models, beside the component schemas.

An operation's request body or response whose schema is an object written in place (not a
`$ref` to `components/schemas`) would be typed `dict[str, Any]`: the models step only sees
components. `model_schemas(api)` lifts each such schema into the schemas the models step
gets, under a stable class name, so client methods and server routes name a model instead.

What is lifted: a schema with `properties` (or an `allOf` of two or more parts), not a
`$ref`, not a union or an enum, typed `object` (or untyped, or object-or-null) — of a JSON
or form request body, of a JSON or `text/event-stream` response — and such an object as
the `items` of an array there. A form body only when its fields are flat (`_flat`). Free-form objects (`type: object` alone, or
`additionalProperties` only) and scalars stay as they are. Only schemas in the root file
are lifted (the models step reads the root document).

Class names (all documented in the generated README's wording):

- a request body: `<OperationId>Request` (`createPayment` → `CreatePaymentRequest`); a
  webhook's: `<OperationId>Event`;
- a response: `<OperationId>Response` for the first 2xx status with an inline schema,
  `<OperationId><Status>Response` for the others (`GetThing404Response`,
  `GetThingDefaultResponse`), so declaring another status never renames the first;
- the items of an array: the name above + `Item` (`ListPaymentsResponseItem`);
- a body or response declared once under `components/requestBodies/<Name>` or
  `components/responses/<Name>` is lifted once, named after it (`<Name>Request`,
  `<Name>Response`, no suffix repeated), whoever uses it;
- a second media type of the same body with another inline schema: the same name + `2`.

A name never takes a component schema's class name (components keep theirs; the lifted
one gets `2`, `3`, ...), and names are handed out in operation order (path, then method),
so adding an operation renames no other operation's models: it can only collide with a
name made from the same operationId spelling.

A lifted schema is keyed by its JSON pointer in the root document (`#/paths/...`), which is
no component name; the models step finds its data there (`subset.schema_subset`), and the
type mapper finds it by identity (`pytypes.TypeMapper`), so the IR itself is unchanged.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from generator.ir import Api, MediaType, Operation, Schema
from generator.models.class_names import model_class_names
from generator.render.names import NameAllocator, pascal_case
from generator.schemas import INLINE_PREFIX, essence, is_inline_key, is_json
from generator.spec.load import MISSING, node_at

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
_EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class ModelSchemas:
    """What the models step models: the component schemas, then the lifted inline ones, and
    a class name for each."""

    schemas: Mapping[str, Schema]
    class_names: Mapping[str, str]

    @property
    def inline(self) -> dict[str, Schema]:
        return {k: s for k, s in self.schemas.items() if is_inline_key(k)}


def liftable(data: Mapping[str, Any]) -> bool:
    """Whether an inline schema is an object with properties (see the module docstring)."""
    if "$ref" in data or any(k in data for k in ("oneOf", "anyOf", "enum", "const")):
        return False
    declared = data.get("type")
    types = declared if isinstance(declared, list) else [declared] if declared else []
    if not set(types) <= {"object", "null"}:
        return False
    props = data.get("properties")
    all_of = data.get("allOf")
    return (isinstance(props, Mapping) and bool(props)) or (
        isinstance(all_of, list) and len(all_of) >= 2
    )


_last: list[tuple[Api, ModelSchemas]] = []  # `generate` asks thrice (models, server, client)


def model_schemas(api: Api) -> ModelSchemas:
    """`api`'s component schemas and its operations' inline object schemas, each with its
    class name (components: `class_names.model_class_names`; inline: the module docstring)."""
    if _last and _last[0][0] is api:
        return _last[0][1]
    made = _model_schemas(api)
    _last[:] = [(api, made)]
    return made


def _model_schemas(api: Api) -> ModelSchemas:
    component_classes = model_class_names(api.schemas)
    schemas: dict[str, Schema] = dict(api.schemas)
    classes: dict[str, str] = dict(component_classes)
    allocator = NameAllocator({*component_classes.values()}, separator="")
    seen: set[int] = set()  # one model for a schema object however often it is used
    operations = [(op, "Request") for op in api.operations]
    operations += [(hook.operation, "Event") for hook in api.webhooks]
    for operation, body in operations:
        for where_name, schema in _inline_schemas(api, operation, body):
            key = INLINE_PREFIX + schema.where.pointer.lstrip("/")
            if id(schema.data) in seen or key in api.schemas:
                continue
            seen.add(id(schema.data))
            schemas[key] = schema
            classes[key] = allocator.allocate(key, where_name)
    return ModelSchemas(schemas, classes)


def inline_data(document: Any, key: str) -> Any:
    """The node of the parsed root `document` at a lifted schema's key, or None."""
    node = node_at(document, "/" + key[len(INLINE_PREFIX) :])
    return None if node is MISSING else node


def inline_digest(document: Any, class_names: Mapping[str, str]) -> str:
    """SHA-256 of the data of the lifted schemas among `class_names`: what the text of the
    document's `components` entry does not cover of the models step's input."""
    lifted = [(k, inline_data(document, k)) for k in class_names if is_inline_key(k)]
    try:  # marshal: ~0.001 s on Stripe's 199 lifted schemas, where repr took ~0.02 s
        return hashlib.sha256(b"marshal\0" + marshal.dumps(lifted, 2)).hexdigest()
    except ValueError:  # not plain data (a value marshal cannot write)
        return hashlib.sha256(repr(lifted).encode("utf-8", "surrogatepass")).hexdigest()


def _inline_schemas(api: Api, op: Operation, body: str) -> Iterator[tuple[str, Schema]]:
    """(wanted class name, schema) for each liftable inline schema of `op`, in a stable
    order: the request body's (named `<OperationId><body>`), then the responses' by status."""
    base = _class_word(op.id, "Operation")
    if op.request_body is not None:
        name = _shared_name(op.request_body.where.pointer, "requestBodies", "Request")
        yield from _of_media(
            api, op, op.request_body.content, name or f"{base}{body}", request=True
        )
    first = True
    for response in sorted(op.responses, key=_status_order):
        media = [m for m in response.content if _readable(m, request=False)]
        if not any(_lifted(api, op, m.schema) for m in media):
            continue
        status = "" if first and response.status_class == "2" else _status_word(response.status)
        first = first and response.status_class != "2"
        name = _shared_name(response.where.pointer, "responses", "Response")
        yield from _of_media(
            api, op, response.content, name or f"{base}{status}Response", request=False
        )


def _of_media(
    api: Api, op: Operation, content: tuple[MediaType, ...], name: str, *, request: bool
) -> Iterator[tuple[str, Schema]]:
    for media in content:
        if not _readable(media, request=request):
            continue
        schema = _lifted(api, op, media.schema)
        if schema is not None and _is_form(media) and not _flat(schema.data):
            continue
        if schema is not None:
            yield (name + "Item" if schema is not media.schema else name), schema


def _is_form(media: MediaType) -> bool:
    return media.content_type.split(";")[0].strip().lower() in _FORM_TYPES


def _flat(data: Mapping[str, Any]) -> bool:
    """Whether a form's fields are all flat: none is an object written in place with members
    or a union/composition of such. The client sends a nested field as JSON text, which is
    not what an API reading `address[city]=...` (Stripe) expects, so a model would promise
    what the form cannot carry; and Stripe's 229 nested form bodies would more than double
    its models step (8.5 → 23.6 s of CPU, 1,615 → 3,800 classes)."""
    props = data.get("properties")
    for field in props.values() if isinstance(props, Mapping) else ():
        if not isinstance(field, Mapping):
            continue
        items = field.get("items")
        for node in (field, items if isinstance(items, Mapping) else {}):
            if liftable(node) or any(k in node for k in ("anyOf", "oneOf", "allOf")):
                return False
    return not isinstance(data.get("allOf"), list)


def _lifted(api: Api, op: Operation, schema: Schema | None) -> Schema | None:
    """The schema to lift of a media type: its own, or its array's items; None for none."""
    if schema is None or schema.name is not None or schema.where.file != api.root:
        return None
    if liftable(schema.data):
        return schema
    items = schema.data.get("items")
    if schema.data.get("type") == "array" and isinstance(items, Mapping) and liftable(items):
        return Schema(None, items, schema.where.child("items"))
    return None


def _readable(media: MediaType, *, request: bool) -> bool:
    """Whether the client and server read this media type's schema as a model."""
    if is_json(media.content_type):
        return True
    ct = essence(media.content_type)
    return ct in _FORM_TYPES if request else ct == _EVENT_STREAM


def _class_word(text: str, fallback: str) -> str:
    # as the models library spells a class: no underscores (`Operation_1Get` would lose its)
    return pascal_case(text, fallback=fallback).replace("_", "")


def _status_order(response: Any) -> tuple[int, str]:
    return (0 if response.status_class == "2" else 1, response.status)


def _status_word(status: str) -> str:
    return "Default" if status == "default" else status.upper()


def _shared_name(pointer: str, section: str, suffix: str) -> str | None:
    """`<Name><suffix>` for a body or response declared under `components/<section>/<Name>`."""
    prefix = f"/components/{section}/"
    if not pointer.startswith(prefix) or "/" in pointer[len(prefix) :]:
        return None
    token = pointer[len(prefix) :].replace("~1", "/").replace("~0", "~")
    name = _class_word(token, "Shared")
    return name if name.endswith(suffix) or name.endswith("Body") else name + suffix


__all__ = [
    "INLINE_PREFIX",
    "ModelSchemas",
    "inline_data",
    "inline_digest",
    "is_inline_key",
    "liftable",
    "model_schemas",
]
