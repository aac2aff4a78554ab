"""Component schemas → Pydantic v2 models, through datamodel-code-generator's public API.

`generate_models(source, class_names=..., header=...)` gives the text of one `models.py`:
Pydantic v2 `BaseModel`s for Python 3.11, `Annotated` constraints, `X | None` unions,
populate-by-name aliases (snake_case fields), `StrEnum` enums with enum-member defaults —
the options chosen so the module is `mypy --strict` clean and needs only pydantic.

Class names are ours, not the library's: `class_names` maps each component schema name to
the identifier the generator picked (see `class_names.model_class_names`), and is passed as
`model_name_map`, so templates know every model's name without reading the output. An inline
model that would take a component's name (Stripe's `anyOf: [string, $ref: balance_transaction]`
under a property called `balance_transaction`) is called `<Name>Inline` instead.

Speed (the models step is most of `apiforge generate`'s time on a big spec):

- inside `preloaded(source, data)` (what `apiforge generate` uses) the already-parsed document
  is handed to the library as a dict, never re-read from disk; only `components/schemas` (and
  whatever they `$ref` elsewhere in the document) go in, with each schema already under a
  name made of its class name (below), so names like Stripe's `checkout.session` cannot
  become sub-modules;
- the library's own formatter is off: the writer runs ruff on `models.py` anyway;
- the result is cached by content: in process (the server and the client ask for the same
  module) and on disk under `generator.spec.load.cache_dir()`. The key is the SHA-256 of the
  schema subset as the library receives it, the header, every option, and the versions of
  apiforge and datamodel-code-generator — everything the output depends on — so a hit is
  byte-for-byte what a fresh run would give and a changed schema can never be served stale;
- schema `description`s do reach the output (`Field(description=...)`, even with the
  library's `use_*_description` options off), but only as copied text: the library is given
  numbered placeholders instead (`subset.Placeholders`; equal texts, equal
  placeholders; presence and blank texts kept), and the real texts are written over the placeholders' literals afterwards, spelled
  by the library's own literal writer. So the key does not cover description texts, and
  editing one (the most common change to a big spec) is a cache hit: milliseconds instead of
  a run of the library (~10 s on Stripe). Output that holds a placeholder anywhere else than
  as a whole literal is not used: the run is redone with the real texts.
  `bench/models_equality.py` checks over the corpus that both ways give the same bytes.
  Other keywords stay: `title`, `example(s)`, `deprecated`, `externalDocs` reach the output
  too, the library decides things on the mere presence of `readOnly`/`writeOnly` and of
  extension keys, and reads several `x-` extensions;
- the library's run pauses the cyclic garbage collector (`_collector_paused`).

Operations' inline object schemas (`inline`) go into the subset too, after the
component schemas, each under its class name like them; `class_names` has them under their
JSON pointer (`#/paths/...`), and their data is read from the document there.

The subset is built by `subset.schema_subset`. Schemas sit in it under their class
name with the first letter made lower case (`Widget` → `widget`; the library makes the same
class name of either). The library matches a
`model_name_map` key by a model's generated name *and* by the name it was derived from, and
models made inside component `Widget` (its `oneOf` members, ...) are derived from the name the
schema sits under: under `Widget` itself, each of them would match the `Widget` →
`WidgetInline` key, and the second one would fail the run ("already used"). Discriminator
mappings follow the renamed schemas, and a subtype a mapping leaves out is added to it under
its name in the document: that name is its discriminator value (OpenAPI), which the library
would otherwise take from the name in the subset. Instance data (`default`, `example(s)`,
`enum`, `const`) is copied as written.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.forked import Forked
from generator.installed import installed_version
from generator.ir import Schema
from generator.log import logger
from generator.models.constraints import (
    CONSTRAINT_KEYS,
    constraint_problem,
    default_problem,
    schema_nodes,
)
from generator.models.format_checks import (
    format_checks,
    format_checks_in_text,
    type_mappings,
)
from generator.models.inline import ModelSchemas, inline_digest
from generator.models.isolation import left_out, refs_located
from generator.models.regex_engines import Dropped, drop_unrunnable_patterns, pattern_locations
from generator.models.subset import (
    PLACEHOLDER,
    SCHEMAS_PREFIX,
    Placeholders,
    restore_descriptions,
    schema_subset,
    subset_name,
    unescape_token,
)
from generator.schemas import is_inline_key
from generator.spec.load import remembered
from generator.spec.located import warn_at

_log = logger()

# Bump when anything here changes what the library is asked for (the cache key has it too).
_MODELS_VERSION = "18"
_CACHE_KIND = "models" + _MODELS_VERSION
_RESTORED_KIND = "modelstext" + _MODELS_VERSION  # the module with its descriptions restored
_KEYS_KIND = "modelkeys" + _MODELS_VERSION  # a known document's job key and texts
_memo: dict[str, str] = {}
# the patterns `generate_models` left out of a module, by the SHA-256 of the module's text
_dropped_memo: dict[str, tuple[Dropped, ...]] = {}
_names_memo: dict[str, frozenset[str]] = {}
_NAMES_CACHE_KIND = "modelnames1"


@dataclass(frozen=True)
class _Preloaded:
    source: Path | str
    data: Any
    # SHA-256 of the document's text, and of its `components` entry's text when the loader
    # knows it (`Document.entry_digest`): what `key` recognises a document by
    digest: str | None = None
    components_digest: str | None = None
    # the jobs made from `data` (by class names and header): the prefetch and the request
    # after it would otherwise each build the subset and hash it (~0.3 s on Stripe)
    jobs: dict[tuple[Any, ...], _Job | None] = field(default_factory=dict)
    # the keys found (the prefetch and the request after it ask for the same one; finding it
    # may hash the lifted inline schemas, ~50 ms on Stripe)
    keys: dict[tuple[Any, ...], _Key | None] = field(default_factory=dict)

    def job(self, class_names: Mapping[str, str], header: str) -> _Job | None:
        key = (tuple(class_names.items()), header)
        if key not in self.jobs:
            self.jobs[key] = _job(self.data, class_names, header)
        return self.jobs[key]

    def key(self, class_names: Mapping[str, str], header: str) -> _Key | None:
        """`_find_key`, once per class names and header."""
        asked = (tuple(class_names.items()), header)
        if asked not in self.keys:
            self.keys[asked] = self._find_key(class_names, header)
        return self.keys[asked]

    def _find_key(self, class_names: Mapping[str, str], header: str) -> _Key | None:
        """The job's cache key and description texts. A document (or a `components` entry)
        whose text was seen before with these class names and header gets them from the
        cache, without building the subset (0.15 s of a Stripe regeneration): equal text
        means equal data, and the lookup's key also covers apiforge's code and the library's
        version. A subset that takes anything from outside `components` is never recognised
        by `components` alone."""
        from generator.render.fingerprint import code_digest
        from generator.spec.load import cache_get, cache_put

        def lookup(kind: str, digest: str) -> str:
            material = (
                kind,
                digest,
                self.data.get("openapi") if isinstance(self.data, Mapping) else None,
                format_checks(self.data),  # a top-level switch, outside `components`
                code_digest(),
                _library_version(),
                header,
                tuple(class_names.items()),
            )
            return hashlib.sha256(repr(material).encode("utf-8", "surrogatepass")).hexdigest()

        def components() -> str | None:
            # the operations' inline schemas the models step lifts are outside `components`:
            # their data is part of the identity (a repr: ~30 ms on Stripe, so only when the
            # document itself is not known)
            if self.components_digest is None:
                return None
            if not any(is_inline_key(k) for k in class_names):
                return self.components_digest
            return f"{self.components_digest}:{inline_digest(self.data, class_names)}"

        def document() -> str | None:
            return self.digest

        lookups: dict[str, str] = {}
        for kind, digest in (("document", document), ("components", components)):
            identity = digest()
            if identity is None:
                continue
            lookups[kind] = lookup(kind, identity)
            hit = cache_get(_KEYS_KIND, lookups[kind])
            if (
                isinstance(hit, tuple)
                and len(hit) == 2
                and isinstance(hit[0], str)
                and isinstance(hit[1], tuple)
                and all(isinstance(t, str) for t in hit[1])
            ):
                return _Key(hit[0], hit[1])
        job = self.job(class_names, header)
        if job is None:
            return None
        outside = set(job.subset) - {"openapi", "components"}
        for kind, known in lookups.items():
            if kind == "document" or not outside:
                cache_put(_KEYS_KIND, known, (job.key, job.descriptions))
        return _Key(job.key, job.descriptions)


@dataclass(frozen=True)
class _Key:
    """What finds a run's output in the caches: its key and the texts of its placeholders."""

    key: str
    descriptions: tuple[str, ...]


