"""Query parameters in OpenAPI's style/explode forms (_query.py), and `Styled` params
through a request. The server's reading of these pairs is tested in
tests/runtime/server/test_query.py."""

from __future__ import annotations

import enum
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pydantic
import pytest

from templates.client.runtime import (
    RequestOptions,
    Scheme,
    Security,
    Styled,
    SyncAPIClient,
    encode_query,
)


def test_deep_object() -> None:
    assert encode_query("created", {"gte": 1, "lt": 9}, style="deepObject") == [
        ("created[gte]", "1"),
        ("created[lt]", "9"),
    ]
    assert encode_query("created", 5, style="deepObject") == [("created", "5")]
    nested = {"a": {"b": [True, None, "x"]}, "skip": None, "f": 1.5}
    assert encode_query("f", nested, style="deepObject") == [
        ("f[a][b][0]", "true"),
        ("f[a][b][2]", "x"),
        ("f[f]", "1.5"),
    ]


def test_arrays_of_objects_are_indexed_whatever_the_style() -> None:
    lines = [{"amount": 1, "tax_rates": ["t1"]}, {"amount": 2}]
    expected = [
        ("lines[0][amount]", "1"),
        ("lines[0][tax_rates][0]", "t1"),
        ("lines[1][amount]", "2"),
    ]
    for style in ("deepObject", "form", "spaceDelimited"):
        assert encode_query("lines", lines, style=style) == expected


def test_form_objects_and_delimited_lists() -> None:
    value = {"gte": 1, "tags": ["a", "b"], "range": {"lt": 2}, "off": False}
    assert encode_query("r", value) == [
        ("gte", "1"),
        ("tags", "a"),
        ("tags", "b"),
        ("range[lt]", "2"),
        ("off", "false"),
    ]
    assert encode_query("r", {"gte": 1, "lte": 2}, explode=False) == [("r", "gte,1,lte,2")]
    assert encode_query("r", {"a": {"b": 1}}, explode=False) == [("r[a][b]", "1")]
    assert encode_query("ids", [1, 2], explode=False) == [("ids", "1,2")]
    assert encode_query("ids", [1, 2]) == [("ids", "1"), ("ids", "2")]
    assert encode_query("ids", ["a", "b"], style="spaceDelimited") == [("ids", "a b")]
    assert encode_query("ids", ["a", "b"], style="pipeDelimited") == [("ids", "a|b")]
    assert encode_query("ids", [], explode=False) == []
    assert encode_query("ids", None) == []
    with pytest.raises(ValueError, match="unknown query style"):
        encode_query("x", 1, style="matrix")


class Color(enum.Enum):
    RED = "red"


class Range(pydantic.BaseModel):
    gte: int | None = None
    lt: int | None = None


def test_styled_params_go_on_the_url() -> None:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={})

    client = SyncAPIClient(
        "https://api.example.com",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        schemes=[Scheme("key", "apiKey", argument="key", location="query", parameter="key")],
        credentials={"key": "k"},
    )
    params: dict[str, Any] = {
        "filter": Styled({"status": "open", "color": Color.RED}, "deepObject", True),
        "created": Styled(Range(gte=3), "deepObject", True),
        "lines": Styled([{"amount": 1}], "form", True),
        "ids": Styled([1, 2], "form", False),
        "none": Styled(None, "deepObject", True),
        "limit": 10,
    }
    with client:
        client.request(
            RequestOptions("GET", "/v1/things", params=params, security=Security(({"key": ()},)))
        )
    (url,) = seen
    assert parse_qsl(urlsplit(str(url)).query) == [
        ("key", "k"),
        ("filter[status]", "open"),
        ("filter[color]", "red"),
        ("created[gte]", "3"),  # a model: dumped as the caller set it
        ("lines[0][amount]", "1"),
        ("ids", "1,2"),
        ("limit", "10"),
    ]
