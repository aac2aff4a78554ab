"""The command line: bad input is one clear message and exit 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def apiforge(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "APIFORGE_NO_CACHE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        cwd=ROOT,
        capture_output=True,
        input=stdin.decode() if stdin is not None else None,
        text=True,
        env=env,
    )


def assert_clear_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ")
    for needle in needles:
        assert needle in proc.stderr


VALID = 'openapi: 3.1.0\ninfo: {title: T, version: "1"}\npaths: {}\n'


@pytest.mark.parametrize(
    ("name", "content", "needles"),
    [
        (
            "malformed.yaml",
            b"openapi: 3.1.0\ninfo: {title: [\n  x: 1\n",
            ["malformed.yaml:", "invalid YAML"],
        ),
        (
            "bad.json",
            b'{\n  "openapi": "3.1.0",\n  "info": {,}\n}',
            ["bad.json:3:12", "invalid JSON"],
        ),
        ("empty.yaml", b"", ["empty"]),
        ("blank.yaml", b"   \n\n", ["empty"]),
        ("junk.bin", bytes(range(256)) * 4, ["binary"]),
        (
            "latin1.yaml",
            "openapi: 3.1.0\ninfo: {title: caf\xe9}\n".encode("latin-1"),
            ["UTF-8", ":2"],
        ),
        ("list.yaml", b"- a\n- b\n", ["not an OpenAPI object"]),
        (
            "swagger.yaml",
            b"swagger: '1.2'\ninfo: {title: T, version: '1'}\npaths: {}\n",
            ["Swagger 1.2", "swagger2openapi"],
        ),
        (
            "v2.yaml",
            b"openapi: 2.5.0\ninfo: {title: T}\n",
            ["`openapi` version is '2.5.0'", "v2.yaml:1:1"],
        ),
        ("scalar.yaml", b"just a string\n", ["not an OpenAPI object"]),
        (
            "badint.yaml",
            VALID.encode() + b"x-count: !!int 12ab\n",
            ["invalid YAML", "not a YAML 1.2 integer", "badint.yaml:4:"],
        ),
    ],
)
def test_bad_files(tmp_path: Path, name: str, content: bytes, needles: list[str]) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert_clear_error(apiforge("inspect", str(path)), *needles)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert_clear_error(apiforge("inspect", str(tmp_path / "nope.yaml")), "no such file")
    assert_clear_error(apiforge("inspect", str(tmp_path)), "is a directory")


def test_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:
        fh.write(VALID.encode())
        fh.write(b"x-padding: '" + b"a" * (50 * 1024 * 1024) + b"'\n")
    assert_clear_error(apiforge("inspect", str(path)), "MB", "limit")


def test_unresolved_and_cyclic_refs(tmp_path: Path) -> None:
    unresolved = tmp_path / "unresolved.yaml"
    unresolved.write_text(
        VALID.replace("paths: {}", "paths:\n  /a:\n    $ref: '#/components/pathItems/A'")
    )
    assert_clear_error(
        apiforge("inspect", str(unresolved)), "unresolved.yaml:5:5", "does not exist"
    )
    cyclic = tmp_path / "cyclic.yaml"
    cyclic.write_text(
        VALID.replace(
            "paths: {}",
            "paths:\n  /a:\n    $ref: '#/x-a'\nx-a:\n  $ref: '#/x-b'\nx-b:\n  $ref: '#/x-a'",
        )
    )
    assert_clear_error(apiforge("inspect", str(cyclic)), "$ref cycle")


def test_a_schema_ref_to_a_missing_file_is_named_at_its_line(tmp_path: Path) -> None:
    """The models step reads other files itself and its error names no line: the `$ref` is
    named at its own, in `generate` and `client`, and nothing is written."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        VALID.replace("paths: {}", "paths: {}\ncomponents:\n  schemas:\n    P:\n")
        + "      properties:\n        ip: {$ref: './missing.json#/definitions/X'}\n"
    )
    for command in ("generate", "client"):
        out = tmp_path / f"out-{command}"
        proc = apiforge(command, str(spec), "-o", str(out))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "s.yaml:9:14 (#/components/schemas/P/properties/ip/$ref)" in proc.stderr
        assert "no such file" in proc.stderr and "missing.json" in proc.stderr
        assert not out.exists()


def test_invalid_openapi_reports_every_error_with_location(tmp_path: Path) -> None:
    path = tmp_path / "invalid.yaml"
    path.write_text(
        "openapi: 3.1.0\ninfo:\n  title: T\npaths:\n  /a:\n    get:\n      responses:\n"
        "        '200':\n          description: 5\n"
    )
    proc = apiforge("inspect", "--validate", str(path))
    assert_clear_error(proc, "is a required property", "invalid.yaml:2:1 (#/info)")
    assert "version" in proc.stderr.splitlines()[0]
    assert "invalid.yaml:9:11 (#/paths/~1a/get/responses/200/description)" in proc.stderr
    assert proc.stderr.count("error: ") == 2


