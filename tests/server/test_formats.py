"""String formats in request bodies, against generated servers under uvicorn on 127.0.0.1: a
body that breaks a format is a 422 problem before any precondition is looked at (RFC 9110
§13.2.1), whatever the If-Match says; `x-apiforge-format-checks: false` leaves them unchecked.
The email check itself (runtime/formats.py) is tested in-process."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.client.models import client_models
from generator.models.format_checks import server_models
from tests.server.conftest import ROOT, generate, problem, serve

SPEC = """
openapi: 3.1.0
info: {title: Formats API, version: "1.0"}
{switch}
paths:
  /things/{thingId}:
    parameters:
      - {name: thingId, in: path, required: true, schema: {type: string}}
    get:
      operationId: getThing
      responses:
        "200":
          description: The thing.
          headers:
            ETag: {schema: {type: string}}
          content:
            application/json: {schema: {$ref: "#/components/schemas/Thing"}}
        "404": {$ref: "#/components/responses/Problem"}
    patch:
      operationId: updateThing
      parameters:
        - {name: If-Match, in: header, required: true, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: "#/components/schemas/Thing"}}
      responses:
        "200":
          description: Updated.
          headers:
            ETag: {schema: {type: string}}
          content:
            application/json: {schema: {$ref: "#/components/schemas/Thing"}}
        "412": {$ref: "#/components/responses/Problem"}
        "422": {$ref: "#/components/responses/Problem"}
        "428": {$ref: "#/components/responses/Problem"}
components:
  responses:
    Problem:
      description: A problem.
      content:
        application/problem+json: {schema: {type: object}}
  schemas:
    Thing:
      type: object
      properties:
        email: {type: string, format: email}
        idnEmail: {type: string, format: idn-email}
        id: {type: string, format: uuid}
        day: {type: string, format: date}
        at: {type: string, format: date-time}
        home: {type: string, format: uri}
        v4: {type: string, format: ipv4}
        v6: {type: string, format: ipv6}
