"""Builds apiforge's one C extension, `generator/spec/_ryml_data.c` (a rapidyaml tree's data
as Python objects: most of the reading time of a big YAML spec), when a wheel or an editable
install is made.

It is compiled with the flags this Python was built with (`sysconfig`), into the source tree
(an editable install imports it from there; a wheel gets a copy). Without a C compiler the
install still succeeds, with a warning: apiforge then reads YAML with PyYAML, slower
(generator/spec/fast_yaml.py).

The compiled wheel is tagged for the Python that built it (`cp311-cp311-linux_x86_64`);
`APIFORGE_PURE_WHEEL=1` builds the pure-Python wheel instead (`py3-none-any`: any Python
from 3.11 on, the PyYAML reader), which pip picks where no compiled wheel fits."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("generator") / "spec" / "_ryml_data.c"


def compile_extension(root: Path) -> Path | None:
    """The compiled module beside its source, or None (and a warning) when it cannot be."""
    config = sysconfig.get_config_vars()
    target = root / SOURCE.with_name("_ryml_data" + config["EXT_SUFFIX"])
    partial = target.with_name(target.name + ".partial")  # never a half-written module
    command = [
        *shlex.split(config.get("LDSHARED") or "cc -shared"),
        *shlex.split(config.get("CFLAGS") or ""),
        *shlex.split(config.get("CCSHARED") or "-fPIC"),
        "-I",
        sysconfig.get_paths()["include"],
        str(root / SOURCE),
        "-o",
        str(partial),
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        print(
            f"apiforge: could not compile {SOURCE} ({detail.strip()[:500]}); "
            "YAML will be read with PyYAML, more slowly",
            file=sys.stderr,
        )
        partial.unlink(missing_ok=True)
        return None
    os.replace(partial, target)
    return target


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if os.environ.get("APIFORGE_PURE_WHEEL"):  # the py3-none-any wheel: every Python
            return
        built = compile_extension(Path(self.root))
        if built is None:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":  # an editable install imports it from the source tree
            build_data["force_include"][str(built)] = str(built.relative_to(self.root))