def test_usage_errors_exit_2() -> None:
    assert apiforge("inspect").returncode == 2
    assert apiforge("no-such-command").returncode == 2
    assert apiforge("inspect", "specs/acme.yaml", "--format", "xml").returncode == 2


def test_inspect_reads_stdin_and_prints_stable_json() -> None:
    spec = (ROOT / "specs" / "acme.yaml").read_bytes()
    proc = apiforge("inspect", "-", "--format", "json", stdin=spec)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["format"] == "apiforge-inspect/1"
    assert data["api"]["root"] == "<stdin>"
    create = next(o for o in data["operations"] if o["id"] == "createPayment")
    assert create["patterns"]["idempotency"]["header"] == "Idempotency-Key"
    assert create["patterns"]["rate_limit"]["family"] == "x-ratelimit"


def test_inspect_table_is_aligned() -> None:
    proc = apiforge("inspect", "specs/acme.yaml")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = lines[2]
    assert header.startswith("OPERATION") and "IDEMPOTENCY" in header
    column = header.index("IDEMPOTENCY")
    rows = [line for line in lines[3:] if line.startswith(("GET", "POST", "PATCH", "DELETE"))]
    assert rows and all(len(r) > column and r[column - 1] == " " for r in rows)


def test_a_first_inspect_of_a_big_yaml_spec_reads_it_whole_and_fills_no_cache(
    tmp_path: Path,
) -> None:
    """As lint: a big spec rapidyaml reads is read whole, its source map from rapidyaml's
    tree; reading it block by block with PyYAML to fill the cache made a first inspect of
    Stripe ~1.05 s against ~0.4 s. The table is the one an uncached run prints."""
    from generator.spec import load, sourcemap
    from generator.spec.fast_yaml import load_fast
    from generator.spec.load import CACHE_MIN_BYTES

    text = (ROOT / "specs" / "acme.yaml").read_text()
    padding = "".join(f"# padding line {i:07d} to make the spec big\n" for i in range(8000))
    big = tmp_path / "big.yaml"
    big.write_text(padding + text)
    assert big.stat().st_size > CACHE_MIN_BYTES and load_fast(big.read_text()) is not None
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "APIFORGE_NO_CACHE"}
    cached = subprocess.run(
        [sys.executable, "-m", "generator.cli", "inspect", str(big)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, "APIFORGE_CACHE_DIR": str(cache)},
    )
    assert cached.returncode == 0, cached.stderr
    assert cached.stdout == apiforge("inspect", str(big)).stdout
    assert "createPayment" in cached.stdout
    reads = {f"parse{load._CACHE_VERSION}", load._BLOCKS_KIND, sourcemap._CACHE_KIND}
    reads.add(sourcemap._BLOCK_MAPS_KIND)
    kept = {p.parent.name for p in cache.rglob("*.pickle")}
    assert not kept & reads, kept


# --- validation errors: warnings for the generating commands, errors with --strict ---------

SLOPPY = r"""openapi: 3.0.3
info: {title: Sloppy, version: '1'}
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: flag, in: query, schema: {type: string, default: false}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Item'}
        4xx: {description: client error}
components:
  schemas:
    Item:
      type: object
      properties:
        name: {type: string, pattern: '^[\p{L}\p{N} ]*$'}
"""

SLOPPY_ERRORS = [
    "sloppy.yaml:9:7 (#/paths/~1items/get/responses): Additional properties are not allowed "
    "('4xx' was unexpected)",
    "sloppy.yaml:8:58 (#/paths/~1items/get/parameters/0/schema/default): "
    "default: False is not of type 'string'",
]


def _sloppy(tmp_path: Path) -> Path:
    path = tmp_path / "sloppy.yaml"
    path.write_text(SLOPPY)
    return path


def _summary(spec: Path, errors: int) -> str:
    return (
        f"warning: {spec} is not valid OpenAPI 3.x ({errors} errors); generating anyway — "
        "pass --strict to make this an error"
    )


@pytest.mark.parametrize("command", ["server", "client", "generate"])
def test_generating_commands_warn_about_validation_errors_and_generate(
    tmp_path: Path, command: str
) -> None:
    spec = _sloppy(tmp_path)
    out = tmp_path / "out"
    proc = apiforge(command, str(spec), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        *(f"warning: {tmp_path}/{line}" for line in SLOPPY_ERRORS),
        _summary(spec, 2),
    ]
    assert "wrote sloppy" in proc.stdout
    assert list(out.rglob("models.py")) or list(out.rglob("models/__init__.py"))


@pytest.mark.parametrize("command", ["server", "client", "generate"])
def test_strict_makes_validation_errors_an_error(tmp_path: Path, command: str) -> None:
    spec = _sloppy(tmp_path)
    out = tmp_path / "out"
    proc = apiforge(command, str(spec), "-o", str(out), "--strict")
    assert_clear_error(proc, *(f"error: {tmp_path}/{line}" for line in SLOPPY_ERRORS))
    assert "warning:" not in proc.stderr and "hint: " in proc.stderr
    assert not out.exists()
    assert apiforge(command, str(spec), "-o", str(out), "--strict", "--no-validate").returncode == 0


