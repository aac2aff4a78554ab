"""Auto-pagination: each style against a real server on 127.0.0.1, sync and async — three
pages, then the end; a page fetch that fails is retried like any call."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pydantic
import pytest

from templates.client.runtime import (
    APIError,
    APIResponseValidationError,
    AsyncAPIClient,
    AsyncPage,
    AsyncPaginator,
    Pagination,
    RequestOptions,
    SyncAPIClient,
    SyncPage,
)
from templates.client.runtime._pagination import next_link, pluck

from .fakes import FakeClock, Recorded, Reply, ScriptServer

ITEMS = [{"id": f"it_{n}", "n": n} for n in range(7)]  # pages of 3: 3, 3, 1
SIZE = 3


class Item(pydantic.BaseModel):
    id: str
    n: int


Body = dict[str, Any]
BODY: pydantic.TypeAdapter[Body] = pydantic.TypeAdapter(Body)


def _query(recorded: Recorded) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(recorded.path).query).items()}


def _window(start: int, size: int) -> list[dict[str, Any]]:
    return ITEMS[start : start + size]


def cursor_server(r: Recorded) -> Reply:
    q = _query(r)
    start = int(q.get("cursor", "0"))
    nxt = start + SIZE
    return Reply(json={"data": _window(start, SIZE), "next_cursor": str(nxt) if nxt < 7 else None})


def stripe_server(r: Recorded) -> Reply:
    q = _query(r)
    after = q.get("starting_after")
    start = next(i + 1 for i, it in enumerate(ITEMS) if it["id"] == after) if after else 0
    return Reply(
        json={"object": "list", "data": _window(start, SIZE), "has_more": start + SIZE < 7}
    )


def link_server(r: Recorded) -> Reply:
    page = int(_query(r).get("page", "1"))
    headers = {}
    if page * SIZE < 7:
        headers["Link"] = (
            f'</items?page={page + 1}&per_page=3>; rel="next", </items?page=3>; rel="last"'
        )
    return Reply(json=_window((page - 1) * SIZE, SIZE), headers=headers)


def next_url_server(r: Recorded) -> Reply:
    start = int(_query(r).get("from", "0"))
    nxt = start + SIZE
    next_url = f"/items?from={nxt}" if nxt < 7 else None
    return Reply(json={"results": _window(start, SIZE), "links": {"next": next_url}})


def offset_server(r: Recorded) -> Reply:
    q = _query(r)
    offset, limit = int(q.get("offset", "0")), int(q.get("limit", "20"))
    return Reply(json={"items": _window(offset, limit), "total": 7})


def page_server(r: Recorded) -> Reply:
    q = _query(r)
    page, size = int(q.get("page", "1")), int(q.get("per_page", "3"))
    return Reply(json={"data": _window((page - 1) * size, size)})


STYLES: dict[str, tuple[Any, Pagination, dict[str, Any]]] = {
    "cursor": (
        cursor_server,
        Pagination("cursor", items=("data",), param="cursor", next=("next_cursor",)),
        {},
    ),
    "cursor (last id)": (
        stripe_server,
        Pagination("cursor", items=("data",), param="starting_after", has_more=("has_more",)),
        {},
    ),
    "link": (link_server, Pagination("link"), {"per_page": 3}),
    "next_url": (
        next_url_server,
        Pagination("next_url", items=("results",), next=("links", "next")),
        {},
    ),
    "offset": (
        offset_server,
        Pagination("offset", items=("items",), param="offset", total=("total",)),
        {"limit": 3},
    ),
    "page": (
        page_server,
        Pagination("page", items=("data",), param="page", limit_param="per_page", limit_maximum=50),
        {"per_page": 3},
    ),
}


def _options(params: dict[str, Any]) -> RequestOptions:
    return RequestOptions("GET", "/items", params=params)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_iterates_three_pages_and_stops(
    style: str, server: ScriptServer, clock: FakeClock
) -> None:
    script, pagination, params = STYLES[style]
    server.on("GET", "/items", script)
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        options = _options(params)
        page = SyncPage(client, options, client.request(options), pagination, Item, BODY)
        assert [i.n for i in page.items] == [0, 1, 2] and page.has_next_page()
        assert [item.n for item in page] == list(range(7))
        pages = list(page.iter_pages())
    assert [len(p.items) for p in pages] == [3, 3, 1]
    assert not pages[-1].has_next_page()
    with pytest.raises(APIError, match="last page"):
        pages[-1].get_next_page()
    # the first iteration fetched 3 pages, iter_pages 2 more (it starts from the first)
    assert len(server.received("GET")) == 5
    assert all(isinstance(i, Item) for p in pages for i in p.items)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_async(style: str, server: ScriptServer, clock: FakeClock) -> None:
    script, pagination, params = STYLES[style]
    server.on("GET", "/items", script)

    async def main() -> tuple[list[int], list[int], int]:
        async with AsyncAPIClient(server.url, sleep=clock.async_sleep, clock=clock) as client:

            async def first() -> AsyncPage[Item, Body]:
                options = _options(params)
                response = await client.request(options)
                return AsyncPage(client, options, response, pagination, Item, BODY)

            every = [item.n async for item in AsyncPaginator(first)]
            page = await AsyncPaginator(first)
            sizes = [len(p.items) async for p in page.iter_pages()]
            return every, sizes, len(page.items)

    every, sizes, first_size = asyncio.run(main())
    assert every == list(range(7)) and sizes == [3, 3, 1] and first_size == 3


def test_a_page_fetch_is_retried_like_any_call(server: ScriptServer, clock: FakeClock) -> None:
    replies = iter([None, Reply(503, json={"title": "busy"}, headers={"Retry-After": "2"})])

    def flaky(r: Recorded) -> Reply:
        if "cursor=3" in r.path and (reply := next(replies, None)) is not None:
            return reply
        return cursor_server(r)

    server.on("GET", "/items", flaky)
    script_pagination = STYLES["cursor"][1]
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        options = _options({})
        page = SyncPage(client, options, client.request(options), script_pagination, Item, BODY)
        # the first fetch of page 2 is the `None` above: a normal answer
        assert [i.n for i in page] == list(range(7))
        page = SyncPage(client, options, client.request(options), script_pagination, Item, BODY)
        second = page.get_next_page()  # 503 then the page
    assert [i.n for i in second.items] == [3, 4, 5]
    assert second.response.retries_taken == 1 and clock.sleeps == [2.0]
    retried = [r for r in server.received("GET") if "cursor=3" in r.path]
    assert [r.headers["x-retry-count"] for r in retried] == ["0", "0", "1"]


def test_without_a_declared_maximum_an_empty_page_ends_it(
    server: ScriptServer, clock: FakeClock
) -> None:
    # the server may cap a page below the size asked for: a short page is not the end
    server.on("GET", "/items", page_server)
    pagination = Pagination("page", items=("data",), param="page", limit_param="per_page")
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        options = _options({"per_page": 3})
        page = SyncPage(client, options, client.request(options), pagination, Item, BODY)
        assert [len(p.items) for p in page.iter_pages()] == [3, 3, 1, 0]


def test_the_body_and_the_query_of_later_pages(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/items", offset_server)
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        options = _options({"limit": 3, "q": "x", "offset": None})
        pagination = STYLES["offset"][1]
        page = SyncPage(client, options, client.request(options), pagination, Item, BODY)
        assert page.body["total"] == 7 and len(page) == 3
        assert "3 items, more pages" in repr(page)
        list(page)
    paths = [r.path for r in server.received("GET")]
    assert paths == [
        "/items?limit=3&q=x",
        "/items?limit=3&q=x&offset=3",
        "/items?limit=3&q=x&offset=6",
    ]


def test_a_page_whose_items_are_not_a_list(server: ScriptServer, clock: FakeClock) -> None:
    server.on("GET", "/items", Reply(json={"data": {"oops": 1}}))
    with SyncAPIClient(server.url, sleep=clock.sleep, clock=clock) as client:
        options = _options({})
        response = client.request(options)
        with pytest.raises(APIResponseValidationError, match="data is not a list"):
            SyncPage(client, options, response, STYLES["cursor"][1], Item, BODY)


# --- deciding the next page, without a server ------------------------------------------------


class _Answer:
    """What `next_request` reads of a response."""

    def __init__(self, link: str | None = None, url: str = "https://api.test/items") -> None:
        import httpx

        headers = {"link": link} if link else {}
        self.http_response = httpx.Response(200, headers=headers, request=httpx.Request("GET", url))
        self.headers = self.http_response.headers


def _next(pagination: Pagination, params: dict[str, Any], data: Any, count: int) -> Any:
    result = pagination.next_request(_options(params), _Answer(), data, count)  # type: ignore[arg-type]
    return None if result is None else dict(result.params or {})


def test_stop_conditions() -> None:
    cursor = Pagination("cursor", items=("data",), param="after", next=("next",))
    assert _next(cursor, {}, {"next": "c2"}, 3) == {"after": "c2"}
    assert _next(cursor, {"after": "c2"}, {"next": "c2"}, 3) is None  # the same position
    assert _next(cursor, {}, {"next": ""}, 3) is None
    assert _next(cursor, {}, {"next": "c2"}, 0) is None  # an empty page
    more = Pagination("cursor", items=("data",), param="after", has_more=("has_more",))
    assert _next(more, {}, {"data": [{"id": "a"}, {"id": "b"}], "has_more": True}, 2) == {
        "after": "b"
    }
    assert _next(more, {}, {"data": [{"id": "a"}], "has_more": False}, 1) is None
    page = Pagination("page", param="page", total=("pages",), limit_param="size")
    assert _next(page, {}, {"pages": 2}, 5) == {"page": 2}
    assert _next(page, {"page": 2}, {"pages": 2}, 5) is None
    zero = Pagination("page", param="p", total=("pages",), first_page=0)
    assert _next(zero, {}, {"pages": 2}, 5) == {"p": 1}
    assert _next(zero, {"p": 1}, {"pages": 2}, 5) is None
    short = Pagination("offset", param="offset", limit_param="limit", limit_maximum=100)
    assert _next(short, {"limit": 50}, {}, 50) == {"limit": 50, "offset": 50}
    assert _next(short, {"limit": 50}, {}, 49) is None  # shorter than a size it must honour
    capped = Pagination("offset", param="offset", limit_param="limit")  # no declared maximum
    assert _next(capped, {"limit": 500}, {}, 100) == {"limit": 500, "offset": 100}


def test_link_headers() -> None:
    assert next_link('<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"') == (
        "https://a/x?page=2"
    )
    assert next_link("<https://a/x?page=1>; rel=prev, <https://a/x?page=3>; rel=next") == (
        "https://a/x?page=3"
    )
    assert next_link('<https://a/x?p=2>; title="a, b"; rel="last next"') == "https://a/x?p=2"
    assert next_link('<https://a/x?page=9>; rel="last"') is None
    assert next_link(None) is None and next_link("garbage") is None
    link = Pagination("link")
    answer = _Answer('</items?page=2>; rel="next"')
    nxt = link.next_request(_options({"page": None}), answer, [], 3)  # type: ignore[arg-type]
    assert nxt is not None and nxt.path == "https://api.test/items?page=2" and nxt.params is None
    same = _Answer('<https://api.test/items>; rel="next"')
    assert link.next_request(_options({}), same, [], 3) is None  # type: ignore[arg-type]


def test_pluck() -> None:
    assert pluck({"a": {"b": [1]}}, ("a", "b")) == [1]
    assert pluck({"a": 1}, ("a", "b")) is None and pluck([1], ("a",)) is None
    assert pluck([1], ()) == [1]
