"""Models imported when a value needs them: what keeps a big client's import small.

The client's models are a package of modules (`models/<name>.py`), each importing only what
its own classes need. A field whose type names one model of another module is written
`Annotated[Address | None, LAZY, ...]`, and the module lists that model in `_LAZY_MODELS`
(`{"Address": "address"}`) instead of importing it (it is imported for the type checker only).
Touching `Customer` thus builds `Customer`'s module, not every model a customer can reach (on
Stripe, a thousand):

- a model is built when first used (`BaseModel` defers it); building it first imports the
  names of its module's `_LAZY_MODELS` (`import_lazy_models`), so its fields' annotations
  hold the real classes (`Customer.model_fields["address"].annotation` is `Address | None`);
- `LAZY` validates its field by that type, built on the first value that reaches it: a
  model's schema never includes the models behind its `LAZY` fields, so building one model
  never builds the models it can reach. Its JSON schema (`model_json_schema()`) does include
  them, built then; a model reached again inside its own JSON schema is a `$ref` to it
  (`json_schema_once`).

A value is always the real model, and errors keep their location (`address.city`).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

_imported: set[str] = set()
_generating = threading.local()  # .refs: the models whose JSON schema is being made


def import_lazy_models(module_name: str) -> None:
    """Put the models of `module_name`'s `_LAZY_MODELS` into its namespace (once)."""
    if module_name in _imported:
        return
    module = sys.modules.get(module_name)
    lazy: dict[str, str] = getattr(module, "_LAZY_MODELS", None) or {}
    for name, home in lazy.items():
        if name not in vars(module):
            found = importlib.import_module(f".{home}", module_name.rpartition(".")[0])
            setattr(module, name, getattr(found, name))
    _imported.add(module_name)


class _Deferred:
    """The validator of one `LAZY` field's type: a `TypeAdapter` made on its first use."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.built: TypeAdapter[Any] | None = None

    def adapter(self) -> TypeAdapter[Any]:
        if self.built is None:
            self.built = TypeAdapter(self.source)
        return self.built

    def __call__(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        return self.adapter().validate_python(value, context=info.context)


class _Lazy:
    """Beside a field's type (first in its `Annotated`): validated by that type, built when
    a value first needs it (see the module docstring)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.with_info_plain_validator_function(_Deferred(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        deferred: Any = schema.get("function", {}).get("function")
        if not isinstance(deferred, _Deferred):
            return handler(schema)
        refs: set[str] = _generating.__dict__.setdefault("refs", set())
        return handler(_cut(deferred.adapter().core_schema, refs))


LAZY = _Lazy()


def json_schema_once(
    schema: CoreSchema, handler: Callable[[CoreSchema], JsonSchemaValue]
) -> JsonSchemaValue:
    """A model's JSON schema, its `ref` noted while it is made: across a `LAZY` field a
    model's schema is not one pydantic can follow to its own definitions, so a model met
    again behind one while it is being made is a reference to it (`_cut`), not made again
    forever."""
    ref = schema.get("ref")
    refs: set[str] = _generating.__dict__.setdefault("refs", set())
    if not isinstance(ref, str) or ref in refs:
        return handler(schema)
    refs.add(ref)
    try:
        return handler(schema)
    finally:
        refs.discard(ref)


def _cut(schema: Any, refs: set[str]) -> Any:
    """`schema` (a core schema, copied) with each model of `refs` a reference to it."""
    if isinstance(schema, dict):
        if schema.get("type") == "model" and schema.get("ref") in refs:
            return core_schema.definition_reference_schema(schema["ref"])
        return {k: _cut(v, refs) for k, v in schema.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(schema, list):
        return [_cut(v, refs) for v in schema]  # pyright: ignore[reportUnknownVariableType]
    return schema


__all__ = ["LAZY", "import_lazy_models", "json_schema_once"]
