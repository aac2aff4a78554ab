"""Query parameters in OpenAPI's style/explode forms (runtime/query.py), and the client's
encoding of them (templates/client/runtime/_query.py) read back by the server.

No `from __future__ import annotations`: FastAPI evaluates the test app's annotations where
the app is defined, which names the runtime's `styled_query` there."""

import asyncio
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlencode

import httpx
import pytest
from fastapi import Depends, FastAPI

from templates.client.runtime._query import encode_query
from tests.runtime.server.conftest import RuntimeModules


def read(rt: RuntimeModules, query: str, type_: Any, **options: Any) -> Any:
    """What `styled_query("x", type_, **options)` gives for `query` (None: absent)."""
    reader = rt.query.StyledQuery("x", type_, **options)
    node = reader.read(rt.query.parse_query(parse_qsl(query, keep_blank_values=True)))
    return None if node is None else reader.validate(node)


def test_parse_query_builds_a_tree(rt: RuntimeModules) -> None:
    items = parse_qsl(
        "a[b][c]=1&a[b][d]=2&l[]=x&l[]=y&r=1&r=2&o[][k]=1&o[][j]=2&o[][k]=3&plain=v",
        keep_blank_values=True,
    )
    assert rt.query.parse_query(items) == {
        "a": {"b": {"c": "1", "d": "2"}},
        "l": ["x", "y"],
        "r": ["1", "2"],
        "o": [{"k": "1", "j": "2"}, {"k": "3"}],  # a repeated key starts a new element
        "plain": "v",
    }


def test_parse_query_keeps_the_first_shape_and_odd_keys(rt: RuntimeModules) -> None:
    items = [("a[b]", "1"), ("a[b][c]", "2"), ("a", "3"), ("x[", "4"), ("[y]", "5")]
    assert rt.query.parse_query(items) == {"a": {"b": "1"}, "x[": "4", "[y]": "5"}
    deep = "k" + "[a]" * (rt.query.MAX_DEPTH + 1)
    assert rt.query.parse_query([(deep, "1")]) == {deep: "1"}


def test_deep_object(rt: RuntimeModules) -> None:
    created = dict[str, int] | int
    assert read(rt, "x[gte]=1&x[lt]=9", created, style="deepObject") == {"gte": 1, "lt": 9}
    assert read(rt, "x=7", created, style="deepObject") == 7
    assert read(rt, "y=7", created, style="deepObject") is None
    nested = read(rt, "x[a][b][c]=1&x[a][d]=true", dict[str, Any], style="deepObject")
    assert nested == {"a": {"b": {"c": "1"}, "d": "true"}}  # Any: values stay strings
    assert read(rt, "x[s]=a&x[s]=b", dict[str, list[str]], style="deepObject") == {"s": ["a", "b"]}


def test_arrays_of_objects_indexed_and_appended(rt: RuntimeModules) -> None:
    lines = list[dict[str, Any]]
    indexed = "x[1][amount]=2&x[0][amount]=1&x[0][tax_rates][0]=t1&x[0][tax_rates][1]=t2"
    assert read(rt, indexed, lines, style="deepObject") == [
        {"amount": "1", "tax_rates": ["t1", "t2"]},  # in index order; 0, 1… is a list
        {"amount": "2"},
    ]
    appended = "x[][amount]=1&x[][type]=a&x[][amount]=2"
    assert read(rt, appended, lines, style="form") == [
        {"amount": "1", "type": "a"},
        {"amount": "2"},
    ]
    assert read(rt, "x[0]=a&x[5]=b", list[str], style="deepObject") == ["a", "b"]
    assert read(rt, "x=a", list[str], style="deepObject") == ["a"]
    # where the type is a dict, index-like keys stay keys
    assert read(rt, "x[0]=a&x[1]=b", dict[str, str], style="deepObject") == {"0": "a", "1": "b"}


def test_form_objects(rt: RuntimeModules) -> None:
    exploded = read(
        rt, "gte=1&lte=2&other=3", dict[str, int], style="form", properties=("gte", "lte")
    )
    assert exploded == {"gte": 1, "lte": 2}
    free = read(rt, "a=1&b=2&limit=3", dict[str, str], style="form", exclude=("limit",))
    assert free == {"a": "1", "b": "2"}
    union = dict[str, int] | int
    assert read(rt, "x=5", union, style="form", properties=("gte",)) == 5
    flat = read(rt, "x=gte,1,lte,2", dict[str, int], style="form", explode=False)
    assert flat == {"gte": 1, "lte": 2}
    assert read(rt, "x=5", union, style="form", explode=False) == 5


def test_delimited_arrays(rt: RuntimeModules) -> None:
    assert read(rt, "x=1,2,3", list[int], style="form", explode=False) == [1, 2, 3]
    assert read(rt, "x=a%20b", list[str], style="spaceDelimited") == ["a", "b"]
    assert read(rt, "x=a|b&x=c", list[str], style="pipeDelimited") == ["a", "b", "c"]


