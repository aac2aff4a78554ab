"""The rapidyaml reader (`fast_yaml`) gives exactly the PyYAML path's data and source map, or
refuses the text so PyYAML reads it: never a different answer, never a message of its own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.errors import ApiforgeError
from generator.spec.fast_yaml import RymlTree, load_fast
from generator.spec.load import load_yaml, parse_document
from generator.spec.sourcemap import SourceMap, _index_json, _index_yaml, _line_starts_str

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


def _equality_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("yaml_equality", ROOT / "bench/yaml_equality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EQ = _equality_module()

SCALARS = [
    *(
        [
            "~",
            "null",
            "Null",
            "NULL",
            "true",
            "True",
            "TRUE",
            "false",
            "False",
            "FALSE",
            "yes",
            "no",
            "on",
            "off",
            "y",
            "n",
        ]
    ),
    *(
        [
            "0",
            "-0",
            "+12",
            "007",
            "0o17",
            "0777",
            "0x1F",
            "0x1f",
            "-0x1",
            "+0o7",
            "1_000",
            "0b11",
            "1:20",
            "12e3",
            "1E5",
        ]
    ),
    *(
        [
            ".5",
            "-.5",
            "1.",
            "0.",
            "1.5e-3",
            ".inf",
            "-.Inf",
            "+.INF",
            ".nan",
            ".NaN",
            "nan",
            "inf",
            "Infinity",
            "-",
        ]
    ),
    *(["2001-12-14", "2023-02-30", "0000-01-01", "*nope", "nul", "truee", "1e", "e3", "0x", "0o"]),
]
QUOTED = [f"'{s}'" for s in SCALARS[:20]] + [f'"{s}"' for s in SCALARS[20:40]]


# an alias: the reader refuses texts with one, and PyYAML reads them (or gives the error)
ALIASES = ("*nope",)
KEYS = [
    "no",
    "yes",
    "on",
    "off",
    "y",
    "n",
    "007",
    "0o17",
    "0x1F",
    "1_000",
    "1:20",
    "2001-12-14",
    "true",
    "null",
    "nan",
    ".inf",
    "1.5e-3",
]


def _document(values: list[str], keys: list[str]) -> str:
    lines = ["openapi: 3.1.0", "block:"]
    lines += [f"  - {v}" for v in values]
    lines.append(f"flow: [{', '.join(v for v in values if v != '-')}]")
    lines.append("mapping:")
    lines += [f"  k{i}: {v}" for i, v in enumerate(values) if v != "-"]
    lines.append("keys:")
    lines += [f"  {k}: {i}" for i, k in enumerate(keys)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("quote", ["", "'", '"'])
def test_scalars_mean_what_the_core_schema_says(quote: str) -> None:
    values = [f"{quote}{v}{quote}" for v in SCALARS if v not in ALIASES]
    text = _document(values, [f"{quote}{k}{quote}" for k in KEYS])
    fast = load_fast(text)
    assert fast is not None, "read by rapidyaml"
    counts = EQ.Counter()
    assert EQ.compare_fast(text, counts) is None
    assert counts["read by rapidyaml, the same"] == 1
    flow, keys = fast[0]["flow"], fast[0]["keys"]
    at = [v for v in SCALARS if v not in ALIASES and v != "-"].index
    if not quote:
        assert flow[at("~")] is None and flow[at("0o17")] == 15 and flow[at("007")] == 7
        assert flow[at("nan")] == "nan" and flow[at("+12")] == 12 and flow[at("-0x1")] == "-0x1"
        assert flow[at("+.INF")] == float("inf") and flow[at("+0o7")] == "+0o7"
        assert flow[at("2023-02-30")] == "2023-02-30" and flow[at("no")] == "no"
        assert keys["no"] == 0 and keys[7] == 6 and keys[None] == 13 and keys["nan"] == 14
    else:
        assert flow == [v for v in SCALARS if v not in ALIASES]  # `'-'` included
        assert list(keys) == KEYS


def test_a_plain_alias_goes_to_pyyaml() -> None:
    assert load_fast("a: *nope\nb: [*nope]\n") is None  # PyYAML's error: tested below


TRICKY = {
    "unicode, quoted keys, escapes": (
        'title: "caf\\u00e9 \\u2603"\n"a/b~c": 1\n\'q\'\'k\': {"x\\ty": [1, "\\u00e9"]}\n'
        "ünï: [ö, 'ä', \"\\U0001f600\"]\nafter: é\n"
    ),
    "CRLF line ends": "a: 1\r\nb:\r\n  - x\r\n  - 'y'\r\nc: {d: 2}\r\n",
    "block scalars and flow items in sequences": (
        "a:\n  - |\n    text\n  - >-\n    folded\n  - {}\n  - [1, [2]]\n  - - nested\n"
        "  -\n  - {x: 1}\nb: end\n"
    ),
    "multi-line plain and quoted scalars": "a: one\n  two\n  three\nb: 'x\n  y'\nc: \"p\\\n  q\"\n",
    "empty values and comments": "a:\nb: # c\n  c: ''\nd: [] # e\ne: {}\n",
    "empty strings, quoted, block and plain": (
        "a: ''\nb: \"\"\nc: |\n\nd:\ne: ['', \"\", x]\nf:\n  - ''\n  -\n  - >-\n\n"
        "  - {'': '', k: }\ng: end\n"
    ),
    # two keys for Python (1 and "1"), one JSON pointer: located at the first, as PyYAML's map
    "a plain and a quoted key alike": "1: a\n'1': b\nx:\n  '2': c\n  2: d\n",
    "one leading comment and deep nesting": "# c\n"
    + "a:\n"
    + "".join("  " * i + f"  k{i}:\n" for i in range(40))
    + "  " * 41
    + "v: 1\n",
}


@pytest.mark.parametrize("text", TRICKY.values(), ids=list(TRICKY))
def test_tricky_texts_same_data_and_source_map(text: str) -> None:
    assert load_fast(text) is not None
    counts = EQ.Counter()
    assert EQ.compare_fast(text, counts) is None
    assert counts["read by rapidyaml, the same"] == 1


def test_a_node_it_cannot_locate_is_located_by_composing_with_pyyaml() -> None:
    text = TRICKY["block scalars and flow items in sequences"]
    counts = EQ.Counter()
    assert EQ.compare_fast(text, counts) is None
    assert counts["  of which the source map needed PyYAML's compose"] == 1
    doc = parse_document("t.yaml", None, text.encode())
    assert isinstance(doc._yaml_tree, RymlTree)
    assert doc.locate("/a/0") == (2, 5) and doc.locate("/a/3/1") == (7, 9)
    assert doc.locate("/b") == (11, 1) and doc.locate("/a/99") == (1, 1)  # at /a


REFUSED = {
    "anchor": "a: &x 1\nb: *x\n",
    "alias without an anchor (PyYAML's error)": "a: 1\nb: *x\n",
    "alias as a key": "a: 1\n*x : 2\n",
    "tag": "a: !!str 1\n",
    "local tag": "a:\n  - !thing x\n",
    "merge key": "a: {x: 1}\nb:\n  <<: {y: 2}\n",
    "explicit key": "? a\n: 1\n",
    "document marker": "---\na: 1\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "directive": "%YAML 1.2\n---\na: 1\n",
    # a marker that also occurs mid-line earlier: each occurrence is looked at, not the first
    "a document end after '...' in a value": "a: wait...\n...\n",
    "a directive after '%' in a value": "a: 50%\n%TAG ! tag:x,2024:\n---\nb: 1\n",
    "a document marker after '---' in a value": "a: x --- y\n---\nb: 1\n",
    "tab": "a:\tb\n",
    "lone CR": "a: 1\rb: 2\n",
    "duplicate keys": "a: 1\nb: 2\na: 3\n",
    "keys equal once resolved": "1: a\n01: b\n",
    "root sequence": "- a\n- b\n",
    "root scalar": "just text\n",
    "no line break at the end (rapidyaml would add one to this block scalar)": "a: |\n  x",
    "invalid YAML": "a: [1, 2\nb: 3\n",
    "bad indentation": "a:\n  k: 1\n j: 2\n",
}


@pytest.mark.parametrize("text", REFUSED.values(), ids=list(REFUSED))
def test_what_it_cannot_prove_the_same_is_refused(
    text: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert load_fast(text) is None
    assert capfd.readouterr().err == ""  # rapidyaml's own error printing is silenced
    try:
        expected = load_yaml(text)[0]
    except Exception:
        with pytest.raises(ApiforgeError):  # PyYAML's located error, as before
            parse_document("t.yaml", None, text.encode())
    else:
        assert parse_document("t.yaml", None, text.encode()).data == expected


def test_markers_inside_a_line_are_not_document_markers() -> None:
    text = "a: x --- y\nb: 50%\nc: wait...\nd: '---'\n"
    fast = load_fast(text)
    assert fast is not None and fast[0] == load_yaml(text)[0]


def test_descriptions_that_only_look_like_aliases_are_read() -> None:
    text = "a: '*bold* and **strong**'\nb: \"*quoted*\"\nc: x *y **z**\n"
    fast = load_fast(text)
    assert fast is not None
    assert fast[0] == {"a": "*bold* and **strong**", "b": "*quoted*", "c": "x *y **z**"}


def _tricky_corpus_files() -> list[Path]:
    names = [
        "stripe/spec3.2023-09-12.yaml",  # 4.2 MB: the one the reader is for
        "apisguru/1password.com__events__1.0.0.yaml",
        "apisguru/ably.net__control__1.0.14.yaml",
    ]
    return [CORPUS / n for n in names if (CORPUS / n).exists()]


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is beside the clone")
@pytest.mark.parametrize("path", _tricky_corpus_files(), ids=lambda p: p.name)
def test_corpus_files_same_data_and_source_map(path: Path) -> None:
    counts = EQ.Counter()
    assert EQ.compare_fast(path.read_text(encoding="utf-8-sig"), counts) is None
    assert counts["read by rapidyaml, the same"] == 1


JSON_TEXTS = {
    "nested arrays and objects": '{"a": [{"b": 1}, [2, [3]], "s", 4.5, null, true], "c": {}}',
    "empty containers and strings as items": '{"a": [[], {}, "", ""], "b": [{}]}',
    "escapes and unicode": '{"k\\u00e9y": ["\\u2603", "a\\"b"], "a/b~c": {"x\\ty": 1}}',
    "duplicate keys": '{"a": 1, "b": {"c": 2}, "a": {"d": 3}}',
    "tabs and CRLF": '{\r\n\t"a": [\r\n\t\t{"b": 1}\r\n\t]\r\n}',
}


@pytest.mark.parametrize("text", JSON_TEXTS.values(), ids=list(JSON_TEXTS))
def test_json_source_map_from_rapidyaml_is_the_whole_maps(text: str) -> None:
    counts = EQ.Counter()
    assert EQ.compare_json_map(text, counts) is None
    assert counts["JSON: map from rapidyaml's tree, the same"] == 1


def test_json_locations_in_a_document() -> None:
    text = JSON_TEXTS["nested arrays and objects"]
    doc = parse_document("t.json", None, text.encode())
    assert doc.locate("/a/1/1") == (1, text.index("[3]") + 1)
    assert doc.locate("/c") == (1, text.index('"c"') + 1)
    assert doc.locate("/a/0/b") == (1, text.index('"b"') + 1)
    assert doc.locate("/a/0/zz") == (1, text.index('{"b"') + 1)  # at /a/0


def _long_document(json_: bool) -> str:
    """Many lines of non-ASCII text and CRLF line ends, over several of the chunks whose line
    breaks `RymlTree.line_column` counts at once."""
    if json_:
        items = ",\r\n".join(
            f'  "k{i}é": {{"d": "ünï {i} ☃", "v": [{i}, "x"]}}' for i in range(600)
        )
        return "{\r\n" + items + "\r\n}\r\n"
    return "".join(
        f"k{i}é:\r\n  d: {{ünï: {i}, ☃: [x, é]}}\r\n  v: [{i}, x]\r\n" for i in range(600)
    )


@pytest.mark.parametrize("json_", [True, False], ids=["JSON", "YAML"])
def test_locations_counted_in_bytes_are_the_whole_maps(json_: bool) -> None:
    """A cold run locates findings in rapidyaml's tree and counts lines in bytes; every
    pointer (and missing ones, at their ancestor) gets the whole map's line and column, with
    a byte order mark, CRLF and non-ASCII text before it."""
    text = _long_document(json_)
    doc = parse_document("t.json" if json_ else "t.yaml", None, b"\xef\xbb\xbf" + text.encode())
    starts = _line_starts_str(text)
    whole = _index_json(text) if json_ else _index_yaml(text, starts)
    reference = SourceMap(whole, text.encode(), starts)
    pointers = [*whole, "/k599é/v/1/nope", "/k7é/zz", "/nope"]
    assert len(whole) > 1000 and len(text.encode()) > 4 * 4096
    for pointer in reversed(pointers):  # not in text order: counted from other offsets
        assert doc.locate(pointer) == reference.locate(pointer), pointer
    assert isinstance(doc._source_map._index._tree, RymlTree)  # not the whole map


def test_line_column_of_every_offset() -> None:
    """`RymlTree.line_column` against counting from the start, at every character of a text
    with line breaks at, before and after its chunk boundaries (4096 bytes)."""
    body = b"a:\n"
    for newline_at in (4095, 4096, 8192, 8194, 12287):
        body += b"  - \xc3\xa9\xe2\x98\x83 x\n" * ((newline_at - len(body)) // 12 - 1)
        body += b"#" * (newline_at - len(body)) + b"\n"
        assert body[newline_at] == ord("\n")
    body += b"c: \xc3\xbc\n"
    fast = load_fast(body.decode())
    assert fast is not None
    tree = fast[1]
    for at in (i for i in range(len(body) + 1) if i == len(body) or body[i] & 0xC0 != 0x80):
        start = body.rfind(b"\n", 0, at) + 1
        expected = (body.count(b"\n", 0, at) + 1, len(body[start:at].decode()) + 1)
        assert tree.line_column(at) == expected, at


# --- random documents: the reader agrees with the PyYAML path or refuses -------------------

_WORDS = [*SCALARS, *QUOTED, "plain text", "a: b", "'it''s'", '"x\\ty"', "é ü", "#x", "x #c"]


def _render(node: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(node, dict):
        lines = []
        for key, value in node.items():
            if isinstance(value, (dict, list)) and value:
                lines.append(f"{pad}{key}:")
                lines += _render(value, indent + 2)
            else:
                lines.append(f"{pad}{key}: {_flow(value)}")
        return lines
    lines = []
    for item in node:
        if isinstance(item, (dict, list)) and item:
            lines.append(f"{pad}-")
            lines += _render(item, indent + 2)
        else:
            lines.append(f"{pad}- {_flow(item)}")
    return lines


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


_leaf = st.sampled_from([w for w in _WORDS if w not in ("-", "*nope")])
_key = st.sampled_from(["a", "b", "'q'", '"d"', "200", "no", "on", "~", "1.5", "x y", "é"])
_tree = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_key, inner, max_size=4),
    max_leaves=24,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_key, _tree, min_size=1, max_size=5))
def test_random_documents_read_the_same_or_refused(document: dict[str, Any]) -> None:
    text = "\n".join(_render(document, 0)) + "\n"
    counts = EQ.Counter()
    assert EQ.compare_fast(text, counts) is None, text


def test_tree_calls_answer_as_the_wrappers_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_TreeCalls` (rapidyaml's functions called with the tree's SWIG `this`) answers as the
    `ryml.Tree` methods do, node by node; a function the binding lacks: the method is used."""
    import ryml

    from generator.spec import fast_yaml

    buffer = bytearray(b'{"a": {"bb": [1, "x", {"c": null}]}, "d": "e", "": []}\n')
    tree = ryml.parse_in_place(buffer)
    calls = fast_yaml._TreeCalls(tree)
    names = ("type", "num_children", "first_child", "next_sibling", "is_map", "is_seq")
    for node in range(tree.size()):
        for name in names:
            assert getattr(calls, name)(node) == getattr(tree, name)(node), (name, node)
        if tree.type(node) & ryml.KEY:
            assert bytes(calls.key(node)) == bytes(tree.key(node))
    root = tree.root_id()
    assert calls.find_child(root, b"d") == tree.find_child(root, b"d") != ryml.NONE

    class _Bare:  # a binding without the functions
        pass

    monkeypatch.setattr(ryml, "_ryml", _Bare())
    fallback = fast_yaml._TreeCalls(tree)
    assert fallback.num_children(root) == tree.num_children(root) == 3


