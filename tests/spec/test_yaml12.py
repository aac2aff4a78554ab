"""YAML 1.2 core schema end to end: the words and forms YAML 1.1 read as booleans, dates,
octal or sexagesimal numbers reach `inspect` and the generated code as the 1.2 values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.spec import yaml12
from generator.spec.load import load_document

ROOT = Path(__file__).resolve().parents[2]

SPEC = """\
openapi: 3.1.0
info: {title: Yaml12, version: 2023-02-30}
paths:
  /switches:
    get:
      operationId: listSwitches
      parameters:
        - {name: on, in: query, schema: {type: string, enum: [on, off, yes, no, y, n]}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Switch'}
components:
  schemas:
    Switch:
      type: object
      required: [no, on]
      properties:
        no: {type: boolean}
        on: {type: array, items: {type: string}}
        since: {type: string, enum: [2023-02-30, 0000-01-01, 2020-01-01]}
        mode: {type: integer, enum: [0o17, 0777, 0x1F]}
        label: {type: string, enum: [1:20, 1_000, 0b11, ~x], default: 1:20}
"""


def apiforge(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "APIFORGE_NO_CACHE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def write(tmp_path: Path) -> Path:
    path = tmp_path / "yaml12.yaml"
    path.write_text(SPEC)
    return path


def test_loaded_data_follows_the_core_schema(tmp_path: Path) -> None:
    data = load_document(str(write(tmp_path))).data
    switch = data["components"]["schemas"]["Switch"]
    assert switch["required"] == ["no", "on"]
    assert list(switch["properties"])[:2] == ["no", "on"]
    assert switch["properties"]["since"]["enum"] == ["2023-02-30", "0000-01-01", "2020-01-01"]
    assert switch["properties"]["mode"]["enum"] == [15, 777, 31]
    assert switch["properties"]["label"]["enum"] == ["1:20", "1_000", "0b11", "~x"]
    assert data["info"]["version"] == "2023-02-30"
    parameter = data["paths"]["/switches"]["get"]["parameters"][0]
    assert parameter["name"] == "on"
    assert parameter["schema"]["enum"] == ["on", "off", "yes", "no", "y", "n"]


def test_inspect_and_generate_take_the_1_2_values(tmp_path: Path) -> None:
    spec = write(tmp_path)
    inspect = apiforge("inspect", str(spec), "--format", "json")
    assert inspect.returncode == 0, inspect.stderr
    report = json.loads(inspect.stdout)
    assert report["api"]["version"] == "2023-02-30"
    assert [op["id"] for op in report["operations"]] == ["listSwitches"]

    out = tmp_path / "out"
    generate = apiforge("generate", str(spec), "-o", str(out), "--no-validate")
    assert generate.returncode == 0, generate.stderr
    router = "".join(p.read_text() for p in (out / "server/yaml_12_server/routers").glob("*.py"))
    assert 'Literal["on", "off", "yes", "no", "y", "n"]' in router
    check = (
        "from yaml_12_client.models import Switch, Since, Mode\n"
        "s = Switch.model_validate({'no': False, 'on': ['a'], 'since': '0000-01-01',"
        " 'mode': 777})\n"
        "print(s.no, s.on, s.since.value, int(s.mode), s.label)\n"
        "print(sorted(m.value for m in Since), sorted(int(m) for m in Mode))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", check],
        cwd=out / "client",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "False ['a'] 0000-01-01 777 1:20",
        "['0000-01-01', '2020-01-01', '2023-02-30'] [15, 31, 777]",
    ]


@settings(max_examples=300, deadline=None)
@given(st.from_regex(yaml12.NOT_STR_PATTERN, fullmatch=True))
def test_every_non_string_is_made_of_not_str_chars(text: str) -> None:
    """The rapidyaml reader resolves only plain scalars made of `NOT_STR_CHARS`: a scalar the
    core schema reads as null, a bool, an int or a float must never hold another character."""
    assert yaml12.may_not_be_str(text)
    assert set(text) <= yaml12.NOT_STR_CHARS


def test_not_str_chars_are_all_needed() -> None:
    """Each character of `NOT_STR_CHARS` occurs in some non-string (the set is no wider than
    the patterns, so the reader skips as many strings as it can)."""
    words = ["~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"]
    words += ["+1.5e-3", "-.INF", ".Inf", ".NaN", ".NAN", ".nan", "0x0123456789abcdefABCDEF"]
    words += ["0o7", "1E5", ".inf"]
    assert all(yaml12.may_not_be_str(w) for w in words)
    assert set("".join(words)) == yaml12.NOT_STR_CHARS
