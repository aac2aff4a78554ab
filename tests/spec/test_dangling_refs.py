"""A `$ref` that does not resolve is never a traceback: validation reports it where it is
written (a warning, or an error with --strict), and the IR builder refuses one it needs.

And the files of a spec of several files are all there for jsonschema-rs, whatever the walk
had read when it met a `default` (DigitalOcean's spec crashed validation with jsonschema-rs's
"Resource 'file:///...' is not present in a registry": a file not read *yet*)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.errors import ApiforgeError
from generator.ir import Where
from generator.spec import check_root
from generator.spec.defaults import DefaultChecker
from generator.spec.load import load_document
from generator.spec.refs import Resolver, UnresolvedRef
from generator.spec.validate import collect_errors, validate

ROOT = Path(__file__).resolve().parent.parent.parent

ROOT_SPEC = """\
openapi: 3.0.3
info: {title: Dangling, version: '1'}
paths:
  /things:
    get:
      operationId: listThings
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Thing'
components:
  schemas:
    Thing:
      $ref: thing.yaml
"""

# file A: its schema refers to file B (usage.yaml), which is not there
THING = """\
type: object
properties:
  id:
    type: string
  usage:
    $ref: usage.yaml
"""

LOCATION = "thing.yaml:6:5 (#/properties/usage/$ref)"
MESSAGE = "$ref 'usage.yaml' cannot be resolved: file not found"


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    (tmp_path / "thing.yaml").write_text(THING)
    path = tmp_path / "openapi.yaml"
    path.write_text(ROOT_SPEC)
    return path


def apiforge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "APIFORGE_NO_CACHE": "1"},
    )


def _resolver(path: Path) -> Resolver:
    root = load_document(str(path))
    check_root(root)
    return Resolver(root)


# --- the command line -------------------------------------------------------------------


def test_generate_warns_at_the_ref_then_ends_with_a_clear_error(spec: Path, tmp_path: Path) -> None:
    proc = apiforge("generate", str(spec), "-o", str(tmp_path / "out"))
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == f"warning: {spec.parent / LOCATION}: {MESSAGE}: {spec.parent / 'usage.yaml'}"
    assert lines[1].startswith(f"warning: {spec} is not valid OpenAPI 3.x (1 error)")
    # the IR does not need the property's schema; the models (datamodel-code-generator, which
    # reads every file) do: a clear error, exit 2, nothing written
    assert proc.returncode == 2, proc.stderr
    assert any(line.startswith("error: ") and "usage.yaml" in line for line in lines[2:])
    assert not (tmp_path / "out").exists()


def test_generate_strict_is_a_located_error(spec: Path, tmp_path: Path) -> None:
    proc = apiforge("generate", "--strict", str(spec), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {spec.parent / LOCATION}: {MESSAGE}")
    assert not (tmp_path / "out").exists()


def test_inspect_validate_is_a_located_error(spec: Path) -> None:
    proc = apiforge("inspect", "--validate", str(spec))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {spec.parent / LOCATION}: {MESSAGE}")
    # without validation nothing reads that property's schema
    assert apiforge("inspect", str(spec)).returncode == 0


def test_a_ref_the_ir_needs_is_the_builders_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(ROOT_SPEC)  # no thing.yaml at all: components/schemas/Thing needs it
    for args in (("generate", str(path), "-o", str(tmp_path / "out")), ("inspect", str(path))):
        proc = apiforge(*args)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith(
            f"error: {path}:17:7 (#/components/schemas/Thing/$ref): $ref 'thing.yaml': no such file"
        )


# --- validation -------------------------------------------------------------------------


def test_not_strict_it_is_a_located_warning(spec: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="apiforge"):
        assert validate(_resolver(spec), strict=False) == 1
    assert caplog.messages[0] == (
        f"warning: {spec.parent / LOCATION}: {MESSAGE}: {spec.parent / 'usage.yaml'}"
    )


def test_strict_it_is_a_located_error(spec: Path) -> None:
    with pytest.raises(ApiforgeError) as caught:
        validate(_resolver(spec))
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.column) == (str(spec.parent / "thing.yaml"), 6, 5)
    assert problem.pointer == "/properties/usage/$ref"
    assert problem.message.startswith(MESSAGE)


def test_every_kind_of_dangling_ref_is_one_error_at_it(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("$ref: c.yaml\n")
    (tmp_path / "c.yaml").write_text("type: string\n")
    path = tmp_path / "openapi.yaml"
    path.write_text(
        """\
