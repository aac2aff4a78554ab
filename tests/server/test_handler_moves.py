"""The server's routers and handler modules follow the client's resources, and a regeneration
that finds user code in a handler module that no longer owns it says where it belongs and
never moves or deletes it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

UNTAGGED = """
openapi: 3.1.0
info: {title: Shop, version: 1.0.0}
paths:
  /v1/customers:
    get:
      operationId: listCustomers
      responses: {'204': {description: ok}}
  /v1/customers/{customer}/sources:
    get:
      operationId: listSources
      parameters: [{name: customer, in: path, required: true, schema: {type: string}}]
      responses: {'204': {description: ok}}
"""
TAGGED = UNTAGGED.replace(
    "operationId: listCustomers", "operationId: listCustomers\n      tags: [Customers]"
).replace("operationId: listSources", "operationId: listSources\n      tags: [Customers]")

SOURCES = """
from __future__ import annotations

from ..interfaces import CustomersSourcesBase
from ..runtime.context import RequestContext


class CustomersSourcesHandler(CustomersSourcesBase):
    async def list_sources(self, ctx: RequestContext, *, customer: str) -> None:
        return None  # my own code

    def _helper(self) -> int:
        return 1
"""


def test_user_code_left_behind_by_a_new_grouping_is_reported_not_deleted(
    tmp_path: Path,
) -> None:
    spec, out = tmp_path / "shop.yaml", tmp_path / "srv"
    spec.write_text(UNTAGGED)
    runner = CliRunner()
    args = ["server", str(spec), "-o", str(out), "--package", "shop", "--no-validate"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    handlers = out / "shop" / "handlers"
    # resources from the paths: one router and one handler module each
    assert sorted(p.name for p in handlers.glob("*.py")) == [
        "__init__.py",
        "customers.py",
        "customers_sources.py",
    ]
    assert (out / "shop" / "routers" / "customers_sources.py").exists()
    assert "warning" not in first.output
    sources = handlers / "customers_sources.py"
    sources.write_text(SOURCES)

    spec.write_text(TAGGED)  # both operations now belong to the `Customers` tag
    again = runner.invoke(main, args)
    assert again.exit_code == 0, again.output
    assert sources.read_text() == SOURCES  # never deleted, never rewritten
    assert not (out / "shop" / "routers" / "customers_sources.py").exists()  # generated: gone
    warnings = [line for line in again.output.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: handlers/customers_sources.py: `list_sources` (GET "
        "/v1/customers/{customer}/sources) now belongs in handlers/customers.py "
        "(`CustomersHandler`); this module's method is no longer called: move it there "
        "(apiforge never deletes your code)"
    ]
    # and the new owner still lacks it
    assert "  handlers/customers.py: list_sources  (GET /v1/customers/{customer}/sources, " in (
        again.output
    )


def test_handler_modules_seen_settled_are_not_read_again_and_edits_are_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_handler_modules` trusts a module's size and modification time only when that time
    was well before the last look (as git trusts its index); an edited module, or one
    modified just before the last look, is read again."""
    from generator.server import handlers as server_handlers

    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    folder = tmp_path / "handlers"
    folder.mkdir()
    old = time.time() - 100
    for name in ("customers", "sources"):
        (folder / f"{name}.py").write_text(SOURCES)
        os.utime(folder / f"{name}.py", (old, old))
    (folder / "fresh.py").write_text(SOURCES)  # modified just now: not settled at the look
    reads: list[str] = []
    real = Path.read_bytes

    def counting(path: Path) -> bytes:
        reads.append(path.name)
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", counting)
    first = server_handlers._handler_modules(folder)
    assert sorted(reads) == ["customers.py", "fresh.py", "sources.py"]
    assert first["sources"][0] == ["list_sources"]
    reads.clear()
    assert server_handlers._handler_modules(folder) == first
    assert reads == ["fresh.py"]  # the settled modules were trusted
    edited = SOURCES.replace("return None  # my own code", "raise NotImplementedError")
    (folder / "sources.py").write_text(edited)
    reads.clear()
    after = server_handlers._handler_modules(folder)
    assert "sources.py" in reads and "customers.py" not in reads
    assert after["sources"][0] == [] and after["customers"] == first["customers"]
