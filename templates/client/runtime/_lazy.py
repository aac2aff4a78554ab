"""Models imported when a value needs them: what keeps a big client's import small.

The client's models are a package of modules (`models/<name>.py`), each importing only what
its own classes need. A field that holds one model of another module
(`address: Address | None`) names it through `lazy_model`: a stand-in that pydantic
validates by calling the real model, imported on the first value that reaches it. Touching
`Customer` thus builds `Customer`'s module, not every model a customer can reach (on Stripe,
a thousand). The type checker sees the real class (the stand-in is made under
`if not TYPE_CHECKING`), and so does the user: a value is always the real model.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


def lazy_model(module: str, name: str) -> Any:
    """A stand-in for the model `name` of `module` (absolute), validated by that model."""

    def validate(value: Any, info: core_schema.ValidationInfo) -> Any:
        model: Any = getattr(importlib.import_module(module), name)
        return model.__pydantic_validator__.validate_python(value, context=info.context)

    def schema(source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.with_info_plain_validator_function(validate)

    return type(
        name,
        (),
        {
            "__module__": module,
            "__doc__": f"`{module}.{name}`, imported when a value needs it.",
            "__get_pydantic_core_schema__": staticmethod(schema),
        },
    )


__all__ = ["lazy_model"]
