"""A successful response whose body breaks its declared type: read for what it holds.

A 2xx answer means the call took effect (a POST charged the card); a body with one value
outside its schema (a `pattern`, a bound, a `format`, a missing `required` member) must not
turn that success into an exception. Unless the client was made with
`strict_response_validation=True`, `APIResponse.parse` logs one warning and returns
`salvage(data, type_)`:

- a model: each member validated on its own; a member that fails is kept as it came (a
  nested model's members likewise, at any depth), and the model is built without
  validation (`model_construct`), so `.id` still reads `"pay_1"` and `.currency` reads
  `"EUR"` even where the schema says lower case;
- a list: each item salvaged; `X | None`: None as None, else salvaged as `X`;
- anything else that fails: the JSON data as it came.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

import pydantic

_MAX_DEPTH = 32


def _optional(annotation: Any) -> Any:
    """`X` for `X | None` (None otherwise)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(members) < len(get_args(annotation)):
            return members[0]
    return None


def _model(data: Mapping[str, Any], model: type[pydantic.BaseModel], ctx: Any, depth: int) -> Any:
    values: dict[str, Any] = {}
    fields_set: set[str] = set()
    known: set[str] = set()
    for name, field in model.model_fields.items():
        key = field.alias or name
        known.add(key)
        if key not in data:
            if not field.is_required():
                values[name] = field.get_default(call_default_factory=True)
            continue
        values[name] = salvage(data[key], field.annotation, ctx, depth + 1)
        fields_set.add(name)
    extra = {k: v for k, v in data.items() if k not in known}
    made = model.model_construct(_fields_set=fields_set, **values)
    if extra and model.model_config.get("extra") == "allow":
        object.__setattr__(made, "__pydantic_extra__", extra)
    return made


def salvage(data: Any, annotation: Any, context: Any = None, depth: int = 0) -> Any:
    """`data` read as `annotation` as far as it fits (see the module docstring)."""
    try:
        return pydantic.TypeAdapter(annotation).validate_python(data, context=context)
    except (pydantic.ValidationError, TypeError, pydantic.PydanticSchemaGenerationError):
        pass
    if depth > _MAX_DEPTH:
        return data
    inner = _optional(annotation)
    if inner is not None:
        return None if data is None else salvage(data, inner, context, depth + 1)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        if isinstance(data, Mapping):
            return _model(data, annotation, context, depth)  # pyright: ignore[reportUnknownArgumentType]
        return data
    if get_origin(annotation) is list and isinstance(data, list):
        (item,) = get_args(annotation) or (Any,)
        return [salvage(v, item, context, depth + 1) for v in data]  # pyright: ignore
    return data


__all__ = ["salvage"]
