"""The server's models are built on first use: bases from the runtime, no rebuild at import."""

from __future__ import annotations

from generator.server.model_bases import deferred_models

_MODULE = """from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, RootModel


class Pet(BaseModel):
    owner: Owner | None = None


class Owner(RootModel[str]):
    root: str


Pet.model_rebuild()
"""


def test_bases_come_from_the_runtime_and_nothing_is_built_at_import() -> None:
    text = deferred_models(_MODULE)
    assert "from pydantic import ConfigDict, Field\n" in text
    assert "from .runtime.model_bases import BaseModel, RootModel\n" in text
    assert "model_rebuild" not in text
    assert "class Pet(BaseModel):" in text


def test_a_module_without_pydantic_bases_is_left_alone() -> None:
    aliased = _MODULE.replace("BaseModel, ConfigDict", "BaseModel as Base, ConfigDict").replace(
        ", RootModel", ""
    )
    assert deferred_models(aliased) == aliased  # its rebuild is still needed
    assert deferred_models("not python (") == "not python ("
