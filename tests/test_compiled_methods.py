"""The table of compiled dataclass methods (generator/compiled_methods.py): classes made
through it behave as `dataclasses` makes them, a second process compiles nothing, and the
file is only written where bytecode would be."""

from __future__ import annotations

import dataclasses
import marshal
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator import compiled_methods

SOURCE = '''
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Point:
    """A point."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = field(default=())
'''


@pytest.fixture(autouse=True)
def default_table_after(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # whatever the test run's setting
    yield
    compiled_methods.install()  # the table apiforge's own classes use


def make_point(module_name: str) -> Any:
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module  # dataclasses reads the class's module globals
    try:
        exec(compile(SOURCE, f"<{module_name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[module_name]
    return module.Point


def count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiled: list[str] = []

    def counting(source: str, filename: str, mode: str) -> Any:
        compiled.append(source)
        return compile(source, filename, mode)

    monkeypatch.setattr(compiled_methods, "compile", counting, raising=False)
    return compiled


def test_a_class_from_the_table_behaves_as_dataclasses_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "methods.marshal"
    compiled_methods.install(table)
    first = count_compiles(monkeypatch)
    made = make_point("generator.fake_first")
    assert first  # __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__
    compiled_methods.save()
    assert table.exists()

    compiled_methods.install(table)  # as the next process does
    second = count_compiles(monkeypatch)
    point = make_point("generator.fake_second")
    assert second == []  # every method came from the table
    p = point(1, 2, ("a",))
    assert p == point(1, 2, ("a",)) and p != point(1, 3)
    assert hash(p) == hash(point(1, 2, ("a",)))
    assert repr(p) == "Point(x=1, y=2, tags=('a',))" == repr(made(1, 2, ("a",)))
    assert point(5).y == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(point)] == ["x", "y", "tags"]
    assert point.__slots__ == ("x", "y", "tags")


def test_only_apiforges_classes_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "methods.marshal"
    compiled_methods.install(table)
    compiled = count_compiles(monkeypatch)
    point = make_point("someone_else.models")
    assert point(1).x == 1
    assert compiled == []  # compiled by exec itself, as without the table
    compiled_methods.save()
    assert not table.exists()


def test_an_unreadable_table_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "methods.marshal"
    for junk in (b"", b"\x00garbage", marshal.dumps(("another format", {})), marshal.dumps([1])):
        table.write_bytes(junk)
        compiled_methods.install(table)
        assert make_point("generator.fake_junk")(7).x == 7
        compiled_methods.save()
        version, stored = marshal.loads(table.read_bytes())
        assert version == compiled_methods._FORMAT and stored


def test_nothing_is_written_where_bytecode_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "methods.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    compiled_methods.install(table)
    make_point("generator.fake_nowrite")
    compiled_methods.save()
    assert not table.exists()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    compiled_methods.install(blocked / "methods.marshal")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    make_point("generator.fake_blocked")
    compiled_methods.save()  # cannot write there: no error
    assert blocked.read_text() == "not a folder"


def test_entries_of_edited_code_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries this process did not use are kept (another command's classes) until the
    table passes its limit."""
    table = tmp_path / "methods.marshal"

    def others(count: int) -> dict[str, None]:
        return {
            f"def __create_fn__():\n def f{i}():\n  pass\n return f{i}": None for i in range(count)
        }

    table.write_bytes(marshal.dumps((compiled_methods._FORMAT, others(20))))
    compiled_methods.install(table)
    make_point("generator.fake_other_command")
    compiled_methods.save()
    _version, stored = marshal.loads(table.read_bytes())
    assert set(others(20)) < set(stored) and len(stored) == 26  # kept, and the 6 new ones

    table.write_bytes(marshal.dumps((compiled_methods._FORMAT, others(compiled_methods._LIMIT))))
    compiled_methods.install(table)
    make_point("generator.fake_edited")
    compiled_methods.save()
    _version, stored = marshal.loads(table.read_bytes())
    assert len(stored) == 6  # past the limit: only what this process used


def test_entries_are_loaded_when_used_and_a_damaged_one_is_compiled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "methods.marshal"
    compiled_methods.install(table)
    make_point("generator.fake_lazy")
    compiled_methods.save()
    version, stored = marshal.loads(table.read_bytes())
    assert stored and all(isinstance(code, bytes) for code in stored.values())
    damaged = next(iter(stored))
    stored[damaged] = b"\x00junk"
    table.write_bytes(marshal.dumps((version, stored)))

    compiled_methods.install(table)
    assert all(isinstance(code, bytes) for code in compiled_methods._codes.values())
    compiled = count_compiles(monkeypatch)
    point = make_point("generator.fake_lazy_again")
    assert compiled == [damaged]  # the others came from the table, loaded as asked
    assert point(1, 2) == point(1, 2) and repr(point(1)) == "Point(x=1, y=0, tags=())"
