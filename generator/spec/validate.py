"""Full OpenAPI validation: every error, each with its location.

Two parts, the same two openapi-spec-validator runs, in a fraction of its time:

1. **structural**: the document against the official OAS 3.0 / 3.1 JSON schema that
   openapi-spec-validator ships (`openapi_spec_validator/resources/schemas/v3.x/schema.json`,
   loaded from that package), by jsonschema-rs (compiled once per process; the GitHub spec
   takes ~0.1 s). Each error is located at the instance path the validator reports, exactly
   as before; messages are worded as Python's `jsonschema` words them.
2. **semantic**: the checks openapi-spec-validator adds beyond the JSON schema
   (`openapi_spec_validator/validation/keywords.py`), re-done here on the parsed document,
   in its order and with its de-duplication, so the same specs fail for the same reasons
   (`bench/validation_parity.py` compares both over the whole corpus):

   - duplicate tag names; duplicate `operationId`s; duplicate (name, in) parameters in one
     list; a path template parameter that no path parameter declares, or a declared path
     parameter that the template lacks;
   - every schema under `components/schemas`, a parameter or a media type: checked against
     its dialect's meta-schema (OAS 3.0: draft 4; 3.1: the OAS base dialect or its
     `$schema` / `jsonSchemaDialect`; `pattern`s must be ECMA-262 or Python regexes) — by
     jsonschema-rs; then its `allOf`/`anyOf`/`oneOf`/`not`/`items`/`properties`, a
     `required` name no branch of an `allOf` defines, and a `default` that its own schema
     rejects (by openapi-schema-validator's OAS30/OAS31 validators, as before — defaults are
     few).

   Unlike openapi-spec-validator, which gives these errors no location (or one relative to
   the schema they are in), each is reported at the node it is about.

   A `$ref` that does not resolve (a missing file, a pointer that names nothing, a remote
   or cyclic reference) is one of these errors too, at the `$ref` (kind "unresolved-ref"):
   every one the walk above follows, and in a spec of several files every `$ref` in each of
   them. It is the IR builder, not validation, that refuses one it needs.

The result is cached by content hash (a clean verdict, or the errors with their locations),
so regenerating an unchanged spec does not pay even this. jsonschema-rs's errors are worded
in `rs_checks`; a `default` is checked by `defaults.DefaultChecker`.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.ir import Where
from generator.log import logger
from generator.models.format_checks import EXTENSION as FORMAT_CHECKS
from generator.models.format_checks import extension_problem
from generator.spec.defaults import DefaultChecker
from generator.spec.load import cache_get, cache_put
from generator.spec.refs import Resolver, UnresolvedRef
from generator.spec.rs_checks import (
    ANNOTATION_FORMATS,
    any_value,
    rs_errors,
    valid_regex,
    worded,
)
from generator.spec.swagger2 import ConvertedDocument

_CACHE_KIND = "valid3"
_INVALID_KIND = "invalid3"  # (how many errors, the first MAX_REPORTED located) of a spec
MAX_REPORTED = 50  # as errors (--strict), with a count of the rest
MAX_WARNED = 20  # as warnings, with a count of the rest
OAS31_DIALECT = "https://spec.openapis.org/oas/3.1/dialect/base"
SWAGGER2_STRUCTURAL = "structural-2.0"  # an error of a 2.0 document against the 2.0 schema
OPERATIONS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True, slots=True)
class SpecError:
    """One validation error. `kind` is "structural" or the semantic check's name; `legacy`
    is the pointer openapi-spec-validator gave it (for `bench/validation_parity.py`)."""

    message: str
    where: Where
    kind: str
    legacy: str


def validate(resolver: Resolver, *, strict: bool = True) -> int:
    """Validate the spec; return how many validation errors it has.

    `strict`: raise ApiforgeError listing (up to MAX_REPORTED of) them. Otherwise each of the
    first MAX_WARNED is a warning on the "apiforge" logger (stderr, in the command line), then
    how many more there are and one summary line — the generating commands go on. A `$ref`
    that does not resolve is one of these errors; what keeps a file from being read at all
    (bad YAML, ...) is an error either way: it is raised before or while the errors are
    collected, not counted."""
    return report_problems(resolver, find_problems(resolver), strict=strict)


Found = tuple[int, list[Problem]]  # how many errors, and the first MAX_REPORTED of them


def known_valid(digest: str) -> bool:
    """Whether a previous run found the single-file spec whose text has this SHA-256 valid
    (what `find_problems` keeps)."""
    return bool(cache_get(_CACHE_KIND, digest))


def find_problems(resolver: Resolver) -> Found:
    """The validation errors of the spec (cached by the content of a single-file spec). Says
    nothing: `report_problems` does, so the finding can run in another process."""
    root = resolver.root
    single_file = len(resolver.documents) == 1
    if single_file and known_valid(root.digest):
        return 0, []
    found = _cached_problems(resolver) if single_file else None
    if found is None:
        try:
            errors = collect_errors(resolver)
        except RecursionError:
            raise ApiforgeError(
                Problem("the spec is nested too deeply to validate", file=root.name)
            ) from None
        problems = [_problem(resolver, error) for error in errors[:MAX_REPORTED]]
        found = (len(errors), problems)
        if single_file and len(resolver.documents) == 1:
            if errors:
                cache_put(_INVALID_KIND, root.digest, found)
            else:
                cache_put(_CACHE_KIND, root.digest, True)
    return found


def report_problems(resolver: Resolver, found: Found, *, strict: bool) -> int:
    """Raise (`strict`) or warn about what `find_problems` found, as `validate` says."""
    total, problems = found
    if not total:
        return 0
    if strict:
        more = total - len(problems)
        hint = "fix these, or skip validation with --no-validate"
        if more > 0:
            hint = f"{more} more not shown; " + hint
        raise ApiforgeError(problems, hint)
    _warn(resolver.root.name, total, problems)
    return total


def _cached_problems(resolver: Resolver) -> Found | None:
    """The errors a previous run found in this same content (under whatever name it had)."""
    root = resolver.root
    found = cache_get(_INVALID_KIND, root.digest)
    if not isinstance(found, tuple) or len(found) != 2:
        return None
    total, problems = found
    if not isinstance(total, int) or not isinstance(problems, list):
        return None
    if not all(isinstance(p, Problem) for p in problems):
        return None
    return total, [replace(p, file=root.name) for p in problems]


def _warn(name: str, total: int, problems: list[Problem]) -> None:
    log = logger()
    for problem in problems[:MAX_WARNED]:
        log.warning("warning: %s", problem.render())
    if total > MAX_WARNED:
        log.warning("warning: … and %d more", total - MAX_WARNED)
    errors = "1 error" if total == 1 else f"{total} errors"
    log.warning(
        "warning: %s is not valid OpenAPI 3.x (%s); generating anyway — "
        "pass --strict to make this an error",
        name,
        errors,
    )


def _problem(resolver: Resolver, error: SpecError) -> Problem:
    message = error.message[:500]
    root = resolver.root
    if error.kind == SWAGGER2_STRUCTURAL and isinstance(root, ConvertedDocument):
        assert root.original is not None  # the error's pointer is in the 2.0 document
        line, column = root.original.locate(error.where.pointer)
        return Problem(message, root.name, line, column, error.where.pointer)
    return resolver.problem(message, error.where)


def collect_errors(resolver: Resolver) -> list[SpecError]:
    """Every structural error, then every semantic one (see the module docstring).

    A Swagger 2.0 document is checked against the 2.0 JSON schema as written (its errors
    speak of what the file says, where it says it), and its 3.0 reading gets the semantic
    checks (located back in the 2.0 file through the conversion's map): the checks are those
    of the stage that will read it, and the fast validator stays the only one."""
    root = resolver.root
    if isinstance(root, ConvertedDocument) and root.original is not None:
        errors = [
            SpecError(worded(e), Where(root.name, "").child(*e.instance_path), kind, "")
            for kind in (SWAGGER2_STRUCTURAL,)
            for e in rs_errors(_swagger2_validator(), root.original.data)
        ]
        errors.extend(_Semantic(resolver, True).run())
        return errors
    version = str(root.data.get("openapi", "")) if isinstance(root.data, dict) else ""
    v30 = version.startswith("3.0")
    errors = list(_structural(root.data, root.name, v30))
    errors.extend(_Semantic(resolver, v30).run())
    wrong = extension_problem(root.data)
    if wrong is not None:
        where = Where(root.name, "").child(FORMAT_CHECKS)
        errors.append(SpecError(wrong, where, "extension", ""))
    return errors


# --- structural ------------------------------------------------------------------------

_validators: dict[str, Any] = {}


def _package_schema(package: str, relative: str) -> Any:
    """A JSON file shipped inside an installed package, read without importing the package
    (importing openapi-spec-validator alone takes seconds: pydantic settings, ...)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ApiforgeError(Problem(f"the package {package} is not installed"))
    folder = Path(next(iter(spec.submodule_search_locations)))
    return json.loads((folder / relative).read_text(encoding="utf-8"))


def _swagger2_validator() -> Any:
    validator = _validators.get("swagger20")
    if validator is None:
        import jsonschema_rs

        schema = _package_schema("openapi_spec_validator", "resources/schemas/v2.0/schema.json")
        validator = jsonschema_rs.validator_for(schema, validate_formats=False)
        _validators["swagger20"] = validator
    return validator


def _oas_validator(v30: bool) -> Any:
    key = "oas30" if v30 else "oas31"
    validator = _validators.get(key)
    if validator is None:
        import jsonschema_rs

        schema = _package_schema(
            "openapi_spec_validator", f"resources/schemas/v{'3.0' if v30 else '3.1'}/schema.json"
        )
        # formats are annotations here, as in openapi-spec-validator's own jsonschema backend
        validator = jsonschema_rs.validator_for(schema, validate_formats=False)
        _validators[key] = validator
    return validator


def _structural(data: Any, file: str, v30: bool) -> Iterator[SpecError]:
    for error in rs_errors(_oas_validator(v30), data):
        where = Where(file, "").child(*error.instance_path)
        yield SpecError(worded(error), where, "structural", where.pointer)


# --- semantic --------------------------------------------------------------------------


_DRAFT_META = {  # the meta-schemas jsonschema's `validator_for` knows, by dialect id
    "http://json-schema.org/draft-04/schema": "draft4",
    "http://json-schema.org/draft-06/schema": "draft6",
    "http://json-schema.org/draft-07/schema": "draft7",
    "https://json-schema.org/draft/2019-09/schema": "draft201909",
    "https://json-schema.org/draft/2020-12/schema": "draft202012",
}


def _meta_validator(dialect: str, v30: bool) -> Any | None:
    """A jsonschema-rs validator for the meta-schema openapi-spec-validator checks a schema
    against, with the same format assertions (only `regex`), or None for an unknown dialect."""
    key = "meta30" if v30 else f"meta:{dialect}"
    if key in _validators:
        return _validators[key]
    import jsonschema_rs

    meta: Any = None
    resources: list[tuple[str, Any]] = []
    if v30:
        meta = _package_schema("jsonschema_specifications", "schemas/draft4/metaschema.json")
    elif dialect == OAS31_DIALECT:
        meta = _package_schema("openapi_schema_validator", "schemas/oas3.1/metaschema.json")
        vocabulary = _package_schema("openapi_schema_validator", "schemas/oas3.1/vocabularies/base")
        resources = [(vocabulary["$id"], vocabulary)]
    else:
        draft = _DRAFT_META.get(dialect.rstrip("#"))
        if draft is not None:
            meta = _package_schema("jsonschema_specifications", f"schemas/{draft}/metaschema.json")
    validator = None
    if meta is not None:
        formats: dict[str, Any] = dict.fromkeys(ANNOTATION_FORMATS, any_value)
        formats["regex"] = valid_regex
        validator = jsonschema_rs.validator_for(
            meta,
            validate_formats=True,
            formats=formats,
            registry=jsonschema_rs.Registry(resources) if resources else None,
        )
    _validators[key] = validator
    return validator


class _Unresolved:
    """What a `$ref` that does not resolve stands for in the walk: nothing to check."""

    def __repr__(self) -> str:
        return "<unresolved $ref>"


UNRESOLVED: Any = _Unresolved()

# what may be a `$ref` to another file (`$ref: other.yaml#/A`, `"$ref": "other.json"`; not
# `#/...`, a URL, or a property called `$ref`): what makes a one-file spec worth scanning for
# every `$ref` (see `_Semantic.refs`)
_EXTERNAL_REF = re.compile(rb"""\$ref["']?\s*:\s*["']?(?![#"'\s>|{\[]|https?:)""")
# values that are data, not spec objects: a `$ref` in them is not a reference (unless the key
# is a name in a map of names, such as a property called "default")
_LITERAL_KEYS = frozenset({"example", "examples", "default", "enum", "const", "value"})
_NAME_MAPS = frozenset(
    {
        "properties",
        "patternProperties",
        "dependentSchemas",
        "$defs",
        "definitions",
        "schemas",
        "responses",
        "parameters",
        "examples",
        "requestBodies",
        "headers",
        "securitySchemes",
        "links",
        "callbacks",
        "pathItems",
        "paths",
        "webhooks",
        "content",
        "encoding",
    }
)


def _ref_nodes(data: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Every mapping with a string `$ref` in a document's `data`, with its path (see
    `_path_where`); examples, defaults, enums, constants and extensions (`x-...`) are not
    looked into. In the order they are written."""
    todo: list[tuple[Any, Any, bool]] = [(None, data, False)]
    while todo:
        path, node, names = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield path, node
            for key, value in reversed(node.items()):  # popped in their order
                if not isinstance(value, (dict, list)):
                    continue
                if not names and isinstance(key, str):
                    if key in _LITERAL_KEYS and not (key == "examples" and isinstance(value, dict)):
                        continue
                    if key.startswith("x-"):
                        continue
                todo.append(((key, path), value, not names and key in _NAME_MAPS))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    todo.append(((i, path), node[i], False))


def _path_where(file: str, path: Any) -> Where:
    """The place of a `_ref_nodes` path: (last token, (the one before, (... None)))."""
    tokens: list[str | int] = []
    while path is not None:
        token, path = path
        tokens.append(token if isinstance(token, (str, int)) else str(token))
    return Where(file, "").child(*reversed(tokens))


class _Semantic:
    """openapi-spec-validator's RootValidator walk (keywords.py), on the parsed document."""

    def __init__(self, resolver: Resolver, v30: bool) -> None:
        self.resolver = resolver
        self.v30 = v30
        self.errors: list[SpecError] = []
        self.visited: set[int] = set()
        self.meta_checked: set[int] = set()
        self.operation_ids: list[Any] = []
        self.operation_id_set: set[Any] = set()
        self.dialect: str | None = None
        self._defaults: DefaultChecker | None = None
        self.unresolved_at: set[Where] = set()
        self.scanned: set[str] = set()  # the files `refs` has looked through

    def error(self, message: str, where: Where, kind: str, legacy: str = "") -> None:
        self.errors.append(SpecError(message, where, kind, legacy))

    def deref(self, where: Where, node: Any) -> tuple[Where, Any]:
        """`node` through its `$ref`s; one that does not resolve is an error at that `$ref`,
        and what it stands for is UNRESOLVED (no check looks into it)."""
        cls = node.__class__
        if (cls is dict and "$ref" not in node) or (cls is not dict and not isinstance(node, dict)):
            return where, node  # most nodes: no `$ref` to follow (the walk asks ~18,000 times)
        try:
            return self.resolver.deref(where, node)
        except UnresolvedRef as exc:
            self.unresolved(exc)
            return where, UNRESOLVED

    def unresolved(self, exc: UnresolvedRef) -> None:
        if exc.at not in self.unresolved_at:
            self.unresolved_at.add(exc.at)
            self.error(
                f"$ref {exc.ref!r} cannot be resolved: {exc.reason}", exc.at, "unresolved-ref"
            )

    def refs(self) -> None:
        """Every `$ref` in every file of a spec of several files (or one that refers to
        another): one that does not resolve is an error where it is written. The walk meets
        only those it follows; the tools that read such a spec after it (jsonschema-rs here,
        datamodel-code-generator for the models) read every file. Called before the walk
        (so that every file is loaded when a `default` is checked) and after it (in case the
        walk found a file the first call did not)."""
        resolver = self.resolver
        if len(resolver.documents) == 1 and not _EXTERNAL_REF.search(resolver.root.text):
            return
        resolved: set[tuple[str, str]] = set()  # what a $ref leads to: its file and text
        while True:
            pending = [doc for doc in resolver.documents if doc.name not in self.scanned]
            if not pending:
                return
            for doc in pending:
                self.scanned.add(doc.name)
                for path, node in _ref_nodes(doc.data):
                    key = (doc.name, node["$ref"])
                    if key not in resolved:
                        try:
                            resolver.deref(_path_where(doc.name, path), node)
                        except UnresolvedRef as exc:
                            self.unresolved(exc)
                        else:
                            resolved.add(key)

    def run(self) -> list[SpecError]:
        root = self.resolver.root
        where = Where(root.name, "")
        data = root.data
        if not isinstance(data, dict):
            return self.errors
        self.refs()
        if "tags" in data:
            self.tags(*self.deref(where.child("tags"), data["tags"]))
        if "paths" in data:
            at, paths = self.deref(where.child("paths"), data["paths"])
            if isinstance(paths, dict):
                for url, item in paths.items():
                    if not _extension(url):  # `x-codegen-contextRoot: /apis`, ...
                        self.path(str(url), *self.deref(at.child(url), item))
        if "components" in data:
            at, components = self.deref(where.child("components"), data["components"])
            if isinstance(components, dict) and "schemas" in components:
                at, schemas = self.deref(at.child("schemas"), components["schemas"])
                if isinstance(schemas, dict):
                    for name, schema in schemas.items():
                        self.schema(at.child(name), schema)
        self.refs()
        return self.errors

    def tags(self, where: Where, tags: Any) -> None:
        if not isinstance(tags, list):
            return
        seen: set[Any] = set()
        for i, tag in enumerate(tags):
            at, tag = self.deref(where.child(i), tag)
            name = tag.get("name") if isinstance(tag, dict) else None
            if not isinstance(name, str):
                continue
            if name in seen:
                self.error(f"Duplicate tag name '{name}'", at.child("name"), "duplicate-tag")
            seen.add(name)

    def path(self, url: str, where: Where, item: Any) -> None:
        if not isinstance(item, dict):
            return
        shared: tuple[Where, Any] | None = None
        if "parameters" in item:
            shared = self.deref(where.child("parameters"), item["parameters"])
            self.parameters(*shared)
        for name, operation in item.items():
            if name in OPERATIONS:
                self.operation(url, name, *self.deref(where.child(name), operation), shared)

    def parameters(self, where: Where, parameters: Any) -> None:
        if not isinstance(parameters, list):
            return
        seen: set[Any] = set()
        for i, parameter in enumerate(parameters):
            at, parameter = self.deref(where.child(i), parameter)
            if not isinstance(parameter, dict):
                continue
            if "schema" in parameter:
                self.schema(at.child("schema"), parameter["schema"])
            key = (parameter.get("name"), parameter.get("in"))
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # a malformed name: the structural errors say so
                continue
            if duplicate:
                self.error(
                    f"Duplicate parameter '{parameter.get('name')}'",
                    where.child(i),
                    "duplicate-parameter",
                )

    def _path_names(self, where: Where, parameters: Any) -> Iterator[str]:
        if not isinstance(parameters, list):
            return
        for i, parameter in enumerate(parameters):
            _, parameter = self.deref(where.child(i), parameter)
            if isinstance(parameter, dict) and parameter.get("in") == "path":
                name = parameter.get("name")
                if isinstance(name, str):
                    yield name

    def operation(
        self,
        url: str,
        method: str,
        where: Where,
        operation: Any,
        shared: tuple[Where, Any] | None,
    ) -> None:
        if not isinstance(operation, dict):
            return
        if "operationId" in operation:
            value = operation["operationId"]
            if value is not None and self._seen_operation_id(value):
                self.error(
                    f"Operation ID '{value}' for '{method}' in '{url}' is not unique",
                    where.child("operationId"),
                    "duplicate-operation-id",
                )
            self.operation_ids.append(value)
        if "responses" in operation:
            at, responses = self.deref(where.child("responses"), operation["responses"])
            if isinstance(responses, dict):
                for code, response in responses.items():
                    if not _extension(code):
                        self.response(*self.deref(at.child(code), response))
        names: list[str] = []
        own_at = where
        if "parameters" in operation:
            own_at, own = self.deref(where.child("parameters"), operation["parameters"])
            self.parameters(own_at, own)
            names += self._path_names(own_at, own)
        if shared is not None:
            names += self._path_names(*shared)
        declared = set(names)
        templated = set(_template_names(url))
        for name in sorted(templated):
            if name not in declared:
                self.error(
                    f"Path parameter '{name}' for '{method}' operation in '{url}' was not resolved",
                    where,
                    "path-parameter",
                )
        for name in sorted(declared):
            if name not in templated:
                self.error(
                    f"Path parameter '{name}' for '{method}' operation in '{url}' was not resolved",
                    own_at,
                    "path-parameter",
                )

    def _seen_operation_id(self, value: Any) -> bool:
        try:
            if value in self.operation_id_set:
                return True
            self.operation_id_set.add(value)
            return False
        except TypeError:  # unhashable (malformed): the structural errors say so
            return value in self.operation_ids

    def response(self, where: Where, response: Any) -> None:
        if not isinstance(response, dict) or "content" not in response:
            return
        at, content = self.deref(where.child("content"), response["content"])
        if not isinstance(content, dict):
            return
        for mime, media in content.items():
            media_at, media = self.deref(at.child(mime), media)
            if isinstance(media, dict) and "schema" in media:
                self.schema(media_at.child("schema"), media["schema"])

    # -- schemas (keywords.SchemaValidator) --

    def schema(
        self, where: Where, node: Any, require_properties: bool = True, meta_checked: bool = False
    ) -> None:
        where, value = self.deref(where, node)
        if value is UNRESOLVED:
            return
        if value.__class__ is not dict and not isinstance(value, (Mapping, bool)):
            self.error(f"{value!r} is not of type 'object', 'boolean'", where, "schema")
            return
        key = id(value)
        if not meta_checked and key not in self.meta_checked:
            self.meta_checked.add(key)
            if self._meta(where, value):
                return
        if key in self.visited:
            return
        self.visited.add(key)
        if value.__class__ is not dict and not isinstance(value, Mapping):
            return
        nested: set[str] = set()
        if "allOf" in value:
            at, all_of = self.deref(where.child("allOf"), value["allOf"])
            for i, inner in enumerate(_items(all_of)):
                self.schema(at.child(i), inner, False, True)
                nested |= self._properties(at.child(i), inner, set())
        for keyword in ("anyOf", "oneOf"):
            if keyword in value:
                at, branches = self.deref(where.child(keyword), value[keyword])
                for i, inner in enumerate(_items(branches)):
                    self.schema(at.child(i), inner, False, True)
        if "not" in value:
            self.schema(where.child("not"), value["not"], False, True)
        if "items" in value:
            self.schema(where.child("items"), value["items"], False, True)
        if "properties" in value:
            at, properties = self.deref(where.child("properties"), value["properties"])
            if properties.__class__ is dict or isinstance(properties, Mapping):
                for name, inner in properties.items():
                    self.schema(at.child(name), inner, False, True)
        if require_properties and "allOf" in value:
            required = value.get("required") or []
            _, properties = self.deref(where.child("properties"), value.get("properties") or {})
            if properties is UNRESOLVED:
                properties = {}
            try:
                extra = set(required) - set(properties or []) - nested
            except TypeError:  # malformed `required`: the structural errors say so
                extra = set()
            if extra:
                self.error(
                    f"Required list has not defined properties: {sorted(extra, key=str)}",
                    where.child("required"),
                    "required-undefined",
                )
        if "default" in value:
            default = value["default"]
            if default is not None or value.get("nullable") is not True:
                self._default(where, value, default)

    def _properties(self, where: Where, node: Any, seen: set[int]) -> set[str]:
        """Every property name reachable from a schema (keywords._collect_properties; a
        recursive schema is followed once instead of overflowing the stack)."""
        where, value = self.deref(where, node)
        if (value.__class__ is not dict and not isinstance(value, Mapping)) or id(value) in seen:
            return set()
        seen.add(id(value))
        found: set[str] = set()
        if "properties" in value:
            _, properties = self.deref(where.child("properties"), value["properties"])
            if isinstance(properties, Mapping):
                found.update(properties)
        for keyword in ("allOf", "anyOf", "oneOf"):
            if keyword in value:
                at, branches = self.deref(where.child(keyword), value[keyword])
                for i, inner in enumerate(_items(branches)):
                    found |= self._properties(at.child(i), inner, seen)
        for keyword in ("items", "not"):
            if keyword in value:
                found |= self._properties(where.child(keyword), value[keyword], seen)
        return found

    def _meta(self, where: Where, value: Any) -> bool:
        """Check `value` against its meta-schema; report the first error. True if invalid."""
        if self.v30:
            dialect = ""
        elif isinstance(value, Mapping) and "$schema" in value:
            dialect = value["$schema"]
            if not isinstance(dialect, str):
                self.error(f"Unknown JSON Schema dialect: {dialect!r}", where, "schema")
                return True
        else:
            dialect = self._default_dialect()
        validator = _meta_validator(dialect, self.v30)
        if validator is None:
            self.error(f"Unknown JSON Schema dialect: {dialect!r}", where, "schema")
            return True
        for error in rs_errors(validator, value):
            relative = Where("", "").child(*error.instance_path).pointer
            self.error(
                f"{worded(error)} (this schema does not match its meta-schema)",
                where.child(*error.instance_path),
                "schema",
                relative,
            )
            return True
        return False

    def _default_dialect(self) -> str:
        if self.dialect is None:
            data = self.resolver.root.data
            value = data.get("jsonSchemaDialect") if isinstance(data, dict) else None
            self.dialect = value if isinstance(value, str) else OAS31_DIALECT
        return self.dialect

    def _default(self, where: Where, schema: Any, default: Any) -> None:
        if self._defaults is None:
            self._defaults = DefaultChecker(self.resolver, self.v30)
        if self.v30 and default is None and "type" in schema:
            # openapi-schema-validator's OAS 3.0 `type` says this before the type error
            self.error("default: None for not nullable", where.child("default"), "default")
        for error in self._defaults.errors(where, schema, default):
            relative = Where("", "").child(*error.path).pointer
            self.error(
                f"default: {error.message}",
                where.child("default").child(*error.path),
                "default",
                relative,
            )


def _extension(key: Any) -> bool:
    """An `x-...` key: a specification extension, not a path or a response."""
    return isinstance(key, str) and key.startswith("x-")


def _items(node: Any) -> list[Any]:
    return node if isinstance(node, list) else []


def _template_names(url: str) -> list[str]:
    """The names in a path template, as openapi-spec-validator reads them (str.format's
    parser); a template str.format cannot parse falls back to each `{...}`."""
    try:
        return [name for _, name, _, _ in string.Formatter().parse(url) if name]
    except ValueError:
        import re

        return [name for name in re.findall(r"\{([^{}]*)\}", url) if name]
