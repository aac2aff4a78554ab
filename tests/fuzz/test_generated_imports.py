"""Every spec shape of `tests/fuzz/shapes.py` gives a project that imports: generation ends
without an error, the client imports (every module), the server imports and serves
`/openapi.json` and `/docs` under uvicorn; the clients of the parameters and of the models
pass `mypy --strict`.

A small fixed table (four specs) in the suite; `bench/import_fuzz.py` mixes the shapes into
random specs for a longer run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.fuzz.shapes import GROUPS
from tests.generate.importable import generate_project, mypy_strict, served


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_shape_group_gives_a_project_that_imports_and_serves(
    group: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = GROUPS[group]()
    text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    _, out, warnings = generate_project(text, tmp_path, f"f{group}", caplog)
    # whatever was left out is said where it is written
    assert all(" (#/" in w for w in warnings if "not enforced" in w or "left out" in w)
    with served(out, f"f{group}", tmp_path / "state") as base:
        import httpx

        document = httpx.get(f"{base}/openapi.json").json()
        assert len(document["paths"]) == len(spec["paths"])
    if group in ("parameters", "models31", "models30"):
        mypy_strict(out / "client", f"f{group}_client")


def test_the_table_is_what_it_says() -> None:
    """The groups are plain JSON data (what a spec file holds), and cover what they claim."""
    for build in GROUPS.values():
        json.dumps(build())
    parameters = GROUPS["parameters"]()
    assert len(parameters["paths"]["/many"]["get"]["parameters"]) == 300
