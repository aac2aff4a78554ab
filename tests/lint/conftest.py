from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.lint.config import LintConfig
from generator.lint.engine import LintResult, lint_path

FIXTURES = Path(__file__).parent / "fixtures"

SpecWriter = Callable[..., Path]
Linter = Callable[..., LintResult]


def document(
    paths: dict[str, Any] | None = None,
    *,
    components: dict[str, Any] | None = None,
    webhooks: dict[str, Any] | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "T", "version": "1"},
        "paths": paths or {},
    }
    if components:
        doc["components"] = components
    if webhooks:
        doc["webhooks"] = webhooks
    return doc


@pytest.fixture
def write_spec(tmp_path: Path) -> SpecWriter:
    def write(doc: dict[str, Any] | None = None, name: str = "openapi.yaml", **parts: Any) -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(doc or document(**parts), sort_keys=False))
        return path

    return write


@pytest.fixture
def run_lint(write_spec: SpecWriter) -> Linter:
    """Lint an inline spec in-process with no configuration file."""

    def run(
        doc: dict[str, Any] | None = None, config: LintConfig | None = None, **parts: Any
    ) -> LintResult:
        return lint_path(str(write_spec(doc, **parts)), config or LintConfig())

    return run


def ok(
    description: str = "OK.", headers: dict[str, Any] | None = None, problem: bool = False
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": description}
    if headers:
        response["headers"] = {name: {"schema": {"type": "string"}} for name in headers}
        for name, value in headers.items():
            if value is not None:
                response["headers"][name] = value
    if problem:
        response["content"] = {"application/problem+json": {"schema": {"type": "object"}}}
    return response


def header_param(name: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "header", "required": required, "schema": {"type": "string"}}


def rule_ids(result: LintResult) -> list[str]:
    return [f.rule for f in result.findings]


def of(result: LintResult, rule: str) -> list[Any]:
    return [f for f in result.findings if f.rule == rule]
