"""Where the generated server's problem `type` URIs start: the spec's own choice, else its
server URL, else a relative `/problems/`; a setting overrides it when the server runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.server.settings import problem_base, settings_rows
from generator.spec import load_spec

PROBLEM = "application/problem+json"


def base_of(tmp_path: Path, type_property: dict[str, Any] | None = None, **root: Any) -> str:
    error: dict[str, Any] = {"description": "bad"}
    if type_property is not None:
        schema = {"type": "object", "properties": {"type": type_property}}
        error["content"] = {PROBLEM: {"schema": schema}}
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}, "400": error}}}},
        **root,
    }
    spec = tmp_path / "openapi.yaml"
    spec.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return problem_base(load_spec(str(spec)).api)


def test_no_servers_gives_relative_uris(tmp_path: Path) -> None:
    assert base_of(tmp_path) == "/problems/"


@pytest.mark.parametrize(
    ("servers", "base"),
    [
        ([{"url": "https://api.example.com/v1/"}], "https://api.example.com/v1/problems/"),
        ([{"url": "/v2"}, {"url": "https://other.example.com"}], "/v2/problems/"),
        (
            [{"url": "https://{region}.example.com", "variables": {"region": {"default": "eu"}}}],
            "https://eu.example.com/problems/",
        ),
        ([{"url": "https://x.example.com/'\"; import os #"}], "/problems/"),  # not a URI
    ],
)
def test_the_first_server_url(tmp_path: Path, servers: list[Any], base: str) -> None:
    assert base_of(tmp_path, servers=servers) == base


def test_problem_types_the_spec_names_win_over_its_server(tmp_path: Path) -> None:
    servers = [{"url": "https://api.example.com"}]
    named = {"type": "string", "example": "https://errors.example.org/v1/out-of-stock"}
    assert base_of(tmp_path, named, servers=servers) == "https://errors.example.org/v1/"
    blank = {"type": "string", "default": "about:blank"}
    assert base_of(tmp_path, blank, servers=servers) == "https://api.example.com/problems/"


def test_the_extension_wins_over_everything(tmp_path: Path) -> None:
    named = {"type": "string", "enum": ["https://errors.example.org/a"]}
    own = "tag:example.com,2026:problem:"
    assert base_of(tmp_path, named, **{"x-apiforge-problem-base": own}) == own


def test_the_readme_lists_the_setting_with_this_servers_default() -> None:
    rows = {var: default for var, default, _ in settings_rows("https://x.example/problems/")}
    assert rows["APIFORGE_PROBLEM_BASE"] == "https://x.example/problems/"


def test_a_job_workers_registry_sets_the_apps_problem_base(
    acme_project: Path, tmp_path: Path
) -> None:
    """An arq worker imports `<package>.services:registry` and never builds the app: the
    registry sets the problem base `create_app` would (here the spec's default), so the
    problems its failed jobs record match the app's. The setting's override goes through the
    same path (test_durability.py runs it on a worker)."""
    code = (
        "from acme_srv import services\n"
        "from acme_srv.runtime.problems import problem_type\n"
        "assert problem_type('x') == '/problems/x'  # the runtime's fallback until then\n"
        "services.registry\n"
        "print(problem_type('job-abandoned'))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_")}
    env["PYTHONPATH"] = str(acme_project)
    env["APIFORGE_STORE_URL"] = f"sqlite:///{tmp_path / 'app.db'}"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "https://api.acme.example.com/problems/job-abandoned"
