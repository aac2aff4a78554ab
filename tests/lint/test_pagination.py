"""Pagination detection (generator/patterns/pagination.py): each style from the shapes real
APIs use, the extension that states it, and the rule that reports an unusable extension."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.ir import PaginationSpec
from generator.spec import load_spec
from tests.lint.conftest import Linter, SpecWriter, document, of

ITEM = {"type": "object", "properties": {"id": {"type": "string"}}}


def query(name: str, kind: str = "string", **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind, **schema}}


def listing(
    body: dict[str, Any],
    params: list[dict[str, Any]] | None = None,
    headers: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": "A page.",
        "content": {"application/json": {"schema": body}},
    }
    if headers:
        response["headers"] = headers
    return {"get": {"parameters": params or [], "responses": {"200": response}, **extra}}


def envelope(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


ARRAY = {"type": "array", "items": ITEM}


def detect(
    write_spec: SpecWriter, item: dict[str, Any], **components: Any
) -> PaginationSpec | None:
    path = write_spec(document({"/things": item}, components=components or None))
    return load_spec(str(path)).api.operations[0].patterns.pagination


CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "google",
        listing(
            envelope(items=ARRAY, nextPageToken={"type": "string"}),
            [query("pageToken"), query("maxResults", "integer", maximum=500)],
        ),
        {
            "style": "cursor",
            "items": ("items",),
            "param": "pageToken",
            "next": ("nextPageToken",),
            "limit_param": "maxResults",
            "limit_maximum": 500,
        },
    ),
    (
        "stripe",
        listing(
            envelope(object={"type": "string"}, data=ARRAY, has_more={"type": "boolean"}),
            [query("starting_after"), query("ending_before"), query("limit", "integer")],
        ),
        {"style": "cursor", "param": "starting_after", "next": (), "has_more": ("has_more",)},
    ),
    (
        "slack (nested cursor)",
        listing(
            envelope(
                members=ARRAY,
                response_metadata=envelope(next_cursor={"type": "string"}),
            ),
            [query("cursor"), query("limit", "integer")],
        ),
        {"style": "cursor", "items": ("members",), "next": ("response_metadata", "next_cursor")},
    ),
    (
        "github (Link)",
        listing(
            ARRAY,
            [query("per_page", "integer", default=30), query("page", "integer")],
            headers={"Link": {"schema": {"type": "string"}}},
        ),
        {"style": "link", "items": (), "limit_param": "per_page", "limit_default": 30},
    ),
    (
        "bitbucket (next URL)",
        listing(
            envelope(
                values=ARRAY, next={"type": "string", "format": "uri"}, page={"type": "integer"}
            ),
            [query("page", "integer")],
        ),
        {"style": "next_url", "items": ("values",), "next": ("next",)},
    ),
    (
        "twilio (nested next URL)",
        listing(
            envelope(
                workers=ARRAY,
                meta=envelope(next_page_url={"type": "string"}, page_size={"type": "integer"}),
            ),
            [query("PageSize", "integer"), query("Page", "integer"), query("PageToken")],
        ),
        {"style": "next_url", "next": ("meta", "next_page_url"), "limit_param": "PageSize"},
    ),
    (
        "offset with a total",
        listing(
            envelope(results=ARRAY, total_count={"type": "integer"}),
            [query("offset", "integer"), query("limit", "integer", maximum=100, default=10)],
        ),
        {
            "style": "offset",
            "param": "offset",
            "total": ("total_count",),
            "limit_default": 10,
            "limit_maximum": 100,
        },
    ),
    (
        "JSON:API page[number]",
        listing(
            envelope(data=ARRAY, meta=envelope(total_pages={"type": "integer"})),
            [query("page[number]", "integer"), query("page[size]", "integer")],
        ),
        {
            "style": "page",
            "param": "page[number]",
            "limit_param": "page[size]",
            "total": ("meta", "total_pages"),
            "first_page": 1,
        },
    ),
    (
        "zero-based pages",
        listing(ARRAY, [query("page", "integer", minimum=0)]),
        {"style": "page", "first_page": 0},
    ),
]


@pytest.mark.parametrize(("name", "item", "expected"), CASES, ids=[c[0] for c in CASES])
def test_styles(
    write_spec: SpecWriter, name: str, item: dict[str, Any], expected: dict[str, Any]
) -> None:
    spec = detect(write_spec, item)
    assert spec is not None, name
    for key, value in expected.items():
        assert getattr(spec, key) == value, (name, key)
    assert spec.source == "detected"


def test_items_through_refs_and_all_of(write_spec: SpecWriter) -> None:
    components = {
        "schemas": {
            "Page": envelope(next_cursor={"type": ["string", "null"]}),
            "Things": {
                "allOf": [
                    {"$ref": "#/components/schemas/Page"},
                    envelope(data={"type": "array", "items": {"$ref": "#/components/schemas/T"}}),
                ]
            },
            "T": ITEM,
        }
    }
    item = listing({"$ref": "#/components/schemas/Things"}, [query("cursor")])
    spec = detect(write_spec, item, **components)
    assert spec is not None
    assert (spec.style, spec.items, spec.next) == ("cursor", ("data",), ("next_cursor",))


@pytest.mark.parametrize(
    "item",
    [
        # not a list: one object without an array
        listing(envelope(id={"type": "string"}), [query("cursor")]),
        # a list without any way to page
        listing(ARRAY, [query("q")]),
        # a cursor parameter, but nothing in the body says where the next page starts
        listing(envelope(data=ARRAY), [query("cursor")]),
        # several arrays, none of them the usual names
        listing(envelope(a=ARRAY, b=ARRAY), [query("offset", "integer")]),
        # not a GET
        {"post": listing(ARRAY, [query("page", "integer")])["get"]},
        # a string "page" is not a page number
        listing(ARRAY, [query("page")]),
    ],
)
def test_not_paginated(write_spec: SpecWriter, item: dict[str, Any]) -> None:
    assert detect(write_spec, item) is None


def test_the_extension_states_or_turns_off(write_spec: SpecWriter) -> None:
    stated = listing(
        envelope(events=ARRAY, meta=envelope(continuation={"type": "string"})),
        [query("from"), query("count", "integer", maximum=200)],
        **{
            "x-apiforge-pagination": {
                "style": "cursor",
                "param": "from",
                "next": "meta.continuation",
                "limit": "count",
            }
        },
    )
    spec = detect(write_spec, stated)
    assert spec is not None and spec.source == "extension"
    assert (spec.style, spec.items, spec.param, spec.next) == (
        "cursor",
        ("events",),
        "from",
        ("meta", "continuation"),
    )
    assert (spec.limit_param, spec.limit_maximum) == ("count", 200)
    off = listing(ARRAY, [query("page", "integer")], **{"x-apiforge-pagination": False})
    assert detect(write_spec, off) is None
    dotted = listing(
        envelope(value=ARRAY, **{"@odata.nextLink": {"type": "string"}}),
        **{"x-apiforge-pagination": {"style": "next_url", "next": ["@odata.nextLink"]}},
    )
    spec = detect(write_spec, dotted)
    assert spec is not None and spec.next == ("@odata.nextLink",) and spec.items == ("value",)


def test_an_unusable_extension_is_reported(run_lint: Linter) -> None:
    bad = {
        "/a": listing(
            ARRAY,
            [query("cursor")],
            **{"x-apiforge-pagination": {"style": "cursor", "param": "after"}},
        ),
        "/b": listing(ARRAY, **{"x-apiforge-pagination": {"style": "scroll"}}),
        "/c": listing(ARRAY, **{"x-apiforge-pagination": "yes"}),
        "/d": listing(ARRAY, **{"x-apiforge-pagination": {"style": "next_url", "items": 3}}),
    }
    found = of(run_lint(paths=bad), "pagination-extension-invalid")
    messages = sorted(f.message for f in found)
    assert len(messages) == 5, messages
    assert "GET /a: `param` 'after' is not a query parameter of the operation" in messages[0]
    assert (
        "`style` must be one of cursor, link, next_url, offset, page, not 'scroll'" in messages[1]
    )
    assert "must be `false` or a mapping" in messages[2]
    assert any("`items` must be a dotted path" in m for m in messages[3:])
    assert any("style `next_url` needs `next`" in m for m in messages[3:])
    assert all(f.pointer.endswith("/x-apiforge-pagination") for f in found)


CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
REAL = [
    (
        "apisguru/slack.com__1.7.0.yaml",
        "conversations_list",
        "cursor",
        ("response_metadata", "next_cursor"),
    ),
    ("twilio/twilio_sync_v1.json", "ListService", "next_url", ("meta", "next_page_url")),
    ("apisguru/github.com__ghes-2.18__1.1.4.yaml", "repos/list-for-org", "link", ()),
]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not here")
@pytest.mark.parametrize(("path", "op_id", "style", "nxt"), REAL, ids=[r[0] for r in REAL])
def test_real_apis(path: str, op_id: str, style: str, nxt: tuple[str, ...]) -> None:
    """A sample; bench/client_corpus.py measures the whole corpus (docs/client.md)."""
    op = load_spec(str(CORPUS / path)).api.operation(op_id)
    assert op is not None and op.patterns.pagination is not None
    assert (op.patterns.pagination.style, op.patterns.pagination.next) == (style, nxt)
