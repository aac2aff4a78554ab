"""One `apiforge lint` run over several specs and directories: which files are specs, each
with its own configuration (the nearest one), linted or fixed one after another; a spec
that cannot be read is an error of its own and the others are still done."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from generator.errors import ApiforgeError, Problem
from generator.lint.config import LintConfig, resolve_config
from generator.lint.engine import LintResult

if TYPE_CHECKING:  # `lint` without --fix does not import the fixer (~0.05 s of a cold lint)
    from generator.lint.fix import FixResult

Mode = Literal["lint", "fix", "diff"]
SPEC_SUFFIXES = (".yaml", ".yml", ".json")
# a root document says `openapi:` (or Swagger 2.0's `swagger:`) at the top level (a fragment
# of a multi-file spec does not)
_OPENAPI_YAML = re.compile(rb"^(?:(['\"]?)(?:openapi|swagger)\1)[ \t]*:", re.M)
_OPENAPI_JSON = re.compile(rb'"(?:openapi|swagger)"\s*:')
_SKIPPED_DIRS = {"node_modules", "__pycache__"}


@dataclass(frozen=True, slots=True)
class SpecRun:
    """One spec of a run: its findings (what is left, after a fix), or why it failed."""

    spec: str
    config: LintConfig | None = None
    result: LintResult | None = None
    fix: FixResult | None = None
    error: ApiforgeError | None = None

    def fails(self) -> bool:
        return (
            self.result is not None
            and self.config is not None
            and self.result.fails(self.config.fail_on)
        )


@dataclass(frozen=True, slots=True)
class LintRun:
    mode: Mode
    specs: tuple[SpecRun, ...]

    @property
    def results(self) -> list[LintResult]:
        return [s.result for s in self.specs if s.result is not None]

    @property
    def fixes(self) -> list[FixResult]:
        return [s.fix for s in self.specs if s.fix is not None]

    @property
    def errors(self) -> list[ApiforgeError]:
        return [s.error for s in self.specs if s.error is not None]

    def fails(self) -> bool:
        return any(s.fails() for s in self.specs)


def is_root_document(path: Path) -> bool:
    """Whether a file found in a directory is an OpenAPI document's root (has `openapi`, or
    `swagger`)."""
    try:
        head = path.read_bytes()
    except OSError:
        return False
    if path.suffix == ".json":
        return _OPENAPI_JSON.search(head[:65536]) is not None
    return _OPENAPI_YAML.search(head) is not None


def expand(targets: Iterable[str], skip_non_specs: bool = False) -> list[str]:
    """The specs that files and directories name: a file as given (`skip_non_specs`: only
    when it has a top-level `openapi`); in a directory (and its subdirectories, hidden ones
    aside), every YAML or JSON file with a top-level `openapi`."""
    found: list[str] = []
    seen: set[str] = set()
    for target in targets:
        if skip_non_specs and target != "-" and Path(target).is_file():
            specs = [target] if is_root_document(Path(target)) else []
        elif target != "-" and Path(target).is_dir():
            specs = []
            for folder, dirs, files in os.walk(target):
                dirs[:] = sorted(
                    d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                )
                for name in sorted(files):
                    path = Path(folder, name)
                    if path.suffix.lower() in SPEC_SUFFIXES and is_root_document(path):
                        specs.append(str(path))
            if not specs:
                raise ApiforgeError(
                    Problem(
                        f"no OpenAPI document (a YAML or JSON file with `openapi:`) in {target}"
                    ),
                    "name the spec file, or a directory that has one",
                )
        else:
            specs = [target]
        for spec in specs:
            key = os.path.realpath(spec) if spec != "-" else spec
            if key not in seen:
                seen.add(key)
                found.append(spec)
    return found


def run_lint(
    targets: Iterable[str],
    *,
    mode: Mode = "lint",
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    fail_on: str | None = None,
    config_file: str | None = None,
    use_config: bool = True,
    skip_non_specs: bool = False,
) -> LintRun:
    """Lint (or fix) every spec the targets name. Bad usage (an unknown rule id on the
    command line, a missing --config file, a directory without specs) raises; a spec that
    cannot be read or written is that spec's error."""
    from generator.lint.engine import lint_path

    select, ignore = tuple(select), tuple(ignore)
    LintConfig().with_cli(select, ignore, fail_on)  # unknown ids on the command line: now
    if config_file:
        resolve_config("-", config_file)
    specs = expand(targets, skip_non_specs)
    if mode == "fix" and "-" in specs:
        raise ApiforgeError(
            Problem("standard input cannot be fixed in place"), "use --diff to see the fix"
        )
    runs = []
    for spec in specs:
        config = None
        try:
            config = resolve_config(spec, config_file, use_files=use_config)
            config = config.with_cli(select, ignore, fail_on)
            if mode == "lint":
                runs.append(SpecRun(spec, config, lint_path(spec, config)))
            else:
                from generator.lint.fix import fix_spec

                fixed = fix_spec(spec, config, write=mode == "fix")
                runs.append(SpecRun(spec, config, fixed.after, fixed))
        except ApiforgeError as exc:
            runs.append(SpecRun(spec, config, error=exc))
        except RecursionError:
            error = ApiforgeError(Problem("the spec is nested too deeply to process", spec))
            runs.append(SpecRun(spec, config, error=error))
    return LintRun(mode, tuple(runs))