"""
GOOD = {
    "email": "alice@example.com",
    "idnEmail": "josé@bücher.example",
    "id": "6f1c1b7e-4c1a-4f38-9a57-3a4b9f7e2d10",
    "day": "2026-12-03",
    "at": "2026-12-03T08:00:00Z",
    "home": "https://example.com/alice",
    "v4": "192.0.2.1",
    "v6": "2001:db8::1",
}
BAD = {
    "email": "alice.example.com",
    "idnEmail": "josé@@bücher.example",
    "id": "not-a-uuid",
    "day": "2026-13-45",
    "at": "yesterday",
    "home": "not a uri",
    "v4": "300.1.1.1",
    "v6": "2001:db8:::1:::",
}
PACKAGE = "formats_srv"


def _project(tmp: Path, switch: str) -> Path:
    spec = tmp / "formats.yaml"
    spec.write_text(SPEC.replace("{switch}", switch))
    project = tmp / "project"
    generate(spec, project, PACKAGE)
    return project


@pytest.fixture(scope="module")
def checked_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("formats")
    with serve(_project(tmp, ""), PACKAGE, tmp / "state") as base:
        yield base


def test_each_broken_format_is_a_422_before_the_precondition(checked_url: str) -> None:
    url = checked_url + "/things/t1"
    for name, bad in BAD.items():
        for if_match in ("", '"stale"', "garbage"):
            r = httpx.patch(url, json={**GOOD, name: bad}, headers={"If-Match": if_match})
            body = problem(r, 422, "validation-error")
            assert [e["location"] for e in body["errors"]] == [["body", name]], (name, body)
    # the same body with every format right reaches the precondition (empty If-Match: 428)
    r = httpx.patch(url, json=GOOD, headers={"If-Match": ""})
    problem(r, 428, "precondition-required")


def test_the_server_describes_email_as_a_format(checked_url: str) -> None:
    document = httpx.get(checked_url + "/openapi.json").json()
    email = document["components"]["schemas"]["Thing"]["properties"]["email"]
    assert email.get("format") == "email" or {"type": "string", "format": "email"} in email.get(
        "anyOf", []
    ), email


def test_the_extension_turns_format_checks_off(tmp_path: Path) -> None:
    project = _project(tmp_path, "x-apiforge-format-checks: false")
    models = (project / PACKAGE / "models.py").read_text()
    assert "EmailStr" not in models and "UUID" not in models and "AnyUrl" not in models
    with serve(project, PACKAGE, tmp_path / "state") as base:
        r = httpx.patch(base + "/things/t1", json=BAD, headers={"If-Match": ""})
        problem(r, 428, "precondition-required")  # the body was accepted as it is


def test_the_client_reads_an_email_as_a_plain_string() -> None:
    shared = (
        "from pydantic import BaseModel, EmailStr\n\n\n"
        "class A(BaseModel):\n    email: EmailStr | None = None\n"
    )
    client = client_models(shared)
    assert "EmailStr" not in client and "email: str | None = None" in client
    server = server_models(shared)
    assert "from pydantic import BaseModel\nfrom .runtime.formats import EmailStr\n" in server


@pytest.mark.parametrize(
    "head",
    [
        '"""A header that says\nclass A: in a line of its own."""\n',  # `class` in a string
        "class Early(int):\n    pass\n\n\n",  # the import after a class
    ],
    ids=["class-in-a-string", "import-after-a-class"],
)
def test_the_server_finds_the_pydantic_import_past_the_leading_statements(head: str) -> None:
    shared = (
        f"{head}from pydantic import BaseModel, EmailStr\n\n\n"
        "class A(BaseModel):\n    email: EmailStr\n"
    )
    assert server_models(shared) == shared.replace(
        "from pydantic import BaseModel, EmailStr\n",
        "from pydantic import BaseModel\nfrom .runtime.formats import EmailStr\n",
    )


@pytest.mark.parametrize(
    "shared",
    [
        'from pydantic import BaseModel\n\n\nclass A(BaseModel):\n    """EmailStr"""\n',
        "from pydantic import EmailStr as Email\n\n\nclass A:\n    e: Email\n",
    ],
    ids=["only-in-a-docstring", "aliased"],
)
def test_the_server_keeps_a_module_without_a_plain_emailstr_import(shared: str) -> None:
    assert server_models(shared) == shared


def _formats_module() -> object:
    path = ROOT / "templates" / "server" / "runtime" / "formats.py"
    spec = importlib.util.spec_from_file_location("apiforge_runtime_formats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("alice@example.com", True),
        ("a.b+tag@sub.example.co.uk", True),
        ('"alice smith"@example.com', True),
        ("user@[192.0.2.1]", True),
        ("user@[IPv6:2001:db8::1]", True),
        ("josé@bücher.example", True),
        ("a@b", True),
        ("", False),
        ("alice", False),
        ("@example.com", False),
        ("alice@", False),
        ("alice@@example.com", False),
        ("al ice@example.com", False),
        (".alice@example.com", False),
        ("alice..b@example.com", False),
        ("alice@-example.com", False),
        ("alice@example..com", False),
        ("alice@[300.1.1.1]", False),
        ("a" * 65 + "@example.com", False),
        ("alice@" + "a" * 64 + ".com", False),
        ("alice@" + ".".join(["a" * 60] * 5), False),  # over 254 characters
    ],
)
def test_email_check(address: str, valid: bool) -> None:
    assert _formats_module().is_email(address) is valid  # type: ignore[attr-defined]


def test_email_check_is_linear_on_hostile_input() -> None:
    is_email = _formats_module().is_email  # type: ignore[attr-defined]
    hostile = ["a." * 2_000_000 + "@", "a" * 4_000_000 + "@" + "a-" * 1_000_000, '"' + "\\" * 10**6]
    start = time.perf_counter()
    assert not any(is_email(text) for text in hostile)
    assert time.perf_counter() - start < 0.05


def test_a_switch_that_is_not_a_boolean_is_bad_input(tmp_path: Path) -> None:
    spec = tmp_path / "formats.yaml"
    spec.write_text(SPEC.replace("{switch}", 'x-apiforge-format-checks: "no"'))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["server", str(spec), "-o", str(out), "--strict"])
    assert result.exit_code == 2, result.output
    assert (
        "formats.yaml:4:1 (#/x-apiforge-format-checks): x-apiforge-format-checks must be true "
        "or false"
    ) in result.output
    assert "Traceback" not in result.output and not out.exists()
