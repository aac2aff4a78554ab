"""Valid instances of a spec's JSON schemas, and generic handlers that answer with them.

`instance(schema, doc)` builds a value of `schema` (local `$ref`s into `doc` followed): the
schema's own `const`/`example`/`examples`/`default`/`enum` when they are valid, else a value
built from `type`, `format`, bounds and `pattern` (hypothesis's `from_regex`, minimal and so
deterministic). Every result is checked with jsonschema against the schema before use.

`handler_modules(plan, doc)` writes, for a generated server's plan, one handler module per tag
whose every method answers the lowest declared 2xx of its operation with such an instance and
the response headers the spec declares for it (ETag through a version, so the runtime makes it).
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Mapping
from typing import Any

import jsonschema

from generator.server.plan_types import ServerPlan

_FORMATS = {
    "date-time": "2026-04-15T10:30:00Z",
    "date": "2026-04-15",
    "time": "10:30:00Z",
    "email": "alice@example.com",
    "uri": "https://example.com/a",
    "url": "https://example.com/a",
    "uri-reference": "/a",
    "uuid": "0b5c7ed7-3a4c-4a0e-9b5e-5b0b6f6c1d2e",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "byte": "YQ==",
}
_RUNTIME_HEADERS = ("x-ratelimit-", "ratelimit", "retry-after", "etag")


def resolve(schema: Any, doc: Mapping[str, Any]) -> Any:
    for _ in range(32):
        if not (isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str)):
            return schema
        node: Any = doc
        for token in schema["$ref"].lstrip("#/").split("/"):
            node = node[token.replace("~1", "/").replace("~0", "~")]
        schema = node
    raise ValueError("a $ref cycle")


def _validator(schema: Any, doc: Mapping[str, Any]) -> Any:
    root = _json_schema({"components": doc.get("components", {})})
    root["__target__"] = _json_schema(schema)
    root["$ref"] = "#/__target__"
    cls = jsonschema.Draft202012Validator
    return cls(root, format_checker=cls.FORMAT_CHECKER)


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0's `nullable` as JSON Schema, everything else as is."""
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True and isinstance(node.get("type"), str):
        out["type"] = [node["type"], "null"]
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(node.get(exclusive), bool):  # 3.0: a flag on the bound
            del out[exclusive]
            if node[exclusive] and bound in node:
                out[exclusive] = out.pop(bound)
    return out


def valid(value: Any, schema: Any, doc: Mapping[str, Any]) -> bool:
    return _validator(schema, doc).is_valid(value)


def instance(schema: Any, doc: Mapping[str, Any], depth: int = 0) -> Any:
    value = _instance(schema, doc, depth)
    if not valid(value, schema, doc):
        errors = [e.message for e in _validator(schema, doc).iter_errors(value)][:3]
        raise AssertionError(f"no valid instance of {json.dumps(schema)[:200]}: {errors}")
    return value


def _candidates(s: Mapping[str, Any]) -> list[Any]:
    found = []
    if "const" in s:
        found.append(s["const"])
    if "example" in s:
        found.append(s["example"])
    if isinstance(s.get("examples"), list):
        found += s["examples"]
    if "default" in s:
        found.append(s["default"])
    if isinstance(s.get("enum"), list):
        found += [v for v in s["enum"] if v is not None]
    return found


