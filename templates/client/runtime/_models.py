"""Forward-compatible response models: what a generated client's `models` are built on.

The server may be newer than the client. Responses are therefore read leniently, requests
strictly. The client's models are the server's, with these pieces put in by the generator
(`generator/client/models.py`):

- `BaseModel`: pydantic's, keeping members it does not declare (`extra="allow"`): reachable
  as attributes, in `.model_extra` and in `.model_dump()`; built when first used, after the
  models its module imports lazily (`_lazy`);
- `Open[E]` for each `StrEnum` field (`OpenInt[E]` for `IntEnum`): typed `E | str`; a known
  value is the enum member, an unknown one (an enum value added after the client was
  generated) arrives as the plain string in a response, and is refused in a model you build;
- `AwareDatetime`: a date-time with a time zone, as before, except that a response's
  date-time without one (`2026-01-01T10:00:00`) is read as a naive `datetime`;
- `OPEN_UNION` beside each `Field(discriminator=...)`: a `oneOf` member the client does not
  know (an unknown discriminator value) is kept as the JSON object it arrived as.

"Leniently" means: validated with `context=LENIENT` (`APIResponse.parse` does, unless the
client was made with `strict_response_validation=True`). Without it — a model built in code, a
request body — every check is strict.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, TypeAlias, TypeVar, get_args

import pydantic
from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from ._lazy import import_lazy_models, json_schema_once

LENIENT: dict[str, Any] = {"apiforge_lenient": True}

E = TypeVar("E", bound=enum.Enum)


def is_lenient(info: core_schema.ValidationInfo) -> bool:
    """Whether this validation reads a response leniently (see the module docstring)."""
    context: Any = info.context
    return isinstance(context, Mapping) and context.get("apiforge_lenient") is True  # pyright: ignore[reportUnknownMemberType]


class BaseModel(pydantic.BaseModel):
    """pydantic's `BaseModel`, keeping undeclared members (see the module docstring).

    `to_dict()` / `to_json()`: the model as the API writes it (wire names, what was set);
    `_request_id`: the server's id of the request that returned it (`x-request-id` or
    `request-id`; None for a model built in code), to quote when you report a problem."""

    model_config = pydantic.ConfigDict(extra="allow", defer_build=True)
    _request_id: str | None = pydantic.PrivateAttr(default=None)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Mapping[str, Any] | None = None,
    ) -> bool | None:
        """pydantic's, after the models the class's module imports lazily (`_lazy`): a
        model is built when first used, not when its module is imported."""
        import_lazy_models(cls.__module__)
        return super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=_parent_namespace_depth + 1,
            _types_namespace=_types_namespace,
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[pydantic.BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        """The model as another type's member: built as pydantic builds it, after the models
        its module imports lazily (`_lazy`)."""
        if cls.__pydantic_complete__ and source is cls:
            return cls.__pydantic_core_schema__
        import_lazy_models(cls.__module__)
        return handler(source)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler, /
    ) -> JsonSchemaValue:
        """pydantic's, made once per model however often it reaches itself (`_lazy`)."""
        return json_schema_once(core_schema, handler)

    def to_dict(self, *, mode: Literal["json", "python"] = "json") -> dict[str, Any]:
        """The members by wire name, unset ones left out (`mode="python"` keeps datetimes,
        enums and bytes as objects)."""
        return self.model_dump(mode=mode, by_alias=True, exclude_unset=True)

    def to_json(self, *, indent: int | None = None) -> str:
        """`to_dict()` as JSON text."""
        return self.model_dump_json(indent=indent, by_alias=True, exclude_unset=True)

    def __eq__(self, other: object) -> bool:
        """Equal as pydantic's models are, whichever response each came from (`_request_id`
        is left out)."""
        if type(self) is not type(other) or not isinstance(other, BaseModel):
            return super().__eq__(other)
        return (
            self.__dict__ == other.__dict__ and self.__pydantic_extra__ == other.__pydantic_extra__
        )


def _serialize_enum(value: Any, info: core_schema.SerializationInfo) -> Any:
    if isinstance(value, enum.Enum) and info.mode == "json":
        return value.value
    return value


class _OpenEnum:
    """The validator behind `Open` and `OpenInt`: the enum's own, and in a lenient read the
    plain value when it is not one of the members."""

    def __init__(self, plain: type) -> None:
        self.plain = plain

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        members = [a for a in get_args(source) if isinstance(a, type) and issubclass(a, enum.Enum)]
        if len(members) != 1:
            return handler(source)
        plain = self.plain

        def validate(
            value: Any, inner: Callable[[Any], Any], info: core_schema.ValidationInfo
        ) -> Any:
            try:
                return inner(value)
            except pydantic.ValidationError:
                if is_lenient(info) and type(value) is plain:
                    return value
                raise

        return core_schema.with_info_wrap_validator_function(
            validate,
            handler(members[0]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _serialize_enum, info_arg=True
            ),
        )


Open: TypeAlias = Annotated[E | str, _OpenEnum(str)]
OpenInt: TypeAlias = Annotated[E | int, _OpenEnum(int)]


class _Aware:
    """A date-time with a time zone; in a lenient read, one without is kept naive."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        def check(value: datetime, info: core_schema.ValidationInfo) -> datetime:
            if value.tzinfo is None and not is_lenient(info):
                raise PydanticCustomError("timezone_aware", "Input should have timezone info")
            return value

        return core_schema.with_info_after_validator_function(check, core_schema.datetime_schema())


AwareDatetime: TypeAlias = Annotated[datetime, _Aware()]


class _OpenUnion:
    """Beside a discriminated union: in a lenient read, a JSON object whose discriminator
    value names no member is kept as it is."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        def validate(
            value: Any, inner: Callable[[Any], Any], info: core_schema.ValidationInfo
        ) -> Any:
            try:
                return inner(value)
            except pydantic.ValidationError as exc:
                unknown = all(e["type"] == "union_tag_invalid" for e in exc.errors())
                if unknown and is_lenient(info) and isinstance(value, Mapping):
                    return dict(value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
                raise

        return core_schema.with_info_wrap_validator_function(
            validate,
            handler(source),
            serialization=core_schema.wrap_serializer_function_ser_schema(_serialize_member),
        )


def _serialize_member(value: Any, serialize: core_schema.SerializerFunctionWrapHandler) -> Any:
    return value if isinstance(value, dict) else serialize(value)  # pyright: ignore[reportUnknownVariableType]


OPEN_UNION = _OpenUnion()

__all__ = [
    "LENIENT",
    "OPEN_UNION",
    "AwareDatetime",
    "BaseModel",
    "Open",
    "OpenInt",
    "is_lenient",
]
