"""Form bodies read back into their model (runtime/form_values.py, through forms.RawBodyGuard),
as the client's form writer (templates/client/runtime/_forms.py) encodes them.

No `from __future__ import annotations`: FastAPI evaluates the test app's annotations where
the app is defined."""

import asyncio
from typing import Any

import httpx
import pydantic
from fastapi import Depends, FastAPI
from starlette.requests import Request

from templates.client.runtime._forms import Encoding as ClientEncoding
from templates.client.runtime._forms import multipart, urlencoded
from tests.runtime.server.conftest import RuntimeModules


class Address(pydantic.BaseModel):
    city: str
    line1: str | None = None


class Line(pydantic.BaseModel):
    name: str
    qty: int


class Customer(pydantic.BaseModel):
    email: str
    address: Address | None = None
    metadata: dict[str, str] | None = None
    expand: list[str] | None = None
    lines: list[Line] | None = None
    tags: list[str] | None = None
    count: int | None = None


class Upload(pydantic.BaseModel):
    name: str
    content: bytes
    tags: list[str] | None = None
    options: dict[str, int] | None = None


DEEP = {"style": "deepObject", "explode": True}


def _app(rt: RuntimeModules) -> FastAPI:
    forms, values = rt.forms, rt.form_values
    deep = values.Encoding("deepObject", True)
    customer_guard = forms.require_body(
        Customer,
        required=True,
        encoding={
            "address": deep,
            "metadata": deep,
            "expand": deep,
            "lines": deep,
            "tags": values.Encoding("pipeDelimited", False),
        },
    )
    upload_guard = forms.require_body(
        Upload,
        required=True,
        encoding={"options": values.Encoding(content_type="application/json")},
    )
    app = FastAPI()

    @app.post("/customers", dependencies=[Depends(customer_guard)])
    async def customers(request: Request) -> Any:
        body = values.form_value(request, Customer)
        assert isinstance(body, Customer)
        return body.model_dump(exclude_unset=True)

    @app.post("/uploads", dependencies=[Depends(upload_guard)])
    async def uploads(request: Request) -> Any:
        body = values.form_value(request, Upload)
        content = body.content
        return {
            "name": body.name,
            "tags": body.tags,
            "options": body.options,
            "size": len(content),
            "filename": getattr(content, "filename", None),
            "content_type": getattr(content, "content_type", None),
        }

    return app


def _post(app: FastAPI, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post(path, **kwargs)

    return asyncio.run(go())


def test_a_stripe_style_form_is_read_into_its_model(rt: RuntimeModules) -> None:
    sent = {
        "email": "a@b.c",
        "address": {"city": "Paris", "line1": "1 rue X"},
        "metadata": {"order": "42"},
        "expand": ["default_source"],
        "lines": [{"name": "pen", "qty": 2}, {"name": "ink", "qty": 1}],
        "tags": ["a", "b"],
        "count": 3,
    }
    encoding = {k: ClientEncoding("deepObject", True) for k in DEEP_FIELDS}
    encoding["tags"] = ClientEncoding("pipeDelimited", False)
    answer = _post(_app(rt), "/customers", data=urlencoded(sent, encoding))
    assert answer.status_code == 200, answer.text
    assert answer.json() == sent


DEEP_FIELDS = ("address", "metadata", "expand", "lines")


def test_a_form_breaking_its_model_is_a_located_422(rt: RuntimeModules) -> None:
    answer = _post(
        _app(rt),
        "/customers",
        content=b"email=x&lines[0][name]=pen&lines[0][qty]=many",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 422
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "lines", 0, "qty"]
    # `key[]` appends, as Rails and PHP write it
    answer = _post(_app(rt), "/customers", data={"email": "x", "expand[]": ["a", "b"]})
    assert answer.json()["expand"] == ["a", "b"]


def test_a_multipart_file_keeps_its_name_and_type(rt: RuntimeModules) -> None:
    parts = multipart(
        {
            "name": "scan",
            "content": ("scan.pdf", b"%PDF-1.7", "application/pdf"),
            "tags": ["x"],
            "options": {"dpi": 300},
        },
        {"options": ClientEncoding(content_type="application/json")},
    )
    answer = _post(_app(rt), "/uploads", files=parts)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "name": "scan",
        "tags": ["x"],
        "options": {"dpi": 300},
        "size": 8,
        "filename": "scan.pdf",
        "content_type": "application/pdf",
    }
