"""Generated clients for every example spec (and the hostile one, and the model shapes one),
built once per session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator.client.plan import write_client
from generator.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SPECS = sorted((ROOT / "specs").glob("*.yaml"))


@dataclass(frozen=True)
class Generated:
    name: str
    out: Path  # the project directory (pyproject.toml, README.md, <package>/)
    package: str


def generate(spec: Path, out: Path, *, validate: bool = True) -> Generated:
    loaded = load_spec(str(spec), validate=validate)
    root = loaded.resolver.root
    assert root.path is not None
    plan, _ = write_client(loaded.api, out, spec_source=loaded.source, spec_name=root.name)
    return Generated(spec.stem, out, plan.package)


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Generated]:
    base = tmp_path_factory.mktemp("clients")
    result = {spec.stem: generate(spec, base / spec.stem) for spec in SPECS}
    result["hostile"] = generate(HERE / "hostile.yaml", base / "hostile", validate=False)
    result["shapes"] = generate(HERE / "model_shapes.yaml", base / "shapes")
    return result


@pytest.fixture(scope="session")
def acme(generated: dict[str, Generated]) -> Iterator[object]:
    """The generated acme package, imported."""
    out = generated["acme"]
    sys.path.insert(0, str(out.out))
    try:
        module = __import__(out.package)
        yield module
    finally:
        sys.path.remove(str(out.out))
