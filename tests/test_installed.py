"""Installed versions, read without importing importlib.metadata (they are in cache keys)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize(
    ("package", "distribution"),
    [
        ("datamodel_code_generator", "datamodel-code-generator"),
        ("ruff", "ruff"),
        ("yaml", "PyYAML"),
        ("jinja2", "jinja2"),
    ],
)
def test_installed_version_is_what_the_metadata_says(package: str, distribution: str) -> None:
    from importlib.metadata import version

    from generator.installed import installed_version

    assert installed_version(package, distribution) == version(distribution)
    assert installed_version("no_such_package_here", "no-such-package-here") == "unknown"


def test_without_the_fast_reader_the_first_run_and_version_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from click.testing import CliRunner

    from generator import installed
    from generator.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        installed.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ryml" else real(name, *a),
    )
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path))
    said: list[str] = []
    from generator.spec.load import cache_dir

    installed.warn_once_without_fast_reader(said.append, cache_dir)
    installed.warn_once_without_fast_reader(said.append, cache_dir)
    assert len(said) == 1 and said[0].startswith("warning: YAML reader: PyYAML")
    out = CliRunner().invoke(main, ["--version"]).stdout
    assert out.splitlines()[1].startswith("YAML reader: PyYAML, about four times slower")
    monkeypatch.setattr(installed.importlib.util, "find_spec", real)
    assert installed.yaml_reader() == (True, "YAML reader: rapidyaml (fast)")