def _instance(schema: Any, doc: Mapping[str, Any], depth: int) -> Any:
    s = resolve(schema, doc)
    if not isinstance(s, Mapping) or s is True:
        return "x"
    for candidate in _candidates(s):
        if valid(candidate, s, doc):
            return copy.deepcopy(candidate)
    if "allOf" in s:
        merged: dict[str, Any] = {}
        for part in s["allOf"]:
            value = _instance(part, doc, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        own = {k: v for k, v in s.items() if k != "allOf"}
        if own.get("properties"):
            merged.update(_object(own, doc, depth))
        return merged
    for key in ("oneOf", "anyOf"):
        if key in s:
            for option in s[key]:
                value = _instance(option, doc, depth + 1)
                if valid(value, s, doc):
                    return value
    kind = s.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in s else "string"
    if kind == "object":
        return _object(s, doc, depth)
    if kind == "array":
        items = s.get("items", {})
        count = max(int(s.get("minItems", 0)), 0 if depth > 3 else 1)
        values = [_instance(items, doc, depth + 1) for _ in range(count)]
        if s.get("uniqueItems") and len(values) > 1:
            values = values[:1]
        return values
    if kind in ("integer", "number"):
        low = s.get("minimum", s.get("exclusiveMinimum", 0))
        value = low + (1 if "exclusiveMinimum" in s else 0)
        high = s.get("maximum")
        if high is not None and value > high:
            value = high
        multiple = s.get("multipleOf")
        if multiple:
            value = multiple * max(1, -(-value // multiple))
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(s)


def _object(s: Mapping[str, Any], doc: Mapping[str, Any], depth: int) -> dict[str, Any]:
    props = s.get("properties") or {}
    required = set(s.get("required") or ())
    out: dict[str, Any] = {}
    for name, prop in props.items():
        if name not in required and (depth > 2 or resolve(prop, doc).get("writeOnly")):
            continue
        out[name] = _instance(prop, doc, depth + 1)
    return out


def _string(s: Mapping[str, Any]) -> str:
    pattern = s.get("pattern")
    if isinstance(pattern, str):
        from hypothesis import find
        from hypothesis import strategies as st

        low, high = int(s.get("minLength", 0)), s.get("maxLength")

        def fits(text: str) -> bool:
            return len(text) >= low and (high is None or len(text) <= high)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(find(st.from_regex(pattern, fullmatch=True), fits))
    text = _FORMATS.get(str(s.get("format")), "x")
    low = int(s.get("minLength", 0))
    if len(text) < low:
        text += "x" * (low - len(text))
    if s.get("maxLength") is not None:
        text = text[: int(s["maxLength"])]
    return text


# --- handlers -----------------------------------------------------------------------------


def _operation(doc: Mapping[str, Any], method: str, path: str) -> Mapping[str, Any]:
    return resolve(doc["paths"][path], doc)[method.lower()]  # type: ignore[no-any-return]


def _json_media(content: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ct, media in content.items():
        base = ct.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json") or base == "*/*":
            return media  # type: ignore[no-any-return]
    return None


def answer(doc: Mapping[str, Any], method: str, path: str) -> dict[str, Any]:
    """What a generic handler answers for one operation: status, body, headers, version."""
    op = _operation(doc, method, path)
    responses = op.get("responses", {})
    codes = sorted(c for c in responses if str(c).isdigit() and str(c).startswith("2"))
    status = int(codes[0]) if codes else 200
    response = resolve(responses.get(str(status), responses.get(status, {})), doc)
    body: Any = None
    media = _json_media(response.get("content") or {})
    if media is not None:
        body = instance(media.get("schema", {}), doc)
    headers: dict[str, str] = {}
    version = None
    for name, header in (response.get("headers") or {}).items():
        header = resolve(header, doc)
        lowered = name.lower()
        if lowered == "etag":
            version = 1
        if lowered.startswith(_RUNTIME_HEADERS):
            continue
        value = instance(header.get("schema", {"type": "string"}), doc)
        headers[name] = value if isinstance(value, str) else json.dumps(value)
    return {"status": status, "body": body, "headers": headers, "version": version}


def job_result(doc: Mapping[str, Any], job: Any) -> Any:
    """An instance of the `result` property of the job status operation's answer."""
    wanted = getattr(job, "status_operation", None)
    for path, item in (doc.get("paths") or {}).items():
        for method, op in resolve(item, doc).items():
            if isinstance(op, Mapping) and op.get("operationId") == wanted:
                found = answer(doc, method, path)["body"]
                if isinstance(found, Mapping) and "result" in found:
                    status = _json_media(resolve(_ok_response(op), doc).get("content") or {}) or {}
                    schema = resolve(status.get("schema", {}), doc)
                    return instance(schema.get("properties", {}).get("result", {}), doc)
                return None
    return None


def _ok_response(op: Mapping[str, Any]) -> Any:
    responses = op.get("responses", {})
    codes = sorted(str(c) for c in responses if str(c).isdigit() and str(c).startswith("2"))
    return responses.get(codes[0], responses.get(int(codes[0]))) if codes else {}


def _non_json_media(op: Any) -> str | None:
    """The media type of the operation's first 2xx answer when none of them is JSON."""
    types = [m.content_type for r in op.success_responses for m in r.content]
    if not types or any("json" in t or t == "*/*" for t in types):
        return None
    return str(types[0])


def handler_modules(plan: ServerPlan, doc: Mapping[str, Any]) -> dict[str, str]:
    """{module: source} for every tag with handler operations."""
    modules: dict[str, str] = {}
    for tag in plan.handler_tags:
        answers: dict[str, Any] = {}
        methods = []
        for op in tag.handler_operations:
            found = answer(doc, op.op.method, op.op.path)
            if op.kind == "job":
                # the job's work: its result, which the job store serves later
                result = job_result(doc, op.op.patterns.async_job)
                found = {"status": None, "body": result, "headers": {}, "version": None}
            answers[op.name] = found
            media = _non_json_media(op.op)
            if media is not None and op.kind != "job":
                # a bytes, text or event-stream answer, in the media type the spec declares
                event = json.dumps(found.get("body") if found else None)
                content = f"data: {event}\n\n" if media == "text/event-stream" else "example"
                methods.append(
                    f"    async def {op.name}(self, ctx: Any, **kwargs: Any) -> Any:\n"
                    f"        return Response({content!r}.encode(), media_type={media!r})\n"
                )
                continue
            methods.append(
                f"    async def {op.name}(self, ctx: Any, **kwargs: Any) -> Any:\n"
                f"        return _reply({op.name!r}, {op.kind == 'job'!r})\n"
            )
        modules[tag.module] = (
            "from typing import Any\n\n"
            "from starlette.responses import Response\n\n"
            f"from ..interfaces import {tag.base_class}\n"
            "from ..runtime.context import Reply\n\n"
            f"_ANSWERS = __import__('json').loads({json.dumps(json.dumps(answers))})\n\n\n"
            "def _reply(name: str, job: bool) -> Any:\n"
            "    found = _ANSWERS[name]\n"
            "    if job:\n"
            "        return found['body']\n"
            "    return Reply(found['body'], version=found['version'], status=found['status'],\n"
            "                 headers=found['headers'])\n\n\n"
            f"class {tag.handler_class}({tag.base_class}):\n" + "\n".join(methods)
        )
    return modules
