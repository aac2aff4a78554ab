"""Lint configuration: `[tool.apiforge.lint]` in pyproject.toml or `lint:` in .apiforge.yaml,
found by walking up from the spec's directory; the command line refines it.

    [tool.apiforge.lint]
    select = ["..."]            # only these rules (default: all)
    ignore = ["etag-missing"]   # rules off
    fail-on = "warning"         # error (default) | warning | info | never
    [tool.apiforge.lint.severity]
    async-retry-after-missing = "warning"   # error | warning | info | off
    [[tool.apiforge.lint.ignore-operations]]
    path = "/internal/*"        # glob on the path (a webhook's name for webhooks)
    methods = ["get"]           # optional, default every method
    rules = ["rate-limit-headers-missing"]  # optional, default every rule

`apiforge lint --help` shows these keys; each rule's page: `apiforge rules ID`. `apiforge diff`
reads its own section of the same files (`[tool.apiforge.diff]`, `diff:`) with the same keys in
its own words (`Vocabulary`, docs/diff.md).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from generator.errors import ApiforgeError, Problem
from generator.lint.model import SEVERITIES, Severity
from generator.lint.registry import check_ids

FAIL_ON = ("error", "warning", "info", "never")
_KEYS = {"select", "ignore", "fail-on", "severity", "ignore-operations"}
_HINT = "`apiforge lint --help` shows the configuration keys; `apiforge rules` lists the rule ids"
_SECTIONS = ("lint", "diff")  # the top-level keys of .apiforge.yaml


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What a section of the configuration is about: its name, the severity words it accepts
    (each read as the severity it stands for), the `fail-on` words, and how ids are checked."""

    section: str
    levels: Mapping[str, Severity]
    fail_on: Mapping[str, str]
    check: Callable[..., None]
    hint: str


LINT = Vocabulary(
    section="lint",
    levels={s: s for s in SEVERITIES},
    fail_on={f: f for f in FAIL_ON},
    check=check_ids,
    hint=_HINT,
)


@dataclass(frozen=True, slots=True)
class OperationIgnore:
    path: str
    methods: frozenset[str] | None = None  # lower case; None: every method
    rules: frozenset[str] | None = None  # None: every rule

    def matches(self, rule_id: str, method: str, path: str) -> bool:
        return (
            (self.rules is None or rule_id in self.rules)
            and (self.methods is None or method in self.methods)
            and fnmatch.fnmatchcase(path, self.path)
        )


@dataclass(frozen=True, slots=True)
class LintConfig:
    source: str | None = None  # the file it was read from
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity | None] = field(default_factory=dict)  # None: off
    ignore_operations: tuple[OperationIgnore, ...] = ()
    fail_on: str = "error"

    def with_cli(
        self,
        select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        fail_on: str | None = None,
    ) -> LintConfig:
        select, ignore = _split(select), _split(ignore)
        check_ids(select, source="--select")
        check_ids(ignore, source="--ignore")
        return replace(
            self,
            select=frozenset(select) if select else self.select,
            ignore=self.ignore | frozenset(ignore),
            fail_on=fail_on or self.fail_on,
        )

    def enabled(self, rule_id: str, default: Severity) -> Severity | None:
        """The severity `rule_id` runs at, or None when it is off."""
        if self.select is not None and rule_id not in self.select:
            return None
        if rule_id in self.ignore:
            return None
        return self.severity.get(rule_id, default) if rule_id in self.severity else default


