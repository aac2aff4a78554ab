"""The per-resource plan cache (`generator.render.plan_cache`): a resource's operation plans
are served from the previous run only when everything they are made from is the same. Each
test edits a spec after a warm run so that a stale plan would show: the regeneration must
equal a generation without caches, byte for byte, warnings included."""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from generator.pipeline.generate import generate
from generator.render import plan_cache
from generator.server import plan as server

WIDGETS = """openapi: 3.1.0
info:
  title: Widgets
  version: '1'
paths:
  /widgets:
    get:
      operationId: fetchWidgets
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: array
                items:
                  $ref: '#/components/schemas/Widget'
  /widgets/{widgetId}:
    parameters:
      - name: widgetId
        in: path
        required: true
        schema:
          type: string
    patch:
      operationId: patchWidget
      requestBody:
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/Widget'
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Widget'
components:
  schemas:
    Widget:
      type: object
      properties:
        name:
          type: string
"""


pytestmark = pytest.mark.usefixtures("private_cache")  # (conftest.py)


@pytest.fixture
def caches(
    monkeypatch: pytest.MonkeyPatch, one_process: None
) -> Iterator[list[plan_cache.PlanCache]]:
    """Every PlanCache a run makes (its hits and misses say what was served), all in this
    process (the client tree is not planned in a forked child)."""
    yield _instances(monkeypatch, plan_cache.PlanCache)


T = TypeVar("T")


def _instances(monkeypatch: pytest.MonkeyPatch, cls: type[T]) -> list[T]:
    """Every instance of `cls` made from now on (in this process)."""
    made: list[T] = []
    real = cls.__init__

    def init(self: T, *args: object, **kwargs: object) -> None:
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(cls, "__init__", init)
    return made


