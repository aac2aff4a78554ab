"""hatch_build.py: the C extension is compiled beside its source at install, and a machine
without a working compiler still installs apiforge (with a warning), leaving nothing half
written."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    """hatch_build.py, importable without hatchling (pip installs it only in the build's own
    environment): its base class is all it takes from there."""
    interface = types.ModuleType("hatchling.builders.hooks.plugin.interface")
    interface.BuildHookInterface = type("BuildHookInterface", (), {})  # type: ignore[attr-defined]
    for name in ("hatchling", "hatchling.builders", "hatchling.builders.hooks"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "hatchling.builders.hooks.plugin", types.ModuleType("p"))
    monkeypatch.setitem(sys.modules, interface.__name__, interface)
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(tmp_path: Path) -> Path:
    source = tmp_path / "generator" / "spec" / "_ryml_data.c"
    source.parent.mkdir(parents=True)
    shutil.copy(ROOT / "generator" / "spec" / "_ryml_data.c", source)
    return tmp_path


def test_the_extension_is_compiled_beside_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = _hook_module(monkeypatch)
    built = hook.compile_extension(_tree(tmp_path))
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert built == tmp_path / "generator" / "spec" / f"_ryml_data{suffix}"
    assert built.stat().st_size > 0
    assert [p.name for p in built.parent.iterdir() if p.name.endswith(".partial")] == []


def test_without_a_compiler_the_install_goes_on_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = _hook_module(monkeypatch)
    real = sysconfig.get_config_vars()
    broken = {**real, "LDSHARED": "/nonexistent/cc -shared"}
    monkeypatch.setattr(hook.sysconfig, "get_config_vars", lambda: broken)
    tree = _tree(tmp_path)
    assert hook.compile_extension(tree) is None
    assert "could not compile" in capsys.readouterr().err
    assert sorted(p.name for p in (tree / "generator" / "spec").iterdir()) == ["_ryml_data.c"]

    monkeypatch.setattr(hook.sysconfig, "get_config_vars", lambda: real)  # a compiler that fails
    (tree / "generator" / "spec" / "_ryml_data.c").write_text("this is not C\n")
    assert hook.compile_extension(tree) is None
    assert "could not compile" in capsys.readouterr().err
    assert sorted(p.name for p in (tree / "generator" / "spec").iterdir()) == ["_ryml_data.c"]
