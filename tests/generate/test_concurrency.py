"""A warm `apiforge generate` plans, renders and formats the client tree in a forked child
while it plans the server (`generate._Build.beside`): the files and the warnings, in the order
they are said, must be those of a run that does everything in one process, whatever the cache
holds; a child that fails leaves the work to the parent, which meets any error a one-process
run meets."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from generator.client import plan as client
from generator.errors import ApiforgeError, Problem
from generator.forked import Forked
from generator.pipeline import concurrency
from generator.pipeline.generate import generate
from generator.server import plan as server
from generator.spec.located import recorded, replay
from tests.test_cli import SLOPPY  # two validation errors, and a pattern the models drop

pytestmark = pytest.mark.usefixtures("private_cache")  # (conftest.py)

# Warnings from the client's planning (a relative server URL), the server's (a pattern
# pydantic refuses, a path variable declared `in: query`) and the client's gaps (mutualTLS).
WARNY = """openapi: 3.1.0
info:
  title: Warny
  version: '1'
servers:
  - url: relative/base
paths:
  /things/{thingId}:
    get:
      operationId: getThing
      security:
        - tls: []
      parameters:
        - name: thingId
          in: query
          schema:
            type: string
        - name: code
          in: query
          schema:
            type: string
            pattern: '^(?=a)a+$'
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Thing'
components:
  securitySchemes:
    tls:
      type: mutualTLS
  schemas:
    Thing:
      type: object
      properties:
        name:
          type: string
"""

NEW_RESOURCE = """  /gadgets/{gadgetId}:
    put:
      operationId: putGadget
      parameters:
        - name: gadgetId
          in: path
          required: true
          schema:
            type: string
      responses:
        '204':
          description: done
"""


def _snapshot(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture
def client_plans_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The client plans made in this process (a forked child's are not seen here)."""
    seen: list[str] = []
    real = client.plan_client

    def counting(*args: object, **kwargs: object) -> object:
        seen.append("client")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(client, "plan_client", counting)
    return seen


def _run(
    spec: Path, out: Path, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, bytes], list[str]]:
    """The files of a fresh tree, and the warnings in the order they were said."""
    caplog.clear()
    shutil.rmtree(out, ignore_errors=True)
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        generate(str(spec), out)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return _snapshot(out), said


def _one_process(
    spec: Path, out: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, bytes], list[str]]:
    with monkeypatch.context() as m:
        m.setattr(Forked, "start", classmethod(lambda cls, *args: None))
        return _run(spec, out, caplog)


@pytest.mark.parametrize("spec_text", ["acme", WARNY], ids=["acme", "warnings"])
def test_the_client_planned_beside_equals_one_process(
    spec_text: str,
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    client_plans_here: list[str],
) -> None:
    if spec_text != "acme":
        spec.write_text(spec_text)
    _run(spec, tmp_path / "warm", caplog)  # a cold run (no fork: the models step has the core)
    for edit in ("unchanged", "a new resource"):
        if edit != "unchanged":
            text = spec.read_text()
            spec.write_text(text.replace("paths:\n", "paths:\n" + NEW_RESOURCE, 1))
        client_plans_here.clear()
        beside = _run(spec, tmp_path / "beside", caplog)
        assert client_plans_here == []  # the child planned the client
        alone = _one_process(spec, tmp_path / "alone", caplog, monkeypatch)
        assert client_plans_here == ["client"]
        assert beside == alone
    if spec_text == WARNY:  # each tree's warnings, the client's first, the gaps last
        said = beside[1]
        order = ["servers[0]", "is not enforced by the server", "is declared `in: query`"]
        at = [next(i for i, w in enumerate(said) if part in w) for part in order]
        gaps = next(i for i, w in enumerate(said) if "the client cannot express" in w)
        assert at == sorted(at) and gaps > max(at)


def test_a_failed_child_leaves_the_client_to_this_process(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    client_plans_here: list[str],
) -> None:
    spec.write_text(WARNY)
    _run(spec, tmp_path / "warm", caplog)
    alone = _one_process(spec, tmp_path / "alone", caplog, monkeypatch)

    def fails(self: object, models: object) -> None:
        raise RuntimeError("the child dies")

    monkeypatch.setattr(concurrency, "client_made", fails)
    client_plans_here.clear()
    assert _run(spec, tmp_path / "failed", caplog) == alone
    assert client_plans_here == ["client"]  # planned again here, once


