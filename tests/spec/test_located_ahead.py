"""A big JSON spec's source map made by a forked child (`sourcemap.LocatedAhead`): the same
locations as made here, and any failure of the child is only a fallback, never an error or
a hang."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from generator.lint.engine import lint, lint_path
from generator.lint.report import render_json
from generator.spec import load, load_spec
from generator.spec import sourcemap as sm
from generator.spec.load import load_document
from generator.spec.sourcemap import LocatedAhead


def _spec(tmp_path: Path) -> str:
    """A JSON spec with findings in many places (headers, 429s, shared responses)."""
    paths: dict[str, Any] = {}
    for i in range(40):
        paths[f"/things/{i}/{{id}}"] = {
            "get": {
                "responses": {
                    "200": {"description": "ok", "headers": {"ETag": {"schema": {}}}},
                    "429": {"$ref": "#/components/responses/slow"},
                }
            },
            "put": {"requestBody": {"content": {}}, "responses": {"204": {"description": "x"}}},
            "post": {"responses": {"202": {"description": "queued"}}},
        }
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": paths,
        "components": {"responses": {"slow": {"description": "too many"}}},
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec, indent=2))
    return str(path)


@pytest.fixture
def ahead(monkeypatch: pytest.MonkeyPatch) -> list[tuple[LocatedAhead, int]]:
    """The children started (for any JSON size, without a cache) and their process ids."""
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    monkeypatch.setattr(LocatedAhead, "MIN_BYTES", 0)
    started: list[tuple[LocatedAhead, int]] = []
    start = LocatedAhead.start.__func__  # type: ignore[attr-defined]

    def spy(cls: type[LocatedAhead], doc: Any) -> LocatedAhead | None:
        child: LocatedAhead | None = start(cls, doc)
        if child is not None:
            started.append((child, child._pid))
        return child

    monkeypatch.setattr(LocatedAhead, "start", classmethod(spy))
    return started


def _here(spec: str) -> str:
    """The report with every location made in this process."""
    return render_json(lint(load_spec(spec)))


def _gone(pid: int) -> bool:
    """Whether the child has ended and been reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_childs_locations_are_the_ones_made_here(
    tmp_path: Path, ahead: list[tuple[LocatedAhead, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    answered: list[Any] = []
    locate_all = LocatedAhead.locate_all

    def spy(self: LocatedAhead, pointers: list[str]) -> Any:
        answered.append(locate_all(self, pointers))
        return answered[-1]

    monkeypatch.setattr(LocatedAhead, "locate_all", spy)
    spec = _spec(tmp_path)
    result = lint_path(spec)
    ((_, pid),) = ahead
    assert answered and answered[0] is not None  # the child answered them all
    assert len(result.findings) > 100 and all(f.line > 1 for f in result.findings)
    assert render_json(result) == _here(spec)
    assert _gone(pid)


def test_pointers_sent_early_are_answered_with_the_rest(
    tmp_path: Path, ahead: list[tuple[LocatedAhead, int]]
) -> None:
    spec = _spec(tmp_path)
    load_document(spec).locate_ahead()
    ((child, pid),) = ahead
    child.ask(["/paths/~1things~10~1{id}/get", "/info"])
    child.ask(["/nowhere/at/all"])  # asked, then not wanted after all
    pointers = ["/info", "/paths", "/components/responses/slow", "/paths"]
    here = load_document(spec)
    assert child.locate_all(pointers) == [here.locate(p) for p in pointers]
    assert _gone(pid)


@pytest.mark.parametrize("how", ["dies", "answers nonsense"])
def test_a_child_that_fails_is_replaced_by_locating_here(
    tmp_path: Path,
    ahead: list[tuple[LocatedAhead, int]],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    def failing(doc: Any, ask: int, answers: int) -> None:
        if how == "answers nonsense":
            os.read(ask, 1 << 20)
            os.write(answers, b"not marshal data")
        os._exit(3)

    monkeypatch.setattr(sm, "_answer", failing)  # what the forked child runs
    spec = _spec(tmp_path)
    assert render_json(lint_path(spec)) == _here(spec)
    ((_, pid),) = ahead
    assert _gone(pid)


def test_a_child_that_never_answers_is_stopped(
    tmp_path: Path, ahead: list[tuple[LocatedAhead, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def hanging(doc: Any, ask: int, answers: int) -> None:
        time.sleep(60)
        os._exit(0)

    monkeypatch.setattr(sm, "_answer", hanging)
    doc = load_document(_spec(tmp_path))
    doc.locate_ahead()
    ((child, pid),) = ahead
    child._seconds = 0.2  # instead of 10 s and more
    pointers = ["/paths", "/paths/~1things~10~1{id}/get", "/nowhere/at/all"]
    assert doc.locate_all(pointers) == [doc.locate(p) for p in pointers]
    assert _gone(pid)


def test_locating_one_by_one_first_stops_the_child(
    tmp_path: Path, ahead: list[tuple[LocatedAhead, int]]
) -> None:
    doc = load_document(_spec(tmp_path))
    doc.locate_ahead()
    ((_, pid),) = ahead
    assert doc.locate("/paths") == (7, 3)
    assert _gone(pid)
    assert doc.locate_all(["/info"]) == [(3, 3)]


def test_no_child_for_small_texts_or_with_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(tmp_path)
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    assert LocatedAhead.start(load_document(spec)) is None  # under MIN_BYTES
    monkeypatch.setattr(LocatedAhead, "MIN_BYTES", 0)
    monkeypatch.delenv("APIFORGE_NO_CACHE")
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(load, "CACHE_MIN_BYTES", 0)  # as if big enough to cache
    assert LocatedAhead.start(load_document(spec)) is None  # the whole map is cached instead
    with load.read_whole():  # lint: nothing cached of a text `json` reads, so a child
        child = LocatedAhead.start(load_document(spec))
    assert child is not None
    del child


def test_a_child_never_asked_is_stopped_when_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    monkeypatch.setattr(LocatedAhead, "MIN_BYTES", 0)
    child = LocatedAhead.start(load_document(_spec(tmp_path)))
    assert child is not None
    pid = child._pid
    assert not _gone(pid)  # waiting for pointers that will not come (an error, say)
    del child
    assert _gone(pid)
