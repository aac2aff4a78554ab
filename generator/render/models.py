"""Component schemas → Pydantic v2 models, through datamodel-code-generator's public API.

`generate_models(source, class_names=..., header=...)` gives the text of one `models.py`:
Pydantic v2 `BaseModel`s for Python 3.11, `Annotated` constraints, `X | None` unions,
populate-by-name aliases (snake_case fields), `StrEnum` enums with enum-member defaults —
the options chosen so the module is `mypy --strict` clean and needs only pydantic.

Class names are ours, not the library's: `class_names` maps each component schema name to
the identifier the generator picked (see `model_class_names`), and is passed as
`model_name_map`, so templates know every model's name without reading the output. An inline
model that would take a component's name (Stripe's `anyOf: [string, $ref: balance_transaction]`
under a property called `balance_transaction`) is called `<Name>Inline` instead.

Speed (the models step is most of `apiforge generate`'s time on a big spec):

- inside `preloaded(source, data)` (what `apiforge generate` uses) the already-parsed document
  is handed to the library as a dict, never re-read from disk; only `components/schemas` (and
  whatever they `$ref` elsewhere in the document) go in, with each schema already under its
  class name, so names like Stripe's `checkout.session` cannot become sub-modules;
- the library's own formatter is off: the writer runs ruff on `models.py` anyway;
- the result is cached by content: in process (the server and the client ask for the same
  module) and on disk under `generator.spec.load.cache_dir()`. The key is the SHA-256 of the
  schema subset as the library receives it, the header, every option, and the versions of
  apiforge and datamodel-code-generator — everything the output depends on — so a hit is
  byte-for-byte what a fresh run would give and a changed schema can never be served stale.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from generator.errors import ApiforgeError, Problem
from generator.render.names import NameAllocator, pascal_case

_log = logging.getLogger("apiforge")

# `format`s that would need packages beyond pydantic (email-validator): plain strings.
_TYPE_MAPPINGS = ["email=string", "idn-email=string"]
# Bump when anything here changes what the library is asked for (the cache key has it too).
_MODELS_VERSION = "2"
_CACHE_KIND = "models" + _MODELS_VERSION
_SCHEMAS_PREFIX = "#/components/schemas/"
_memo: dict[str, str] = {}
_names_memo: dict[str, frozenset[str]] = {}
_NAMES_CACHE_KIND = "modelnames1"


@dataclass(frozen=True)
class _Preloaded:
    source: Path | str
    data: Any


_preloaded: ContextVar[_Preloaded | None] = ContextVar("apiforge_models_preloaded", default=None)


@contextlib.contextmanager
def preloaded(source: Path | str, data: Any) -> Iterator[None]:
    """Within this block, `generate_models(source, ...)` uses `data` (the already-parsed root
    document of `source`) instead of reading `source` again, and caches its result."""
    token = _preloaded.set(_Preloaded(source, data))
    try:
        yield
    finally:
        _preloaded.reset(token)


def clear_memo() -> None:
    """Forget the in-process results (tests; the on-disk cache is `cache_dir()`)."""
    _memo.clear()
    _names_memo.clear()


def defined_names(models_source: str) -> frozenset[str]:
    """The names a models module defines at its top level (classes, assignments), which the
    server and client plans check references against. Parsing Stripe's 1.5 MB module takes
    ~1 s, so the answer is kept by the SHA-256 of the text: in process (the server and the
    client ask for the same module) and on disk (a regeneration whose models did not change).
    The key is the whole text, so a changed module can never get another module's names."""
    import ast

    key = hashlib.sha256(models_source.encode("utf-8", "surrogatepass")).hexdigest()
    names = _names_memo.get(key)
    if names is not None:
        return names
    from generator.spec.load import cache_get, cache_put

    hit = cache_get(_NAMES_CACHE_KIND, key)
    if isinstance(hit, frozenset):
        names = hit
    else:
        found: set[str] = set()
        for node in ast.parse(models_source).body:
            if isinstance(node, ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.Assign):
                found.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.add(node.target.id)
        names = frozenset(found)
        cache_put(_NAMES_CACHE_KIND, key, names)
    _names_memo[key] = names
    return names


