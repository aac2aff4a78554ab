"""Reading one spec file: bytes → JSON-like data, with clear errors and a parse cache.

YAML is read with PyYAML's safe loader (the C one when available) so the data is exactly
what the rest of the ecosystem sees, but faster and only once: libyaml composes the node tree
(with the implicit-tag resolution memoised), a tight loop constructs the plain str/map/seq
nodes and hands every other tag to PyYAML's own `SafeConstructor`, and the node tree is kept
so the source map is built from the same parse, lazily, when a message needs a location.
`bench/yaml_equality.py` proves the data equal to `yaml.load(..., CSafeLoader)` over the
whole corpus. Parsing runs with the cyclic garbage collector paused: it only allocates
acyclic data, and collections over the growing tree were most of PyYAML's time. Big files
are cached by content hash: the Stripe YAML takes ~0.6 s to parse and 0.05 s to unpickle.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import sys
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import GeneratorType
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.errors import ApiforgeError, Problem

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it

MAX_SPEC_BYTES = int(os.environ.get("APIFORGE_MAX_SPEC_BYTES", 32 * 1024 * 1024))
CACHE_MIN_BYTES = 256 * 1024  # smaller files parse faster than a cache lookup pays off
_CACHE_VERSION = "1"


def cache_dir() -> Path | None:
    """Where parsed specs and source maps are kept, or None when caching is off."""
    if os.environ.get("APIFORGE_NO_CACHE"):
        return None
    base = os.environ.get("APIFORGE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "apiforge"


def cache_get(kind: str, digest: str) -> Any | None:
    root = cache_dir()
    if root is None:
        return None
    try:
        with open(root / kind / f"{digest}.pickle", "rb") as fh, gc_paused():
            return pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
        return None


def cache_put(kind: str, digest: str, value: Any) -> None:
    root = cache_dir()
    if root is None:
        return
    folder = root / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{digest}.pickle")
    except OSError:
        pass  # a cache that cannot be written is only slower


@dataclass(eq=False)
class Document:
    """One parsed file. `name` is how messages show it (the path as given)."""

    name: str
    path: Path | None  # None for stdin
    text: bytes
    data: Any
    is_json: bool
    digest: str
    _source_map: Any = field(default=None, repr=False)
    # the YAML node tree this document was constructed from (see `YamlTree`), kept until the
    # source map is built from it; None for JSON, cached parses and after that
    _yaml_tree: Any = field(default=None, repr=False)

    def locate(self, pointer: str) -> tuple[int, int]:
        """1-based line and column of the node at `pointer` (or its nearest ancestor)."""
        from generator.spec.sourcemap import SourceMap

        if self._source_map is None:
            self._source_map = SourceMap.for_document(self)
        result: tuple[int, int] = self._source_map.locate(pointer)
        return result


def read_source(source: str) -> tuple[str, Path | None, bytes]:
    """Read a spec path (or "-" for stdin), refusing what cannot be a spec."""
    if source == "-":
        return "<stdin>", None, sys.stdin.buffer.read(MAX_SPEC_BYTES + 1)
    path = Path(source)
    if not path.exists():
        raise ApiforgeError(Problem(f"no such file: {source}"), "check the path to the spec")
    if path.is_dir():
        raise ApiforgeError(
            Problem(f"{source} is a directory"), "point at the spec's root file (e.g. openapi.yaml)"
        )
    size = path.stat().st_size
    if size > MAX_SPEC_BYTES:
        raise ApiforgeError(
            Problem(
                f"{source} is {size / 1e6:.1f} MB, over the {MAX_SPEC_BYTES / 1e6:.0f} MB limit"
            ),
            "split the spec into files joined by $ref, or raise APIFORGE_MAX_SPEC_BYTES",
        )
    try:
        return source, path, path.read_bytes()
    except OSError as exc:
        raise ApiforgeError(Problem(f"cannot read {source}: {exc.strerror}")) from None


def parse_document(name: str, path: Path | None, text: bytes) -> Document:
    if len(text) > MAX_SPEC_BYTES:
        raise ApiforgeError(Problem(f"{name} is over the {MAX_SPEC_BYTES / 1e6:.0f} MB limit"))
    if not text.strip():
        raise ApiforgeError(
            Problem("the file is empty", file=name),
            "an OpenAPI document starts with `openapi: 3.1.0`",
        )
    if b"\x00" in text:
        raise ApiforgeError(
            Problem("the file is binary, not YAML or JSON (it contains NUL bytes)", file=name)
        )
    try:
        decoded = text.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = text[: exc.start].count(b"\n") + 1
        raise ApiforgeError(
            Problem(f"not UTF-8 text (byte {exc.start})", file=name, line=line),
            "save the spec as UTF-8",
        ) from None
    digest = hashlib.sha256(text).hexdigest()
    is_json = decoded.lstrip().startswith(("{", "["))
    data = cache_get("parse" + _CACHE_VERSION, digest) if len(text) >= CACHE_MIN_BYTES else None
    tree = None
    if data is None:
        if is_json:
            data = _parse_json(name, decoded)
        else:
            data, tree = _parse_yaml_tree(name, decoded)
        if len(text) >= CACHE_MIN_BYTES:
            cache_put("parse" + _CACHE_VERSION, digest, data)
    return Document(
        name=name,
        path=path,
        text=text,
        data=data,
        is_json=is_json,
        digest=digest,
        _yaml_tree=tree,
    )


def load_document(source: str) -> Document:
    name, path, text = read_source(source)
    return parse_document(name, path, text)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building big, acyclic data (a parsed spec,
    its IR, a source map): its collections re-scan everything built so far, again and again,
    and were most of a big spec's load time (4 of 5 s for the Stripe YAML).

    On the way out, what was built is moved straight to the oldest generation (a freeze and
    unfreeze: nothing is scanned, nothing is left out of later full collections), so the
    young-generation collections that follow do not scan it all again either. Nesting is
    fine; the collector's previous state returns."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # leave someone else's frozen objects frozen
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _parse_json(name: str, text: str) -> Any:
    try:
        with gc_paused():
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiforgeError(
            Problem(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno, column=exc.colno),
            "fix the syntax at that position",
        ) from None
    except RecursionError:
        raise ApiforgeError(Problem("JSON nested too deeply to read", file=name)) from None


def _parse_yaml(name: str, text: str) -> Any:
    return _parse_yaml_tree(name, text)[0]


def _parse_yaml_tree(name: str, text: str) -> tuple[Any, YamlTree | None]:
    try:
        with gc_paused():
            return load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise ApiforgeError(
            Problem(
                f"invalid YAML: {what}",
                file=name,
                line=mark.line + 1 if mark else 0,
                column=mark.column + 1 if mark else 0,
            ),
            "fix the syntax at that position",
        ) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ApiforgeError(
            Problem(
                f"invalid YAML: {exc.reason} (character {exc.character!r})",
                file=name,
                line=line,
                column=column,
            ),
            "remove or escape the control character",
        ) from None
    except yaml.YAMLError as exc:
        raise ApiforgeError(Problem(f"invalid YAML: {exc}", file=name)) from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a timestamp like 25:00:00
        raise ApiforgeError(
            Problem(f"invalid YAML value: {exc}", file=name),
            "quote the value so YAML reads it as a string",
        ) from None
    except RecursionError:
        raise ApiforgeError(Problem("YAML nested too deeply to read", file=name)) from None


# --- YAML: parse once, construct fast, exactly as PyYAML's safe loader -------------------

# the resolver's own strings, so most tag comparisons are identity checks
_STR: str = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG
_MAP: str = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_SEQ: str = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_resolve: Any = yaml.resolver.BaseResolver.resolve


class _PlainLoader(_YamlLoader):  # type: ignore[misc]
    """The safe loader; `flatten_mapping` (merge keys) is wrapped to keep each mapping's
    entries as written, for the source map."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.unflattened: dict[Node, list[tuple[Node, Node]]] = {}

    def flatten_mapping(self, node: MappingNode) -> None:
        if node not in self.unflattened and any(k.tag in (_MERGE, _VALUE) for k, _ in node.value):
            self.unflattened[node] = list(node.value)
        super().flatten_mapping(node)


