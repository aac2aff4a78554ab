"""`model_fixes.default_none_admits_none` on the shapes that made corpus clients fail
`mypy --strict` (openai, just-eat): a scalar default its member's type refuses, a root model
whose `root` admits None, and a subclass member redefined with a type its parent's refuses.
The fixed module imports, behaves as pydantic did, and type-checks."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from generator.models.fixes import default_none_admits_none

MODULE = """\
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class BatchSize(StrEnum):
    AUTO = "auto"


class BatchSize1(RootModel[int]):
    root: Annotated[int, Field(ge=1)] = "auto"


class N(RootModel[int]):
    root: int = 1


class Conversation(RootModel[str | int]):
    root: Annotated[str | int | None, Field(description="x")] = None


class Job(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    batch: BatchSize | BatchSize1 | None = "auto"
    n: N | None = 1
    prompt: list[int] | None = "<|endoftext|>"
    count: int = 3
    ratio: float = 1
    kind: Literal["a", "b"] = "a"
    other: Literal["a"] = "c"
    digits: int = "12"


class Role(StrEnum):
    ASSISTANT = "assistant"


class Message(BaseModel):
    role: Literal["assistant"]
    kind: Annotated[
        Literal["a"],
        Field(description="x"),
    ]
    size: int | None = None
    items: list[int] | None = None
    tone: Role | None = None


class TunedMessage(Message):
    role: Annotated[
        str,
        Field(description="y"),
    ]
    kind: Literal["b"]
    size: bool | None = None
    items: list[Any] | None = None
    tone: Literal["assistant"] | None = None


class RoleMessage(Message):
    role: Role
"""


def _load(text: str, tmp_path: Path) -> ModuleType:
    path = tmp_path / "fixed_models.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("fixed_models", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fixed_models"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["fixed_models"]
    return module


def test_scalar_defaults_a_type_refuses_are_validated_or_left_out(tmp_path: Path) -> None:
    fixed = default_none_admits_none(MODULE)
    assert (
        'batch: BatchSize | BatchSize1 | None = Field(default="auto", validate_default=True)'
        in fixed
    )
    assert "n: N | None = Field(default=1, validate_default=True)" in fixed
    assert "prompt: list[int] | None = None" in fixed  # no value of the type: left out
    assert 'other: Literal["a"] | None = None' in fixed
    assert 'digits: int = Field(default="12", validate_default=True)' in fixed
    assert (
        "count: int = 3" in fixed
        and "ratio: float = 1" in fixed
        and 'kind: Literal["a", "b"] = "a"' in fixed
    )
    # a union member's root given the union's default has none; a root admitting None says so
    assert "root: Annotated[int, Field(ge=1)]\n" in fixed
    assert "class Conversation(RootModel[str | int | None]):" in fixed
    models = _load(fixed, tmp_path)
    job = models.Job()
    assert job.batch is models.BatchSize.AUTO and job.n == models.N(1) and job.digits == 12
    assert job.prompt is None and job.other is None


def test_only_redefinitions_mypy_refuses_get_an_ignore() -> None:
    fixed = default_none_admits_none(MODULE)
    tuned = fixed[fixed.index("class TunedMessage(") : fixed.index("class RoleMessage(")]
    assert "role: Annotated[  # type: ignore[assignment]\n" in tuned
    assert 'kind: Literal["b"]  # type: ignore[assignment]\n' in tuned
    for kept in ("size: bool | None = None\n", "items: list[Any] | None = None\n"):
        assert f"    {kept}" in tuned  # a subtype, and `Any`: mypy takes them
    # an enum parent the client widens to `Role | str` would take the literal there: no ignore
    assert '    tone: Literal["assistant"] | None = None\n' in tuned
    assert "class RoleMessage(Message):\n    role: Role  # type: ignore[assignment]\n" in fixed


def test_the_fixed_module_type_checks(tmp_path: Path) -> None:
    fixed = default_none_admits_none(MODULE)
    # (the enum-parent case is the client's to check: without `Open[Role]` mypy refuses it)
    fixed = fixed.replace(
        '    tone: Literal["assistant"] | None = None\n', "    tone: Role | None = None\n"
    )
    (tmp_path / "fixed_models.py").write_text(fixed, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "fixed_models.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout


def test_examples_that_are_not_a_list_become_one() -> None:
    from generator.models.fixes import listed_examples

    text = (
        "class Thing(BaseModel):\n"
        '    name: Annotated[str | None, Field(examples="abc")] = None\n'
        "    size: Annotated[int | None, Field(examples=7, ge=0)] = None\n"
        "    kind: Annotated[str, Field(examples={'a': {'value': 'x'}, 'b': {'externalValue': 'u'},"
        " 'c': {'summary': 's', 'value': 'y'}})]\n"
        "    shape: Annotated[dict[str, Any], Field(examples={'name': 'a'})]\n"
        '    tags: Annotated[list[str], Field(examples=[["a"]])]\n'
    )
    assert listed_examples(text) == (
        "class Thing(BaseModel):\n"
        "    name: Annotated[str | None, Field(examples=['abc'])] = None\n"
        "    size: Annotated[int | None, Field(examples=[7], ge=0)] = None\n"
        "    kind: Annotated[str, Field(examples=['x', 'y'])]\n"
        "    shape: Annotated[dict[str, Any], Field(examples=[{'name': 'a'}])]\n"
        '    tags: Annotated[list[str], Field(examples=[["a"]])]\n'
    )


def test_a_default_written_as_data_becomes_a_field_default_imported_once() -> None:
    from generator.models.fixes import parsed_defaults

    text = (
        "from __future__ import annotations\n\n"
        "from pydantic import (\n    BaseModel,\n    ConfigDict,\n)\n\n\n"
        "class Hook(BaseModel):\n"
        "    model_config = ConfigDict(populate_by_name=True)\n"
        '    events: list[str] = ["push"]\n'
        "    labels: Annotated[\n        dict[str, str],\n        Field(description='x'),\n"
        '    ] = {"a": "b"}\n'
        "    codes: set[int] = {1}\n"
        "    name: str = 'x'\n"
    )
    fixed = parsed_defaults(text)
    assert '    events: list[str] = Field(default=["push"])\n' in fixed
    assert '    ] = Field(default={"a": "b"})\n' in fixed
    assert "    codes: set[int] = Field(default={1})\n" in fixed
    assert "    name: str = 'x'\n" in fixed
    # `Field` joins the one pydantic import (the client's models rewrite that one)
    assert "from pydantic import (\n    BaseModel,\n    ConfigDict, Field,\n)\n" in fixed
    assert fixed.count("import") == 2


def test_enum_members_in_a_nullable_type_stay_a_plain_default() -> None:
    """The client opens enums (`X | str`): mypy matches `[X.A]` to `list[X | str] | None` but
    not `Field(default=[X.A])`, so that default stays as written, marked for ruff."""
    from generator.models.fixes import parsed_defaults

    text = (
        "from pydantic import BaseModel\n\n\n"
        "class Request(BaseModel):\n"
        "    grains: list[Grain] | None = [Grain.SEGMENT]\n"
        "    names: list[str] | None = ['a']\n"
    )
    fixed = parsed_defaults(text)
    assert "    grains: list[Grain] | None = [Grain.SEGMENT]  # noqa: RUF012\n" in fixed
    assert "    names: list[str] | None = Field(default=['a'])\n" in fixed


def test_typing_aliases_become_builtins() -> None:
    from generator.models.fixes import builtin_generics

    text = (
        "from typing import Annotated, Dict, List\n\n\n"
        "class Permissions(BaseModel):\n"
        '    __annotations__ = {"__pydantic_extra__": Dict[str, List[int]]}\n'
        "    Dicts: Annotated[int, 'Dict[str, str]'] = 1\n"
    )
    assert builtin_generics(text) == (
        "from typing import Annotated, Dict, List\n\n\n"  # (the formatter drops the unused)
        "class Permissions(BaseModel):\n"
        '    __annotations__ = {"__pydantic_extra__": dict[str, list[int]]}\n'
        "    Dicts: Annotated[int, 'Dict[str, str]'] = 1\n"
    )
    for other in (
        "from typing import Dict as D\n\nx: D[str, int]\ny: Dict[str, int]\n",
        "from .common import List\n\nx: List[int]\n",
    ):  # not typing's alias
        assert builtin_generics(other) == other
