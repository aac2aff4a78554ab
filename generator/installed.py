"""The installed version of a distribution, without importing `importlib.metadata`.

Cache keys carry the versions of datamodel-code-generator, ruff and Jinja (their output
depends on them). `importlib.metadata` costs ~0.08 s to import, a tenth of a regeneration; the version
is also in the name of the `<name>-<version>.dist-info` folder installers put beside the
package, which one directory listing finds. When that folder is not there (or not alone),
`importlib.metadata` answers after all.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path


@cache
def installed_version(package: str, distribution: str) -> str:
    """The version of `distribution`, whose import package is `package` (for example
    "datamodel_code_generator", "datamodel-code-generator"); "unknown" if not installed."""
    spec = importlib.util.find_spec(package)  # finds it; does not import it
    if spec is not None and spec.origin is not None:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        prefix = distribution.replace("-", "_").lower() + "-"
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        found = [
            name[len(prefix) : -len(".dist-info")]
            for name in names
            if name.lower().startswith(prefix) and name.endswith(".dist-info")
        ]
        if len(found) == 1:
            return found[0]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def yaml_reader() -> tuple[bool, str]:
    """Whether the fast YAML reader (rapidyaml and the compiled `_ryml_data`) is there, and
    a sentence saying which reader is used (found without importing either)."""
    compiled = importlib.util.find_spec("generator.spec._ryml_data") is not None
    ryml = importlib.util.find_spec("ryml") is not None
    if compiled and ryml:
        return True, "YAML reader: rapidyaml (fast)"
    missing = "the compiled extension (no C compiler at install)" if ryml else "rapidyaml"
    return False, (
        f"YAML reader: PyYAML, about four times slower on big specs: {missing} is missing; "
        "reinstall apiforge with a C compiler (e.g. apt-get install build-essential)"
    )


def warn_once_without_fast_reader(
    say: Callable[[str], None], cache_root: Callable[[], Path | None]
) -> None:
    """On the first run without the fast reader, say so (once: a stamp in the cache folder
    `cache_root()` answers, None: no cache). This module imports nothing of apiforge: the
    spec reader asks it for versions."""
    fast, sentence = yaml_reader()
    if fast:
        return
    root = cache_root()
    stamp = root / ".slow-reader-said" if root is not None else None
    if stamp is not None and stamp.exists():
        return
    say(f"warning: {sentence} (said once; `apiforge --version` says it again)")
    if stamp is not None:
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError:
            pass
