"""Loading, $ref resolution, source locations and the IR, on small specs and the corpus."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

import pytest

from generator.errors import ApiforgeError
from generator.ir import Where
from generator.spec import load, load_spec
from generator.spec.load import parse_document
from generator.spec.refs import Resolver
from generator.spec.sourcemap import SourceMap
from generator.spec.swagger2 import _VERSION as SWAGGER2_VERSION
from generator.spec.swagger2 import convert
from tests.support import models_text

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


MINIMAL = """\
openapi: 3.1.0
info: {title: T, version: "1"}
paths:
  /v1/items/{itemId}:
    parameters:
      - {name: itemId, in: path, required: true, schema: {type: string}}
      - {name: X-Trace, in: header, schema: {type: string}, description: path level}
    get:
      parameters:
        - {name: x-trace, in: header, schema: {type: integer}, description: op level}
      responses:
        "200": {description: ok}
        2XX: {description: any}
        default: {description: err}
"""


def test_path_level_parameters_merge_and_operation_level_wins(tmp_path: Path) -> None:
    api = load_spec(write(tmp_path, MINIMAL)).api
    (op,) = api.operations
    assert op.id == "get_v1_items_itemId"  # derived: no operationId
    assert [p.name for p in op.parameters] == ["itemId", "x-trace"]
    trace = op.parameter("X-TRACE", "header")
    assert trace is not None and trace.description == "op level"
    assert [r.status for r in op.responses] == ["200", "2XX", "default"]
    assert [r.status_class for r in op.responses] == ["2", "2", "default"]


SHARED = """\
openapi: 3.1.0
info: {title: T, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: "#/components/parameters/page"}]
      responses:
        "404": {$ref: "#/components/responses/gone"}
        "410": {$ref: "#/components/responses/gone"}
  /b:
    get:
      parameters:
        - $ref: "#/components/parameters/page"
        - {name: page, in: header, schema: {type: string}}
      responses:
        "200":
          description: ok
          headers:
            X-One: {$ref: "#/components/headers/count"}
            X-Two: {$ref: "#/components/headers/count"}
        "404": {$ref: "#/components/responses/gone"}
components:
  parameters:
    page: {name: page, in: query, schema: {type: integer}}
  headers:
    count: {schema: {type: integer}, description: a count}
  responses:
    gone: {description: not here}
"""


def test_a_refd_parameter_response_or_header_is_built_once_per_use_it_can_share(
    tmp_path: Path,
) -> None:
    a, b = load_spec(write(tmp_path, SHARED)).api.operations
    # the same `$ref`: one object, located at its target
    assert a.parameters[0] is b.parameters[0]
    assert a.parameters[0].where.pointer == "/components/parameters/page"
    assert [(p.name, p.location) for p in b.parameters] == [("page", "query"), ("page", "header")]
    # a response is shared only under the same status; a header only under the same name
    gone_404, gone_410 = a.responses
    assert (gone_404.status, gone_410.status) == ("404", "410")
    assert gone_404.where == gone_410.where and gone_404 is b.responses[1]
    one, two = b.responses[0].headers
    assert (one.name, two.name) == ("X-One", "X-Two")
    assert one.where == two.where and one.description == "a count"


def test_multi_file_refs_resolve_with_their_own_locations() -> None:
    loaded = load_spec(str(FIXTURES / "multi" / "openapi.yaml"))
    (op,) = loaded.api.operations
    assert op.id == "createThing" and op.method == "post"
    idem = op.patterns.idempotency
    assert idem is not None and idem.required
    assert idem.where.file.endswith("shared/parameters.yaml")
    assert loaded.resolver.locate(idem.where) == (1, 1)
    rate = op.patterns.rate_limit
    assert rate is not None and rate.family == "x-ratelimit"
    assert loaded.resolver.locate(rate.where)[0] == 1
    # the recursive schema is referenced, not inlined, so loading terminates
    assert loaded.api.schemas["Thing"].properties == {"id", "child"}


def test_unresolved_ref_names_file_line_and_pointer(tmp_path: Path) -> None:
    spec = MINIMAL.replace(
        '"200": {description: ok}', '"200": {$ref: "#/components/responses/Nope"}'
    )
    with pytest.raises(ApiforgeError) as err:
        load_spec(write(tmp_path, spec))
    text = err.value.render()
    assert (
        "spec.yaml:12:" in text
        and "#/components/responses/Nope" in text
        and "does not exist" in text
    )


def test_ref_cycle_is_an_error_not_a_hang(tmp_path: Path) -> None:
    spec = (
        MINIMAL
        + """\
