"""The one-pass YAML loader yields exactly what PyYAML's safe loader yields with the YAML 1.2
core schema (`load.Yaml12Loader`: types, sharing, errors), and its node tree gives the same
source map as composing the text again."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from generator.errors import ApiforgeError
from generator.ir import Where
from generator.spec.load import Yaml12Loader, load_yaml, parse_document
from generator.spec.sourcemap import (
    SourceMap,
    _index_json,
    _index_yaml,
    _line_starts_str,
    _TreeIndex,
)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


def _equality_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("yaml_equality", ROOT / "bench/yaml_equality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EQ = _equality_module()


def pyyaml(text: str) -> Any:
    return yaml.load(text, Loader=Yaml12Loader)


def assert_same(text: str) -> Any:
    diff, _ = EQ.compare(text)
    assert diff is None, diff
    return load_yaml(text)[0]


CASES = {
    "ints": "a: [0, -0, +12, 0x1A, 0o17, 017, 1_000, 0b101, 190:20:30, -1_0]",
    "floats": "a: [1.5, -.inf, .Inf, .NaN, 1e3, 1.0e+3, 6.8523015e+5, 190:20:30.15, -0.0, 1_0.5]",
    "bools and nulls": "a: [yes, No, on, OFF, true, False, y, n, ~, null, Null, '', ]\nb:\nc: ~",
    "dates are strings, invalid ones too": (
        "a: 2001-12-14\nb: '2001-12-14'\nc: \"2001-12-14\"\nd: 2001-12-14t21:59:43.10-05:00\n"
        "e: 2001-12-14 21:59:43.10\nf: 2001-12-15T02:59:43.1Z\ng: !!str 2001-12-14\n"
        "h: 2002-12-14 21:59:43.1234567 +5:30\ni: ! 2001-12-14\nj: !!timestamp 2001-12-14\n"
        "k: 2023-02-30\nl: 0000-01-01\nm: 2001-12-14 25:00:00"
    ),
    "explicit tags": (
        "a: !!str 123\nb: !!int '3'\nc: !!float 1\nd: !!null ''\ne: !!bool yes\n"
        "f: !!binary aGVsbG8=\ng: !!set {x, y}\nh: !!omap [{k: 1}, {j: 2}]\n"
        "i: !!pairs [{k: 1}, {k: 2}]\nj: !!seq [1]\nk: !!map {x: 1}\nl: ! 12\nm: !!str yes"
    ),
    "anchors share objects": (
        "base: &b {x: 1, l: &l [1, 2]}\none: *b\ntwo: *b\nlist: *l\nnum: &n 123456789012\n"
        "again: *n\nd: &d 2001-12-14\ndd: *d\nset: &s !!set {a}\nss: *s"
    ),
    "recursive structures": "a: &a [1, *a]\nb: &b {self: *b, l: [*b]}\nc: &c !!omap [{k: *c}]",
    "merge keys": (
        "base: &base {x: 1, y: 2}\nmore: &more {z: 3, <<: *base}\n"
        "one: {<<: *base, y: 9}\nmany: {<<: [*more, {w: 0, x: 7}], v: 1}\n"
        "nested: {a: {<<: *more}}\nvalue: {=: 5, k: 6}"
    ),
    "duplicate keys: last wins, first key object kept": "a: 1\nb: 2\na: 3\n1: x\n1.0: y\n",
    "1.1 words and forms are strings": "no: [yes, on, off, y, n, 1:20, 1_000, 0b1, =]\non: 0777",
    "complex scalar keys": "? 2001-12-14\n: d\n? 12\n: i\n? null\n: n\n? !!binary aGk=\n: b\n",
    "flow and block styles": 'a: {"k": [1, "2", \'3\', {x: y}]}\nb: |\n  text\n  more\nc: >-\n  fold\n',
    "root scalar": "just text",
    "root int": "42",
    "root seq": "- 1\n- [a, *x]".replace(", *x", ""),
    "empty": "",
    "comment only": "# nothing\n",
    "explicit document": "--- &r\na: *r\n...\n",
    "unicode": "name: caf\u00e9 \u2603\nemoji: \U0001f600\n",
}

ERRORS = {
    "unknown tag": "a: !foo x",
    "python tag": "a: !!python/object:os.system {}",
    "map tag on a scalar": "a: !!map x",
    "seq tag on a mapping": "a: !!seq {x: 1}",
    "bad int": "a: !!int abc",
    "bad bool": "a: !!bool maybe",
    "two documents": "a: 1\n---\nb: 2\n",
    "undefined alias": "a: *nope",
    "unhashable key": "? [a, b]\n: c\n",
    "mapping key": "? {a: 1}\n: c\n",
    "merge of a scalar": "a: {<<: 1}",
    "merge of a list of scalars": "a: {<<: [1]}",
    "scanner error": "a: [1, 2\nb: 3",
    "tab indentation": "a:\n\tb: 1",
    "control character": "a: \x07",
}


@pytest.mark.parametrize("text", CASES.values(), ids=list(CASES))
def test_same_data_types_and_sharing_as_pyyaml(text: str) -> None:
    assert_same(text)


@pytest.mark.parametrize("text", ERRORS.values(), ids=list(ERRORS))
def test_same_error_as_pyyaml(text: str) -> None:
    with pytest.raises(Exception) as expected:
        pyyaml(text)
    with pytest.raises(type(expected.value)) as ours:
        load_yaml(text)
    assert str(ours.value) == str(expected.value)


def test_the_checks_themselves_see_differences() -> None:
    """The comparison is strict: types, timezones, NaN, -0.0 and sharing all count."""
    import datetime

    assert EQ.difference({"a": "2001-12-14"}, {"a": datetime.date(2001, 12, 14)}) is not None
    assert EQ.difference([True], [1]) is not None
    assert EQ.difference([float("nan")], [float("nan")]) is None
    assert EQ.difference([0.0], [-0.0]) is not None
    utc = datetime.UTC
    plus1 = datetime.timezone(datetime.timedelta(hours=1))
    assert (
        EQ.difference(
            [datetime.datetime(2001, 1, 1, 10, tzinfo=plus1)],
            [datetime.datetime(2001, 1, 1, 9, tzinfo=utc)],
        )
        is not None
    )
    shared: list[int] = [1]
    assert EQ.difference([shared, shared], [[1], [1]]) is not None
    assert EQ.difference({"b": 1, "a": 2}, {"a": 2, "b": 1}) is not None  # key order


def test_specific_values() -> None:
    data = assert_same(CASES["dates are strings, invalid ones too"])
    assert data["a"] == data["b"] == data["g"] == data["j"] == "2001-12-14"
    assert (data["k"], data["l"], data["m"]) == ("2023-02-30", "0000-01-01", "2001-12-14 25:00:00")
    words = assert_same(CASES["1.1 words and forms are strings"])
    assert words == {"no": ["yes", "on", "off", "y", "n", "1:20", "1_000", "0b1", "="], "on": 777}
    ints = assert_same(CASES["ints"])["a"]
    assert ints == [0, 0, 12, 26, 15, 17, "1_000", "0b101", "190:20:30", "-1_0"]
    nulls = assert_same(CASES["bools and nulls"])
    assert nulls["a"] == ["yes", "No", "on", "OFF", True, False, "y", "n", None, None, None, ""]
    shared = assert_same(CASES["anchors share objects"])
    assert (
        shared["one"] is shared["base"] is shared["two"] and shared["list"] is shared["base"]["l"]
    )
    rec = assert_same(CASES["recursive structures"])
    assert rec["a"][1] is rec["a"] and rec["b"]["self"] is rec["b"]
    merged = assert_same(CASES["merge keys"])
    assert merged["one"] == {"x": 1, "y": 9}
    assert merged["many"] == {"z": 3, "x": 1, "y": 2, "w": 0, "v": 1}
    floats = assert_same(CASES["floats"])["a"]
    assert math.isinf(floats[1]) and math.isnan(floats[3])


def _corpus_sample() -> list[Path]:
    if not CORPUS.exists():
        return []
    files = sorted(
        p
        for p in CORPUS.rglob("*")
        if p.suffix in (".yaml", ".yml") and p.is_file() and p.stat().st_size < 200_000
    )
    return files[:: max(1, len(files) // 40)]  # ~40 files across the providers


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is beside the clone")
@pytest.mark.parametrize("path", _corpus_sample(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_sample_same_as_pyyaml_and_same_source_map(path: Path) -> None:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8")
    diff, rejected = EQ.compare(text)
    assert diff is None, diff
    if not rejected:
        assert_same_source_map(text)


def assert_same_source_map(text: str) -> None:
    """The map from the one parse's tree, whole or looked up pointer by pointer, is the map
    from composing the text again."""
    starts = _line_starts_str(text)
    _, tree = load_yaml(text)
    composed = _index_yaml(text, starts)
    assert tree is None or _index_yaml(text, starts, tree) == composed
    if tree is not None:
        lookup = _TreeIndex(tree, starts).get
        assert {p: lookup(p) for p in composed} == composed
        for missing in (
            "/nope",
            "/~",
            "nope",
            "/0/x/y/z",
            *(p + "/zz" for p in list(composed)[:50]),
        ):
            assert lookup(missing) == composed.get(missing)


SOURCE = """\
base: &base
  x: 1
  y: [a, b]