class _FastLoader(_PlainLoader):
    """The safe loader with `resolve` memoised and the path-resolver hooks skipped.

    Without path resolvers (the safe loader has none; `load_yaml` checks) the tag of a
    plain scalar depends only on its text, a quoted scalar is always a str and a collection
    gets its kind's default tag: the same answers as `Resolver.resolve`, once per distinct
    text instead of once per scalar.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._plain_tags: dict[str, str] = {}

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                tag = self._plain_tags.get(value)
                if tag is None:
                    tag = self._plain_tags[value] = _resolve(self, kind, value, implicit)
                return tag
            return _STR
        return _MAP if kind is MappingNode else _SEQ

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class YamlTree:
    """The composed node tree of a YAML document, for the source map.

    `unflattened` holds, for each mapping whose merge keys (`<<`) were flattened into it
    during construction, its entries as written."""

    root: Node
    unflattened: dict[Node, list[tuple[Node, Node]]]

    def entries(self, node: MappingNode) -> list[tuple[Node, Node]]:
        entries: list[tuple[Node, Node]] | None = self.unflattened.get(node)
        return node.value if entries is None else entries


def load_yaml(text: str) -> tuple[Any, YamlTree | None]:
    """`yaml.load(text, Loader=CSafeLoader)`, and the node tree it was constructed from.

    Raises exactly what `yaml.load` raises for the same text."""
    cls = _FastLoader if not _FastLoader.yaml_path_resolvers else _PlainLoader
    loader = cls(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        data = _construct(loader, root)
        return data, YamlTree(root, loader.unflattened)
    finally:
        loader.dispose()


def _construct(loader: Any, root: Node) -> Any:
    """What `loader.construct_document(root)` returns, faster.

    Plain str scalars and str-keyed map/seq nodes are handled here; every other node goes
    to the loader's own `construct_object`, so its semantics are PyYAML's by construction.
    The order is PyYAML's too: a collection is created (and registered, so aliases share it
    and recursive ones work) when first met, and filled later, breadth-first, with PyYAML's
    own pending generators interleaved in the order it would run them.
    """
    memo: dict[Node, Any] = loader.constructed_objects
    pending: list[Any] = loader.state_generators  # PyYAML's deferred fills
    bools = loader.bool_values
    construct_object = loader.construct_object
    queue: list[Any] = []  # nodes (and generators) whose contents are still to construct

    def other(node: Node) -> Any:
        if node.__class__ is ScalarNode:
            tag = node.tag
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return bools[node.value.lower()]
        value = construct_object(node)
        if pending:
            queue.extend(pending)
            pending.clear()
        return value

    def container(node: Node) -> Any:
        cls, tag = node.__class__, node.tag
        if cls is MappingNode and tag == _MAP:
            value: Any = {}
        elif cls is SequenceNode and tag == _SEQ:
            value = []
        else:
            return other(node)
        memo[node] = value
        queue.append(node)
        return value

    data = root.value if root.__class__ is ScalarNode and root.tag == _STR else container(root)

    # the two loops below inline `container` for the common nodes
    append_queue = queue.append
    index = 0
    while index < len(queue):
        item = queue[index]
        index += 1
        cls = item.__class__
        if cls is MappingNode:
            out = memo[item]
            pairs = item.value
            for key_node, _ in pairs:
                if key_node.tag in (_MERGE, _VALUE):
                    loader.flatten_mapping(item)
                    pairs = item.value
                    break
            for key_node, value_node in pairs:
                if key_node.tag == _STR and key_node.__class__ is ScalarNode:
                    key = key_node.value
                else:
                    key = memo[key_node] if key_node in memo else container(key_node)
                    if not isinstance(key, Hashable):
                        raise ConstructorError(
                            "while constructing a mapping",
                            item.start_mark,
                            "found unhashable key",
                            key_node.start_mark,
                        )
                tag = value_node.tag
                cls = value_node.__class__
                if tag == _STR and cls is ScalarNode:
                    out[key] = value_node.value
                elif value_node in memo:
                    out[key] = memo[value_node]
                elif tag == _MAP and cls is MappingNode:
                    out[key] = memo[value_node] = {}
                    append_queue(value_node)
                elif tag == _SEQ and cls is SequenceNode:
                    out[key] = memo[value_node] = []
                    append_queue(value_node)
                else:
                    out[key] = other(value_node)
        elif cls is SequenceNode:
            append = memo[item].append
            for value_node in item.value:
                tag = value_node.tag
                cls = value_node.__class__
                if tag == _STR and cls is ScalarNode:
                    append(value_node.value)
                elif value_node in memo:
                    append(memo[value_node])
                elif tag == _MAP and cls is MappingNode:
                    new_map: dict[Any, Any] = {}
                    append(new_map)
                    memo[value_node] = new_map
                    append_queue(value_node)
                elif tag == _SEQ and cls is SequenceNode:
                    new_seq: list[Any] = []
                    append(new_seq)
                    memo[value_node] = new_seq
                    append_queue(value_node)
                else:
                    append(other(value_node))
        else:
            assert isinstance(item, GeneratorType)
            for _ in item:
                pass
            if pending:
                queue.extend(pending)
                pending.clear()
    loader.constructed_objects = {}
    loader.recursive_objects = {}
    return data