components:
  responses:
    A: {$ref: "#/components/responses/B"}
    B: {$ref: "#/components/responses/A"}
"""
    )
    spec = spec.replace('"200": {description: ok}', '"200": {$ref: "#/components/responses/A"}')
    with pytest.raises(ApiforgeError, match="cycle"):
        load_spec(write(tmp_path, spec))


def test_missing_relative_file(tmp_path: Path) -> None:
    spec = MINIMAL.replace('"200": {description: ok}', '"200": {$ref: "other.yaml#/R"}')
    with pytest.raises(ApiforgeError, match="no such file"):
        load_spec(write(tmp_path, spec))


@pytest.mark.parametrize("is_json", [False, True])
def test_source_map_points_at_keys_and_items(is_json: bool) -> None:
    if is_json:
        text = '{\n  "a": {\n    "b/c": [1, {"d": 2}]\n  },\n  "e~f": "x"\n}\n'
    else:
        text = "a:\n  b/c:\n    - 1\n    - d: 2\ne~f: x\n"
    doc = parse_document("t", None, text.encode())
    smap = SourceMap.for_document(doc)
    assert smap.locate("/a")[0] == (2 if is_json else 1)
    assert smap.locate("/a/b~1c")[0] == (3 if is_json else 2)
    assert smap.locate("/a/b~1c/1/d")[0] == (3 if is_json else 4)
    assert smap.locate("/e~0f")[0] == 5
    # a pointer that does not exist falls back to its nearest ancestor
    assert smap.locate("/a/zzz") == smap.locate("/a")


def test_webhooks_callbacks_and_x_webhooks_are_all_events(tmp_path: Path) -> None:
    spec = """\
openapi: 3.1.0
info: {title: T, version: "1"}
paths:
  /subscribe:
    post:
      operationId: subscribe
      responses: {"201": {description: ok}}
      callbacks:
        onEvent:
          "{$request.body#/url}":
            post:
              parameters:
                - {name: X-Acme-Signature, in: header, schema: {type: string}}
              responses: {"200": {description: ok}}
webhooks:
  user.created:
    post:
      parameters:
        - {name: webhook-id, in: header, schema: {type: string}}
        - {name: webhook-timestamp, in: header, schema: {type: string}}
        - {name: webhook-signature, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {id: {type: string}}}
      responses: {"200": {description: ok}}
x-webhooks:
  legacy.event:
    post:
      responses: {"200": {description: ok}}
"""
    api = load_spec(write(tmp_path, spec)).api
    hooks = {h.name: h for h in api.webhooks}
    assert set(hooks) == {"subscribe.onEvent", "user.created", "legacy.event"}
    assert hooks["subscribe.onEvent"].source == "callback"
    created = hooks["user.created"].signature
    assert created is not None and created.scheme == "standard-webhooks" and created.payload_has_id
    assert hooks["legacy.event"].signature is None


def test_resolver_target_handles_escaped_pointers(tmp_path: Path) -> None:
    doc = parse_document(str(tmp_path / "x.yaml"), None, b"paths:\n  /a/{id}:\n    get: {}\n")
    resolver = Resolver(doc)
    target = resolver.target(Where(doc.name, ""), "#/paths/~1a~1%7Bid%7D/get")
    assert target.pointer == "/paths/~1a~1{id}/get"
    assert resolver.get(target) == {}


@pytest.mark.skipif(
    not (CORPUS / "INDEX.tsv").exists(), reason="../shared/corpus is beside the clone"
)
def test_digitalocean_multi_file_tree_loads_with_rate_limits() -> None:
    api = load_spec(str(CORPUS / "digitalocean/specification/DigitalOcean-public.v2.yaml")).api
    assert len(api.operations) > 500
    assert sum(1 for o in api.operations if o.patterns.rate_limit) > 400


def test_the_content_hash_is_made_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold read (no cache) does not hash the text (~0.03 s of a 4 MB spec); asked, the
    digest is the text's SHA-256, and a Swagger 2.0 document's 3.0 reading has its own."""
    monkeypatch.setenv("APIFORGE_NO_CACHE", "1")
    text = b"swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"
    doc = parse_document("t.yaml", None, text)
    assert doc.locate("/info/title") == (2, 8)  # the source map needs no digest either
    assert "digest" not in vars(doc)
    assert doc.digest == hashlib.sha256(text).hexdigest()
    converted = convert(doc)
    expected = hashlib.sha256(f"swagger2/{SWAGGER2_VERSION}/{doc.digest}".encode()).hexdigest()
    assert converted.digest == expected != doc.digest


