"""Form bodies end to end on Stripe's conventions (forms.yaml): the generated client writes them
as their `encoding` says, and the generated server, under uvicorn on 127.0.0.1, reads the same
pairs back into the handler's body (nested objects, indexed lists, files with their names)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.support import uvicorn_server

ROOT = Path(__file__).resolve().parents[2]
SPEC = Path(__file__).resolve().parent / "forms.yaml"
PREFIX = "forms_e2e"

ECHO_CUSTOMERS = """
from typing import Any

from ..interfaces import CustomersBase


class CustomersHandler(CustomersBase):
    async def create_customer(self, ctx: Any, *, body: dict[str, Any]) -> Any:
        return {"read": body}
"""

ECHO_FILES = """
from typing import Any

from ..interfaces import FilesBase


class FilesHandler(FilesBase):
    async def create_file(self, ctx: Any, *, body: dict[str, Any]) -> Any:
        upload = body["file"]
        rest = {k: v for k, v in body.items() if k != "file"}
        return {
            "read": rest,
            "file": [upload.filename, upload.content_type, bytes(upload).decode()],
        }
"""


class Recorded(httpx.BaseTransport):
    """The client's transport: sends through httpx and keeps each request's body."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.read())
        return self.inner.handle_request(request)


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    out = tmp_path_factory.mktemp("forms_e2e")
    command = ["generate", str(SPEC), "-o", str(out), "--package-prefix", PREFIX]
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    handlers = out / "server" / f"{PREFIX}_server" / "handlers"
    (handlers / "customers.py").write_text(ECHO_CUSTOMERS.lstrip())
    (handlers / "files.py").write_text(ECHO_FILES.lstrip())
    state = out / "state"
    state.mkdir()
    env = {"APIFORGE_STORE_URL": f"sqlite:///{state / 'app.db'}"}
    sys.path.insert(0, str(out / "client"))
    try:
        with uvicorn_server(
            f"{PREFIX}_server.main:app", cwd=state, env=env, pythonpath=[out / "server"]
        ) as (url, _proc):
            yield importlib.import_module(f"{PREFIX}_client"), url
    finally:
        sys.path.remove(str(out / "client"))


def test_a_stripe_form_goes_out_as_stripe_reads_it_and_comes_back_whole(
    forms: tuple[ModuleType, str],
) -> None:
    module, url = forms
    wire = Recorded()
    sent: dict[str, Any] = {
        "email": "a@b.c",
        "balance": 12,
        "address": {"city": "Paris", "line1": "1 rue X"},
        "metadata": {"order": "42"},
        "expand": ["default_source", "sources"],
        "invoice_settings": {"custom_fields": [{"name": "PO", "value": "7"}]},
    }
    with module.Client(base_url=url, transport=wire) as client:
        answer = client.customers.create(body=sent)
    assert urllib.parse.unquote(wire.bodies[0].decode()) == (
        "email=a@b.c&balance=12&address[city]=Paris&address[line1]=1+rue+X"
        "&metadata[order]=42&expand[0]=default_source&expand[1]=sources"
        "&invoice_settings[custom_fields][0][name]=PO&invoice_settings[custom_fields][0][value]=7"
    )
    assert answer == {"read": sent}


def test_the_same_form_from_keyword_arguments(forms: tuple[ModuleType, str]) -> None:
    """Each member a keyword, a nested object a TypedDict: the same pairs as the whole body."""
    module, url = forms
    wire = Recorded()
    with module.Client(base_url=url, transport=wire) as client:
        answer = client.customers.create(
            email="a@b.c",
            balance=12,
            address={"city": "Paris", "line1": "1 rue X"},
            metadata={"order": "42"},
            expand=["default_source", "sources"],
            invoice_settings={"custom_fields": [{"name": "PO", "value": "7"}]},
        )
        client.customers.create(email="x", metadata="")  # Stripe's "unset"
    assert urllib.parse.unquote(wire.bodies[0].decode()) == (
        "email=a@b.c&balance=12&address[city]=Paris&address[line1]=1+rue+X"
        "&metadata[order]=42&expand[0]=default_source&expand[1]=sources"
        "&invoice_settings[custom_fields][0][name]=PO&invoice_settings[custom_fields][0][value]=7"
    )
    assert answer["read"]["address"] == {"city": "Paris", "line1": "1 rue X"}
    assert wire.bodies[1] == b"email=x&metadata="


def test_stripes_unset_and_a_broken_form(forms: tuple[ModuleType, str]) -> None:
    module, url = forms
    with module.Client(base_url=url) as client:
        assert client.customers.create(body={"email": "x", "metadata": ""}) == {
            "read": {"email": "x", "metadata": ""}
        }
        with pytest.raises(module.UnprocessableEntity) as caught:
            client.customers.create(body={"email": "x", "balance": "lots"})
    assert caught.value.problem is not None and "balance" in str(caught.value.body)


def test_a_multipart_file_and_a_deep_object_part(
    forms: tuple[ModuleType, str], tmp_path: Path
) -> None:
    module, url = forms
    evidence = tmp_path / "evidence.txt"
    evidence.write_text("receipt")
    with module.Client(base_url=url) as client:
        answer = client.files.create(
            body={
                "file": evidence,
                "purpose": "dispute_evidence",
                "file_link_data": {"create": True, "metadata": {"case": "7"}},
            }
        )
    with module.Client(base_url=url) as client:  # the same parts from keyword arguments
        again = client.files.create(
            file=evidence,
            purpose="dispute_evidence",
            file_link_data={"create": True, "metadata": {"case": "7"}},
        )
    assert again == answer
    assert answer == {
        "read": {
            "purpose": "dispute_evidence",
            # an object written in place without a model: its members stay as sent (text)
            "file_link_data": {"create": "true", "metadata": {"case": "7"}},
        },
        "file": ["evidence.txt", "text/plain", "receipt"],
    }
