"""PyYAML's reading of a whole YAML document (`load_yaml`), as `load.py` describes: the
C loader composes, a tight loop constructs. Its own module so that what rapidyaml reads, and
JSON, never import PyYAML (~90M instructions, ~0.02 s of every cold `lint`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import GeneratorType
from typing import Any, ClassVar

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from generator.spec import yaml12

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it

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
    """The safe loader with the YAML 1.2 core schema's implicit tags and numbers (see
    `yaml12`); a `!!timestamp` written out is its text (JSON has no dates). `flatten_mapping`
    (merge keys) is wrapped to keep each mapping's entries as written, for the source map."""

    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, re.Pattern[str]]]]] = {}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.unflattened: dict[Node, list[tuple[Node, Node]]] = {}

    def flatten_mapping(self, node: MappingNode) -> None:
        if node not in self.unflattened and any(k.tag in (_MERGE, _VALUE) for k, _ in node.value):
            self.unflattened[node] = list(node.value)
        super().flatten_mapping(node)


for _tag, _pattern, _firsts in yaml12.IMPLICIT:
    _PlainLoader.add_implicit_resolver(_tag, _pattern, _firsts)


def _scalar_constructor(convert: Callable[[str], Any]) -> Callable[[Any, Node], Any]:
    def construct(loader: Any, node: Node) -> Any:
        text = loader.construct_scalar(node)
        try:
            return convert(text)
        except ValueError as exc:
            raise ConstructorError(None, None, str(exc), node.start_mark) from None

    return construct


_PlainLoader.add_constructor("tag:yaml.org,2002:int", _scalar_constructor(yaml12.construct_int))
_PlainLoader.add_constructor("tag:yaml.org,2002:float", _scalar_constructor(yaml12.construct_float))
_PlainLoader.add_constructor("tag:yaml.org,2002:timestamp", _scalar_constructor(str))
Yaml12Loader: Any = _PlainLoader  # `yaml.load(text, Loader=Yaml12Loader)` is what `load_yaml` reads


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


def load_yaml(text: str, tags: dict[str, str] | None = None) -> tuple[Any, YamlTree | None]:
    """`yaml.load(text, Loader=CSafeLoader)`, and the node tree it was constructed from.
    `tags` memoises the implicit tags of plain scalars across calls (see `_FastLoader`).

    Raises exactly what `yaml.load` raises for the same text."""
    cls = _FastLoader if not _FastLoader.yaml_path_resolvers else _PlainLoader
    loader = cls(text)
    if tags is not None and cls is _FastLoader:
        loader._plain_tags = tags
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        data = _construct(loader, root)
        return data, YamlTree(root, loader.unflattened)
    finally:
        loader.dispose()


def load_yaml_all(text: str) -> list[Any]:
    """`list(yaml.load_all(text, Loader=CSafeLoader))`: every document of a stream,
    constructed as `load_yaml` constructs one. Raises what `yaml.load_all` raises."""
    cls = _FastLoader if not _FastLoader.yaml_path_resolvers else _PlainLoader
    loader = cls(text)
    if cls is _FastLoader:
        loader._plain_tags = {}
    try:
        documents = []
        while loader.check_node():
            documents.append(_construct(loader, loader.get_node()))
        return documents
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
    run = _Construction(loader)
    data = root.value if root.__class__ is ScalarNode and root.tag == _STR else run.container(root)
    queue = run.queue
    index = 0
    while index < len(queue):
        item = queue[index]
        index += 1
        cls = item.__class__
        if cls is MappingNode:
            run.fill_mapping(item)
        elif cls is SequenceNode:
            run.fill_sequence(item)
        else:
            run.finish_generator(item)
    loader.constructed_objects = {}
    loader.recursive_objects = {}
    return data


class _Construction:
    """One document's construction (`_construct`): the collections met and not yet filled
    (`queue`), and how one is filled."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.memo: dict[Node, Any] = loader.constructed_objects
        self.pending: list[Any] = loader.state_generators  # PyYAML's deferred fills
        self.bools = loader.bool_values
        self.construct_object = loader.construct_object
        self.queue: list[Any] = []  # nodes (and generators) whose contents are still to construct

    def other(self, node: Node) -> Any:
        if node.__class__ is ScalarNode:
            tag = node.tag
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return self.bools[node.value.lower()]
        value = self.construct_object(node)
        pending = self.pending
        if pending:
            self.queue.extend(pending)
            pending.clear()
        return value

    def container(self, node: Node) -> Any:
        cls, tag = node.__class__, node.tag
        if cls is MappingNode and tag == _MAP:
            value: Any = {}
        elif cls is SequenceNode and tag == _SEQ:
            value = []
        else:
            return self.other(node)
        self.memo[node] = value
        self.queue.append(node)
        return value

    # the two loops below inline `container` for the common nodes

    def fill_mapping(self, item: MappingNode) -> None:
        memo, append_queue, other = self.memo, self.queue.append, self.other
        out = memo[item]
        pairs = item.value
        for key_node, _ in pairs:
            if key_node.tag in (_MERGE, _VALUE):
                self.loader.flatten_mapping(item)
                pairs = item.value
                break
        for key_node, value_node in pairs:
            if key_node.tag == _STR and key_node.__class__ is ScalarNode:
                key = key_node.value
            else:
                key = memo[key_node] if key_node in memo else self.container(key_node)
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

    def fill_sequence(self, item: SequenceNode) -> None:
        memo, append_queue, other = self.memo, self.queue.append, self.other
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

    def finish_generator(self, item: Any) -> None:
        assert isinstance(item, GeneratorType)
        for _ in item:
            pass
        pending = self.pending
        if pending:
            self.queue.extend(pending)
            pending.clear()
