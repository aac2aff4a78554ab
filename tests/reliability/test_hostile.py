"""Hostile specs (hostile.py): the generated server and client compile and import, the client
passes `mypy --strict`, and nothing from the spec runs — one test per class.

Everything is generated once for the module (the CLI's own code path: `load_spec` with full
validation, `write_server`, `write_client`), with the working directory set to a temporary
folder; the imports (the server's `main` builds the app and its OpenAPI document; the client
package is imported and its `Client` instantiated) run in one fresh interpreter there, and mypy
checks every client in one batch. The canary: no file named CANARY may appear in that folder,
in the repository or in the test's own working directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from generator.client.plan import write_client
from generator.server.plan import write_server
from generator.spec import load_spec
from tests.reliability.hostile import CLASSES, Hostile, build

ROOT = Path(__file__).resolve().parents[2]

_IMPORT = r"""
import importlib, json, sys
results = {}
for name in sys.argv[1:]:
    errors = []
    try:
        main = importlib.import_module(f"hostile_{name}_server.main")
        main.app.openapi()
    except BaseException as exc:
        errors.append(f"server: {type(exc).__name__}: {exc}"[:500])
    try:
        client = importlib.import_module(f"hostile_{name}_client")
        client.Client(base_url="http://127.0.0.1:9").close()
    except BaseException as exc:
        errors.append(f"client: {type(exc).__name__}: {exc}"[:500])
    results[name] = errors
print("@@" + json.dumps(results))
"""


@dataclass
class Generated:
    errors: dict[str, str] = field(default_factory=dict)  # class → generation error
    imports: dict[str, list[str]] = field(default_factory=dict)
    mypy: dict[str, list[str]] = field(default_factory=dict)  # class → mypy errors
    compiled: dict[str, list[str]] = field(default_factory=dict)
    workdir: Path = Path()


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _generate(cls: Hostile, work: Path) -> None:
    spec = work / "specs" / f"{cls.name}.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(json.dumps(build(cls), ensure_ascii=True), encoding="utf-8")
    loaded = load_spec(str(spec), validate=True)
    write_server(
        loaded.api,
        work / "server" / cls.name,
        spec_source=spec,
        spec_name=spec.name,
        package=f"hostile_{cls.name}_server",
    )
    write_client(
        loaded.api,
        work / "client" / cls.name,
        spec_source=spec,
        spec_name=spec.name,
        package=f"hostile_{cls.name}_client",
    )


def _compile(tree: Path) -> list[str]:
    errors = []
    for path in sorted(tree.rglob("*.py")):
        try:
            compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError) as exc:
            errors.append(f"{path.relative_to(tree)}: {exc}"[:300])
    return errors


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    work = tmp_path_factory.mktemp("hostile")
    result = Generated(workdir=work)
    ok: list[str] = []
    with _cwd(work):
        for cls in CLASSES:
            try:
                _generate(cls, work)
            except Exception as exc:
                result.errors[cls.name] = f"{type(exc).__name__}: {exc}"[:1000]
                continue
            result.compiled[cls.name] = _compile(work / "server" / cls.name) + _compile(
                work / "client" / cls.name
            )
            if not result.compiled[cls.name]:
                ok.append(cls.name)
    paths = [str(work / side / n) for n in ok for side in ("server", "client")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "APIFORGE_STORE_URL": "memory://"}
    env["APIFORGE_STORE_URL"] = f"sqlite:///{work / 'state.db'}"
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT, *ok],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    marker = proc.stdout.rfind("@@")
    if marker < 0:
        raise AssertionError(f"the import run failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    result.imports = json.loads(proc.stdout[marker + 2 :])
    # one mypy run for every client
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--no-error-summary"]
    mypy += ["--cache-dir", os.devnull, "--explicit-package-bases"]
    for n in ok:
        mypy += ["-p", f"hostile_{n}_client"]
    client_paths = os.pathsep.join(str(work / "client" / n) for n in ok)
    run = subprocess.run(
        mypy,
        cwd=work,
        env={**os.environ, "MYPYPATH": client_paths},
        capture_output=True,
        text=True,
        timeout=600,
    )
    for n in ok:
        result.mypy[n] = [
            line
            for line in run.stdout.splitlines()
            if re.search(rf"hostile_{re.escape(n)}_client[/\\]", line) and "error" in line
        ]
    if run.returncode not in (0, 1):
        raise AssertionError(f"mypy did not run:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return result


def _canaries(generated: Generated) -> list[Path]:
    places = [generated.workdir, ROOT, Path.cwd(), ROOT / "tests"]
    found = [p / "CANARY" for p in places if (p / "CANARY").exists()]
    found += list(generated.workdir.rglob("CANARY"))
    return found


@pytest.mark.parametrize("cls", CLASSES, ids=[c.name for c in CLASSES])
def test_hostile_class(cls: Hostile, generated: Generated) -> None:
    assert cls.name not in generated.errors, generated.errors.get(cls.name)
    assert not generated.compiled[cls.name], generated.compiled[cls.name]
    assert generated.imports.get(cls.name) == [], generated.imports.get(cls.name)
    assert not generated.mypy[cls.name], "\n".join(generated.mypy[cls.name][:20])
    assert not _canaries(generated), "something from the spec ran"


def test_every_class_reaches_the_generated_code(generated: Generated) -> None:
    """The payloads really got in: each class's text is in its generated client (escaped)."""
    for cls in CLASSES:
        if cls.name in generated.errors:
            continue
        client = "\n".join(
            p.read_text()
            for p in (generated.workdir / "client" / cls.name).rglob("*.py")
            if "_runtime" not in p.parts
        )
        readme = (generated.workdir / "client" / cls.name / "README.md").read_text()
        probe = next(c for c in re.split(r"[^A-Za-z]+", cls.text) if len(c) >= 3)
        assert probe in client or probe in readme, (cls.name, probe)