openapi: 3.1.0
info: {title: T, version: '1'}
paths: {}
components:
  schemas:
    S:
      type: object
      default: {a: x}
      properties:
        a: {$ref: a.yaml}
        b: {$ref: 'missing.yaml#/B'}
        c: {$ref: '#/components/schemas/Nope'}
        d: {$ref: 'https://example.com/x.yaml'}
        default: {$ref: missing-too.yaml}
      example: {$ref: this-is-data.yaml}
      x-note: {$ref: so-is-this.yaml}
"""
    )
    errors = collect_errors(_resolver(path))
    assert {e.kind for e in errors} == {"unresolved-ref"}
    assert [(e.where.pointer, e.message) for e in errors] == [
        (
            "/components/schemas/S/properties/b/$ref",
            f"$ref 'missing.yaml#/B' cannot be resolved: file not found: {tmp_path}/missing.yaml",
        ),
        (
            "/components/schemas/S/properties/c/$ref",
            "$ref '#/components/schemas/Nope' cannot be resolved: "
            f"#/components/schemas/Nope does not exist in {path}",
        ),
        (
            "/components/schemas/S/properties/d/$ref",
            "$ref 'https://example.com/x.yaml' cannot be resolved: "
            "remote references are not followed unless allowed",
        ),
        (
            "/components/schemas/S/properties/default/$ref",
            f"$ref 'missing-too.yaml' cannot be resolved: file not found: {tmp_path}/missing-too.yaml",
        ),
    ]


def test_a_cycle_is_an_error_at_the_ref_that_closes_it(tmp_path: Path) -> None:
    path = tmp_path / "openapi.yaml"
    path.write_text(
        "openapi: 3.1.0\ninfo: {title: T, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n"
        "    S:\n      properties:\n        loop: {$ref: '#/x-a'}\n"
        "x-a: {$ref: '#/x-b'}\nx-b: {$ref: '#/x-a'}\n"
    )
    (error,) = collect_errors(_resolver(path))
    assert error.kind == "unresolved-ref" and error.where.pointer == "/x-b/$ref"
    assert "cannot be resolved: it is a cycle" in error.message


# --- jsonschema-rs's registry ------------------------------------------------------------


def _three_files(tmp_path: Path) -> Path:
    """A schema with a `default` in file A whose `additionalProperties` (which the walk does
    not follow) refers to file B, which refers to file C: the `default` is checked through
    both."""
    (tmp_path / "a.yaml").write_text(
        "type: object\ndefault: {usage: 5}\nadditionalProperties: {$ref: b.yaml}\n"
    )
    (tmp_path / "b.yaml").write_text("$ref: 'c.yaml#/Usage'\n")
    (tmp_path / "c.yaml").write_text("Usage: {type: string}\n")
    path = tmp_path / "openapi.yaml"
    path.write_text(
        "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: {}\n"
        "components:\n  schemas:\n    A: {$ref: a.yaml}\n"
    )
    return path


def test_a_default_is_checked_through_every_file(tmp_path: Path) -> None:
    path = _three_files(tmp_path)
    errors = collect_errors(_resolver(path))
    assert [(e.kind, e.where.file, e.where.pointer, e.message) for e in errors] == [
        (
            "default",
            str(tmp_path / "a.yaml"),
            "/default/usage",
            "default: 5 is not of type 'string'",
        )
    ]


def test_files_not_read_yet_come_to_jsonschema_rs_when_it_asks(tmp_path: Path) -> None:
    # only the root and file A read: jsonschema-rs asks for B, then C (it refused before)
    resolver = _resolver(_three_files(tmp_path))
    at, schema = resolver.deref(
        Where(resolver.root.name, "/components/schemas/A"), {"$ref": "a.yaml"}
    )
    assert len(resolver.documents) == 2
    errors = list(DefaultChecker(resolver, True).errors(at, schema, {"usage": 5}))
    assert [e.message for e in errors] == ["5 is not of type 'string'"]
    # and a file that is not there at all stands for any value: no check, no crash
    (tmp_path / "c.yaml").unlink()
    resolver = _resolver(tmp_path / "openapi.yaml")
    at, schema = resolver.deref(
        Where(resolver.root.name, "/components/schemas/A"), {"$ref": "a.yaml"}
    )
    assert list(DefaultChecker(resolver, True).errors(at, schema, {"usage": 5})) == []


def test_the_builder_still_raises_an_unresolved_ref(tmp_path: Path) -> None:
    (tmp_path / "thing.yaml").write_text(THING)
    resolver = Resolver(load_document(str(tmp_path / "thing.yaml")))
    with pytest.raises(UnresolvedRef) as caught:
        resolver.deref(Where(resolver.root.name, "/properties/usage"), {"$ref": "usage.yaml"})
    assert caught.value.at == Where(resolver.root.name, "/properties/usage/$ref")
    assert caught.value.ref == "usage.yaml"
    assert caught.value.render().startswith(f"error: {tmp_path / 'thing.yaml'}:6:5")
