"""The render caches of `apiforge generate`: whole files (keyed by templates, code and the exact
context), macro calls (a resource module's one method per operation), compiled templates — none of
them may ever serve stale output, and cached output is byte for byte the uncached output."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.lint.engine import lint
from generator.models import build as models
from generator.pipeline.generate import generate
from generator.render import env
from generator.render.fingerprint import OperationView, fingerprint
from generator.spec import load_spec
from tests.support import models_text

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("private_cache")  # (conftest.py)


@pytest.fixture
def counted_renders(monkeypatch: pytest.MonkeyPatch, one_process: None) -> list[str]:
    """Every template render (through the caches' `render_fragments`), by template name (all
    in this process: the client tree is not planned in a forked child)."""
    seen: list[str] = []
    real = env.render_fragments

    def counting(subdir: str, template: str, **kwargs: object) -> str:
        seen.append(template)
        return real(subdir, template, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(env, "render_fragments", counting)
    return seen


def _snapshot(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _generate(
    spec: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *, cache: bool = True
) -> dict[str, bytes]:
    with monkeypatch.context() as m:
        if not cache:
            m.setenv("APIFORGE_NO_CACHE", "1")
        generate(str(spec), out)
    return _snapshot(out)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


PROBE = """  /v1/apiforge_probe:
    get:
      operationId: getApiforgeProbe
      summary: A probe added by the test
      tags: [Payments]
      responses:
        '200':
          description: The probe.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Payment'