def test_planning_errors_are_those_of_one_process(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _run(spec, tmp_path / "warm", caplog)

    def client_fails(*args: object, **kwargs: object) -> None:
        raise ApiforgeError(Problem("the client's error"))

    def server_fails(*args: object, **kwargs: object) -> None:
        raise ApiforgeError(Problem("the server's error"))

    out = tmp_path / "failed"
    with monkeypatch.context() as m:  # the server's error, the client planned fine beside it
        m.setattr(server, "plan_server", server_fails)
        with pytest.raises(ApiforgeError, match="the server's error"):
            generate(str(spec), out)
    with monkeypatch.context() as m:  # both fail: the client is planned first in one process
        m.setattr(server, "plan_server", server_fails)
        m.setattr(client, "plan_client", client_fails)
        with pytest.raises(ApiforgeError, match="the client's error"):
            generate(str(spec), out)
    assert not out.exists()  # nothing written


def test_a_plain_warning_goes_to_the_innermost_recording() -> None:
    log = logging.getLogger("apiforge")
    with recorded() as outer:
        log.warning("before")
        with recorded() as inner:
            log.warning("inside")
        assert [m for _, _, m in inner] == ["inside"]
        replay(inner)  # said again: the outer recording takes it
        log.warning("after")
    assert [m for _, _, m in outer] == ["before", "inside", "after"]


def test_validation_starts_once_the_document_is_resolved_before_the_ir() -> None:
    import generator.spec as spec_module

    order: list[str] = []
    real = spec_module.build_api

    def build(resolver: object) -> object:
        order.append("build")
        return real(resolver)  # type: ignore[arg-type]

    acme = str(Path(__file__).resolve().parents[2] / "specs" / "acme.yaml")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(spec_module, "build_api", build)
        loaded = spec_module.load_spec(
            acme, resolved=lambda resolver: order.append(f"resolved {resolver.root.name}")
        )
    assert order == [f"resolved {acme}", "build"] and loaded.api.operations


def test_a_warm_run_says_validation_errors_as_one_process_and_strict_writes_nothing(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    spec.write_text(SLOPPY)
    _run(spec, tmp_path / "warm", caplog)
    text = spec.read_text()
    spec.write_text(text.replace("paths:\n", "paths:\n" + NEW_RESOURCE, 1))
    beside = _run(spec, tmp_path / "beside", caplog)
    assert beside == _one_process(spec, tmp_path / "alone", caplog, monkeypatch)
    said = beside[1]
    assert [w for w in said if "is not valid OpenAPI" in w] == [
        f"warning: {spec} is not valid OpenAPI 3.x (2 errors); generating anyway — "
        "pass --strict to make this an error"
    ]
    out = tmp_path / "strict"
    with pytest.raises(ApiforgeError, match="Additional properties are not allowed"):
        generate(str(spec), out, strict=True)
    assert not out.exists()


def test_a_spec_the_ir_refuses_stops_the_validation_child(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Forked[object]] = []
    real = Forked.start

    def start(fn: object, *args: object) -> Forked[object] | None:
        child = real(fn, *args)  # type: ignore[arg-type]
        if child is not None:
            started.append(child)
        return child

    def refuses(resolver: object) -> None:
        raise ApiforgeError(Problem("the IR refuses this"))

    monkeypatch.setattr(Forked, "start", staticmethod(start))
    import generator.spec as spec_module

    monkeypatch.setattr(spec_module, "build_api", refuses)
    with pytest.raises(ApiforgeError, match="the IR refuses this"):
        generate(str(spec), tmp_path / "out")
    assert len(started) == 1 and started[0]._done  # validation's child: stopped, reaped
    assert not (tmp_path / "out").exists()


def test_on_one_core_the_client_is_planned_here(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    client_plans_here: list[str],
) -> None:
    _run(spec, tmp_path / "warm", caplog)
    beside = _run(spec, tmp_path / "beside", caplog)
    client_plans_here.clear()
    monkeypatch.setattr(concurrency.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert _run(spec, tmp_path / "one core", caplog) == beside
    assert client_plans_here == ["client"]


def test_a_regeneration_in_place_gets_back_only_the_client_files_that_differ(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The child compares the client tree with the one on disk: only what differs travels
    back, the rest is reported unchanged without being read again, and the tree written is
    that of a one-process run (a generated file edited by hand is restored)."""
    out, alone = tmp_path / "beside", tmp_path / "alone"
    generate(str(spec), out)
    edited = next(p for p in sorted((out / "client").rglob("*.py")) if "resources" in p.parts)
    edited.write_text(edited.read_text() + "# edited by hand\n")
    spec.write_text(spec.read_text().replace("paths:\n", "paths:\n" + NEW_RESOURCE, 1))
    shutil.copytree(out, alone)
    made: list[concurrency.MadeTree] = []
    real = concurrency.MadeTree.planned

    def planned(tree: concurrency.MadeTree, out_dir: Path) -> object:
        made.append(tree)
        return real(tree, out_dir)

    with monkeypatch.context() as m:
        m.setattr(concurrency.MadeTree, "planned", planned)
        result = generate(str(spec), out)
    (tree,) = made
    report = next(p.report for p in result.products if p.kind == "client")
    assert report is not None
    rel = edited.relative_to(out / "client").as_posix()
    assert rel in tree.rendered and rel in report.written
    assert tree.on_disk and set(tree.on_disk) == set(report.unchanged)
    assert not set(tree.on_disk) & set(tree.rendered)
    with monkeypatch.context() as m:
        m.setattr(Forked, "start", classmethod(lambda cls, *args: None))
        generate(str(spec), alone)
    assert _snapshot(out) == _snapshot(alone)
    assert "# edited by hand" not in edited.read_text()


def test_the_child_makes_the_lint_summary_and_models_warnings_said_where_they_were(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`beside`'s `after`: the client's child, its tree made, makes the lint summary and the
    models' warnings (`said_ahead`); the parent says them after validation's warnings, as a
    one-process run does. A summary that fails there is made again here, and its error is
    raised where a one-process run raises it (nothing written)."""
    spec.write_text(SLOPPY)  # validation errors, and a pattern the models drop
    _run(spec, tmp_path / "warm", caplog)
    here: list[str] = []  # what this process made (the child's calls are not seen here)
    real_summary, real_models = concurrency.lint_summary, concurrency.warn_about_models

    def summary(spec_path: str, loaded: object) -> tuple[str | None, bool]:
        here.append("summary")
        logging.getLogger("apiforge").warning("said by the lint summary")
        return real_summary(spec_path, loaded)

    def models(*args: object) -> None:
        here.append("models")
        real_models(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrency, "lint_summary", summary)
    monkeypatch.setattr(concurrency, "warn_about_models", models)
    beside = _run(spec, tmp_path / "beside", caplog)
    assert here == []
    alone = _one_process(spec, tmp_path / "alone", caplog, monkeypatch)
    assert here == ["summary", "models"]
    assert beside == alone
    said = beside[1]
    valid = next(i for i, w in enumerate(said) if "is not valid OpenAPI" in w)
    assert said.index("said by the lint summary") > valid

    def fails(spec_path: str, loaded: object) -> None:
        here.append("failed")
        raise ApiforgeError(Problem("the lint config is broken"))

    monkeypatch.setattr(concurrency, "lint_summary", fails)
    here.clear()
    out = tmp_path / "failed"
    with pytest.raises(ApiforgeError, match="the lint config is broken"):
        generate(str(spec), out)
    assert here == ["failed"]  # made again here, after the child's attempt failed
    assert not out.exists()


def test_validation_starts_before_the_read_and_is_used_for_the_text_read_here_only(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`_Checks.start_early`: the validation child reads the spec itself before this process
    does; its answer is taken for the text this process read (by digest), and a different
    one (the file saved in between) is validated again here."""
    spec.write_text(SLOPPY)  # two validation errors
    alone = _one_process(spec, tmp_path / "alone", caplog, monkeypatch)
    validated_here: list[str] = []
    real = concurrency.find_problems

    def counting(resolver: object) -> object:
        validated_here.append("here")
        return real(resolver)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrency, "find_problems", counting)
    early = _run(spec, tmp_path / "early", caplog)
    assert early == alone and validated_here == []  # the child's answer, for this text

    def stale(path: str) -> object:  # as if the file had changed before the child read it
        return "the digest of another text", (1, [Problem("an error of another text")])

    monkeypatch.setattr(concurrency, "validated", stale)
    again = _run(spec, tmp_path / "again", caplog)
    assert again == alone and validated_here == ["here"]
    assert not any("another text" in said for said in again[1])
