"""The read-modify-write helper against a server that checks If-Match."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from templates.client.runtime import (
    APIError,
    AsyncAPIClient,
    PreconditionFailed,
    RequestOptions,
    SyncAPIClient,
    async_read_modify_write,
    read_modify_write,
)

from .fakes import problem


class Resource:
    """One JSON document with a version; PATCH requires a matching If-Match."""

    def __init__(self) -> None:
        self.version = 1
        self.doc: dict[str, Any] = {"name": "Alice", "tags": []}
        self.writes = 0
        self.rejected = 0

    def etag(self) -> str:
        return f'"v{self.version}"'

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=self.doc, headers={"ETag": self.etag()})
        if request.headers.get("if-match") != self.etag():
            self.rejected += 1
            return httpx.Response(
                412,
                json=problem(412, "precondition-failed"),
                headers={"Content-Type": "application/problem+json"},
            )
        self.doc.update(json.loads(request.content))
        self.version += 1
        self.writes += 1
        return httpx.Response(200, json=self.doc, headers={"ETag": self.etag()})


def sync_ops(client: SyncAPIClient) -> tuple[Any, Any]:
    def read() -> tuple[dict[str, Any], str | None]:
        response = client.request(RequestOptions("GET", "/users/1"))
        return response.json(), response.etag

    def write(change: dict[str, Any], etag: str) -> dict[str, Any]:
        response = client.request(
            RequestOptions("PATCH", "/users/1", json=change, headers={"If-Match": etag})
        )
        result: dict[str, Any] = response.json()
        return result

    return read, write


def test_a_412_is_resolved_by_reading_again() -> None:
    resource = Resource()
    client = SyncAPIClient(
        "https://api.example.com", transport=httpx.MockTransport(resource.handle)
    )
    read, write = sync_ops(client)
    seen: list[list[str]] = []

    def add_tag(doc: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(doc["tags"]))
        if len(seen) == 1:  # Bob writes between our read and our write
            resource.doc["tags"] = ["bob"]
            resource.version += 1
        return {"tags": [*doc["tags"], "alice"]}

    result = read_modify_write(read, add_tag, write)
    assert result["tags"] == ["bob", "alice"]  # Bob's update is not lost
    assert seen == [[], ["bob"]]
    assert resource.rejected == 1 and resource.writes == 1


def test_attempts_are_bounded_and_the_last_412_is_raised() -> None:
    resource = Resource()
    client = SyncAPIClient(
        "https://api.example.com", transport=httpx.MockTransport(resource.handle)
    )
    read, write = sync_ops(client)

    def always_raced(doc: dict[str, Any]) -> dict[str, Any]:
        resource.version += 1
        return {"name": "x"}

    with pytest.raises(PreconditionFailed):
        read_modify_write(read, always_raced, write, max_attempts=3)
    assert resource.rejected == 3 and resource.writes == 0
    with pytest.raises(PreconditionFailed):
        read_modify_write(read, always_raced, write)
    assert resource.rejected == 3 + 5  # default: five attempts


def test_other_errors_and_a_missing_etag_are_not_retried() -> None:
    reads = 0

    def read() -> tuple[int, str | None]:
        nonlocal reads
        reads += 1
        return 1, None

    with pytest.raises(APIError, match="no ETag"):
        read_modify_write(read, lambda v: v + 1, lambda c, e: c)
    assert reads == 1

    def boom(change: int, etag: str) -> int:
        raise ValueError("not a conflict")

    with pytest.raises(ValueError):
        read_modify_write(lambda: (1, '"v1"'), lambda v: v, boom)
    with pytest.raises(ValueError):
        read_modify_write(lambda: (1, '"v1"'), lambda v: v, lambda c, e: c, max_attempts=0)


def test_async_read_modify_write() -> None:
    resource = Resource()

    async def main() -> dict[str, Any]:
        async with AsyncAPIClient(
            "https://api.example.com", transport=httpx.MockTransport(resource.handle)
        ) as client:

            async def read() -> tuple[dict[str, Any], str | None]:
                response = await client.request(RequestOptions("GET", "/users/1"))
                return response.json(), response.etag

            async def write(change: dict[str, Any], etag: str) -> dict[str, Any]:
                response = await client.request(
                    RequestOptions("PATCH", "/users/1", json=change, headers={"If-Match": etag})
                )
                result: dict[str, Any] = response.json()
                return result

            calls = 0

            def rename(doc: dict[str, Any]) -> dict[str, Any]:
                nonlocal calls
                calls += 1
                if calls == 1:
                    resource.version += 1
                return {"name": doc["name"] + "!"}

            return await async_read_modify_write(read, rename, write)

    assert asyncio.run(main())["name"] == "Alice!"
    assert resource.rejected == 1 and resource.writes == 1