@pytest.fixture
def planned_ops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the operations the server planner plans (not served)."""
    seen: list[str] = []
    real = server._Planner.operation

    def operation(self: server._Planner, op: server.Operation, *args: object) -> object:
        seen.append(op.id)
        return real(self, op, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(server._Planner, "operation", operation)
    return seen


@pytest.fixture(params=["whole", "by blocks"])
def reading(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[plan_cache.PlanInputs]]:
    """The spec read whole (it is small), then block by block with `paths` split into its path
    items, as Stripe's 4 MB is: the plan inputs' digests are then its blocks' text hashes.
    Checks that the second reading was the one used."""
    from generator.spec import blocks, load

    if request.param == "by blocks":
        monkeypatch.setattr(load, "CACHE_MIN_BYTES", 0)
        monkeypatch.setattr(blocks, "BLOCK_SPLIT_BYTES", 64)
    made = _instances(monkeypatch, plan_cache.PlanInputs)
    yield made
    by_blocks = [i for i in made if i.blocks[1] is not None]
    assert bool(by_blocks) == (request.param == "by blocks")
    assert all("~1v1~1refunds" in (i.blocks[1] or {}) for i in by_blocks)


def _snapshot(out: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return sorted(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def _run(
    spec: Path, out: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, bytes], list[str]]:
    caplog.clear()
    shutil.rmtree(out, ignore_errors=True)  # a fresh tree: create-once files too
    generate(str(spec), out, lint=False)
    return _snapshot(out), _warnings(caplog)


def _uncached(
    spec: Path, out: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, bytes], list[str]]:
    with monkeypatch.context() as m:
        m.setenv("APIFORGE_NO_CACHE", "1")
        return _run(spec, out, monkeypatch, caplog)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _check_fresh(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> dict[str, bytes]:
    """The warm regeneration of `spec` equals a generation without caches (files and
    warnings); returns the files."""
    cached = _run(spec, tmp_path / "cached", monkeypatch, caplog)
    fresh = _uncached(spec, tmp_path / "fresh", monkeypatch, caplog)
    assert cached == fresh
    return cached[0]


def test_an_unchanged_spec_is_served_every_resource(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    caches: list[plan_cache.PlanCache],
    planned_ops: list[str],
) -> None:
    first = _run(spec, tmp_path / "a", monkeypatch, caplog)
    assert {c.misses > 0 for c in caches} == {True} and len(caches) == 2
    caches.clear()
    planned_ops.clear()
    assert _run(spec, tmp_path / "b", monkeypatch, caplog) == first
    assert [(c.hits > 0, c.misses) for c in caches] == [(True, 0), (True, 0)]
    assert planned_ops == []


def test_a_new_operation_replans_its_resource_only(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    planned_ops: list[str],
    reading: list[plan_cache.PlanInputs],
) -> None:
    _run(spec, tmp_path / "warm", monkeypatch, caplog)
    probe = (
        "  /v1/refunds/{refundId}/notes:\n    get:\n      operationId: listRefundNotes\n"
        "      tags: [Refunds]\n      responses:\n        '200':\n          description: ok\n"
    )
    _edit(spec, "paths:\n", "paths:\n" + probe)
    planned_ops.clear()
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    # the warm regeneration planned the Refunds resource alone (then the uncached run all)
    refunds = planned_ops[: planned_ops.index("listRefundNotes") + 1]
    assert set(refunds) <= {"createRefund", "listRefunds", "getRefund", "listRefundNotes"}
    assert b"list_refund_notes" in files["client/acme_payments_api_client/resources/refunds.py"]


def test_an_edited_component_an_operation_reads(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    reading: list[plan_cache.PlanInputs],
) -> None:
    before = _run(spec, tmp_path / "warm", monkeypatch, caplog)[0]
    # listPayments' `status` query parameter is this enum: its Literal changes
    _edit(
        spec,
        "    PaymentStatus:\n      type: string\n      enum: [",
        "    PaymentStatus:\n      type: string\n      enum: [disputed, ",
    )
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    router = "server/acme_payments_api_server/routers/payments.py"
    assert b"disputed" in files[router] and b"disputed" not in before[router]


def test_edited_security(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    before = _run(spec, tmp_path / "warm", monkeypatch, caplog)[0]
    _edit(
        spec,
        "security:\n  - bearerAuth: []\n  - apiKeyAuth: []\n",
        "security:\n  - apiKeyAuth: []\n",
    )
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    readme = "server/README.md"
    assert files[readme] != before[readme]


def test_an_edited_job_status_operation_in_another_resource(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    before = _run(spec, tmp_path / "warm", monkeypatch, caplog)[0]
    # getJob (resource Jobs) now answers a schema without `result`: createReport's (resource
    # Reports) job result type, which comes from it, becomes Any (no class is added or lost)
    answer = (
        "        '200':\n          description: The job.\n          content:\n"
        "            application/json:\n              schema:\n"
        "                $ref: '#/components/schemas/Payment'\n"
    )
    _edit(
        spec,
        "      tags: [Jobs]\n      responses:\n        '200':\n"
        "          $ref: '#/components/responses/JobResponse'\n",
        "      tags: [Jobs]\n      responses:\n" + answer,
    )
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    reports = "client/acme_payments_api_client/resources/reports.py"
    assert b"JobHandle[Any]" in files[reports] and b"JobHandle[Any]" not in before[reports]


def test_a_new_resource_that_renames_another(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _run(spec, tmp_path / "warm", monkeypatch, caplog)
    # tag `-Payments` sorts first and is `payments` too: the Payments resource, whose
    # operations are unchanged, becomes module `payments_2` and class `Payments2Base`
    probe = (
        "  /v1/zz:\n    get:\n      operationId: zzProbe\n      tags: ['-Payments']\n"
        "      responses:\n        '200':\n          description: ok\n"
    )
    _edit(spec, "paths:\n", "paths:\n" + probe)
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    router = files["server/acme_payments_api_server/routers/payments_2.py"]
    assert b"list_payments" in router and b"Payments2Base" in router


def test_a_new_operation_that_renames_a_method_of_its_resource(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    spec = tmp_path / "widgets.yaml"
    spec.write_text(WIDGETS)
    before = _run(spec, tmp_path / "warm", monkeypatch, caplog)[0]
    module = "client/widgets_client/resources/widgets.py"
    assert b"def update(" in before[module]
    # a second operation that wants `update`: neither gets it, patchWidget is named after
    # its operationId
    put = (
        "    put:\n      operationId: replaceWidget\n      responses:\n"
        "        '204':\n          description: replaced\n"
    )
    _edit(spec, "    patch:\n", put + "    patch:\n")
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    assert b"def patch_widget(" in files[module] and b"def update(" not in files[module]


UNENFORCED = """        - name: reference
          in: query
          schema:
            type: string
            pattern: '^(?!test_).*$'
