"""No import circles among the generator's modules, the runtimes a generated project carries,
or the generated packages themselves: every import statement counts, a lazy one inside a
function too (it is a dependency all the same); imports only for type checkers
(`if TYPE_CHECKING:`) do not. A circle found is printed as the modules it joins."""

from __future__ import annotations

import ast
import functools
import shutil
from pathlib import Path

import pytest

from tests.golden import GOLDEN, RUNTIMES

ROOT = Path(__file__).resolve().parent.parent


def _module_name(root: Path, path: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _runtime_imports(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements outside `if TYPE_CHECKING:` blocks (of each source text once:
    every generated package carries the same runtime)."""
    tree = ast.parse(source)
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    return tuple(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in typing_only
    )


def _compiled(package: Path | None, name: str) -> bool:
    """Whether `name` is a compiled module beside a package's sources (a leaf: no Python)."""
    if package is None or package.name != "__init__.py":
        return False
    return not (package.parent / f"{name}.py").exists() and any(package.parent.glob(f"{name}.*"))


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the modules of the same package tree it imports."""
    paths = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in _runtime_imports(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                # `from pkg import sub` imports the submodule; `from mod import name`, the module
                targets = [
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths else module
                    for alias in node.names
                    if not _compiled(paths.get(module), alias.name)
                ]
            for target in targets:
                while target and target not in paths:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_finder_sees_a_lazy_circle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import x\n")
    (package / "b.py").write_text("def f():\n    from . import a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"
    )
    assert circles(import_graph(package)) == [["pkg.a", "pkg.b"]]


def test_no_import_circle_in_the_generator() -> None:
    assert circles(import_graph(ROOT / "generator")) == []


def test_no_import_circle_in_the_client_runtime() -> None:
    assert circles(import_graph(ROOT / "templates" / "client" / "runtime")) == []


def test_no_import_circle_in_the_server_runtime() -> None:
    assert circles(import_graph(ROOT / "templates" / "server" / "runtime")) == []


@pytest.mark.parametrize("product", ["server", "client"])
def test_no_import_circle_in_a_generated_package(product: str, tmp_path: Path) -> None:
    """Every golden project's package, with the runtime it carries put back beside it (the
    golden tree leaves out those verbatim copies)."""
    folder = "runtime" if product == "server" else "_runtime"
    packages = sorted(p for p in GOLDEN.glob(f"*/{product}/*") if (p / "__init__.py").is_file())
    assert packages
    found: dict[str, list[list[str]]] = {}
    for package in packages:
        tree = tmp_path / package.parent.parent.name / package.name
        shutil.copytree(package, tree)
        (tree / folder).mkdir(exist_ok=True)
        for source in RUNTIMES[folder].glob("*.py"):
            shutil.copyfile(source, tree / folder / source.name)
        found[package.parent.parent.name] = circles(import_graph(tree))
    assert found == {name: [] for name in found}