_preloaded: ContextVar[_Preloaded | None] = ContextVar("apiforge_models_preloaded", default=None)


@contextlib.contextmanager
def preloaded(
    source: Path | str,
    data: Any,
    *,
    digest: str | None = None,
    components_digest: str | None = None,
) -> Iterator[None]:
    """Within this block, `generate_models(source, ...)` uses `data` (the already-parsed root
    document of `source`) instead of reading `source` again, and caches its result. `digest`
    (of the document's text) and `components_digest` (of its `components` entry's text) let
    a document seen before skip building the schema subset (`_Preloaded.key`)."""
    token = _preloaded.set(_Preloaded(source, data, digest, components_digest))
    try:
        yield
    finally:
        _preloaded.reset(token)


def clear_memo() -> None:
    """Forget the in-process results (tests; the on-disk cache is `cache_dir()`)."""
    _memo.clear()
    _names_memo.clear()
    _dropped_memo.clear()


def defined_names(models_source: str) -> frozenset[str]:
    """The names a models module defines at its top level (classes, assignments), which the
    server and client plans check references against. Parsing Stripe's 1.5 MB module takes
    ~1 s, so the answer is kept by the SHA-256 of the text: in process (the server and the
    client ask for the same module) and on disk (a regeneration whose models did not change).
    The key is the whole text, so a changed module can never get another module's names."""
    key = hashlib.sha256(models_source.encode("utf-8", "surrogatepass")).hexdigest()
    names = remembered(
        _names_memo, _NAMES_CACHE_KIND, key, frozenset, lambda: _top_level_names(models_source)
    )
    assert names is not None  # `_top_level_names` always gives them (or raises)
    return names