def model_class_names(schema_names: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A stable, unique PascalCase class name for each component schema name (sorted order)."""
    allocator = NameAllocator(reserved, separator="")
    return {
        name: allocator.allocate(name, pascal_case(name, fallback="Model"))
        for name in sorted(schema_names)
    }


def generate_models(
    source: Path | str,
    *,
    class_names: Mapping[str, str] | None = None,
    header: str = "",
) -> str:
    """The models module for the spec at `source` (a path, so relative `$ref`s resolve, or the
    spec's text). Raises ApiforgeError when the library cannot handle the schemas."""
    pre = _preloaded.get()
    subset = None
    if pre is not None and pre.source == source and class_names is not None:
        subset = schema_subset(pre.data, class_names)
    if subset is None or class_names is None:  # the library reads the file itself, uncached
        return _run(source, _options(class_names or {}, header))
    names = {v: v for v in class_names.values()}  # the schemas are already under their names
    options = _options(names, header)
    key = models_cache_key(subset, options)
    cached = _memo.get(key)
    if cached is None:
        from generator.spec.load import cache_get, cache_put

        hit = cache_get(_CACHE_KIND, key)
        cached = hit if isinstance(hit, str) else None
        if cached is None:
            cached = _run(subset, options)
            cache_put(_CACHE_KIND, key, cached)
        _memo[key] = cached
    return cached


class Prefetch:
    """The models module being generated in a forked process (see `prefetch_models`)."""

    def __init__(self, key: str, process: Any, conn: Any) -> None:
        self.key = key
        self._process = process
        self._conn = conn

    def join(self) -> None:
        """Wait for the result and keep it (memory and disk cache); a failure in the child is
        left for the caller's own `generate_models` call to meet and report."""
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            kind, value = "error", None
        finally:
            self._conn.close()
            self._process.join()
        if kind == "ok" and isinstance(value, str):
            from generator.spec.load import cache_put

            _memo[self.key] = value
            cache_put(_CACHE_KIND, self.key, value)

    def cancel(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._conn.close()


def _prefetch_child(conn: Any, subset: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    try:
        conn.send(("ok", _run(subset, options)))
    except BaseException as exc:  # reported again, in the parent, by generate_models
        conn.send(("error", str(exc)))
    finally:
        conn.close()


def prefetch_models(
    source: Path | str, *, class_names: Mapping[str, str], header: str = ""
) -> Prefetch | None:
    """Start `generate_models(source, ...)` in a forked process, so the caller can validate
    and lint meanwhile on another core; `join()` the handle before calling `generate_models`,
    which then answers from memory. None when there is nothing to start: the result is already
    cached, `source` is not preloaded, or this platform cannot fork."""
    import multiprocessing

    pre = _preloaded.get()
    if pre is None or pre.source != source:
        return None
    subset = schema_subset(pre.data, class_names)
    if subset is None:
        return None
    options = _options({v: v for v in class_names.values()}, header)
    key = models_cache_key(subset, options)
    if key in _memo:
        return None
    from generator.spec.load import cache_get

    hit = cache_get(_CACHE_KIND, key)
    if isinstance(hit, str):
        _memo[key] = hit
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_prefetch_child, args=(child, subset, options), daemon=True)
    process.start()
    child.close()
    return Prefetch(key, process, parent)


def models_cache_key(subset: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """SHA-256 of everything the models module depends on (see the module docstring)."""
    from importlib.metadata import version

    from generator import __version__

    material = repr(
        (
            _MODELS_VERSION,
            __version__,
            version("datamodel-code-generator"),
            sorted((k, repr(v)) for k, v in options.items()),
            subset,
        )
    )
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def schema_subset(data: Any, class_names: Mapping[str, str]) -> dict[str, Any] | None:
    """What the library needs of the document `data`: `openapi`, each component schema under
    its class name (`$ref`s rewritten to match), and any other part of the document those
    schemas point into. None when a schema points into another file (the library must read
    the files itself then) or the document is not shaped as expected."""
    if not isinstance(data, Mapping):
        return None
    components = data.get("components")
    schemas = components.get("schemas") if isinstance(components, Mapping) else None
    if not isinstance(schemas, Mapping) or set(schemas) != set(class_names):
        return None
    if len(set(class_names.values())) != len(class_names):
        return None
    external = False
    wanted: list[tuple[str, ...]] = []  # other parts of the document the schemas point into

    def ref(value: str) -> str:
        nonlocal external
        if not value.startswith("#"):
            external = True
            return value
        if value.startswith(_SCHEMAS_PREFIX):
            head, sep, rest = value[len(_SCHEMAS_PREFIX) :].partition("/")
            name = unquote(head).replace("~1", "/").replace("~0", "~")
            if name in class_names:
                return _SCHEMAS_PREFIX + quote(class_names[name], safe="") + sep + rest
            return value
        tokens = tuple(
            unquote(t).replace("~1", "/").replace("~0", "~") for t in value[2:].split("/")
        )
        if tokens and tokens[0]:
            # the whole section (`components/parameters`, `paths`, ...): pointers stay valid
            wanted.append(tokens[:2] if tokens[0] == "components" else tokens[:1])
        return value

    def copy(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (ref(v) if k == "$ref" and isinstance(v, str) else copy(v))
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [copy(v) for v in node]
        return node

    subset: dict[str, Any] = {"openapi": data.get("openapi", "3.1.0")}
    parts: dict[str, Any] = {"schemas": {class_names[k]: copy(v) for k, v in schemas.items()}}
    done: set[tuple[str, ...]] = set()
    while wanted:
        path = wanted.pop()
        if path in done or path == ("components", "schemas"):
            continue
        done.add(path)
        node: Any = data
        for token in path:
            node = node.get(token) if isinstance(node, Mapping) else None
        if node is None:
            continue  # a dangling pointer: the library reports it
        if path[0] == "components":
            parts[path[1]] = copy(node)
        else:
            subset[path[0]] = copy(node)
    if external:
        return None
    subset["components"] = parts
    return subset


def _options(name_map_by_name: Mapping[str, str], header: str) -> dict[str, Any]:
    from datamodel_code_generator.enums import DataModelType, InputFileType, OpenAPIScope
    from datamodel_code_generator.format import PythonVersion

    name_map = {f"{_SCHEMAS_PREFIX}{k}": v for k, v in sorted(name_map_by_name.items())}
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
        "input_file_type": InputFileType.OpenAPI,
        "output_model_type": DataModelType.PydanticV2BaseModel,
        "target_python_version": PythonVersion.PY_311,
        "openapi_scopes": [OpenAPIScope.Schemas],
        "use_annotated": True,
        "use_standard_collections": True,
        "use_union_operator": True,
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
        "type_mappings": _TYPE_MAPPINGS,
        "formatters": [],  # ruff formats models.py with the rest of the tree
        "model_name_map": name_map or None,
        "custom_file_header": header or None,
        "allow_remote_refs": False,
    }


def _run(source: Path | str | Mapping[str, Any], options: Mapping[str, Any]) -> str:
    import datamodel_code_generator as dcg

    def call(opts: Mapping[str, Any]) -> Any:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            return dcg.generate(source, **opts)

    try:
        try:
            result = call(options)
        except Exception as exc:
            # Two inline models that both want `<Name>Inline` (Cloudflare's oneOf members):
            # without the inline renames the library numbers them itself; a component that then
            # loses its name is typed Any with a warning (models_for), never dropped silently.
            narrowed = _without_inline_renames(options)
            if "already used" not in str(exc) or narrowed is None:
                raise
            result = call(narrowed)
    except RecursionError:
        raise
    except Exception as exc:
        raise ApiforgeError(
            Problem(f"generating models from the schemas failed: {_first_line(exc)}"),
            "check the schemas under components/schemas (datamodel-code-generator could "
            "not handle them)",
        ) from exc
    if not isinstance(result, str):
        raise ApiforgeError(Problem("generating models produced no single module"))
    return result


def _without_inline_renames(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """`options` with only the schema-path keys of the name map, or None when it had no
    other keys (see `_options`)."""
    name_map = options.get("model_name_map") or {}
    by_path = {k: v for k, v in name_map.items() if k.startswith(_SCHEMAS_PREFIX)}
    if len(by_path) == len(name_map):
        return None
    return {**options, "model_name_map": by_path or None}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]


def models_for(
    api_schemas: Mapping[str, Any], source: Path | str, *, marker: str, used_in: str
) -> tuple[str, dict[str, str]]:
    """The text of `models.py` for a plan, and the schema → class map of the classes it really
    defines. A schema the library named or merged differently is typed `Any` where it is
    used (`used_in` says where), and said as a warning — never dropped silently."""
    classes = model_class_names(api_schemas)
    if api_schemas:
        source_text = generate_models(source, class_names=classes, header=marker)
    else:  # datamodel-code-generator refuses a spec without component schemas
        source_text = f'{marker}\n"""The spec declares no component schemas."""\n'
    defined = defined_names(source_text)
    for name, cls in sorted(classes.items()):
        if cls not in defined:
            _log.warning(
                "warning: schema %r has no class %s in models.py (datamodel-code-generator "
                "named or merged it differently); it is typed Any in the %s",
                name,
                cls,
                used_in,
            )
    return source_text, {k: v for k, v in classes.items() if v in defined}