def _split(values: Iterable[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def find_config(spec: str, section: str = "lint") -> Path | None:
    """The nearest .apiforge.yaml, or pyproject.toml with [tool.apiforge.<section>], walking
    up from the spec's directory, then from the working directory (as Spectral and Redocly
    look): a spec under the working directory finds the working directory's file, a spec
    elsewhere its own project's first (stdin, or a spec that is no file — `REF:PATH` —
    starts from the working directory)."""
    cwd = Path.cwd().resolve()
    start = Path(spec).resolve().parent if Path(spec).is_file() else cwd
    folders = dict.fromkeys((start, *start.parents, cwd, *cwd.parents))
    for folder in folders:
        candidate = folder / ".apiforge.yaml"
        if candidate.is_file():
            return _shown(candidate, cwd)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _pyproject_section(pyproject, section) is not None:
            return _shown(pyproject, cwd)
    return None


def _shown(path: Path, cwd: Path) -> Path:
    """`path` as messages show it: relative to the working directory when it is in it or
    in one of its parents, else as it is."""
    import os

    if path.is_relative_to(cwd) or cwd.is_relative_to(path.parent):
        return Path(os.path.relpath(path, cwd))
    return path


def _pyproject_section(path: Path, name: str = "lint") -> dict[str, Any] | None:
    import tomllib  # only when there is a pyproject.toml to read

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ApiforgeError(Problem(f"invalid TOML: {exc}", file=str(path)), _HINT) from None
    section = data.get("tool", {}).get("apiforge", {}).get(name)
    return section if isinstance(section, dict) else None


def load_config(path: Path, words: Vocabulary = LINT) -> LintConfig:
    """Read one configuration file; every rule id in it must exist."""
    name = str(path)
    key = words.section
    if path.name == "pyproject.toml" or path.suffix == ".toml":
        import tomllib

        section = _pyproject_section(path, key)
        if section is None and path.name != "pyproject.toml":
            try:
                section = tomllib.loads(path.read_text(encoding="utf-8")).get(key)
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ApiforgeError(Problem(f"cannot read: {exc}", file=name), _HINT) from None
        where = f"[tool.apiforge.{key}]"
    else:
        try:
            import yaml  # here: most runs find no configuration file

            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ApiforgeError(Problem(f"cannot read: {exc.strerror}", file=name)) from None
        except yaml.YAMLError as exc:
            raise ApiforgeError(Problem(f"invalid YAML: {exc}", file=name), _HINT) from None
        if data is not None and not isinstance(data, dict):
            raise ApiforgeError(
                Problem(f"expected a mapping with a `{key}:` key", file=name), words.hint
            )
        for unknown in sorted(set(data or {}) - set(_SECTIONS), key=str):
            hint = _SPECTRAL_HINT if unknown in ("rules", "extends") else words.hint
            raise ApiforgeError(
                Problem(
                    f"unknown top-level key {unknown!r}: the settings go under "
                    + " or ".join(f"`{s}:`" for s in _SECTIONS),
                    file=name,
                    line=_line_of(path, str(unknown)),
                ),
                hint,
            )
        section = (data or {}).get(key)
        where = f"{key}:"
    if section is None:
        return LintConfig(source=name, fail_on=next(iter(words.fail_on.values())))
    return parse_config(section, name, where, lambda k: _line_of(path, k), words)


def _line_of(path: Path, key: str) -> int:
    """The first line of `path` that sets `key` (YAML `key:`, TOML `key =`), or 0."""
    import re

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 0
    found = re.search(rf"""(?m)^[ \t-]*["']?{re.escape(key)}["']?[ \t]*[:=]""", text)
    return text.count("\n", 0, found.start()) + 1 if found else 0


#: Spectral's severity words (and numbers) in apiforge's.
_SPECTRAL_LEVELS: dict[Any, str] = {
    "error": "error", 0: "error",
    "warn": "warning", "warning": "warning", 1: "warning",
    "info": "info", 2: "info", "hint": "info", 3: "info",
    "off": "off",
}  # fmt: skip
_SPECTRAL_HINT = (
    "apiforge reads Spectral-style severities under `lint:` as `rules: {rule-id: error|warn|"
    "info|hint|off}` (or `severity:`); rulesets (`extends`) are not read"
)


def parse_config(
    section: Any,
    name: str,
    where: str,
    line_of: Callable[[str], int] = lambda key: 0,
    words: Vocabulary = LINT,
) -> LintConfig:
    def bad(message: str, key: str = "") -> ApiforgeError:
        line = line_of(key) if key else 0
        return ApiforgeError(Problem(f"{where} {message}", file=name, line=line), words.hint)

    check_ids = words.check

    if not isinstance(section, dict):
        raise bad("must be a table/mapping")
    unknown = sorted(set(section) - _KEYS - {"rules"}, key=str)
    if unknown:
        raise bad(
            f"has unknown key(s) {', '.join(map(str, unknown))}; "
            f"known: {', '.join(sorted(_KEYS | {'rules'}))}",
            str(unknown[0]),
        )
    section = _spectral_rules(section, bad)

    def id_list(key: str, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(f"`{key}` must be a list of rule ids")
        check_ids(value, source=f"{where} {key}", file=name)
        return cast(list[str], value)

    select = section.get("select")
    config = LintConfig(
        source=name,
        select=frozenset(id_list("select", select)) if select is not None else None,
        ignore=frozenset(id_list("ignore", section.get("ignore", []))),
    )
    fail_on = section.get("fail-on", next(iter(words.fail_on)))
    if fail_on not in words.fail_on:
        raise bad(f"`fail-on` must be one of {', '.join(words.fail_on)}, not {fail_on!r}")
    fail_on = words.fail_on[fail_on]
    levels = ", ".join(words.levels)
    severity: dict[str, Severity | None] = {}
    raw = section.get("severity", {})
    if not isinstance(raw, dict):
        raise bad(f"`severity` must map ids to {levels} or off")
    check_ids(list(raw), source=f"{where} severity", file=name)
    for rule_id, level in raw.items():
        if level != "off" and level not in words.levels:
            raise bad(f"severity of `{rule_id}` must be {levels} or off, not {level!r}")
        severity[rule_id] = None if level == "off" else words.levels[level]
    ignores = []
    entries = section.get("ignore-operations", [])
    if not isinstance(entries, list):
        raise bad("`ignore-operations` must be a list of {path, methods, rules} entries")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise bad(f"`ignore-operations` entry {i + 1} needs a `path` glob")
        extra = sorted(set(entry) - {"path", "methods", "rules"})
        if extra:
            raise bad(f"`ignore-operations` entry {i + 1} has unknown key(s) {', '.join(extra)}")
        methods = entry.get("methods")
        if isinstance(methods, str):
            methods = None if methods == "*" else [methods]
        if methods is not None and not (
            isinstance(methods, list) and all(isinstance(m, str) for m in methods)
        ):
            raise bad(f"`ignore-operations` entry {i + 1}: `methods` must be a list of methods")
        rules = entry.get("rules")
        ignores.append(
            OperationIgnore(
                path=entry["path"],
                methods=frozenset(m.lower() for m in methods) if methods is not None else None,
                rules=frozenset(id_list("ignore-operations rules", rules))
                if rules is not None
                else None,
            )
        )
    return replace(config, fail_on=fail_on, severity=severity, ignore_operations=tuple(ignores))


def _spectral_rules(section: dict[str, Any], bad: Callable[..., ApiforgeError]) -> dict[str, Any]:
    """`rules: {id: warn}` (Spectral's spelling) read as `severity:`; `true` keeps the
    rule's default."""
    rules = section.get("rules")
    if rules is None:
        return section
    if not isinstance(rules, dict):
        raise bad("`rules` must map rule ids to error, warn, info, hint or off", "rules")
    severity = dict(section.get("severity") or {})
    for rule_id, level in rules.items():
        if level is True:
            continue
        key = "off" if level is False else level.lower() if isinstance(level, str) else level
        if key not in _SPECTRAL_LEVELS:
            raise bad(
                f"rules: `{rule_id}` must be error, warn, info, hint or off, not {level!r}",
                str(rule_id),
            )
        severity[rule_id] = _SPECTRAL_LEVELS[key]
    return {**{k: v for k, v in section.items() if k != "rules"}, "severity": severity}


def resolve_config(
    spec: str, explicit: str | None, use_files: bool = True, words: Vocabulary = LINT
) -> LintConfig:
    default = LintConfig(fail_on=next(iter(words.fail_on.values())))
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ApiforgeError(Problem(f"no such configuration file: {explicit}"))
        return load_config(path, words)
    if not use_files:
        return default
    found = find_config(spec, words.section)
    return load_config(found, words) if found else default