def _top_level_names(models_source: str) -> frozenset[str]:
    import ast

    from generator.spec.load import gc_paused

    found: set[str] = set()
    try:
        # the collector would re-scan the whole parsed spec for every batch of AST nodes
        # (1.1 s instead of 0.3 s on Stripe's module, on the critical path of a cold run)
        with gc_paused():
            tree = ast.parse(models_source)
    except SyntaxError as exc:  # the library wrote something that is not Python
        raise ApiforgeError(
            Problem(
                f"the generated models module is not valid Python (line {exc.lineno}: "
                f"{exc.msg}): {(exc.text or '').strip()[:200]}"
            ),
            "check the schemas under components/schemas (datamodel-code-generator "
            "could not handle them)",
        ) from exc
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return frozenset(found)


def generate_models(
    source: Path | str,
    *,
    class_names: Mapping[str, str] | None = None,
    header: str = "",
) -> str:
    """The models module for the spec at `source` (a path, so relative `$ref`s resolve, or the
    spec's text), without the patterns its regex engines would reject at import
    (`warn_unenforced` names them). Raises ApiforgeError when the library cannot
    handle the schemas."""
    text = _library_module(source, class_names=class_names, header=header)
    fixed, dropped = drop_unrunnable_patterns(text)
    if dropped:
        _dropped_memo[hashlib.sha256(fixed.encode("utf-8", "surrogatepass")).hexdigest()] = dropped
    return fixed