"""


def test_warnings_are_replayed_at_their_current_lines(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    planned_ops: list[str],
) -> None:
    # listPayments gets a query parameter whose pattern the server cannot enforce: planning
    # the Payments router warns, naming the line
    _edit(
        spec,
        "        - name: customerId\n          in: query\n",
        UNENFORCED + "        - name: customerId\n          in: query\n",
    )
    _, said = _run(spec, tmp_path / "warm", monkeypatch, caplog)
    first = [w for w in said if "is not enforced by the server" in w]
    assert len(first) == 1
    line = int(re.search(r"acme\.yaml:(\d+)", first[0]).group(1))  # type: ignore[union-attr]
    # five lines above it (a new operation in another resource): the Payments resource is
    # served, and its warning names the line the parameter is on now
    probe = (
        "  /v1/probes:\n    get:\n      operationId: listProbes\n      responses:\n"
        "        '200':\n          description: ok\n"
    )
    assert probe.count("\n") == 6
    _edit(spec, "paths:\n", "paths:\n" + probe)
    planned_ops.clear()
    files, said = _run(spec, tmp_path / "cached", monkeypatch, caplog)
    assert "listPayments" not in planned_ops  # served
    now = [w for w in said if "is not enforced by the server" in w]
    assert now == [first[0].replace(f"acme.yaml:{line}:", f"acme.yaml:{line + 6}:")]
    assert (files, said) == _uncached(spec, tmp_path / "fresh", monkeypatch, caplog)


def test_no_cache_when_warnings_are_not_all_recorded(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    caches: list[plan_cache.PlanCache],
) -> None:
    _edit(
        spec,
        "        - name: customerId\n          in: query\n",
        UNENFORCED + "        - name: customerId\n          in: query\n",
    )
    quiet = logging.getLogger("apiforge")
    with monkeypatch.context() as m:
        m.setattr(quiet, "level", logging.ERROR)
        quiet.manager._clear_cache()
        _run(spec, tmp_path / "quiet", monkeypatch, caplog)
    quiet.manager._clear_cache()
    assert [c.store for c in caches] == [None, None]  # nothing kept without its warnings
    _, said = _run(spec, tmp_path / "loud", monkeypatch, caplog)
    assert any("is not enforced by the server" in w for w in said)


def test_the_runtime_names_methods_avoid_are_kept_between_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from generator.client import method_names

    method_names._reserved_memo.clear()
    first = method_names.runtime_reserved()
    assert "close" in first and all(not n.startswith("_") for n in first)

    def parse(source: str) -> frozenset[str]:
        raise AssertionError("parsed again")

    monkeypatch.setattr(method_names, "_parse_reserved", parse)
    method_names._reserved_memo.clear()
    assert method_names.runtime_reserved() == first  # from the cache
    method_names._reserved_memo.clear()


def test_the_models_warnings_are_replayed_at_their_current_lines(
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from generator.pipeline import trees

    # a default that is not a value of its own schema: left out of the models, and said
    head = "    Payment:\n      type: object\n      properties:\n"
    _edit(
        spec, head, head + "        attempts:\n          type: integer\n          default: many\n"
    )
    _, said = _run(spec, tmp_path / "warm", monkeypatch, caplog)
    first = [w for w in said if "is left out of the models" in w]
    assert len(first) == 1
    line = int(re.search(r"acme\.yaml:(\d+)", first[0]).group(1))  # type: ignore[union-attr]
    probe = (
        "  /v1/probes:\n    get:\n      operationId: listProbes\n      responses:\n"
        "        '200':\n          description: ok\n"
    )
    _edit(spec, "paths:\n", "paths:\n" + probe)
    # the warnings come from the cache: the schemas are not walked again
    walked: list[object] = []
    real = trees.warn_unenforced
    monkeypatch.setattr(trees, "warn_unenforced", lambda *a: walked.append(a) or real(*a))
    files, said = _run(spec, tmp_path / "cached", monkeypatch, caplog)
    assert walked == []
    now = [w for w in said if "is left out of the models" in w]
    assert now == [first[0].replace(f"acme.yaml:{line}:", f"acme.yaml:{line + 6}:")]
    assert (files, said) == _uncached(spec, tmp_path / "fresh", monkeypatch, caplog)


# --- the plan inputs' digests from a spec's text: equal text, equal data ----------------


def test_plan_inputs_from_texts_see_refs_into_paths_even_escaped() -> None:
    import hashlib
    import marshal

    data: dict[str, Any] = {
        "openapi": "3.1.0",
        "paths": {"/a": {"get": {}}, "/b": {"$ref": "#/paths/~1a"}},
    }
    top = {"openapi": (b"o" * 32, b"openapi: 3.1.0\n"), "paths": (b"p" * 32, b"paths:\n")}
    plain = {
        "~1a": (b"a" * 32, b"  /a:\n    get: {}\n"),
        "~1b": (b"b" * 32, b"  /b:\n    $ref: '#/paths/~1a'\n"),
    }
    rest, items, whole = plan_cache.PlanInputs(data, (), (top, plain)).digests()
    assert items == {"/a": b"a" * 32, "/b": b"b" * 32} and whole != b""
    assert rest != plan_cache.PlanInputs(data).digests()[0]  # by texts, never met by data
    # an escape could spell `#/paths` where the text does not: that item's data is read
    escaped = {**plain, "~1b": (b"b" * 32, b'  /b:\n    $ref: "#\\/paths/~1a"\n')}
    _, items, whole = plan_cache.PlanInputs(data, (), (top, escaped)).digests()
    raw = marshal.dumps(data["paths"]["/b"], 2)
    assert items["/b"] == hashlib.sha256(raw).digest() and whole != b""
    outward = {"openapi": "3.1.0", "paths": {"/a": {"get": {}}}}
    _, items, whole = plan_cache.PlanInputs(outward, (), (top, {"~1a": plain["~1a"]})).digests()
    assert items == {"/a": b"a" * 32} and whole == b""


SHIPPING = (
    "  /v1/shipments:\n    post:\n      operationId: createShipment\n"
    "      requestBody:\n        content:\n          application/json:\n            schema:\n"
    "              type: object\n              properties:\n"
    "                destination:\n                  type: object\n"
    "                  properties:\n                    city:\n                      type: string\n"
    "                origin:\n                  $ref: '#/components/schemas/Address'\n"
    "      responses:\n        '204':\n          description: ok\n"
)
PARAMS = "client/acme_payments_api_client/params.py"


@pytest.mark.parametrize(
    "edit",
    [
        # a member added to an object written in place in the operation's body
        (
            "                    city:\n                      type: string\n",
            "                    zone:\n                      type: string\n",
        ),
        # ... and to a component the body refers to
        (
            "    Address:\n      type: object\n      properties:\n",
            "        zone:\n          type: string\n",
        ),
    ],
    ids=["in place", "component"],
)
def test_body_arguments_are_served_until_a_body_changes(
    edit: tuple[str, str],
    spec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    one_process: None,
) -> None:
    from generator.client.body_args import BodyArgs

    _edit(spec, "paths:\n", "paths:\n" + SHIPPING)
    before = _run(spec, tmp_path / "warm", monkeypatch, caplog)[0]
    assert b"zone" not in before[PARAMS]  # (the TypedDicts: `zone: str` once there)
    planned = _instances(monkeypatch, BodyArgs)
    # an operation without a body takes no part in them: served
    probe = (
        "  /v1/ping:\n    get:\n      operationId: ping\n"
        "      responses:\n        '204':\n          description: ok\n"
    )
    _edit(spec, "paths:\n", "paths:\n" + probe)
    assert _check_fresh(spec, tmp_path, monkeypatch, caplog)[PARAMS] == before[PARAMS]
    assert len(planned) == 1  # the run without caches alone planned them
    # a member added to the body: planned again, the TypedDict has it
    anchor, added = edit
    _edit(spec, anchor, anchor + added)
    planned.clear()
    files = _check_fresh(spec, tmp_path, monkeypatch, caplog)
    assert len(planned) == 2 and b"    zone: str\n" in files[PARAMS]
