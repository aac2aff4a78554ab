"""The runtime works copied into a generated package as `<package>._runtime`."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[3] / "templates" / "client" / "runtime"
# pydantic_core is pydantic's own engine (pydantic pins the exact version it ships with): the
# lenient response models (`_models`) build their validators with its `core_schema`
ALLOWED_THIRD_PARTY = {"httpx", "pydantic", "pydantic_core"}


def test_only_relative_stdlib_httpx_and_pydantic_imports() -> None:
    modules = sorted(RUNTIME.glob("*.py"))
    assert {m.name for m in modules} >= {
        "__init__.py",
        "_base.py",
        "_errors.py",
        "_retry.py",
        "_ratelimit.py",
        "_jobs.py",
        "_concurrency.py",
        "_webhooks.py",
    }
    for module in modules:
        tree = ast.parse(module.read_text(), filename=str(module))
        assert ast.get_docstring(tree), f"{module.name} has no module docstring"
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                assert (
                    top in sys.stdlib_module_names
                    or top in ALLOWED_THIRD_PARTY
                    or top == "__future__"
                ), f"{module.name} imports {name}"


def test_copied_as_a_subpackage_it_imports_and_runs(tmp_path: Path) -> None:
    package = tmp_path / "acme_client"
    shutil.copytree(RUNTIME, package / "_runtime", ignore=shutil.ignore_patterns("__pycache__"))
    (package / "__init__.py").write_text("from ._runtime import SyncAPIClient, RequestOptions\n")
    script = (
        "import httpx, acme_client\n"
        "from acme_client._runtime import __all__ as names\n"
        "t = httpx.MockTransport(lambda r: httpx.Response(200, json={'ok': r.headers['x-retry-count']}))\n"
        "c = acme_client.SyncAPIClient('https://x', transport=t)\n"
        "print(c.request(acme_client.RequestOptions('GET', '/a')).json()['ok'], len(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    ok, count = done.stdout.split()
    assert ok == "0" and int(count) > 40
