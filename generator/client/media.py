"""The client plan's part for what an operation answers with: JSON, text, bytes or events.

From the media types of the 2xx responses (JSON first, then the others, in spec order):

- any JSON (`application/json`, `*+json`, `*/*`): the method returns the parsed body;
- else `text/event-stream`: the method returns an `EventStream[T]` (`T`: the declared schema
  of one event's data, `str` when there is none or it is a string);
- else only text (`text/*` but event streams, XML, YAML, `application/x-ndjson`...): `str`;
- else anything (a binary type, or a JSON-less mix): `bytes`.

An operation with bytes, or with events beside JSON, also gets a `<method>_stream` twin that
reads the body as it arrives: a `BinaryStream` (write it to a file in bounded memory) or the
`EventStream`. `Accept` lists the media types the operation declares (success first, then
error bodies such as `application/problem+json`), the stream twin's only what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.ir import MediaType, Operation
from generator.render.pytypes import TypeMapper, is_plain_class
from generator.schemas import essence, is_json

EVENT_STREAM = "text/event-stream"
_TEXT_TYPES = (
    "application/xml",
    "application/yaml",
    "application/x-yaml",
    "application/x-ndjson",
    "application/jsonl",
    "application/csv",
    "application/javascript",
    "application/x-www-form-urlencoded",
)


def is_text(content_type: str) -> bool:
    ct = essence(content_type)
    if ct == EVENT_STREAM:
        return False
    return ct.startswith("text/") or ct in _TEXT_TYPES or ct.endswith("+xml")


@dataclass(frozen=True)
class MediaPlan:
    kind: str  # json, text, bytes, sse, none: what the method returns
    accept: str  # the Accept header ("" for the client's default)
    stream: str = ""  # the `_stream` twin: "bytes", "sse" or "" (none)
    stream_accept: str = ""
    event_type: str = "str"  # one event's data (sse)
    event_plain: bool = True  # event_type is a class (else through a TypeAdapter)


def _declared(op: Operation) -> list[MediaType]:
    success = sorted(op.success_responses, key=lambda r: r.status)
    return [m for r in success for m in r.content]


def _accept(types: list[str]) -> str:
    unique = list(dict.fromkeys(essence(t) for t in types if essence(t) and essence(t) != "*/*"))
    return ", ".join(unique)


def plan_media(op: Operation, types: TypeMapper) -> MediaPlan:
    declared = _declared(op)
    if not declared:
        return MediaPlan("none", "")
    media = [m.content_type for m in declared]
    json_first = sorted(media, key=lambda ct: not is_json(ct))
    errors = [m.content_type for r in op.error_responses for m in r.content]
    accept = _accept(json_first + errors)
    events = next((m for m in declared if essence(m.content_type) == EVENT_STREAM), None)
    event = _event_type(events, types) if events is not None else "str"
    if any(is_json(ct) for ct in media):
        # the method reads one document: events are for its `_stream` twin
        accept = _accept([ct for ct in json_first if essence(ct) != EVENT_STREAM] + errors)
        if events is not None:
            stream = _accept([EVENT_STREAM, *errors])
            return MediaPlan("json", accept, "sse", stream, event, is_plain_class(event))
        return MediaPlan("json", accept)
    if events is not None:
        accept = _accept([EVENT_STREAM, *errors])
        return MediaPlan("sse", accept, "", "", event, is_plain_class(event))
    if all(is_text(ct) for ct in media):
        return MediaPlan("text", accept)
    binary = _accept([ct for ct in media if not is_text(ct)] + errors)
    return MediaPlan("bytes", accept, "bytes", binary)


def _event_type(media: MediaType, types: TypeMapper) -> str:
    """The type of one event's data: the schema's, `str` for none or a string."""
    schema = media.schema
    if schema is None:
        return "str"
    expr = types.type_of(schema.data, name=schema.name)
    return "str" if expr in ("str", "str | None") else expr


__all__ = ["MediaPlan", "is_text", "plan_media"]
