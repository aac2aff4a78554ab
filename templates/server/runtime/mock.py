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

- A list operation's answer is a finite collection: the first page holds the answer's items
  and says it is the last (`has_more` false, no next cursor or `Link`, the total reached);
  a request for any later position gets an empty last page. A client that pages walks to
  the end.
- `Prefer: code=404` answers the operation's declared 404 (else its `4XX`, else its
  `default`) with that response's example or a value of its schema; `Prefer: example=name`
  answers the named example (`examples` entry) of the chosen response. A code or name the
  operation does not declare answers 422, naming those it does.
- `AnyCredential` (`APIFORGE_MOCK_ANY_CREDENTIAL=1`, what `apiforge mock` uses): a verifier
  that lets in every well-formed credential as a principal of its own (named by the
  credential's digest), with the scopes the operation asks for; a request without one still
  gets 401.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from .context import Reply, RequestContext
from .problems import ProblemDetail
from .security import AuthContext, AuthScheme, Principal

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
    #: a list operation's paging (style, items, param, next, has_more, total, first_page)
    paging: Mapping[str, Any] | None = None
    examples: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # by name
    #: the other declared responses by key ("404", "4XX", "default"): candidates, headers,
    #: media_type, examples
    others: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
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
            data.get("paging"),
            dict(data.get("examples") or {}),
            dict(data.get("others") or {}),
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
        if self.job or not isinstance(ctx, RequestContext):
            return self.value_for(ctx)
        prefer = preferences(ctx.request.headers.get("prefer", ""))
        code = prefer.get("code", "")
        if code and code != str(self.status):
            return self._other(code, prefer.get("example", ""))
        headers = dict(self.headers)
        if "example" in prefer:
            value = _named(self.examples, prefer["example"])
        else:
            value = self.value_for(ctx)
        if self.paging is not None:
            value = last_page(value, self.paging, ctx.request, self._fits(ctx))
            headers = {k: v for k, v in headers.items() if k.lower() != "link"}
        if self.media_type is not None:
            content = value if isinstance(value, str | bytes) else ""
            media_type = self.media_type if "*" not in self.media_type else None
            return Response(content, self.status, headers, media_type)
        etag = None
        if self.etag:
            digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
            etag = f'"{digest[:32]}"'
        return Reply(value, etag=etag, status=self.status, headers=headers)

    @staticmethod
    def _fits(ctx: Any) -> Callable[[Any], bool]:
        """Whether a value passes the matched route's response model."""
        field = getattr(ctx.request.scope.get("route"), "response_field", None)
        if field is None:
            return lambda value: True
        return lambda value: not field.validate(value, {}, loc=("response",))[1]

    def _other(self, code: str, example: str) -> Response:
        """`Prefer: code=...`: the declared response of that status (or its range, or
        `default`)."""
        key = next((k for k in (code, f"{code[:1]}XX", "default") if k in self.others), None)
        if key is None or not code.isdigit():
            declared = sorted({str(self.status), *self.others})
            raise ProblemDetail(
                422,
                "mock-response-unknown",
                "The operation declares no such response",
                f"Prefer: code={code}: declared responses are {', '.join(declared)}",
            )
        other = self.others[key]
        candidates = other.get("candidates") or [None]
        value = _named(other.get("examples") or {}, example) if example else candidates[0]
        if isinstance(value, dict) and isinstance(value.get("status"), int):
            value = {**value, "status": int(code)}  # a problem's status is the answer's
        media_type = other.get("media_type") or "application/json"
        content: Any = value
        if other.get("media_type") is None:
            content = b"" if value is None else json.dumps(value).encode()
            if value is not None and int(code) >= 400:
                media_type = "application/problem+json" if _is_problem(value) else media_type
        elif not isinstance(value, str | bytes):
            content = ""
        return Response(content, int(code), dict(other.get("headers") or {}), media_type)


def preferences(header: str) -> dict[str, str]:
    """The `name=value` preferences of a `Prefer` header (RFC 7240), names in lower case."""
    found: dict[str, str] = {}
    for part in re.split(r"[,;]", header):
        name, sep, value = part.partition("=")
        if sep and name.strip():
            found.setdefault(name.strip().lower(), value.strip().strip('"'))
    return found


def _named(examples: Mapping[str, Any], name: str) -> Any:
    if name in examples:
        return copy.deepcopy(examples[name])
    known = ", ".join(sorted(examples)) or "none"
    raise ProblemDetail(
        422,
        "mock-example-unknown",
        "The response has no example of that name",
        f"Prefer: example={name}: its named examples are {known}",
    )


def _is_problem(value: Any) -> bool:
    return isinstance(value, Mapping) and {"type", "title"} <= value.keys()


def last_page(
    value: Any, paging: Mapping[str, Any], request: Request, fits: Callable[[Any], bool]
) -> Any:
    """`value` (a list answer) as the last page of a finite collection: its own items at the
    start, none at any later position, and every end marker the operation has set so that a
    client stops (see the module docstring)."""
    value = copy.deepcopy(value)
    items_path = list(paging.get("items") or ())
    items = _at(value, items_path)
    count = len(items) if isinstance(items, list) else 0
    style = paging.get("style")
    raw = request.query_params.get(str(paging.get("param") or ""))
    first_page = int(paging.get("first_page") or 1)
    if raw is not None and raw != "":
        moved = style in ("cursor", "link", "next_url") or _moved_number(raw, style, first_page)
        if moved and isinstance(items, list):
            value = _put(value, items_path, [])
            count = 0
    if paging.get("has_more"):
        value = _put(value, list(paging["has_more"]), False)
    if paging.get("total"):
        total = count if style == "offset" else 1
        value = _put(value, list(paging["total"]), total)
    if paging.get("next") and style in ("cursor", "next_url"):
        value = _without(value, list(paging["next"]), fits)
    return value


def _moved_number(raw: str, style: Any, first_page: int) -> bool:
    try:
        number = int(raw)
    except ValueError:
        return True
    return number > (0 if style == "offset" else first_page)


def _at(value: Any, path: Sequence[str]) -> Any:
    for name in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def _put(value: Any, path: Sequence[str], new: Any) -> Any:
    """`value` with `new` at `path` (where the parent objects exist; the whole when empty)."""
    if not path:
        return new
    parent = _at(value, path[:-1])
    if isinstance(parent, dict):
        parent[path[-1]] = new
    return value


def _without(value: Any, path: Sequence[str], fits: Callable[[Any], bool]) -> Any:
    """`value` with no next cursor/URL at `path`: null, else the member left out, else an
    empty string — the first the response model accepts."""
    parent = _at(value, path[:-1])
    if not isinstance(parent, dict) or path[-1] not in parent:
        return value
    name = path[-1]
    for attempt in (None, _ABSENT, ""):
        if attempt is _ABSENT:
            parent.pop(name, None)
        else:
            parent[name] = attempt
        if fits(value):
            return value
    parent[name] = None
    return value


_ABSENT = object()


class AnyCredential:
    """A verifier for mock mode: every well-formed credential of every scheme is a principal
    of its own (`mock-` and the first 16 hex digits of the credential's SHA-256), granted
    the scopes the operation asks for."""

    def __init__(self, schemes: Iterable[AuthScheme]) -> None:
        for scheme in schemes:
            if scheme.kind:
                setattr(self, scheme.method, _accepting(scheme.kind))

    async def allow_destination(self, url: str, principal: Principal | None) -> bool:
        return True


def _accepting(kind: str) -> Callable[..., Awaitable[Principal | None]]:
    async def verify(*credential: str, scopes: tuple[str, ...], ctx: AuthContext) -> Principal:
        material = "\0".join((kind, *credential)).encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(material).hexdigest()[:16]
        return Principal(f"mock-{digest}", scopes=frozenset(scopes))

    return verify


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


def mocking(handlers: H, path: Path, any_credential: Iterable[AuthScheme] | None = None) -> H:
    """`handlers` (the app's `Handlers` dataclass) with each handler object wrapped; with
    `any_credential` (the spec's schemes), its verifier is `AnyCredential`."""
    answers = load_answers(path)
    wrapped: dict[str, Any] = {
        attr: MockingHandler(getattr(handlers, attr), methods)
        for attr, methods in answers.items()
        if hasattr(handlers, attr)
    }
    if any_credential is not None:
        wrapped["verifier"] = AnyCredential(any_credential)
    logger.warning("mock mode: operations without a handler answer with their declared mocks")
    return dataclasses.replace(handlers, **wrapped)  # type: ignore[type-var]
