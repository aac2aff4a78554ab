"""Fuzzing the loader and the lint/inspect path with mutated specs (hypothesis).

Anything other than our clear error (ApiforgeError) escaping is a bug: a traceback for the user.
The run is bounded here; raise FUZZ_EXAMPLES for a longer one.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.errors import ApiforgeError
from generator.inspect import render_json, render_table
from generator.lint.engine import lint
from generator.spec import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"
BASES = {p.stem: yaml.safe_load(p.read_text()) for p in sorted(SPECS.glob("*.yaml"))}
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ref_value = st.builds(
    lambda parts: {"$ref": "#/" + "/".join(parts)},
    st.lists(
        st.sampled_from(["components", "schemas", "responses", "paths", "x", "~1", "%7B", "0"]),
        max_size=4,
    ),
)


def containers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if isinstance(node, dict | list) else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += containers(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += containers(value, (*path, i))
    return found


def at(node: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        node = node[token]
    return node


@st.composite
def mutated_spec(draw: st.DrawFn) -> Any:
    spec = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    for _ in range(draw(st.integers(1, 6))):
        paths = containers(spec)
        target = at(spec, draw(st.sampled_from(paths)))
        keys = list(target.keys()) if isinstance(target, dict) else list(range(len(target)))
        action = draw(st.sampled_from(["replace", "delete", "ref", "add"]))
        if not keys or action == "add":
            new = draw(json_value | ref_value)
            if isinstance(target, dict):
                target[
                    draw(
                        st.text(max_size=10)
                        | st.sampled_from(["$ref", "responses", "parameters", "in", "headers"])
                    )
                ] = new
            else:
                target.append(new)
            continue
        key = draw(st.sampled_from(keys))
        if action == "delete":
            del target[key]
        elif action == "ref":
            target[key] = draw(ref_value)
        else:
            target[key] = draw(json_value)
    return spec


def run_all(text: str, tmp: Path, suffix: str) -> None:
    path = tmp / f"spec{suffix}"
    path.write_text(text)
    try:
        loaded = load_spec(str(path))
        render_json(loaded.api)
        render_table(loaded.api)
        result = lint(loaded)
        for finding in result.findings:
            assert finding.rule and finding.message
    except ApiforgeError as exc:
        assert exc.render().startswith("error: ")


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
    derandomize=True,
)


@FUZZ
@given(spec=mutated_spec(), as_json=st.booleans())
def test_mutated_specs_give_results_or_clear_errors(
    tmp_path: Path, spec: Any, as_json: bool
) -> None:
    text = json.dumps(spec) if as_json else yaml.safe_dump(spec, allow_unicode=True)
    run_all(text, tmp_path, ".json" if as_json else ".yaml")


@FUZZ
@given(
    base=st.sampled_from(sorted(BASES)),
    cut=st.floats(0, 1),
    junk=st.binary(max_size=40),
)
def test_corrupted_text_gives_results_or_clear_errors(
    tmp_path: Path, base: str, cut: float, junk: bytes
) -> None:
    text = (SPECS / f"{base}.yaml").read_bytes()
    pos = int(len(text) * cut)
    data = text[:pos] + junk + text[pos + len(junk) :]
    path = tmp_path / "spec.yaml"
    path.write_bytes(data)
    try:
        loaded = load_spec(str(path))
        lint(loaded)
    except ApiforgeError:
        pass