OUTSIDE_SPEC = """\
openapi: 3.0.3
info: {title: Things, version: "1.0"}
paths:
  /things:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "../common/types.yaml#/components/schemas/Thing"}
components:
  schemas:
    Local:
      type: object
      properties:
        thing: {$ref: "../common/types.yaml#/components/schemas/Thing"}
"""
OUTSIDE_TYPES = """\
components:
  schemas:
    Thing:
      type: object
      properties: {name: {type: string}, part: {$ref: "parts/part.yaml"}}
"""


def test_a_spec_naming_files_outside_its_folder_generates_models(tmp_path: Path) -> None:
    """The models library refuses a file outside the folder of what it reads ("Blocked
    unsafe local $ref"): it is given the spec from the folder that holds every file."""
    import os
    import subprocess
    import sys

    from generator.spec import SpecText

    (tmp_path / "api").mkdir()
    (tmp_path / "common" / "parts").mkdir(parents=True)
    spec = tmp_path / "api" / "spec.yaml"
    spec.write_text(OUTSIDE_SPEC)
    (tmp_path / "common" / "types.yaml").write_text(OUTSIDE_TYPES)
    (tmp_path / "common" / "parts" / "part.yaml").write_text("type: object\n")
    source = load_spec(str(spec)).source
    assert isinstance(source, SpecText) and source.folder == tmp_path
    assert '"$ref": "common/types.yaml#/components/schemas/Thing"' in source
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", str(spec), "-o", str(out)],
        cwd=tmp_path / "common",  # not where the spec is: the refs are not read from here
        capture_output=True,
        text=True,
        env={**os.environ, "APIFORGE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    models = models_text(out / "client")
    assert "class Thing(BaseModel):" in models and "thing: Thing | None" in models


def test_a_spec_whose_files_are_in_its_folder_is_read_from_its_file(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    spec = tmp_path / "spec.yaml"
    spec.write_text(OUTSIDE_SPEC.replace("../common/", "common/"))
    (tmp_path / "common" / "types.yaml").write_text(
        OUTSIDE_TYPES.replace(', part: {$ref: "parts/part.yaml"}', "")
    )
    assert load_spec(str(spec)).source == spec


def _big_spec(anchor: bool) -> str:
    """An OpenAPI YAML text over `CACHE_MIN_BYTES` (the cache's threshold); with `anchor`, one
    only PyYAML reads."""
    lines = ["openapi: 3.1.0", "info: {title: Big, version: '1'}", "paths:"]
    for i in range(2500):
        lines += [f"  /things{i}:", "    get:", "      responses:", "        '200':"]
        lines += [f"          description: thing {i} {'x' * 60}"]
    if anchor:
        lines += ["components:", "  schemas:", "    A: &a {type: string}", "    B: *a"]
    text = "\n".join(lines) + "\n"
    assert len(text) > load.CACHE_MIN_BYTES
    return text


@pytest.mark.parametrize("anchor", [False, True], ids=["rapidyaml reads it", "PyYAML must"])
def test_lint_reads_whole_what_it_would_not_read_faster_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anchor: bool
) -> None:
    """`read_whole` (lint): a text rapidyaml or `json` reads leaves the cache alone (filling
    it cost more than reading again); one PyYAML must read is cached as before; a command
    that reads block by block (generate) caches both. The data and locations are the same."""
    monkeypatch.delenv("APIFORGE_NO_CACHE", raising=False)
    spec = tmp_path / "big.yaml"
    spec.write_text(_big_spec(anchor))
    for whole in (True, False):
        cache = tmp_path / f"cache-{whole}"
        monkeypatch.setenv("APIFORGE_CACHE_DIR", str(cache))
        with load.read_whole() if whole else contextlib.nullcontext():
            doc = load.load_document(str(spec))
            located = doc.locate("/paths/~1things2499/get/responses/200/description")
        assert located == (12500 + 3, 11)
        assert doc.data["paths"]["/things7"]["get"]["responses"]["200"]["description"]
        kept = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
        assert (kept == []) == (whole and not anchor), kept
        assert doc.cached == (not whole or anchor)