one:
  <<: *base
  y: 2
list:
  - *base
  - k: v
"""


def test_source_map_from_the_one_parse_is_the_composed_one() -> None:
    doc = parse_document("t.yaml", None, SOURCE.encode())
    assert doc._yaml_tree is not None  # kept for the source map, not parsed again
    assert doc.data["one"] == {"x": 1, "y": 2}
    smap = SourceMap.for_document(doc)
    assert doc._yaml_tree is None  # handed to the map
    assert_same_source_map(SOURCE)  # merges located as written
    assert smap.locate("/one/~0~0") == smap.locate("/one")  # no such key: the parent
    assert smap.locate("/one/<<") == (5, 3)
    assert smap.locate("/one/x") == (4, 1)  # merged, not written there: the mapping's key
    assert smap.locate("/list/0/y/1") == (3, 10)  # through an alias


def test_bad_yaml_keeps_its_message_and_location() -> None:
    with pytest.raises(ApiforgeError) as err:
        parse_document("bad.yaml", None, b"openapi: 3.1.0\ninfo: {title: [\n  x: 1\n")
    text = err.value.render()
    assert "bad.yaml:" in text and "invalid YAML" in text
    with pytest.raises(ApiforgeError) as err:
        parse_document("int.yaml", None, b"a: 1\nb: !!int 0777x\n")
    assert "int.yaml:2:4" in err.value.render() and "not a YAML 1.2 integer" in err.value.render()
    # YAML 1.1's impossible timestamps are strings in 1.2, not errors
    assert parse_document("ts.yaml", None, b"a: 2001-12-14 25:00:00\n").data == {
        "a": "2001-12-14 25:00:00"
    }


@pytest.mark.parametrize(
    ("tokens", "pointer"),
    [
        (("paths", "/a/{id}", "get"), "/paths/~1a~1{id}/get"),
        (("a~b", 0, "c/d~"), "/a~0b/0/c~1d~0"),
        ((), ""),
        (("",), "/"),
    ],
)
def test_where_child_escapes_only_what_needs_it(
    tokens: tuple[str | int, ...], pointer: str
) -> None:
    assert Where("f", "").child(*tokens) == Where("f", pointer)
    assert Where("f", "/x").child(*tokens).pointer == "/x" + pointer


TRICKY = """\
a: &a
  b: {c: 1, d: [x, {e: 2}]}
  b: {c: 3, f: 4}
  self: *a
