"""The bases of the models in `models.py`: pydantic's, with each model's validator and
serializer built when it is first used rather than when `models.py` is imported.

A big spec has models by the thousand, and a route validates and answers with a few of
them: built at import, they would cost seconds of start-up for every model the routes never
use. A route's FastAPI adapter builds the schema of the models it names when the route is
added; `Model.model_validate` and the like build a model the first time they are called.
"""

from types import ModuleType
from typing import Any, Generic, TypeVar

import pydantic
from fastapi import FastAPI
from pydantic import ConfigDict

Root = TypeVar("Root")


class BaseModel(pydantic.BaseModel):
    """`pydantic.BaseModel`, built on first use."""

    model_config = ConfigDict(defer_build=True)


class RootModel(pydantic.RootModel[Root], Generic[Root]):
    """`pydantic.RootModel`, built on first use."""

    model_config = ConfigDict(defer_build=True)


def build_before_openapi(app: FastAPI, models: ModuleType) -> None:
    """Build every model of `models` before the app's first `/openapi.json`.

    The document describes every model, and FastAPI makes an adapter of each to do so: an
    adapter of a model not built yet builds anew all the models it nests, which for a spec
    of a thousand models is minutes. Built first, once, in the order of the module, each
    model's adapter takes what is built.
    """
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            for value in list(vars(models).values()):
                if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
                    value.model_rebuild()
        return build()

    app.openapi = openapi  # type: ignore[method-assign]
