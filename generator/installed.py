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
from functools import cache


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
