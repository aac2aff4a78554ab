"""Problem details: every error is application/problem+json (runtime/problems.py)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.runtime.server.conftest import RuntimeModules, app_package
from tests.support import uvicorn_server

BASE = "/problems/"


def problem(
    status: int, kind: str, title: str, detail: str, instance: str, **extra: Any
) -> dict[str, Any]:
    return {
        "type": BASE + kind,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        **extra,
    }


def assert_problem(response: httpx.Response, expected: dict[str, Any]) -> None:
    assert response.status_code == expected["status"], response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == expected


# --- unit --------------------------------------------------------------------------------


def test_problem_detail_keeps_its_api(rt: RuntimeModules) -> None:
    p = rt.problems.ProblemDetail(
        409, "conflict", "Conflict", headers={"X-A": "1"}, extensions={"errors": []}
    )
    assert p.body("/x") == problem(409, "conflict", "Conflict", "Conflict", "/x", errors=[])
    assert json.loads(p.encode("/x")) == p.body("/x")
    assert p.headers == {"X-A": "1"}
    assert rt.problems.PROBLEM_JSON == "application/problem+json"


def test_problem_for_status_kinds(rt: RuntimeModules) -> None:
    assert rt.problems.problem_for_status(413).kind == "content-too-large"
    assert rt.problems.problem_for_status(429).title == "Too many requests"
    odd = rt.problems.problem_for_status(599, "x")
    assert (odd.kind, odd.title, odd.detail) == ("http-599", "HTTP 599", "x")


def test_validation_errors_never_echo_input(rt: RuntimeModules) -> None:
    errors = [
        {
            "loc": ("body", "items", 0, "name"),
            "msg": "bad",
            "type": "string_type",
            "input": "secret",
        },
        "not-a-dict",
    ]
    assert rt.problems.validation_errors(errors) == [
        {"location": ["body", "items", 0, "name"], "message": "bad", "type": "string_type"}
    ]


def test_content_type_guard_matching(rt: RuntimeModules) -> None:
    guard = rt.problems.require_content_type("application/json", "text/*")
    assert guard.accepts("application/json; charset=utf-8")
    assert guard.accepts("Application/JSON")
    assert guard.accepts("text/csv")
    assert not guard.accepts("application/xml")
    assert not guard.accepts(None)
    assert rt.problems.require_content_type("*/*").accepts("image/png")
    with pytest.raises(ValueError):
        rt.problems.require_content_type()


def test_deferred_headers_need_the_middleware(rt: RuntimeModules) -> None:
    with pytest.raises(RuntimeError, match="install_problem_handlers"):
        rt.problems.defer_response_headers({"type": "http"}, [("X-A", "1")])


async def _call_asgi(
    app: Any, *, headers: list[tuple[bytes, bytes]], chunks: list[bytes]
) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/p", "root_path": "", "headers": headers}
    await app(scope, receive, send)
    return sent


def _reader_app(rt: RuntimeModules) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        rt.problems.defer_response_headers(scope, [("X-Deferred", "yes")])
        total = 0
        while True:
            message = await receive()
            total += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x-app", b"1")]})
        await send({"type": "http.response.body", "body": str(total).encode()})

    return app


def test_middleware_counts_streamed_bytes(rt: RuntimeModules) -> None:
    mw = rt.problems.ProblemMiddleware(_reader_app(rt), max_body_bytes=10)
    ok = asyncio.run(_call_asgi(mw, headers=[], chunks=[b"12345", b"12345"]))
    assert ok[0]["status"] == 200 and ok[1]["body"] == b"10"
    assert (b"x-deferred", b"yes") in ok[0]["headers"] and (b"x-app", b"1") in ok[0]["headers"]
    # no Content-Length, 11 bytes in chunks: the counting catches it
    over = asyncio.run(_call_asgi(mw, headers=[], chunks=[b"123456", b"12345"]))
    assert over[0]["status"] == 413
    assert (b"x-deferred", b"yes") in over[0]["headers"]
    assert json.loads(over[1]["body"])["type"] == BASE + "content-too-large"


def test_middleware_replaces_response_when_declared_length_too_big(rt: RuntimeModules) -> None:
    async def ignores_body(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    mw = rt.problems.ProblemMiddleware(ignores_body, max_body_bytes=10)
    sent = asyncio.run(_call_asgi(mw, headers=[(b"content-length", b"11")], chunks=[b"x" * 11]))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 413


def test_middleware_reraises_after_response_started(rt: RuntimeModules) -> None:
    async def fails_late(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("late")

    mw = rt.problems.ProblemMiddleware(fails_late, max_body_bytes=10)
    with pytest.raises(RuntimeError, match="late"):
        asyncio.run(_call_asgi(mw, headers=[], chunks=[b""]))


def test_a_client_that_left_during_its_body_gets_no_answer_and_no_traceback(
    rt: RuntimeModules, caplog: pytest.LogCaptureFixture
) -> None:
    """wrk closing its connections at the end of a run made every in-flight POST an
    "unhandled exception" with a traceback, and a 500 sent to no one."""
    from starlette.requests import ClientDisconnect, Request

    async def reads_body(scope: Any, receive: Any, send: Any) -> None:
        await Request(scope, receive).body()  # the client is gone: ClientDisconnect
        raise AssertionError("the body was read")

    async def in_a_group(scope: Any, receive: Any, send: Any) -> None:
        raise BaseExceptionGroup("task group", [ClientDisconnect()])

    for app in (reads_body, in_a_group):
        mw = rt.problems.ProblemMiddleware(app, max_body_bytes=10)
        with caplog.at_level(logging.INFO):
            sent = asyncio.run(_call_asgi(mw, headers=[], chunks=[]))
        assert sent == []
        problems = [r for r in caplog.records if r.name.endswith("runtime.problems")]
        assert [r.levelno for r in problems] == [logging.INFO] and problems[0].exc_info is None
        assert "client disconnected during POST /p" in problems[0].getMessage()
        caplog.clear()


def test_unhandled_exception_is_logged_with_traceback_and_leaks_nothing(
    rt: RuntimeModules, caplog: pytest.LogCaptureFixture
) -> None:
    settings = rt.settings.Settings(store_url="memory://")
    app = rt.app_module("app").create_app(settings)

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.get("/boom")

    with caplog.at_level(logging.ERROR):
        response = asyncio.run(call())
    assert_problem(
        response,
        problem(
            500,
            "internal-error",
            "Internal server error",
            "The server failed to handle the request.",
            "/boom",
        ),
    )
    assert "hunter2" not in response.text and "RuntimeError" not in response.text
    records = [r for r in caplog.records if r.name.endswith("runtime.problems")]
    assert records and records[0].exc_info is not None
    assert "hunter2" in str(records[0].exc_info[1])


# --- functional: the test app under uvicorn ---------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("problems_srv")
    app_package(root, "problems_app")
    env = {"APIFORGE_STORE_URL": "memory://", "APIFORGE_MAX_BODY_BYTES": "100"}
    with (
        uvicorn_server(
            "problems_app.app:create_app", cwd=root, env=env, extra_args=["--factory"]
        ) as (base, _proc),
        httpx.Client(base_url=base) as client,
    ):
        yield client


def test_404_unknown_path(server: httpx.Client) -> None:
    r = server.get("/nowhere?token=secret")
    assert_problem(
        r, problem(404, "not-found", "Not found", "No resource at /nowhere.", "/nowhere")
    )


def test_404_raised_by_handler(server: httpx.Client) -> None:
    r = server.get("/widgets/ghost")
    assert_problem(
        r, problem(404, "not-found", "Not found", "Widget 'ghost' not found.", "/widgets/ghost")
    )


def test_405_with_allow(server: httpx.Client) -> None:
    r = server.post("/plain")
    assert_problem(
        r,
        problem(
            405,
            "method-not-allowed",
            "Method not allowed",
            "POST is not allowed on /plain. Allowed: GET.",
            "/plain",
        ),
    )
    assert r.headers["allow"] == "GET"


def test_422_lists_every_invalid_field(server: httpx.Client) -> None:
    r = server.post("/echo", json={"name": "", "size": -1, "secret": "x"})
    assert_problem(
        r,
        problem(
            422,
            "validation-error",
            "Validation failed",
            "The request has 2 invalid fields.",
            "/echo",
            errors=[
                {
                    "location": ["body", "name"],
                    "message": "String should have at least 1 character",
                    "type": "string_too_short",
                },
                {
                    "location": ["body", "size"],
                    "message": "Input should be greater than or equal to 0",
                    "type": "greater_than_equal",
                },
            ],
        ),
    )


def test_422_query_parameter_and_malformed_json(server: httpx.Client) -> None:
    r = server.get("/items", params={"limit": "many"})
    assert r.status_code == 422
    assert r.json()["errors"] == [
        {
            "location": ["query", "limit"],
            "message": "Input should be a valid integer, unable to parse string as an integer",
            "type": "int_parsing",
        }
    ]
    r = server.post("/echo", content=b'{"name":', headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["errors"] == [
        {"location": ["body", 8], "message": "JSON decode error", "type": "json_invalid"}
    ]


@pytest.mark.parametrize(
    ("content_type", "got"),
    [
        ("text/plain", "text/plain"),
        (None, "no Content-Type"),
        ("application/xml; charset=utf-8", "application/xml"),
    ],
)
def test_415_wrong_content_type(server: httpx.Client, content_type: str | None, got: str) -> None:
    headers = {"content-type": content_type} if content_type else {}
    r = server.post("/echo", content=b'{"name":"a","size":1}', headers=headers)
    detail = f"This operation accepts application/json; the request sent {got}."
    assert_problem(
        r, problem(415, "unsupported-media-type", "Unsupported media type", detail, "/echo")
    )


def test_right_content_type_passes(server: httpx.Client) -> None:
    r = server.post("/echo", json={"name": "a", "size": 1})
    assert r.status_code == 200 and r.json() == {"name": "a", "size": 1}
    r = server.post(
        "/upload", content=b"x" * 100, headers={"content-type": "application/octet-stream"}
    )
    assert r.status_code == 200 and r.json() == {"received": 100}


def test_413_by_content_length(server: httpx.Client) -> None:
    r = server.post("/echo", content=b"x" * 101, headers={"content-type": "application/json"})
    expected = problem(
        413,
        "content-too-large",
        "Content too large",
        "The request body exceeds the limit of 100 bytes.",
        "/echo",
    )
    assert_problem(r, expected)


def test_413_by_streamed_bytes(server: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(5):
            yield b"y" * 30  # chunked: no Content-Length, 150 bytes

    r = server.post(
        "/upload", content=chunks(), headers={"content-type": "application/octet-stream"}
    )
    assert "content-length" not in r.request.headers
    expected = problem(
        413,
        "content-too-large",
        "Content too large",
        "The request body exceeds the limit of 100 bytes.",
        "/upload",
    )
    assert_problem(r, expected)


def test_501_names_the_operation(server: httpx.Client) -> None:
    r = server.get("/todo")
    detail = "Operation 'listTodos' (GET /todo) has no handler implementation yet."
    assert_problem(r, problem(501, "not-implemented", "Not implemented", detail, "/todo"))


def test_500_leaks_nothing(server: httpx.Client) -> None:
    r = server.get("/boom")
    assert_problem(
        r,
        problem(
            500,
            "internal-error",
            "Internal server error",
            "The server failed to handle the request.",
            "/boom",
        ),
    )
    assert "hunter2" not in r.text and "Traceback" not in r.text


def test_problem_detail_with_headers(server: httpx.Client) -> None:
    r = server.get("/teapot")
    assert_problem(r, problem(418, "teapot", "I'm a teapot", "Short and stout.", "/teapot"))
    assert r.headers["x-brew"] == "earl-grey"


def test_guards_run_once_before_the_body_with_or_without_guarded_route(rt: RuntimeModules) -> None:
    from fastapi import APIRouter, Depends, FastAPI
    from fastapi.routing import APIRoute
    from starlette.requests import Request

    P = rt.problems
    calls: list[str] = []

    class Recorder(P.RequestGuard):
        def __init__(self, name: str) -> None:
            self.name = name

        async def check(self, request: Request) -> None:
            calls.append(self.name)
            P.defer_response_headers(request.scope, [(f"X-{self.name}", "1")])

    routers: list[APIRouter] = []

    def build(route_class: Any) -> FastAPI:
        app = FastAPI()
        P.install_problem_handlers(app, max_body_bytes=1000)
        router = APIRouter(route_class=route_class, dependencies=[Depends(Recorder("outer"))])

        @router.post("/e", dependencies=[Depends(Recorder("inner"))])
        async def e(body: dict[str, int]) -> dict[str, int]:
            return body

        app.include_router(router)
        routers.append(router)
        return app

    async def post(app: FastAPI, content: bytes) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post(
                "/e", content=content, headers={"content-type": "application/json"}
            )

    guarded = build(P.GuardedRoute)
    route = routers[0].routes[0]
    assert [g.name for g in route.guards] == ["outer", "inner"]
    assert not any(isinstance(d.dependency, P.RequestGuard) for d in route.dependencies)
    ok = asyncio.run(post(guarded, b'{"a": 1}'))
    assert ok.status_code == 200 and ok.headers["x-outer"] == ok.headers["x-inner"] == "1"
    bad = asyncio.run(post(guarded, b'{"a":'))  # the body fails after the guards ran
    assert bad.status_code == 422 and bad.headers["x-inner"] == "1"
    assert calls == ["outer", "inner", "outer", "inner"]

    calls.clear()
    plain = build(APIRoute)
    ok = asyncio.run(post(plain, b'{"a": 1}'))
    assert ok.status_code == 200 and ok.headers["x-inner"] == "1"
    assert calls == ["outer", "inner"]  # once each, as ordinary dependencies
