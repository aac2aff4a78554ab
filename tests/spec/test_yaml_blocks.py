"""Big YAML files read block by block (`load_yaml_blocks`) give exactly the whole parse: the
same data (types, key order, sharing), the same errors (by refusing, so the whole parse
runs), and the same source map; a one-line edit re-parses only its block."""

from __future__ import annotations

import hashlib
import importlib.util
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import generator.spec.blocks as blocks
import generator.spec.load as load
import generator.spec.sourcemap as sourcemap
from generator.errors import ApiforgeError
from generator.spec.blocks import BlockSplit, load_yaml_blocks
from generator.spec.load import load_yaml, parse_document
from generator.spec.sourcemap import SourceMap, _BlockIndex, _index_yaml, _line_starts_str

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


def _equality_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("yaml_equality", ROOT / "bench/yaml_equality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EQ = _equality_module()


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split every entry that can be, so small texts split at every level."""
    monkeypatch.setattr(blocks, "BLOCK_SPLIT_BYTES", 0)


def read(text: str | bytes) -> str:
    """How `text` was read ("blocks", "whole" when refused, "rejected" when the whole parse
    raises too), after checking it against the whole parse in every way; read again with
    its blocks cached, nothing is parsed."""
    raw = text if isinstance(text, bytes) else text.encode()
    how, diff, _, _ = EQ.compare_blocks(raw)
    assert diff is None, diff
    return str(how)


def layout_of(text: str) -> Any:
    loaded = load_yaml_blocks(text.encode(), "d", None)
    assert loaded is not None
    return loaded[1]


SPEC = """\
# a spec
openapi: 3.1.0
info:
  title: T
  version: '1'
paths:
  /items/{id}:
    get:
      description: >-
        Folded text

        with a blank line
      responses:
        '200': {description: ok}
        default:
          description: |+
            kept


    post:
      operationId: create
  '/a~b/c':
    get: {}
# a comment at column 0 between entries
components:
  schemas:
    Item:
      type: object
      properties:
        id: {type: string, example: "x: y"}
        when: {example: 2001-12-14}
        n: {example: 12}
        tags:
        - one
        - two
    Other:
      description: "a quoted
        scalar on two lines"
      enum: [a,
        b]
tags:
- name: items
- name: other
x-last: the end without a newline"""


def test_a_spec_is_read_by_blocks_at_every_level() -> None:
    assert read(SPEC) == "blocks"
    layout = layout_of(SPEC)
    paths = layout.root["paths"]
    assert isinstance(paths, BlockSplit)
    assert isinstance(paths.children["~1items~1{id}"], BlockSplit)
    assert "~1a~0b~1c" in paths.children
    assert isinstance(layout.root["components"].children["schemas"], BlockSplit)
    assert len(layout.leaves) > 15


@pytest.mark.parametrize(
    "text",
    [
        "\ufeffopenapi: 3.1.0\npaths:\n  /a:\n    get: {}\n  /b:\n    get: {}\n",
        SPEC.replace("\n", "\r\n"),
        "# c\n\n  # indented comment\na:\n  b:\n    c: 1\n    d: 2\n  e: [1, 2]\n",
        "a:\n  b: 1\n\n  \n   \n  c: 2\n\n",  # blank lines with spaces between entries
        "a:\n  - x: 1\n    y: 2\n  - z\nb:\n- 1\n- 2\nc: 3\n",
        "a:\n  k: |\n    text\n\n    more\n  j: >\n   fold\n\n  l: 1\nb: |-\n x\n",
        "a:\n  k: 'single ''quoted''\n    across lines'\n  j: \"double\\\n    escaped\"\nb: 1\n",
        "a:\n  k: [1,\n2,\n3]\n  j: {x: y,\n z: w}\nb: {p: q,\n r: s}\n",
        "a:\n  k: plain text\n    continued here\n  j: 1\n",
        "1: int\n1.0: float, same key\ntrue: bool\nnull: none\n2001-12-14: date\n'2': str\n",
        "a: {x: 1}\nb:\n  c: 1\nb2:\n  c: 2\n",
        "s~/x:\n  a/b:\n    c~d: 1\n  e: 2\n'': empty key\n",
        "caf\u00e9:\n  \u2603: snow\n  k: \U0001f600 and more text here\n",
        "a:\n  description: see &lt;code&gt; and **bold** &amp; *emphasis* here\n  b: 1\n",
        "a:\n  k: &anchor unused\n  j: 1\nb: 2\n",
        "a:\n  k: v   # trailing comment\n  # comment\n  j: 1 # another\n",
        "a:   # comment after the header\n  k: 1\n  j: 2\n",
        "a: 1\nb: 2",
    ],
    ids=[
        "bom",
        "crlf",
        "comments",
        "blank lines with spaces",
        "indentless sequences",
        "block scalars",
        "quoted across lines",
        "flow across lines",
        "plain across lines",
        "keys equal as values",
        "repeated texts",
        "escaped tokens",
        "unicode",
        "html entities and markdown",
        "an anchor nothing uses",
        "comments after values",
        "header with a comment",
        "no final newline",
    ],
)
def test_edge_cases_read_by_blocks_are_the_whole_parse(text: str) -> None:
    assert read(text) == "blocks"


@pytest.mark.parametrize(
    "text",
    [
        "a:\n  k: &x {p: 1}\nb:\n  j: *x\n",  # an alias to another block
        "a:\n  k: &x {p: 1}\n  j: *x\nb: 1\n",  # one block, but judged by names
        "a:\n  k: 1\n  <<: {p: 1}\n",  # a merge key where the text splits
        "a:\n  k: 1\n  k: 2\nb: 1\n",  # two keys alike where it splits
        "a: 1\n'a': 2\n",
        "a:\n  k: 1\n  ? [x]\n  : 2\n",  # a complex key: two entries in one block
        "a:\n  k: 'quote\n  j: still quoted'\n",  # a key-like line inside a quoted scalar
        "a:\n  k: [1,\n  j: 2]\n",  # ... inside a flow sequence
        "--- \na:\n  k: 1\n",
        "%YAML 1.1\n---\na: 1\n",
        "a:\n  k: 1\n...\n",
        "a:\n  k: 1\rb: 2\n",  # a lone CR
        "a:\n  k: x\u2028y\n  j: 1\n",
        "a:\n  k: x\x85y\n  j: 1\n",
        "- a\n- b\n",
        "just a scalar\n",
        "{a: 1, b: 2}\n",
        "# only a comment\n",
        "",
        "  a: 1\nb: 2\n",  # indented before the first top-level key
    ],
    ids=[
        "alias across blocks",
        "alias in its block",
        "merge key",
        "duplicate keys",
        "keys alike",
        "complex key",
        "quoted scalar",
        "flow sequence",
        "document start",
        "directive",
        "document end",
        "lone cr",
        "line separator",
        "next line",
        "root sequence",
        "root scalar",
        "root flow mapping",
        "comment only",
        "empty",
        "indented prefix",
    ],
)
def test_what_cannot_be_proven_the_same_is_read_whole(text: str) -> None:
    assert read(text) in ("whole", "rejected")


ERRORS = [
    "a:\n  k: 1\nb:\n  j: !foo x\n",  # an unknown tag in one block
    "a:\n  k: &x 1\nb:\n  j: &x 2\n",  # an anchor defined twice: PyYAML's error
    "a:\n  k: *nope\n",
    "a:\n  k: !!int 1_000\nb: 1\n",  # not a YAML 1.2 integer
    "a:\n  k: [1, 2\nb:\n  j: 3\n",
    "a:\n\tk: 1\nb: 1\n",
    "a:\n  k: 1\n j: 2\n",  # bad indentation
    "a:\n  k: 1\n    j: 2\n",
    "a:\n  k: \x07\n",
    "a:\n  - x\n  k: 1\n",
    "a:\n  k: {<<: 1}\n",
    "a: 1\n\tb: 2\n",
    "a:\n  b: 1\nc\n",
]


@pytest.mark.parametrize("text", ERRORS)
def test_texts_the_whole_parse_rejects_are_refused(text: str) -> None:
    assert read(text) == "rejected"


def test_a_split_header_needs_an_empty_value() -> None:
    """`key: |` or `key: value` lines are never split into the lines below them."""
    text = "a: |\n  k: 1\n  j: 2\nb: >\n  k: 1\n  j: 2\nc:\n  |\n  k: 1\nd:\n  - k: 1\n  - j: 2\n"
    assert read(text) == "blocks"
    layout = layout_of(text)
    assert not isinstance(layout.root["a"], BlockSplit)
    assert not isinstance(layout.root["b"], BlockSplit)
    assert read("a:\n  |\n  k: 1\n") == "blocks"
    assert not isinstance(layout.root["d"], BlockSplit)


def test_sharing_inside_a_block_and_no_sharing_across_identical_blocks() -> None:
    text = "a:\n  k: {x: 1}\nb:\n  k: {x: 1}\n"
    loaded = load_yaml_blocks(text.encode(), "d", None)
    assert loaded is not None
    data = loaded[0]
    assert data == load_yaml(text)[0]
    assert data["a"]["k"] is not data["b"]["k"]  # the same text twice: two objects, as whole


def test_cached_blocks_give_the_same_data_and_fresh_objects() -> None:
    raw = SPEC.encode()
    first = load_yaml_blocks(raw, "d", None)
    assert first is not None
    again = load_yaml_blocks(raw, "d", first[2])
    assert again is not None and again[1].parsed == 0 and again[2] is first[2]
    assert EQ.difference(first[0], again[0]) is None
    assert again[0]["paths"] is not first[0]["paths"]


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "parsed"),
    [
        ("Folded text", "Folded texts", 1),  # a description line
        ("  '/a~b/c':\n", "  /new:\n    get: {}\n  '/a~b/c':\n", 2),  # a new entry, split
        ("openapi: 3.1.0\n", "openapi: 3.1.0\n\n", 1),  # a line inserted high up
        ("        - one\n", "", 1),  # a deleted line
        ("      operationId: create\n", "      operationId: create\n      # note\n", 1),
    ],
)
def test_an_edit_re_parses_only_its_block(old: str, new: str, parsed: int) -> None:
    first = load_yaml_blocks(SPEC.encode(), "d", None)
    assert first is not None
    edited = _edit(SPEC, old, new)
    how, diff, _, (count, leaves) = EQ.compare_blocks(edited.encode(), first[2])
    assert how == "blocks" and diff is None, diff
    assert count == parsed and leaves > 15


def test_an_edit_that_breaks_the_yaml_is_refused() -> None:
    first = load_yaml_blocks(SPEC.encode(), "d", None)
    assert first is not None
    broken = _edit(SPEC, "      operationId: create", "      operationId: [create")
    assert load_yaml_blocks(broken.encode(), "d2", first[2]) is None


def _whole_locations(text: str) -> dict[str, tuple[int, int]]:
    starts = _line_starts_str(text)
    reference = _index_yaml(text, starts, load_yaml(text)[1])
    smap = SourceMap(reference, text.encode(), starts)
    return {pointer: smap.locate(pointer) for pointer in reference}


def test_block_index_locates_every_pointer_as_the_whole_map() -> None:
    for text in (SPEC, SPEC.replace("\n", "\r\n"), "\ufeff" + SPEC):
        loaded = load_yaml_blocks(text.encode(), "d", None)
        assert loaded is not None
        index = _BlockIndex(loaded[1])
        expected = _whole_locations(text.removeprefix("\ufeff"))
        assert {p: index.locate(p) for p in expected} == expected
        assert index.locate("/paths/nope/x") == expected["/paths"]
        assert index.locate("") == (1, 1)


# --- through parse_document, with the cache ------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("APIFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    monkeypatch.setattr(load, "CACHE_MIN_BYTES", 0)
    return tmp_path


def _load(path: Path) -> Any:
    return parse_document(str(path), path, path.read_bytes())


def _check(doc: Any) -> None:
    text = doc.text.decode("utf-8-sig")
    assert EQ.difference(load_yaml(text)[0], doc.data) is None
    smap = SourceMap.for_document(doc)
    expected = _whole_locations(text)
    assert {p: smap.locate(p) for p in expected} == expected


def test_regenerating_after_an_edit_parses_and_maps_one_block(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    doc = _load(spec)
    assert doc._blocks is not None and doc._blocks.parsed == len(doc._blocks.leaves)
    _check(doc)

    doc = _load(spec)  # unchanged: nothing parsed, the maps come from the cache
    assert doc._blocks is not None and doc._blocks.parsed == 0
    mapped: list[str] = []
    original = sourcemap._index_yaml

    def counting(text: str, *args: Any) -> dict[str, int]:
        mapped.append(text)
        return original(text, *args)

    monkeypatch.setattr(sourcemap, "_index_yaml", counting)
    SourceMap.for_document(doc)
    assert mapped == []

    spec.write_text(_edit(SPEC, "Folded text", "Folded, edited text"))
    doc = _load(spec)
    assert doc._blocks is not None and doc._blocks.parsed == 1
    monkeypatch.setattr(sourcemap, "_index_yaml", original)
    _check(doc)  # (maps the edited block only; checked against the whole map)

    spec.write_text("# new first line\n" + spec.read_text())  # every line moves down
    doc = _load(spec)
    assert doc._blocks is not None and doc._blocks.parsed == 1
    _check(doc)


def test_an_unchanged_file_is_read_from_its_blocks_without_importing_pyyaml(
    cache: Path,
) -> None:
    """PyYAML is imported to parse a block, not to name the blocks' cache (its version comes
    from its dist-info folder): an unchanged regeneration imports none of it."""
    import subprocess
    import sys

    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    program = (
        "import sys, generator.spec.load as load\n"
        "load.CACHE_MIN_BYTES = 0\n"
        "from pathlib import Path\n"
        f"path = Path({str(spec)!r})\n"
        "doc = load.parse_document(str(path), path, path.read_bytes())\n"
        "print(doc._blocks.parsed, 'yaml' in sys.modules)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][0] != "0" and runs[0][1] == "True"  # parsed: PyYAML was needed
    assert runs[1] == ["0", "False"]  # served from the blocks: not imported


def test_no_cache_means_the_whole_parse(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    doc = _load(spec)
    assert doc._blocks is None and doc._yaml_tree is not None
    assert not (cache / "cache").exists()


def test_small_files_and_stdin_are_read_whole(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = parse_document("<stdin>", None, SPEC.encode())
    assert doc._blocks is None
    monkeypatch.setattr(load, "CACHE_MIN_BYTES", 10**6)
    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    assert _load(spec)._blocks is None


def test_errors_after_an_edit_are_the_whole_parse_errors(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    _load(spec)
    for bad in ("      operationId: [create", "      operationId: !nope x", "\toperationId: x"):
        spec.write_text(_edit(SPEC, "      operationId: create", bad))
        with pytest.raises(ApiforgeError) as blocks:
            _load(spec)
        monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
        with pytest.raises(ApiforgeError) as whole:
            _load(spec)
        monkeypatch.delenv("APIFORGE_NO_CACHE")
        assert blocks.value.render() == whole.value.render()
    spec.write_text(SPEC)  # fixed again: the blocks of the last good read are still there
    doc = _load(spec)
    assert doc._blocks is not None and doc._blocks.parsed <= 1


def test_a_text_read_whole_is_cached_whole(cache: Path) -> None:
    spec = cache / "spec.yaml"
    spec.write_text("a:\n  k: &x {p: 1}\nb:\n  j: *x\n")
    doc = _load(spec)
    assert doc._blocks is None and doc.data["b"]["j"] is doc.data["a"]["k"]
    assert (cache / "cache" / ("parse" + load._CACHE_VERSION)).exists()


def _corpus_sample() -> list[Path]:
    if not CORPUS.exists():
        return []
    files = sorted(
        p
        for p in CORPUS.rglob("*")
        if p.suffix in (".yaml", ".yml") and p.is_file() and 20_000 < p.stat().st_size < 150_000
    )
    return files[:: max(1, len(files) // 8)]  # a few files across the providers


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is beside the clone")
@pytest.mark.parametrize("path", _corpus_sample(), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_sample_by_blocks(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "BLOCK_SPLIT_BYTES", 2048)
    raw = path.read_bytes()
    try:
        raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8")
    _, diff, entries, _ = EQ.compare_blocks(raw)
    assert diff is None, diff
    if entries is not None:
        edited = EQ.mutate(raw, random.Random(7), "edit")
        _, diff, _, _ = EQ.compare_blocks(edited, entries)
        assert diff is None, diff


def test_digest_is_only_a_key() -> None:
    raw = SPEC.encode()
    digest = hashlib.sha256(raw).hexdigest()
    loaded = load_yaml_blocks(raw, digest, None)
    assert loaded is not None and ("R" + digest) in loaded[2]


def test_an_entry_digest_follows_the_text_of_that_entry_only(cache: Path) -> None:
    spec = cache / "spec.yaml"
    spec.write_text(SPEC)
    digest = _load(spec).entry_digest("components")
    assert digest is not None and _load(spec).entry_digest("nope") is None
    spec.write_text(SPEC.replace("Folded text", "Other text"))  # under paths
    assert _load(spec).entry_digest("components") == digest
    assert _load(spec).entry_digest("paths") != digest
    spec.write_text(SPEC.replace('example: "x: y"', 'example: "x: z"'))  # under components
    assert _load(spec).entry_digest("components") != digest
    whole = parse_document("spec.yaml", None, SPEC.encode())  # not read block by block
    assert whole._blocks is None and whole.entry_digest("components") is None