def test_invalid_values_are_validation_errors(rt: RuntimeModules) -> None:
    from fastapi.exceptions import RequestValidationError

    with pytest.raises(RequestValidationError) as caught:
        read(rt, "x[gte]=soon", dict[str, int], style="deepObject")
    (error,) = caught.value.errors()
    assert error["loc"] == ("query", "x", "gte")
    assert error["type"] == "int_parsing"
    assert "input" not in error
    with pytest.raises(RequestValidationError):  # an odd number of items is no object
        read(rt, "x=a,1,b", dict[str, str], style="form", explode=False)
    with pytest.raises(ValueError, match="unknown query style"):
        rt.query.StyledQuery("x", str, style="matrix")


def _app(rt: RuntimeModules) -> FastAPI:
    styled_query = rt.query.styled_query
    app = FastAPI()
    rt.problems.install_problem_handlers(app, max_body_bytes=1 << 16)

    @app.get("/echo")
    async def echo(
        f: Annotated[
            dict[str, Any],
            Depends(
                styled_query("filter", dict[str, Any], required=True, exclude=("created", "kind"))
            ),
        ],
        created: Annotated[
            dict[str, int] | int | None,
            Depends(styled_query("created", dict[str, int] | int, style="deepObject")),
        ] = None,
        kind: Annotated[
            Literal["a", "b"] | None,
            Depends(styled_query("kind", Literal["a", "b"], default="a", style="deepObject")),
        ] = None,
    ) -> Any:
        return {"filter": f, "created": created, "kind": kind}

    return app


def _get(app: FastAPI, query: str) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.get("/echo?" + query)

    return asyncio.run(go())


def test_dependency_answers_and_fails_like_query(rt: RuntimeModules) -> None:
    app = _app(rt)
    ok = _get(app, "status=open&created[gte]=3")
    assert ok.status_code == 200
    assert ok.json() == {"filter": {"status": "open"}, "created": {"gte": 3}, "kind": "a"}
    missing = _get(app, "")
    assert missing.status_code == 422
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json()["errors"] == [
        {"location": ["query", "filter"], "message": "Field required", "type": "missing"}
    ]
    bad = _get(app, "status=open&created[gte]=x")
    assert bad.status_code == 422
    locations = [e["location"] for e in bad.json()["errors"]]
    assert ["query", "created", "dict[str,int]", "gte"] in locations
    bad = _get(app, "status=open&kind=c")
    assert bad.status_code == 422
    assert [e["location"] for e in bad.json()["errors"]] == [["query", "kind"]]


ROUND_TRIPS: list[tuple[str, bool, Any, Any]] = [
    ("deepObject", True, {"status": "open", "n": 2}, dict[str, Any]),
    ("deepObject", True, {"gte": 1, "lt": 9}, dict[str, int] | int),
    ("deepObject", True, 5, dict[str, int] | int),
    ("deepObject", True, {"a": {"b": ["x", "y"]}, "on": True}, dict[str, Any]),
    ("deepObject", True, ["a", "b"], list[str]),
    ("deepObject", True, [{"amount": 1, "tax_rates": ["t"]}, {"amount": 2}], list[dict[str, Any]]),
    ("form", True, {"gte": 1, "lte": 2}, dict[str, int]),
    ("form", True, [{"k": "v"}, {"k": "w"}], list[dict[str, str]]),
    ("form", True, [["a", "b"], ["c"]], list[list[str]]),
    ("form", False, {"gte": 1, "lte": 2}, dict[str, int]),
    ("form", False, {"a": {"b": "c"}}, dict[str, dict[str, str]]),
    ("form", False, ["a", "b"], list[str]),
    ("spaceDelimited", False, [1, 2], list[int]),
    ("pipeDelimited", False, ["a b", "c"], list[str]),
]


@pytest.mark.parametrize(("style", "explode", "value", "type_"), ROUND_TRIPS)
def test_client_encoding_reads_back(
    rt: RuntimeModules, style: str, explode: bool, value: Any, type_: Any
) -> None:
    pairs = encode_query("x", value, style=style, explode=explode)
    query = urlencode([*pairs, ("limit", "10")])  # as httpx puts them on the URL
    properties = ("gte", "lte") if style == "form" and explode else ()
    got = read(rt, query, type_, style=style, explode=explode, properties=properties)
    expected = value
    if type_ == dict[str, Any]:  # no declared types: the values come back as strings
        expected = {
            "status": "open",
            "n": "2",
            "a": {"b": ["x", "y"]},
            "on": "true",
        }
        expected = {k: v for k, v in expected.items() if k in value}
    if type_ == list[dict[str, Any]]:
        expected = [{"amount": "1", "tax_rates": ["t"]}, {"amount": "2"}]
    assert got == expected