"1": {x: 1}
1: {x: 2, y: 3}
s~/x: [*a, *a]
? !!binary aGk=
: {z: 1}
? 2001-12-14
: {d: 1}
seq:
  - - [1, 2]
    - {k: v}
  - *a
"""


def test_tree_lookups_answer_as_the_whole_map_for_duplicates_aliases_and_cycles() -> None:
    assert_same_source_map(TRICKY)
    assert_same_source_map("just a scalar")
    assert_same_source_map("- 1\n- [2, 3]\n")


@pytest.mark.parametrize(
    "text",
    [
        '{"a": {"b/c": [1, {"d": 2}, "s", [3, 4], true, null]}, "e~f": "x", "a": {"g": 1}}',
        '[{"k\\"q": [{}], "u\\u00e9\\/": 1}, [], "a:b", -1.5e3]',
        '{\n  "x" : { "y" :[ "z" , {"w":"}"} ]},\n  "v": "[{,:"\n}\n',
        "{}",
    ],
)
def test_json_index_matches_the_reference_tokenizer(text: str) -> None:
    assert _index_json(text) == _reference_json_index(text)


def _reference_json_index(text: str) -> dict[str, int]:
    """The JSON indexer as first written (one token at a time, with commas and colons)."""
    import re

    from generator.spec.sourcemap import _json_string, escape

    token = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
    offsets: dict[str, int] = {"": 0}
    stack: list[list[Any]] = []
    expect_key = False
    for match in token.finditer(text):
        tok, start, first = match.group(), match.start(), match.group()[0]
        if first in "{[":
            if stack:
                frame = stack[-1]
                if frame[1] is not None:
                    ptr = f"{frame[0]}/{frame[1]}"
                    offsets.setdefault(ptr, start)
                    frame[1] += 1
                else:
                    ptr = f"{frame[0]}/{frame[2]}"
            else:
                ptr = ""
            stack.append([ptr, 0 if first == "[" else None, ""])
            expect_key = first == "{"
        elif first in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif first == ",":
            expect_key = bool(stack) and stack[-1][1] is None
        elif first == ":":
            expect_key = False
        elif stack:
            frame = stack[-1]
            if expect_key and first == '"':
                frame[2] = escape(_json_string(tok))
                offsets[f"{frame[0]}/{frame[2]}"] = start
            elif frame[1] is not None:
                offsets[f"{frame[0]}/{frame[1]}"] = start
                frame[1] += 1
    return offsets


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is beside the clone")
def test_json_index_matches_the_reference_on_the_corpus() -> None:
    files = sorted(p for p in CORPUS.rglob("*.json") if p.stat().st_size < 2_000_000)
    assert files
    for path in files:
        text = path.read_bytes().decode("utf-8-sig")
        assert _index_json(text) == _reference_json_index(text), path


def test_load_yaml_all_reads_every_document_as_pyyaml_does() -> None:
    from generator.spec.load import load_yaml_all

    stream = (
        "a: 1\nb: [x, &n {k: v}, *n]\n---\n  indented: true\n  when: 2001-12-14\n"
        "---\n- 1\n- '2'\n- .nan\n---\nshared: &s [1]\nagain: *s\n"
    )
    ours = load_yaml_all(stream)
    theirs = list(yaml.load_all(stream, Loader=Yaml12Loader))
    assert len(ours) == len(theirs) == 4
    assert ours[:2] == theirs[:2] and ours[3] == theirs[3]
    assert ours[0]["b"][1] is ours[0]["b"][2]  # an alias shares its anchor's object
    assert ours[3]["shared"] is ours[3]["again"]
    assert math.isnan(ours[2][2]) and ours[2][:2] == [1, "2"]
    with pytest.raises(yaml.YAMLError):
        load_yaml_all("a: 1\n---\nb: [\n")
