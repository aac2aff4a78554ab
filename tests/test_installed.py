"""Installed versions, read without importing importlib.metadata (they are in cache keys)."""

from __future__ import annotations

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