def test_validation_warnings_stop_after_20_with_a_count(tmp_path: Path) -> None:
    paths = "".join(
        f"  /p{i}:\n    get:\n      responses:\n        '200': {{description: {i}}}\n"
        for i in range(25)
    )
    spec = tmp_path / "many.yaml"
    spec.write_text(
        "openapi: 3.1.0\ninfo: {title: Many, version: '1'}\npaths:\n"
        + paths
        + "components:\n  schemas:\n    A: {type: string}\n"
    )
    proc = apiforge("client", str(spec), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 22
    assert lines[0] == (
        f"warning: {spec}:7:17 (#/paths/~1p0/get/responses/200/description): "
        "0 is not of type 'string'"
    )
    assert all(line.startswith(f"warning: {spec}:") for line in lines[:20])
    assert lines[20:] == ["warning: … and 5 more", _summary(spec, 25)]


def test_generate_check_warns_as_generate_does(tmp_path: Path) -> None:
    spec = _sloppy(tmp_path)
    out = tmp_path / "out"
    assert apiforge("generate", str(spec), "-o", str(out)).returncode == 0
    check = apiforge("generate", str(spec), "-o", str(out), "--check")
    assert check.returncode == 0, check.stderr
    assert "up to date" in check.stdout
    assert check.stderr.splitlines()[-1] == _summary(spec, 2)
    strict = apiforge("generate", str(spec), "-o", str(out), "--check", "--strict")
    assert_clear_error(strict, *SLOPPY_ERRORS)


def test_lint_and_inspect_do_not_validate_unless_asked(tmp_path: Path) -> None:
    spec = _sloppy(tmp_path)
    lint = apiforge("lint", str(spec), "--no-config", "--fail-on", "never")
    assert lint.returncode == 0 and lint.stderr == ""
    inspect = apiforge("inspect", str(spec))
    assert inspect.returncode == 0 and inspect.stderr == ""
    assert_clear_error(apiforge("inspect", "--validate", str(spec)), *SLOPPY_ERRORS)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (VALID.replace("paths: {}", "paths: [unclosed"), ["invalid YAML"]),
        ("swagger: '1.2'\ninfo: {title: T, version: '1'}\npaths: {}\n", ["Swagger"]),
        (VALID.replace("3.1.0", "3.2.0"), ["`openapi` version is '3.2.0'"]),
        (
            VALID.replace("paths: {}", "paths:\n  /a:\n    $ref: '#/components/pathItems/A'"),
            ["bad.yaml:5:5", "does not exist"],
        ),
    ],
)
def test_what_is_not_a_validation_error_stops_generation(
    tmp_path: Path, text: str, needles: list[str]
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(text)
    proc = apiforge("generate", str(spec), "-o", str(tmp_path / "out"))
    assert_clear_error(proc, *needles)
    assert "warning:" not in proc.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["server", "client", "generate"])
def test_an_output_under_a_file_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(VALID)
    (tmp_path / "afile").write_text("")
    proc = apiforge(command, str(spec), "-o", str(tmp_path / "afile" / "out"))
    assert_clear_error(proc, "afile is a file, not a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "spec.yaml"]


def test_a_file_system_refusal_while_writing_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """An output name the file system refuses (too long) fails when the tree is written:
    still one message, exit 2, and nothing left behind."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(VALID)
    proc = apiforge("client", str(spec), "-o", str(tmp_path / ("x" * 300)))
    assert_clear_error(proc, "File name too long")
    assert [p.name for p in tmp_path.iterdir()] == ["spec.yaml"]


def test_a_report_under_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    proc = apiforge("lint", "specs/acme.yaml", "-o", str(tmp_path / "afile" / "report.txt"))
    assert_clear_error(proc, "cannot write", "Not a directory")


@pytest.mark.parametrize("command", ["server", "client"])
def test_quiet_says_nothing_on_success_and_verbose_is_accepted(
    tmp_path: Path, command: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        VALID.replace("paths: {}", "paths: {/x: {get: {responses: {'200': {description: ok}}}}}")
    )
    quiet = apiforge(command, str(spec), "-o", str(tmp_path / "q"), "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    loud = apiforge(command, str(spec), "-o", str(tmp_path / "v"), "-v")
    assert loud.returncode == 0 and loud.stdout.startswith("wrote ")
    for other in (["lint", str(spec)], ["inspect", str(spec)], ["rules"]):
        assert apiforge(*other, "-q").returncode == 0


def test_a_warning_repeated_in_a_run_is_said_once() -> None:
    from click.testing import CliRunner

    from generator.cli import main
    from generator.log import logger

    @main.command("say-twice")
    def say_twice() -> None:
        for _ in range(3):
            logger().warning("warning: the same thing")
        logger().warning("warning: another thing")

    try:
        for _ in range(2):  # and again in the next run, in the same process
            result = CliRunner().invoke(main, ["say-twice"])
            assert result.stderr.splitlines() == [
                "warning: the same thing",
                "warning: another thing",
            ]
    finally:
        main.commands.pop("say-twice")
