"""Auto-pagination: list operations return a page that iterates every item across pages.

Public API (`AsyncPage` is the same with awaitable methods and `async for`):

- `Pagination(style, *, items=(), param="", next=(), has_more=(), total=(), limit_param="",
  limit_default=None, limit_maximum=None, first_page=1)`: how an operation pages, as the
  generator detected it (see generator/patterns/pagination.py for the styles: `cursor`,
  `link`, `next_url`, `offset`, `page`). `.next_request(options, response, data, count)`
  gives the `RequestOptions` of the next page, or None at the end.
- `SyncPage(client, options, response, pagination, item, body)`: one page, built by
  generated code from the first response:
  - `for item in page` iterates the items of this page and of every page after it, fetching
    each page when it is needed (each fetch is a whole call: retries, credentials);
  - `.items` (this page's items, parsed as `item`), `.body` (the whole body, parsed as
    `body` when first read), `.response` (the `APIResponse`);
  - `.has_next_page()`, `.get_next_page()` (raises `APIError` at the end),
    `.iter_pages()` (this page, then each next one).
- `AsyncPaginator(first)`: what the async client's list methods return: `await` it for the
  first `AsyncPage`, or `async for item in client.things.list_things()` directly.

When to stop: no next cursor/URL/`Link`, `has_more` false, an empty page, the total reached,
a page shorter than a size the server must honour (at most the size parameter's `maximum`),
or a next request identical to the last one (a server that repeats itself).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import pydantic

from ._base import AsyncAPIClient, RequestOptions, SyncAPIClient
from ._errors import APIError, APIResponseValidationError
from ._response import APIResponse

ItemT = TypeVar("ItemT")
BodyT = TypeVar("BodyT")

Path = tuple[str, ...]
# one link-value: <target> and its parameters (a quoted value may hold `;` and `,`)
_LINK = re.compile(r'<([^>]*)>((?:\s*;\s*[^;,"]*(?:"[^"]*"[^;,"]*)*)*)')
_REL = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.IGNORECASE)


def pluck(data: Any, path: Path) -> Any:
    """The value at `path` (member names) in JSON `data`; None where a member is missing."""
    for name in path:
        if not isinstance(data, Mapping):
            return None
        data = cast("Mapping[str, Any]", data).get(name)
    return data


def next_link(header: str | None) -> str | None:
    """The `rel="next"` target of an RFC 8288 `Link` header, or None."""
    if not header:
        return None
    for match in _LINK.finditer(header):
        for rel in _REL.finditer(match.group(2)):
            names = (rel.group(1) or rel.group(2) or "").lower().split()
            if "next" in names:
                return match.group(1).strip()
    return None


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


@dataclass(frozen=True, slots=True)
class Pagination:
    """How one operation pages (see the module docstring)."""

    style: str
    items: Path = ()
    param: str = ""
    next: Path = ()
    has_more: Path = ()
    total: Path = ()
    limit_param: str = ""
    limit_default: int | None = None
    limit_maximum: int | None = None
    first_page: int = 1

    def next_request(
        self, options: RequestOptions, response: APIResponse, data: Any, count: int
    ) -> RequestOptions | None:
        """The next page's request after a page of `count` items with JSON body `data`
        (answering `options`), or None when this page is the last."""
        if self.has_more and pluck(data, self.has_more) is False:
            return None
        if self.style == "link":
            return self._follow(options, response, next_link(response.headers.get("link")))
        if self.style == "next_url":
            url = pluck(data, self.next)
            return self._follow(options, response, url if isinstance(url, str) else None)
        if count == 0 or self._short(options, count):
            return None
        params = dict(options.params or {})
        if self.style == "cursor":
            cursor = pluck(data, self.next) if self.next else self._last_id(data)
            if cursor is None or cursor == "" or isinstance(cursor, bool | dict | list):
                return None
            params[self.param] = cursor
        elif self.style == "offset":
            offset = (_number(params.get(self.param)) or 0) + count
            total = _number(pluck(data, self.total)) if self.total else None
            if total is not None and offset >= total:
                return None
            params[self.param] = offset
        elif self.style == "page":
            page = _number(params.get(self.param))
            page = self.first_page if page is None else page
            total = _number(pluck(data, self.total)) if self.total else None
            if total is not None and page >= total - (1 - self.first_page):
                return None
            params[self.param] = page + 1
        else:
            return None
        if params == dict(options.params or {}):
            return None  # the server handed back the position it was asked for
        return dataclasses.replace(options, params=params)

    def _short(self, options: RequestOptions, count: int) -> bool:
        """A page shorter than the size asked for, when the server must honour that size."""
        if not self.limit_param or self.limit_maximum is None:
            return False
        asked = _number((options.params or {}).get(self.limit_param))
        size = asked if asked is not None else self.limit_default
        return size is not None and 0 < size <= self.limit_maximum and count < size

    def _last_id(self, data: Any) -> Any:
        items = pluck(data, self.items)
        return pluck(items[-1], ("id",)) if isinstance(items, list) and items else None

    @staticmethod
    def _follow(
        options: RequestOptions, response: APIResponse, url: str | None
    ) -> RequestOptions | None:
        if not url:
            return None
        # a URI reference: resolved against the URL that answered
        target = response.http_response.request.url.join(url)
        if target == response.http_response.request.url:
            return None
        return dataclasses.replace(options, path=str(target), params=None)


class _Page(Generic[ItemT, BodyT]):
    """What the sync and async pages share: parsing one response and deciding the next."""

    def __init__(
        self,
        options: RequestOptions,
        response: APIResponse,
        pagination: Pagination,
        item: type[ItemT] | pydantic.TypeAdapter[ItemT],
        body: type[BodyT] | pydantic.TypeAdapter[BodyT],
    ) -> None:
        self.response = response
        self._options = options
        self._pagination = pagination
        self._item = item
        self._body_type = body
        self._parsed: tuple[BodyT] | None = None
        self._data = response.json()
        raw = pluck(self._data, pagination.items)
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            where = ".".join(pagination.items) or "the body"
            raise APIResponseValidationError(
                response.http_response, f"{where} is not a list of items"
            )
        values = cast("list[object]", raw)
        self.items: list[ItemT] = [response.validate(value, item) for value in values]
        self._next = pagination.next_request(options, response, self._data, len(values))

    @property
    def body(self) -> BodyT:
        """The whole page body, parsed as the operation's response type."""
        if self._parsed is None:
            self._parsed = (self.response.validate(self._data, self._body_type),)
        return self._parsed[0]

    def has_next_page(self) -> bool:
        return self._next is not None

    def _next_options(self) -> RequestOptions:
        if self._next is None:
            raise APIError("this is the last page: check has_next_page() first")
        return self._next

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        more = "more pages" if self._next is not None else "last page"
        return f"<{type(self).__name__} {len(self.items)} items, {more}>"


