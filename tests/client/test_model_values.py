"""Responses that read as values, named from their paths, in modules loaded when touched:
a Stripe-like spec (expandable fields, a discriminated union, nested objects whose names
repeat) generated, imported in a fresh interpreter and type-checked."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from generator.client.class_paths import is_numbered
from generator.client.model_modules import module_names, split_models
from generator.client.unwrap import unwrap_root_models

from .conftest import HERE, Generated, generate

CHECK = """
import sys
from values_client import models
from values_client._runtime._models import LENIENT
charge = models.Charge.model_validate(
    {"id": "ch_1", "object": "charge", "payment_method": {"type": "card_method", "brand": "visa"}},
    context=LENIENT,
)
assert charge.payment_method.type == "card_method"  # no .root
loaded = sorted(m for m in sys.modules if m.startswith("values_client.models."))
assert loaded == ["values_client.models.bank_method", "values_client.models.card_method",
                  "values_client.models.charge", "values_client.models.customer"], loaded
# the customer module is imported (Charge's annotations name its class), not built
assert not sys.modules["values_client.models.customer"].Customer.__pydantic_complete__
charge = models.Charge.model_validate(
    {"id": "ch_1", "object": "charge", "customer": "cus_1", "payment_method": {"type": "bank_method"}},
    context=LENIENT,
)
assert charge.customer == "cus_1", charge.customer  # no wrapper around the string
expanded = models.Charge.model_validate(
    {"id": "ch_1", "object": "charge", "payment_method": {"type": "bank_method"},
     "customer": {"id": "cus_1", "object": "customer", "default_source": "card_1"}},
    context=LENIENT,
)
from values_client.models import Customer
assert isinstance(expanded.customer, Customer)
assert expanded.customer.default_source == "card_1"
assert expanded.to_dict()["customer"]["default_source"] == "card_1"
print("ok")
"""


@pytest.fixture(scope="module")
def values(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    return generate(HERE / "values.yaml", tmp_path_factory.mktemp("values"))


def test_fields_read_as_values_and_a_model_loads_only_its_module(values: Generated) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=values.out, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_nested_classes_are_named_from_their_paths(values: Generated) -> None:
    package = values.out / values.package / "models"
    classes = [
        line[6:].split("(")[0]
        for path in sorted(package.glob("*.py"))
        for line in path.read_text().splitlines()
        if line.startswith("class ")
    ]
    assert "RefundOutcome" in classes and "RefundOutcomeType" in classes  # were Outcome1, Type1
    assert not [c for c in classes if is_numbered(c)]
    assert "RootModel" not in "".join(p.read_text() for p in package.glob("*.py"))


def test_the_split_client_type_checks(values: Generated) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", values.package],
        cwd=values.out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout


SCHEMA = """
import json, typing
import pydantic
from values_client import models
# the annotations hold the real classes, and the JSON schema follows them (Customer and Card
# reach each other)
models.Charge.model_rebuild()
args = typing.get_args(models.Charge.model_fields["customer"].annotation)
assert models.Customer in args, args
schema = models.Charge.model_json_schema()
assert {"Customer", "Card", "Address"} <= set(schema["$defs"]), sorted(schema["$defs"])
customer = schema["properties"]["customer"]["anyOf"]
assert {"type": "string", "maxLength": 5000} in customer, customer
assert {"$ref": "#/$defs/Customer"} in customer, customer
assert "$defs" in models.Customer.model_json_schema()
# an unwrapped string keeps its constraint (maxLength 5000), in a model built in code too
for bad in ({"customer": "c" * 5001}, {"customer": {"id": 1}}):
    try:
        models.Charge(id="ch_1", object="charge", payment_method={"type": "bank_method"}, **bad)
    except pydantic.ValidationError as error:
        print(json.dumps([[str(p) for p in e["loc"]] + [e["type"]] for e in error.errors()]))
    else:
        raise AssertionError(bad)
"""


def test_fields_hold_the_real_classes_their_json_schema_and_their_constraints(
    values: Generated,
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCHEMA], cwd=values.out, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    too_long, not_a_customer = (json.loads(line) for line in run.stdout.splitlines())
    assert ["customer", "constrained-str", "string_too_long"] in too_long
    assert ["customer", "Customer", "id", "string_type"] in not_a_customer  # located inside


def test_a_kept_wrapper_keeps_the_wrappers_it_names() -> None:
    text = (
        "from pydantic import BaseModel, RootModel\n\n\n"
        "class Inner(RootModel[int]):\n    root: int\n\n\n"
        "class Outer(RootModel[Inner | None]):\n    root: Inner | None\n\n\n"
        "class User(BaseModel):\n    n: Outer | None = None\n"
    )
    unwrapped = unwrap_root_models(text, keep={"Outer"})
    assert "class Inner(RootModel[int])" in unwrapped  # `Outer`, which stays, names it
    assert "class Outer(RootModel[Inner | None])" in unwrapped
    assert "n: int | None = None" in unwrapped  # `Outer` holds `int | None`: None once


def test_an_unwrapped_union_does_not_repeat_its_members() -> None:
    text = (
        "from pydantic import BaseModel, Field, RootModel\n\n\n"
        "class Source(RootModel[str | None]):\n    root: str | None\n\n\n"
        "class Either(RootModel[Source | int | None]):\n    root: Source | int | None\n\n\n"
        "class Card(BaseModel):\n    id: str\n\n\n"
        "class User(BaseModel):\n"
        "    a: Source | None = None\n"
        "    b: Source | Card | None = None\n"
        "    c: Annotated[Source | None, Field(description='c')] = None\n"
        "    d: list[Source] | None = None\n"
        "    e: Either | str\n"
        "    f: Source | Either\n"
    )
    unwrapped = unwrap_root_models(text)
    assert "    a: str | None = None\n" in unwrapped
    assert "    b: str | Card | None = None\n" in unwrapped
    assert "    c: Annotated[str | None, Field(description='c')] = None\n" in unwrapped
    assert "    d: list[str | None] | None = None\n" in unwrapped  # another union: kept whole
    assert "    e: int | None | str\n" in unwrapped  # `Either` holds `str | int | None`
    assert "    f: str | None | int\n" in unwrapped


def test_a_module_keeps_its_classes_trailing_comments() -> None:
    text = (
        "from pydantic import BaseModel\n\n\n"
        "class A(BaseModel):\n    x: int\n\n\n"
        "class B(A):\n    x: str  # type: ignore[assignment]\n"
    )
    modules = split_models(text, {"A", "B"}, "# marker").modules
    assert "x: str  # type: ignore[assignment]" in modules["b"]


def test_a_long_class_name_gets_a_bounded_stable_module_name() -> None:
    long_a, long_b = "Very" * 100 + "A", "Very" * 100 + "B"
    names = module_names({long_a, long_b, "Short"})
    assert names["Short"] == "short"
    assert len({names[long_a], names[long_b]}) == 2  # told apart by the digest
    assert all(len(n) <= 64 and n.startswith("very_very_") for n in (names[long_a], names[long_b]))
    assert module_names({long_a}) == {long_a: names[long_a]}  # the same name every time


def test_the_index_binds_no_public_name_but_the_models() -> None:
    text = (
        "from typing import Any\n\nfrom pydantic import BaseModel\n\n\n"
        "class Any(BaseModel):\n    x: int\n"
    )
    index = split_models(text, {"Any"}, "# marker").modules["__init__"]
    tree = ast.parse(index)
    bound = {
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
    }
    bound |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {n for n in bound if not n.startswith("_")} == {"Any"}
    assert "from .any_ import Any as Any" in index