def test_the_tree_reader_is_built() -> None:
    """`_ryml_data` (C) is compiled at install (hatch_build.py); without it every YAML file
    would quietly go to PyYAML, four times slower."""
    from generator.spec import fast_yaml

    assert fast_yaml._ryml_data is not None
    assert load_fast("a: 1\n") is not None


def test_nesting_past_the_recursion_limit_goes_to_pyyaml() -> None:
    depth = sys.getrecursionlimit() + 10
    assert load_fast("a: " + "[" * depth + "]" * depth + "\n") is None


def test_without_the_extension_pyyaml_reads_and_maps(monkeypatch: pytest.MonkeyPatch) -> None:
    """No C compiler at install: no `_ryml_data`, so neither the tree reader nor rapidyaml's
    source maps are used, and YAML and JSON documents read and locate as before."""
    from generator.spec import fast_yaml

    monkeypatch.setattr(fast_yaml, "_ryml_data", None)
    fast_yaml._rapidyaml.cache_clear()
    try:
        assert load_fast("a: 1\n") is None and fast_yaml.json_tree('{"a": 1}') is None
        doc = parse_document("t.yaml", None, b"a: [1, x]\nb: {c: ~}\n")
        assert doc.data == {"a": [1, "x"], "b": {"c": None}}
        assert doc._yaml_tree is not None and not isinstance(doc._yaml_tree, RymlTree)
        assert doc.locate("/a/1") == (1, 8) and doc.locate("/b/c") == (2, 5)
        assert parse_document("t.json", None, b'{"a": [1, 2]}').locate("/a/1") == (1, 11)
    finally:
        fast_yaml._rapidyaml.cache_clear()