def warn_unenforced(api_schemas: Mapping[str, Schema], models_text: str) -> None:
    """Say, where the spec writes it, each constraint the models do not enforce because
    pydantic would refuse it at import: a pattern `generate_models` left out of `models_text`
    (its regex engine rejects it), a value `schema_subset` left out (`constraints`)."""
    key = hashlib.sha256(models_text.encode("utf-8", "surrogatepass")).hexdigest()
    dropped = _dropped_memo.get(key, ())
    locations = pattern_locations(api_schemas) if dropped else {}
    for item in dropped:
        message = item.message()
        for where in locations.get(item.pattern) or ():
            warn_at(where, message)
        if not locations.get(item.pattern):
            _log.warning("warning: %s", message)

    def component_schema(ref: str) -> Mapping[str, Any] | None:
        found = api_schemas.get(unescape_token(ref[len(SCHEMAS_PREFIX) :]))
        return found.data if found is not None and ref.startswith(SCHEMAS_PREFIX) else None

    for node, at, path in schema_nodes(api_schemas):
        if default_problem(node, component_schema):
            warn_at(
                at.child(*path, "default"),
                f"the default {str(node['default'])[:60]!r} is left out of the models: it is "
                "not a value of its own schema",
            )
        for constraint in sorted(CONSTRAINT_KEYS.intersection(node)):
            reason = constraint_problem(node, constraint)
            if reason:
                warn_at(
                    at.child(*path, constraint),
                    f"`{constraint}: {str(node[constraint])[:40]}` is not enforced by the "
                    f"models: pydantic refuses it ({reason})",
                )


def _library_module(
    source: Path | str,
    *,
    class_names: Mapping[str, str] | None = None,
    header: str = "",
) -> str:
    """The library's module for `generate_models` (from the caches, or a run)."""
    pre = _preloaded.get()
    if pre is not None and pre.source != source:
        pre = None
    found = None if pre is None or class_names is None else pre.key(class_names, header)
    # operations' inline schemas (`inline`) are not in what the library reads of a
    # file (`components/schemas`): they go in from the parsed document
    inline = pre is None and any(is_inline_key(k) for k in class_names or ())
    if (pre is None or found is None or class_names is None) and not inline:
        # the library reads the file itself, uncached
        options = _options(
            class_names or {},
            header,
            openapi_30=declares_30(source),
            checks=format_checks_in_text(_text_of(source)),
        )
        try:
            return _run(source, options)
        except ApiforgeError:
            if pre is not None or class_names is None or not isinstance(source, Path):
                raise
        # a schema it cannot take: again from the parsed document, which leaves such
        # schemas out (`_run`, `isolation`)
    if pre is None:
        from generator.spec.load import load_document, parse_document

        document = (
            load_document(str(source))
            if isinstance(source, Path)
            else parse_document("<spec>", None, source.encode("utf-8", "surrogatepass"))
        )
        with preloaded(source, document.data):
            return _library_module(source, class_names=class_names, header=header)
    if found is None or class_names is None:  # (a subset the library must read from files)
        options = _options(
            class_names or {},
            header,
            openapi_30=declares_30(source),
            checks=format_checks(pre.data),
        )
        return _run(source, options)
    data, names = pre.data, class_names

    def job() -> _Job:  # built only when no cache has the module
        made = pre.job(names, header)
        assert made is not None and made.key == found.key  # the same data, the same job
        return made

    text = _restored_run(found, lambda: _module(found.key, job))
    if text is None:  # a placeholder the library wrote otherwise than as a whole literal
        full = _job(data, class_names, header, placeholders=False)
        assert full is not None  # the same subset as `job`'s, with the real texts
        text = _module(full.key, lambda: full)
    return text


@dataclass(frozen=True)
class _Job:
    """One run of the library: its input, its options, its cache key, and the description
    texts its placeholders stand for (empty: the subset holds the real texts)."""

    subset: dict[str, Any]
    options: dict[str, Any]
    key: str
    descriptions: tuple[str, ...]


def _job(
    data: Any, class_names: Mapping[str, str], header: str, *, placeholders: bool = True
) -> _Job | None:
    texts = Placeholders() if placeholders else None
    subset = schema_subset(data, class_names, placeholders=texts)
    if subset is None:
        return None
    if texts is not None and texts.placed and repr(subset).count(PLACEHOLDER) != texts.placed:
        # the document itself spells a placeholder somewhere: the real texts go in
        return _job(data, class_names, header, placeholders=False)
    openapi_30 = isinstance(data, Mapping) and str(data.get("openapi", "")).startswith("3.0")
    options = _options(
        {subset_name(v): v for v in class_names.values()},
        header,
        openapi_30=openapi_30,
        checks=format_checks(data),
    )
    texts_ = tuple(texts.texts) if texts is not None else ()
    return _Job(subset, options, models_cache_key(subset, options), texts_)


