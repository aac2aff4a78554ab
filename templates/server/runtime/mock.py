"""Mock mode (`APIFORGE_MOCK=1`): what the spec declares, before any handler is written.

Each handler object is wrapped in a `MockingHandler`. A method that answers keeps answering;
one that raises `NotImplementedError` (the generated stub) answers with its operation's mock
instead: the declared example, else a value made from the schema, with the declared status
and headers. The mock goes back through the router like any handler's result, so every
pattern still applies: authentication, rate limits, idempotency keys (a retry replays the
stored answer), ETags and `If-None-Match`, 202 jobs (the job's result is the mock).

`mocks.json` (generated beside `main.py`) holds the answers: handler attribute → method →
`{"status", "headers", "candidates"}`. Of the candidates (the example first), the first that
the route's response model accepts is the answer, so a spec whose example disagrees with its
schema still gets a valid mock.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from starlette.responses import Response

from .context import Reply, RequestContext

logger = logging.getLogger(__name__)

H = TypeVar("H")


@dataclasses.dataclass(frozen=True, slots=True)
class MockAnswer:
    """The declared answer of one operation (`job`: the result of a 202 job's work)."""

    status: int
    headers: Mapping[str, str]
    candidates: tuple[Any, ...]
    job: bool = False
    etag: bool = False
    media_type: str | None = None  # a non-JSON answer's (its text, or no bytes)
    #: the candidate the route's response model took, chosen on the first call (one operation:
    #: one route), so later calls do not validate the candidates again
    chosen: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MockAnswer:
        return cls(
            int(data["status"]),
            dict(data.get("headers") or {}),
            tuple(data.get("candidates") or (None,)),
            bool(data.get("job")),
            bool(data.get("etag")),
            data.get("media_type"),
        )

    def value_for(self, ctx: Any) -> Any:
        """The first candidate the matched route's response model accepts (the last one if
        none does, or there is no route: a job's context)."""
        request = getattr(ctx, "request", None)
        field = getattr(request.scope.get("route"), "response_field", None) if request else None
        if field is None:
            return self.candidates[0]
        if "value" not in self.chosen:
            fits = (c for c in self.candidates if not field.validate(c, {}, loc=("response",))[1])
            self.chosen["value"] = next(fits, self.candidates[-1])
        return self.chosen["value"]

    def answer(self, ctx: Any) -> Any:
        value = self.value_for(ctx)
        if self.job or not isinstance(ctx, RequestContext):
            return value
        if self.media_type is not None:
            content = value if isinstance(value, str | bytes) else ""
            media_type = self.media_type if "*" not in self.media_type else None
            return Response(content, self.status, dict(self.headers), media_type)
        etag = None
        if self.etag:
            digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
            etag = f'"{digest[:32]}"'
        return Reply(value, etag=etag, status=self.status, headers=dict(self.headers))


class MockingHandler:
    """`handler` with a mock for each of its methods that is not written yet."""

    def __init__(self, handler: Any, answers: Mapping[str, MockAnswer]) -> None:
        self._handler = handler
        self._answers = answers

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._handler, name)
        answer = self._answers.get(name)
        if answer is None or not callable(method):
            return method
        return _mocked(method, answer)


def _mocked(method: Callable[..., Awaitable[Any]], answer: MockAnswer) -> Callable[..., Any]:
    async def call(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(ctx, *args, **kwargs)
        except NotImplementedError:
            return answer.answer(ctx)

    return call


def load_answers(path: Path) -> dict[str, dict[str, MockAnswer]]:
    """`mocks.json`: handler attribute → method name → its answer."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        attr: {name: MockAnswer.from_json(data) for name, data in methods.items()}
        for attr, methods in raw.items()
    }


def mocking(handlers: H, path: Path) -> H:
    """`handlers` (the app's `Handlers` dataclass) with each handler object wrapped."""
    answers = load_answers(path)
    wrapped = {
        attr: MockingHandler(getattr(handlers, attr), methods)
        for attr, methods in answers.items()
        if hasattr(handlers, attr)
    }
    logger.warning("mock mode: operations without a handler answer with their declared mocks")
    return dataclasses.replace(handlers, **wrapped)  # type: ignore[type-var]