"""


def test_cached_output_is_byte_identical_to_uncached(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted_renders: list[str]
) -> None:
    uncached = _generate(spec, tmp_path / "a", monkeypatch, cache=False)
    filled = _generate(spec, tmp_path / "b", monkeypatch)  # fills the caches
    assert counted_renders  # a render per file, at least
    counted_renders.clear()
    warm = _generate(spec, tmp_path / "c", monkeypatch)
    assert uncached == filled == warm
    assert counted_renders == []  # every file from the cache: no template rendered
    again = _generate(spec, tmp_path / "c", monkeypatch)  # a regeneration over the same tree
    assert again == uncached


def test_a_new_operation_rerenders_and_rewrites_its_resource_only(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted_renders: list[str]
) -> None:
    out = tmp_path / "out"
    _generate(spec, out, monkeypatch)
    times = {p: p.stat().st_mtime_ns for p in out.rglob("*.py")}
    _edit(spec, "paths:\n", "paths:\n" + PROBE.replace("[Payments]", "[Refunds]"))
    counted_renders.clear()
    with monkeypatch.context():
        result = generate(str(spec), out)
    # per-resource modules: only the refunds ones (its handler module is the user's: kept)
    per_resource = [t for t in counted_renders if t in ("resource.py.j2", "router.py.j2")]
    assert per_resource == ["resource.py.j2", "router.py.j2"]
    written = {p.kind: sorted(p.report.written) for p in result.products if p.report}
    assert written["client"] == [
        "README.md",
        "acme_payments_api_client/resources/refunds.py",
    ]
    assert "acme_payments_api_server/routers/refunds.py" in written["server"]
    assert not any("/routers/payments" in w or "/handlers/" in w for w in written["server"])
    # files left as they were are not even touched
    untouched = out / "client" / "acme_payments_api_client" / "resources" / "payments.py"
    assert untouched.stat().st_mtime_ns == times[untouched]
    assert b"get_apiforge_probe" in (untouched.parent / "refunds.py").read_bytes()


@pytest.mark.parametrize("change", ["description", "operation", "schema"])
def test_a_changed_spec_gives_fresh_output(
    change: str, spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    before = _generate(spec, out, monkeypatch)  # warm caches, and the tree to regenerate
    if change == "description":
        _edit(
            spec,
            "Payments, newest first, one page at a time.",
            "Payments, newest first, one page at a time (edited).",
        )
        marker = b"(edited)"
    elif change == "operation":
        _edit(spec, "paths:\n", "paths:\n" + PROBE)
        marker = b"get_apiforge_probe"
    else:
        models.clear_memo()
        head = "    Payment:\n      type: object\n      properties:\n"
        _edit(spec, head, head + "        amountInCents:\n          type: integer\n")
        marker = b"amount_in_cents"
    after = _generate(spec, out, monkeypatch)
    fresh = _generate(spec, tmp_path / "fresh", monkeypatch, cache=False)
    # hand-written handler modules and the verifier are created once: a regeneration keeps them
    kept = {
        p
        for p in before
        if ("/handlers/" in p and not p.endswith("__init__.py")) or p.endswith("/verifier.py")
    }
    assert {p: after[p] for p in kept} == {p: before[p] for p in kept}
    assert {p: d for p, d in after.items() if p not in kept} == {
        p: d for p, d in fresh.items() if p not in kept
    }
    assert after != before
    assert any(marker in data for path, data in after.items() if path.startswith("client/"))


def test_a_changed_context_gives_fresh_output(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _generate(spec, tmp_path / "warm", monkeypatch)
    runner = CliRunner()
    for out, cache in ((tmp_path / "cached", True), (tmp_path / "uncached", False)):
        with monkeypatch.context() as m:
            if not cache:
                m.setenv("APIFORGE_NO_CACHE", "1")
            result = runner.invoke(
                main, ["generate", str(spec), "-o", str(out), "--package-prefix", "shop"]
            )
        assert result.exit_code == 0, result.output
    cached, uncached = _snapshot(tmp_path / "cached"), _snapshot(tmp_path / "uncached")
    assert cached == uncached
    assert "client/shop_client/_client.py" in cached


def test_context_fingerprints_and_file_keys() -> None:
    @dataclass(frozen=True)
    class Plan:  # a dataclass of apiforge's own (this module is tests.…, so: refused)
        name: str

    with pytest.raises(TypeError):
        fingerprint(Plan("x"))
    with pytest.raises(TypeError):
        fingerprint(object())
    # a set in a stable order (its iteration order varies between processes)
    assert fingerprint({"a": {"x", "y", "z"}}) == fingerprint({"a": {"z", "y", "x"}})
    assert fingerprint(frozenset({"x"})) != fingerprint({"x"}) != fingerprint(["x"])
    view = OperationView("getThing", "GET /things", False)
    assert fingerprint(view) == fingerprint(OperationView("getThing", "GET /things", False))
    assert fingerprint(view) != fingerprint(OperationView("getThing", "GET /things", True))
    # equal values, equal fingerprints, however they are shared or typed alike
    shared = "x" * 10
    assert fingerprint([shared, shared]) == fingerprint(["x" * 10, "".join(["x"] * 10)])
    assert fingerprint((1,)) != fingerprint((True,)) != fingerprint((1.0,))
    assert fingerprint(("a", "b")) != fingerprint(["a", "b"]) != fingerprint(("ab",))
    a = env.TemplateFiles("client", {"plan": view, "marker": "# m"}, scope="s")
    b = env.TemplateFiles("client", {"plan": view, "marker": "# n"}, scope="s")
    assert a.key("x.j2", {}) != b.key("x.j2", {})
    assert a.key("x.j2", {}) != a.key("y.j2", {})
    assert a.key("x.j2", {"tag": view}) != a.key("x.j2", {})


@pytest.fixture
def templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy of templates/ that every renderer uses."""
    copy = tmp_path / "templates"
    shutil.copytree(env.templates_root(), copy)
    import generator.client.files as client_files
    import generator.server.files as server_files

    for module in (env, client_files, server_files):
        monkeypatch.setattr(module, "templates_root", lambda: copy)
    env.environment.cache_clear()
    yield copy
    env.environment.cache_clear()


def test_a_changed_template_gives_fresh_output(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, templates: Path
) -> None:
    out = tmp_path / "out"
    _generate(spec, out, monkeypatch)  # every cache warm
    # a router (a whole-file render) and a memoised macro of the client's module
    _edit(
        templates / "server" / "router.py.j2",
        "router = APIRouter(",
        "# edited router\nrouter = APIRouter(",
    )
    _edit(
        templates / "client" / "resource.py.j2",
        '        """\n{% endmacro %}',
        '\n        Edited.\n        """\n{% endmacro %}',
    )
    env.environment.cache_clear()
    after = _generate(spec, out, monkeypatch)
    fresh = _generate(spec, tmp_path / "fresh", monkeypatch, cache=False)
    assert after == fresh
    assert b"# edited router" in after["server/acme_payments_api_server/routers/payments.py"]
    assert after["client/acme_payments_api_client/resources/payments.py"].count(b"Edited.") > 1


# --- macro calls ---------------------------------------------------------------------------


def _analysis(source: str) -> dict[str, tuple[str, ...]]:
    jinja = env.environment("client")
    return env.memoisable_macros(jinja.compile(source, "t.j2", raw=True))