class SyncPage(_Page[ItemT, BodyT]):
    """One page of a list operation; iterating it goes through every page (see above)."""

    def __init__(
        self,
        client: SyncAPIClient,
        options: RequestOptions,
        response: APIResponse,
        pagination: Pagination,
        item: type[ItemT] | pydantic.TypeAdapter[ItemT],
        body: type[BodyT] | pydantic.TypeAdapter[BodyT],
    ) -> None:
        super().__init__(options, response, pagination, item, body)
        self._client = client

    def get_next_page(self) -> SyncPage[ItemT, BodyT]:
        options = self._next_options()
        response = self._client.request(options)
        return SyncPage(
            self._client, options, response, self._pagination, self._item, self._body_type
        )

    def iter_pages(self) -> Iterator[SyncPage[ItemT, BodyT]]:
        page = self
        while True:
            yield page
            if not page.has_next_page():
                return
            page = page.get_next_page()

    def __iter__(self) -> Iterator[ItemT]:
        for page in self.iter_pages():
            yield from page.items


class AsyncPage(_Page[ItemT, BodyT]):
    """One page of a list operation, for the async client: `async for` goes through every
    page."""

    def __init__(
        self,
        client: AsyncAPIClient,
        options: RequestOptions,
        response: APIResponse,
        pagination: Pagination,
        item: type[ItemT] | pydantic.TypeAdapter[ItemT],
        body: type[BodyT] | pydantic.TypeAdapter[BodyT],
    ) -> None:
        super().__init__(options, response, pagination, item, body)
        self._client = client

    async def get_next_page(self) -> AsyncPage[ItemT, BodyT]:
        options = self._next_options()
        response = await self._client.request(options)
        return AsyncPage(
            self._client, options, response, self._pagination, self._item, self._body_type
        )

    async def iter_pages(self) -> AsyncIterator[AsyncPage[ItemT, BodyT]]:
        page = self
        while True:
            yield page
            if not page.has_next_page():
                return
            page = await page.get_next_page()

    async def __aiter__(self) -> AsyncIterator[ItemT]:
        async for page in self.iter_pages():
            for item in page.items:
                yield item


class AsyncPaginator(Generic[ItemT, BodyT]):
    """A list call on the async client, not yet sent: `await` it for the first page, or
    `async for` over every item of every page."""

    def __init__(self, first: Callable[[], Awaitable[AsyncPage[ItemT, BodyT]]]) -> None:
        self._first = first

    def __await__(self) -> Generator[Any, None, AsyncPage[ItemT, BodyT]]:
        return self._first().__await__()

    async def __aiter__(self) -> AsyncIterator[ItemT]:
        page = await self._first()
        async for item in page:
            yield item


__all__ = [
    "AsyncPage",
    "AsyncPaginator",
    "Pagination",
    "SyncPage",
    "next_link",
    "pluck",
]