def _module(key: str, job: Callable[[], _Job]) -> str:
    """The library's module for the run `key`: from memory, the cache, or `job()` run."""

    def run() -> str:
        made = job()
        return _run(made.subset, made.options)

    text = remembered(_memo, _CACHE_KIND, key, str, run)
    assert text is not None  # `run` always gives one (or raises)
    return text


def _restored_run(job: _Key, module: Callable[[], str]) -> str | None:
    """The module of `job` (`module()`: see `_module`) with its descriptions restored,
    itself cached by the run's key and the texts (an unchanged regeneration then never
    imports the library's literal writer); None when they cannot be restored."""
    if not job.descriptions:
        return module()
    return remembered(
        _memo,
        _RESTORED_KIND,
        _restored_key(job),
        str,
        lambda: restore_descriptions(module(), job.descriptions),
    )


def _restored_key(job: _Key) -> str:
    material = repr((job.key, job.descriptions)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(material).hexdigest()


class Prefetch:
    """The models module being generated in a forked process (see `prefetch_models`)."""

    def __init__(self, key: str, child: Forked[str]) -> None:
        self.key = key
        self._child = child

    def join(self) -> None:
        """Wait for the result and keep it (memory and disk cache); a failure in the child is
        left for the caller's own `generate_models` call to meet and report."""
        value = self._child.result()
        if isinstance(value, str):
            from generator.spec.load import cache_put

            _memo[self.key] = value
            cache_put(_CACHE_KIND, self.key, value)

    def cancel(self) -> None:
        self._child.cancel()


def prefetch_models(
    source: Path | str, *, class_names: Mapping[str, str], header: str = ""
) -> Prefetch | None:
    """Start `generate_models(source, ...)` in a forked process, so the caller can validate
    and lint meanwhile on another core; `join()` the handle before calling `generate_models`,
    which then answers from memory. None when there is nothing to start: the result is already
    cached, `source` is not preloaded, or this platform cannot fork."""
    pre = _preloaded.get()
    if pre is None or pre.source != source:
        return None
    found = pre.key(class_names, header)
    if found is None or found.key in _memo:
        return None
    from generator.spec.load import cache_has

    if cache_has(_CACHE_KIND, found.key) or (
        found.descriptions and cache_has(_RESTORED_KIND, _restored_key(found))
    ):
        return None  # `generate_models` reads it from the cache
    job = pre.job(class_names, header)
    if job is None:
        return None
    child = Forked.start(_run, job.subset, job.options)
    return None if child is None else Prefetch(job.key, child)


def models_cache_key(subset: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """SHA-256 of everything the models module depends on (see the module docstring)."""
    from generator import __version__

    material = repr(
        (
            _MODELS_VERSION,
            __version__,
            _library_version(),
            sorted((k, repr(v)) for k, v in options.items()),
            subset,
        )
    )
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def _library_version() -> str:
    return installed_version("datamodel_code_generator", "datamodel-code-generator")


def _options(
    name_map_by_name: Mapping[str, str],
    header: str,
    *,
    openapi_30: bool = False,
    checks: bool = True,
) -> dict[str, Any]:
    """The library's options, as plain data (its enums are made by `_run`: the cache key is
    computed without importing the library, ~0.1 s)."""
    name_map = {f"{SCHEMAS_PREFIX}{k}": v for k, v in sorted(name_map_by_name.items())}
    # An inline model the library would name like a component (Stripe: a property
    # `balance_transaction: anyOf: [string, $ref: balance_transaction]` makes a string model
    # `BalanceTransaction` before the component is reached) is renamed `<Name>Inline`, so the
    # component keeps the name the templates use. Keys that are class names match only models
    # that no schema path matched first.
    taken = set(name_map.values())
    for name in sorted(taken):
        inline = f"{name}Inline"
        while inline in taken:
            inline += "_"
        name_map.setdefault(name, inline)
    return {
        "input_file_type": "openapi",
        "output_model_type": "pydantic_v2.BaseModel",
        "target_python_version": "3.11",
        "openapi_scopes": ["schemas"],
        "use_annotated": True,
        "use_standard_collections": True,
        "use_union_operator": True,
        # OpenAPI 3.0's `nullable: true` admits null, also on a required member (`X | None`
        # without a default), where the library would type it `X`. Only for 3.0, which has
        # the keyword: the option also types a member with a `default` as not nullable.
        "strict_nullable": openapi_30,
        "field_constraints": True,
        "snake_case_field": True,
        "allow_population_by_field_name": True,
        "capitalise_enum_members": True,
        "set_default_enum_member": True,
        "use_double_quotes": True,
        "disable_timestamp": True,
        "enable_version_header": False,
        "use_schema_description": False,
        "use_field_description": False,
        # string formats as types, or all `str` (`format_checks`)
        "type_mappings": type_mappings(checks),
        "formatters": [],  # ruff formats models.py with the rest of the tree
        "model_name_map": name_map or None,
        "custom_file_header": header or None,
        "allow_remote_refs": False,
        **_remote_refs(),
    }


def _remote_refs() -> dict[str, Any]:
    """When the user allows remote `$ref`s, the library reads them from the files the
    resolver fetched (`generator.spec.remote`), never from the network itself."""
    from generator.spec import remote

    return {"http_local_ref_path": str(remote.mirror_dir())} if remote.allowed() else {}


def _library_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`_options` with the values the library wants as its enums made into them."""
    from datamodel_code_generator.enums import DataModelType, InputFileType, OpenAPIScope
    from datamodel_code_generator.format import PythonVersion

    return {
        **options,
        "input_file_type": InputFileType(options["input_file_type"]),
        "output_model_type": DataModelType(options["output_model_type"]),
        "target_python_version": PythonVersion(options["target_python_version"]),
        "openapi_scopes": [OpenAPIScope(scope) for scope in options["openapi_scopes"]],
        **(
            {"http_local_ref_path": Path(options["http_local_ref_path"])}
            if "http_local_ref_path" in options
            else {}
        ),
    }


def _run(source: Path | str | Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """The library's module for `source`; when the schemas are given as data (`_job`), one
    the library cannot take is left out of it (`isolation`) instead of stopping here."""
    from generator.models.isolation import isolate

    try:
        result = _library_run(source, options)
    except RecursionError:
        raise
    except Exception as exc:
        isolated = (
            isolate(source, options, exc, _library_run) if isinstance(source, Mapping) else None
        )
        if isolated is None:
            raise ApiforgeError(
                Problem(f"generating models from the schemas failed: {_first_line(exc)}"),
                "check the schemas under components/schemas (datamodel-code-generator could "
                "not handle them)",
            ) from exc
        result = isolated
    from generator.models.fixes import (
        builtin_generics,
        default_none_admits_none,
        listed_examples,
        parsed_defaults,
    )

    # (`default: null` beside a type without null: OpenAPI 3.0's `strict_nullable`, and 3.1's
    # `const` objects and arrays, which the library types without `| None`)
    return builtin_generics(listed_examples(parsed_defaults(default_none_admits_none(result))))


def _library_run(source: Path | str | Mapping[str, Any], options: Mapping[str, Any]) -> str:
    import datamodel_code_generator as dcg

    def call(opts: Mapping[str, Any]) -> Any:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stderr(io.StringIO()),
            _collector_paused(),
        ):
            warnings.simplefilter("ignore")
            with _in_folder_of(source):
                return dcg.generate(source, **_library_options(opts))

    try:
        result = call(options)
    except Exception as exc:
        # Two inline models that both want `<Name>Inline` (before schemas sat under their
        # `subset_name`, the oneOf members of Cloudflare's, just-eat's, ... components
        # did): without the inline renames the library numbers them itself; a component
        # that then loses its name is typed Any with a warning (models_for).
        narrowed = _without_inline_renames(options)
        if "already used" not in str(exc) or narrowed is None:
            raise
        result = call(narrowed)
    if not isinstance(result, str):
        raise ApiforgeError(Problem("generating models produced no single module"))
    return result


@contextlib.contextmanager
def _in_folder_of(source: Any) -> Iterator[None]:
    """In the folder of a spec given as text (`SpecText`: a Swagger 2.0 document's 3.0
    reading), for the run of the library: it reads the files the text's `$ref`s name from
    the working directory, and refuses any outside it (as it refuses those outside a spec
    file's folder)."""
    from generator.spec import SpecText

    folder = source.folder if isinstance(source, SpecText) else None
    if folder is None:
        yield
        return
    with contextlib.chdir(folder):
        yield


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off during a run of the library. The library already
    raises the young generation's threshold for its run; its older collections still
    re-scan everything alive, the forked child's copy of the parsed spec included, for
    little: what the run builds mostly lives until it ends. The garbage the run leaves is
    collected as usual afterwards. Measured on Cloudflare's spec (the models child of
    `apiforge generate`): CPU 27.9 → 24.8 s, peak RSS 258 → 275 MB."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _without_inline_renames(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """`options` with only the schema-path keys of the name map, or None when it had no
    other keys (see `_options`)."""
    name_map = options.get("model_name_map") or {}
    by_path = {k: v for k, v in name_map.items() if k.startswith(SCHEMAS_PREFIX)}
    if len(by_path) == len(name_map):
        return None
    return {**options, "model_name_map": by_path or None}


_OPENAPI_30 = re.compile(r"""(?:^|[{,\s])["']?openapi["']?\s*:\s*["']?3\.0""")


def declares_30(source: Path | str) -> bool:
    """Whether the document at `source` (a path, or the spec's text) is OpenAPI 3.0."""
    return _OPENAPI_30.search(_text_of(source)) is not None


def _text_of(source: Path | str) -> str:
    """The spec's text (`source`: a path, or the text itself; "" when it cannot be read)."""
    if isinstance(source, Path):
        try:
            return source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
    return source


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]


def models_for(
    models: ModelSchemas, source: Path | str, *, marker: str, used_in: str
) -> tuple[str, dict[str, str]]:
    """The text of `models.py` for a plan, and the schema → class map of the classes it really
    defines. A schema the library named or merged differently is typed `Any` where it is
    used (`used_in` says where), and said as a warning — never dropped silently."""
    api_schemas, classes = models.schemas, dict(models.class_names)
    if api_schemas:
        with refs_located(api_schemas):
            source_text = generate_models(source, class_names=classes, header=marker)
    else:  # datamodel-code-generator refuses a spec without component schemas
        source_text = f'{marker}\n"""The spec declares no component schemas."""\n'
    warn_unenforced(api_schemas, source_text)
    warn_missing_classes(classes, source_text, used_in, api_schemas)
    return source_text, usable_classes(classes, source_text)


def usable_classes(class_names: Mapping[str, str], models_text: str) -> dict[str, str]:
    """The schema → class map of the classes `models_text` really defines for its schema (a
    schema the models step left out has a class of Any only: it is typed Any instead)."""
    defined = defined_names(models_text)
    omitted = {_class_of(name) for name in left_out(models_text)}
    return {k: v for k, v in class_names.items() if v in defined and v not in omitted}


def _class_of(subset_name: str) -> str:
    return subset_name[:1].upper() + subset_name[1:]  # (see `subset_name`)


def warn_missing_classes(
    class_names: Mapping[str, str],
    models_text: str,
    used_in: str,
    schemas: Mapping[str, Schema] | None = None,
) -> None:
    """Say, for each class `models_text` lacks (or has only as Any: a schema the library could
    not take), that its schema is typed Any in `used_in`; at the schema, given `schemas`."""
    defined = defined_names(models_text)
    omitted = {_class_of(name): reason for name, reason in left_out(models_text).items()}
    for name, cls in sorted(class_names.items()):
        schema = schemas.get(name) if schemas is not None else None
        # (an operation's inline schema is named by its model: the location says where it is)
        label = f"the inline schema of model {cls}" if is_inline_key(name) else f"schema {name!r}"
        if cls in omitted:
            message = (
                f"{label} is left out of models.py: datamodel-code-generator could not "
                f"take it ({omitted[cls]}); it is typed Any in the {used_in}"
            )
            if schema is not None:
                warn_at(schema.where, message)
            else:
                _log.warning("warning: %s", message)
        elif cls not in defined:
            message = (
                f"{label} has no class {cls} in models.py (datamodel-code-generator named or "
                f"merged it differently); it is typed Any in the {used_in}"
            )
            if schema is not None and is_inline_key(name):
                warn_at(schema.where, message)
            else:
                _log.warning("warning: %s", message)