def test_which_macros_are_remembered() -> None:
    assert _analysis("{% macro a(x) %}{{ x | pystr }}{% endmacro %}") == {"a": ()}
    # a context variable it reads goes into the key
    assert _analysis("{% macro b(x) %}{{ x }}{{ title }}{% endmacro %}") == {"b": ("title",)}
    # a template-level variable, another macro, a caller: never remembered
    assert _analysis("{% set y = 1 %}{% macro c() %}{{ y }}{% endmacro %}") == {}
    assert "d" not in _analysis(
        "{% macro a(x) %}{{ x }}{% endmacro %}{% macro d(x) %}{{ a(x) }}{% endmacro %}"
    )
    assert _analysis("{% macro e() %}{{ caller() }}{% endmacro %}") == {}
    assert (
        _analysis("{% macro f(x) %}{{ x }}{% endmacro %}{% macro f(x) %}{{ x }}!{% endmacro %}")
        == {}
    )
    assert set(_analysis((ROOT / "templates" / "client" / "resource.py.j2").read_text())) == {
        "signature",
        "doc",
        "body",
    }


def test_remembered_macro_calls_follow_their_inputs(
    templates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (templates / "t").mkdir()
    (templates / "t" / "m.j2").write_text(
        "{% macro m(x) %}[{{ x.label }}:{{ title }}]{% endmacro %}"
        "{% for x in items %}{{ m(x) }}{% endfor %}\n"
    )

    def both(**context: object) -> str:
        plain = env.render("t", "m.j2", **context)
        assert env.render_fragments("t", "m.j2", scope="s", **context) == plain
        return plain

    one, two = OperationView("a", "A", False), OperationView("b", "B", False)
    assert both(items=[one, two], title="T") == "[A:T][B:T]"
    assert env.fragment_stats[-1][1:] == (0, 2)
    assert both(items=[one, two], title="T") == "[A:T][B:T]"
    assert env.fragment_stats[-1][1:] == (2, 0)  # both from the previous render
    assert both(items=[one, OperationView("b", "C", False)], title="T") == "[A:T][C:T]"
    assert env.fragment_stats[-1][1:] == (1, 1)
    assert both(items=[one], title="U") == "[A:U]"  # the context variable is in the key
    assert env.fragment_stats[-1][1:] == (0, 1)
    with monkeypatch.context() as m:
        m.setenv("APIFORGE_NO_CACHE", "1")
        assert env.render_fragments("t", "m.j2", scope="s", items=[two], title="U") == "[B:U]"


def test_bytecode_cache_is_content_addressed(
    templates: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (templates / "t").mkdir()
    page = templates / "t" / "p.j2"
    page.write_text("one {{ x }}\n")
    with monkeypatch.context() as m:
        m.setenv("APIFORGE_NO_CACHE", "1")
        assert env.render("t", "p.j2", x=1) == "one 1\n"
    assert not (private_cache / "jinja1").exists()
    env.environment.cache_clear()
    assert env.render("t", "p.j2", x=1) == "one 1\n"
    assert len(list((private_cache / "jinja1").iterdir())) == 1
    env.environment.cache_clear()
    page.write_text("two {{ x }}\n")
    assert env.render("t", "p.j2", x=2) == "two 2\n"  # a new key, never the old code
    assert len(list((private_cache / "jinja1").iterdir())) == 2


# --- the models module lacks a class -------------------------------------------------------

CLASHING = """openapi: 3.0.3
info: {title: W, version: "1.0"}
paths:
  /a:
    get:
      operationId: getA
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Rejected'}
components:
  schemas:
    Rejected:
      type: object
      required: x
      properties:
        x: {type: string}
    Field:
      type: object
      properties:
        y: {$ref: '#/components/schemas/Rejected'}
"""


def test_speculative_plans_are_redone_when_a_class_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # `generate` plans while the models module is generated, as if it defines every class;
    # datamodel-code-generator cannot take `Rejected` (`required` is not a list), which the
    # models step leaves out, so the plans are redone: the same trees and warnings as
    # `apiforge server` and `apiforge client` give.
    spec = tmp_path / "w.yaml"
    spec.write_text(CLASHING)
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    models.clear_memo()
    with caplog.at_level(logging.WARNING, logger="apiforge"):
        generate(str(spec), tmp_path / "g", validate=False)
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        f"warning: {spec}:15:5 (#/components/schemas/Rejected): schema 'Rejected' is left out "
        "of models.py: datamodel-code-generator could not take it (SchemaParseError: "
        f"ValidationError: 1 validation error for JsonSchemaObject); it is typed Any in the {where}"
        for where in ("routers", "client methods")
    ]
    runner = CliRunner()
    for kind in ("server", "client"):
        result = runner.invoke(main, [kind, str(spec), "-o", str(tmp_path / kind)])
        assert result.exit_code == 0, result.output
        assert _snapshot(tmp_path / "g" / kind) == _snapshot(tmp_path / kind)
    package = tmp_path / "g" / "client" / "w_client"
    client = "".join(p.read_text() for p in sorted((package / "resources").glob("*.py")))
    assert "models.Rejected" not in client
    assert "FieldModel" in client or "FieldModel" in models_text(tmp_path / "g" / "client")


# --- the lint summary ----------------------------------------------------------------------


def test_lint_without_locations_counts_the_same_findings() -> None:
    loaded = load_spec(str(ROOT / "specs" / "bare.yaml"))
    located, counted = lint(loaded), lint(loaded, locate=False)
    assert located.findings
    assert sorted((f.rule, f.severity, f.message, f.pointer) for f in located.findings) == sorted(
        (f.rule, f.severity, f.message, f.pointer) for f in counted.findings
    )
    assert all((f.line, f.column) == (0, 0) for f in counted.findings)
    assert (located.suppressed, located.rules_run) == (counted.suppressed, counted.rules_run)


# --- the writer ----------------------------------------------------------------------------


def test_skipped_create_once_files_are_never_rendered_unless_written(tmp_path: Path) -> None:
    from generator.render.writer import Deferred, GeneratedFile, start_render_tree, write_tree

    calls: list[int] = []

    def handler() -> str:
        calls.append(1)
        return "x   =  1\n"

    files = [
        GeneratedFile("pkg/h.py", Deferred(handler), format=True, create_once=True),
        GeneratedFile("pkg/a.py", "y=2\n", format=True),
    ]
    rendered = start_render_tree(files, skip={"pkg/h.py"}).result()
    assert rendered == {"pkg/a.py": b"y = 2\n"} and calls == []
    # the handler module was on disk when the tree was rendered, and is gone when it is written
    report = write_tree(files, tmp_path / "out", rendered=rendered)
    assert (tmp_path / "out" / "pkg" / "h.py").read_bytes() == b"x = 1\n"
    assert report.created == ["pkg/h.py"] and calls == [1]


def test_plain_files_are_rendered_while_ruff_formats_the_others() -> None:
    from generator.render.writer import Deferred, GeneratedFile, start_render_tree

    order: list[str] = []

    def text(path: str, data: str) -> Deferred:
        return Deferred(lambda: order.append(path) or data)

    files = [
        GeneratedFile("README.md", text("README.md", "# api\n")),
        GeneratedFile("pkg/a.py", text("pkg/a.py", "y=2\n"), format=True),
    ]
    pending = start_render_tree(files, format_cache=False)
    assert order == ["pkg/a.py", "README.md"]  # the formatted file first: ruff starts sooner
    assert pending.result() == {"README.md": b"# api\n", "pkg/a.py": b"y = 2\n"}

    def broken() -> str:
        raise RuntimeError("template error")

    files[0] = GeneratedFile("README.md", Deferred(broken))
    with pytest.raises(RuntimeError, match="template error"):
        start_render_tree(files, format_cache=False)


def test_ruff_is_found_once_even_when_the_format_threads_ask_together() -> None:
    """`find_ruff_bin`'s first sysconfig lookup is not thread-safe: two format threads asking
    at once gave one of them a TypeError (a whole `generate` lost to a race)."""
    import threading

    from generator.render import writer

    writer._ruff_command.cache_clear()
    found: list[list[str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        try:
            found.append(writer._ruff())
        except BaseException as exc:  # the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(found) == 8 and all(f == found[0] for f in found)


# --- mock answers (mocks.json): kept between runs by their inputs and the components read ---


def test_mocks_json_put_together_from_answers_is_json_dumps_of_the_whole() -> None:
    import json

    from generator.server.conformance import _json_object

    hostile = ['"', "\\", "\n", "\u2028", "\ud800", "é", "}", ",\n ", "{}", ""]
    answers = {
        f"module{i}{k}": {
            f"method{j}{k}": {"status": 200, "candidates": [{k: [k, {}, []], "n": 1.5}, None]}
            for j, k in enumerate(hostile)
        }
        for i, k in enumerate(hostile)
    }
    answers["empty"] = {"m": {}}
    dumped = {
        module: _json_object(
            {m: json.dumps(a, indent=1, sort_keys=True) for m, a in methods.items()}
        )
        for module, methods in answers.items()
    }
    assert _json_object(dumped) == json.dumps(answers, indent=1, sort_keys=True)
    assert _json_object({}) == json.dumps({}, indent=1)


def _mocks(tree: dict[str, bytes]) -> bytes:
    return next(data for path, data in tree.items() if path.endswith("/mocks.json"))


@pytest.fixture
def made_answers(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The inputs of every mock answer made (not served from the previous run's)."""
    from generator.server import conformance as server_conformance

    made: list[object] = []
    real = server_conformance._answer

    def counting(inputs: tuple[object, ...], *args: object) -> object:
        made.append(inputs)
        return real(inputs, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(server_conformance, "_answer", counting)
    return made


def test_mock_answers_are_made_again_for_a_new_operation_only(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_answers: list[object]
) -> None:
    out = tmp_path / "out"
    _generate(spec, out, monkeypatch)
    operations = len(made_answers)
    assert operations > 10  # one per operation with a handler
    made_answers.clear()
    _generate(spec, out, monkeypatch)
    assert made_answers == []  # all served from the previous run
    # an answer no other operation has (one alike would be served: same inputs, same text)
    probe = PROBE.replace("$ref: '#/components/schemas/Payment'", "examples: [probed]")
    _edit(spec, "paths:\n", "paths:\n" + probe)
    after = _generate(spec, out, monkeypatch)
    assert len(made_answers) == 1  # the probe's
    fresh = _generate(spec, tmp_path / "fresh", monkeypatch, cache=False)
    assert _mocks(after) == _mocks(fresh)
    assert b'"get_apiforge_probe": {' in _mocks(after) and b'"probed"' in _mocks(after)


def test_mock_answers_follow_the_components_they_read(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_answers: list[object]
) -> None:
    """Currency is read through Payment's `$ref` only: answers with a payment in them are
    made again when it changes, and only those."""
    out = tmp_path / "out"
    before = _generate(spec, out, monkeypatch)
    operations = len(made_answers)
    made_answers.clear()
    models.clear_memo()
    _edit(spec, "      pattern: '^[a-z]{3}$'\n", "      pattern: '^[A-Z]{3}$'\n")
    after = _generate(spec, out, monkeypatch)
    assert 0 < len(made_answers) < operations
    assert b'"currency": "AAA"' in _mocks(after)
    assert b'"currency": "AAA"' not in _mocks(before)
    fresh = _generate(spec, tmp_path / "fresh", monkeypatch, cache=False)
    assert _mocks(after) == _mocks(fresh)


def test_mock_answers_of_resources_served_by_the_plan_cache_are_kept_with_their_plans(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_answers: list[object]
) -> None:
    """A resource the plan cache serves brings its mocks.json entry along: only a new or
    replanned resource's operations are even looked up. The answers kept for the others stay
    kept (a later component edit makes again only the answers that read it)."""
    from generator.server import conformance as server_conformance

    out = tmp_path / "out"
    _generate(spec, out, monkeypatch)
    operations = len(made_answers)
    asked: list[object] = []
    real = server_conformance._MockMemo.text

    def text(memo: server_conformance._MockMemo, inputs: tuple[object, ...]) -> str:
        asked.append(inputs)
        return real(memo, inputs)

    monkeypatch.setattr(server_conformance._MockMemo, "text", text)
    probe = PROBE.replace("tags: [Payments]", "tags: [ApiforgeProbes]")
    _edit(spec, "paths:\n", "paths:\n" + probe)
    after = _generate(spec, out, monkeypatch)
    assert len(asked) == 1  # the new resource's one operation
    assert _mocks(after) == _mocks(_generate(spec, tmp_path / "fresh", monkeypatch, cache=False))
    made_answers.clear()
    models.clear_memo()
    _edit(spec, "      pattern: '^[a-z]{3}$'\n", "      pattern: '^[A-Z]{3}$'\n")
    edited = _generate(spec, out, monkeypatch)
    assert 0 < len(made_answers) < operations
    fresh = _generate(spec, tmp_path / "fresh2", monkeypatch, cache=False)
    assert _mocks(edited) == _mocks(fresh) and b'"currency": "AAA"' in _mocks(edited)
