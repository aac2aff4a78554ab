"""Optimistic concurrency: strong ETags and the RFC 9110 conditional requests.

ETags are strong and opaque. Two ways to make one, pick whichever fits the data:

- `etag_for_version(42)` → `"v42"`: from the version counter of a `repository.Repository`
  (the default: cheap, and `version_from_etag` maps it back for an atomic update);
- `etag_for_content(b"...")` → `"<32 hex chars>"`: a truncated SHA-256 of the representation,
  for resources without a version counter.

Comparison follows RFC 9110 §8.8.3: `If-Match` uses the strong comparison (a `W/` tag never
matches), `If-None-Match` the weak one (`W/"v1"` matches `"v1"`); `*` matches any current
representation, and nothing when the resource does not exist.

Integration surface (what a generated router calls):

- GET/HEAD: `not_modified(request, etag)` → a 304 `Response` (ETag, no body) when
  `If-None-Match` matches, else None; on 200 set `response.headers["ETag"] = etag`.
- PATCH/PUT/DELETE:
  `if_match = require_if_match(request, required=True)` → the parsed header; a missing one
  raises 428 `precondition-required` when `required` (the spec declares 428 or marks If-Match
  required). Then the handler loads the current version and calls
  `check_if_match(if_match, etag_for_version(version))` (stale → 412 `precondition-failed`)
  and `repository.update(key, value, expected_version=version)`, whose atomic compare raises
  `VersionConflict` (also a 412 problem) when another writer got in between. With a `"vN"`
  tag, `if_match.expected_version` gives N directly, so a handler can skip the read.
- `evaluate_preconditions(request, current_etag, require_if_match=False)` — the whole RFC 9110
  §13.2.2 evaluation in one call: returns a 304 response for GET/HEAD, raises 412/428, or
  returns None to proceed.
- `read_if_match(request, required=)` — the header as the generated routers read it, after
  the body was validated (RFC 9110 §13.2.1: preconditions come after the request is known to
  be well formed): missing or empty → 428 when required; malformed → 428 when required,
  else 412 — the statuses an operation with `If-Match` declares, never a 400.
- `precondition_failed(detail)` / `precondition_required(detail)` — the problems themselves.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from .observability import record
from .problems import ProblemDetail

_VERSION_TAG = re.compile(r"^v([0-9]+)$")
# an entity-tag: optional W/, then a quoted run of etagc (no DQUOTE, no whitespace/controls)
_ETAG = re.compile(r'\s*(W/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)')


@dataclass(frozen=True, slots=True)
class EntityTag:
    opaque: str  # without quotes
    weak: bool = False

    def __str__(self) -> str:
        return ('W/"' if self.weak else '"') + self.opaque + '"'


def etag_for_version(version: int) -> str:
    """The strong ETag of a repository version: `"v42"`."""
    return f'"v{version}"'


def etag_for_content(content: bytes) -> str:
    """A strong ETag from the representation's bytes (128 bits of SHA-256, hex)."""
    return '"' + hashlib.sha256(content).hexdigest()[:32] + '"'


def parse_etag(value: str) -> EntityTag:
    """One entity-tag (`"x"` or `W/"x"`); ValueError if malformed."""
    tags = parse_etag_list(value)
    if tags is None or len(tags) != 1:
        raise ValueError(f"not a single entity-tag: {value!r}")
    return tags[0]


def parse_etag_list(value: str) -> list[EntityTag] | None:
    """An If-Match / If-None-Match value: None for `*`, else its tags (malformed → ValueError)."""
    text = value.strip()
    if text == "*":
        return None
    tags: list[EntityTag] = []
    pos = 0
    while pos < len(text):
        if text[pos] in ", \t":
            pos += 1
            continue
        match = _ETAG.match(text, pos)
        if match is None:
            raise ValueError(f"malformed entity-tag list: {value!r}")
        tags.append(EntityTag(match.group(2), weak=match.group(1) is not None))
        pos = match.end()
    if not tags:
        raise ValueError(f"empty entity-tag list: {value!r}")
    return tags


def strong_match(a: EntityTag, b: EntityTag) -> bool:
    return not a.weak and not b.weak and a.opaque == b.opaque


def weak_match(a: EntityTag, b: EntityTag) -> bool:
    return a.opaque == b.opaque


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed If-Match or If-None-Match header. `any` is `*`."""

    any: bool
    tags: tuple[EntityTag, ...] = ()

    @classmethod
    def parse(cls, value: str) -> Condition:
        try:
            tags = parse_etag_list(value)
        except ValueError as exc:
            raise ProblemDetail(400, "bad-request", "Bad request", str(exc)) from None
        return cls(True) if tags is None else cls(False, tuple(tags))

    def matches(self, current_etag: str | None, *, weak: bool = False) -> bool:
        """Does the current representation's ETag satisfy the list? (None: no resource)."""
        if current_etag is None:
            return False
        if self.any:
            return True
        current = parse_etag(current_etag)
        compare = weak_match if weak else strong_match
        return any(compare(tag, current) for tag in self.tags)

    @property
    def expected_version(self) -> int | None:
        """N when the list is exactly one strong `"vN"` tag (see `etag_for_version`)."""
        if self.any or len(self.tags) != 1 or self.tags[0].weak:
            return None
        match = _VERSION_TAG.match(self.tags[0].opaque)
        return int(match.group(1)) if match else None


def version_from_etag(etag: str) -> int | None:
    """The version N of a strong `"vN"` ETag, else None."""
    return Condition(False, (parse_etag(etag),)).expected_version


def precondition_failed(
    detail: str = "The resource was modified since you last fetched it. Re-fetch and retry.",
) -> ProblemDetail:
    record("preconditions", "412")
    return ProblemDetail(412, "precondition-failed", "Precondition failed", detail)


def precondition_required(
    detail: str = "This operation requires an If-Match header with the ETag you last fetched.",
) -> ProblemDetail:
    record("preconditions", "428")
    return ProblemDetail(428, "precondition-required", "Precondition required", detail)


def not_modified_response(etag: str) -> Response:
    """304 with the ETag and no body."""
    record("preconditions", "304")
    return Response(status_code=304, headers={"ETag": etag})


def not_modified(request: Request, etag: str) -> Response | None:
    """For GET/HEAD: the 304 response when `If-None-Match` matches `etag` (weakly), else None."""
    header = request.headers.get("if-none-match")
    if header is None:
        return None
    if Condition.parse(header).matches(etag, weak=True):
        return not_modified_response(etag)
    return None


def require_if_match(request: Request, *, required: bool = True) -> Condition | None:
    """The parsed `If-Match`; raises 428 when it is missing and `required`."""
    header = request.headers.get("if-match")
    if header is None:
        if required:
            raise precondition_required()
        return None
    return Condition.parse(header)


def read_if_match(request: Request, *, required: bool) -> Condition | None:
    """The request's `If-Match`, answered in the precondition vocabulary an operation with
    `If-Match` declares (never a 400 it may not declare): missing or empty → 428 when
    `required`, else None (no condition); not a list of entity tags → 428 when `required`
    (send a usable one), else 412 (a condition no representation can satisfy)."""
    header = request.headers.get("if-match")
    if header is None or not header.strip(" \t"):
        if required:
            raise precondition_required()
        return None
    try:
        tags = parse_etag_list(header)
    except ValueError:
        why = "The If-Match header is not `*` or a list of quoted entity tags"
        if required:
            raise precondition_required(f"{why}: send the ETag you last fetched.") from None
        raise precondition_failed(f"{why}, so no version matches it.") from None
    return Condition(True) if tags is None else Condition(False, tuple(tags))


def check_if_match(condition: Condition | None, current_etag: str | None) -> None:
    """Raise 412 unless `condition` (None: no If-Match sent) holds for the current ETag."""
    if condition is not None and not condition.matches(current_etag):
        raise precondition_failed()


def evaluate_preconditions(
    request: Request, current_etag: str | None, *, require_if_match: bool = False
) -> Response | None:
    """RFC 9110 §13.2.2 for one request against the current ETag (None: no resource).

    Returns a 304 response (GET/HEAD with a matching If-None-Match), raises 428/412 problems,
    or returns None when the request may proceed."""
    method = request.method.upper()
    safe = method in ("GET", "HEAD")
    if_match = request.headers.get("if-match")
    if if_match is None and require_if_match and not safe:
        raise precondition_required()
    if if_match is not None and not Condition.parse(if_match).matches(current_etag):
        raise precondition_failed()
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None and Condition.parse(if_none_match).matches(
        current_etag, weak=True
    ):
        if safe and current_etag is not None:
            return not_modified_response(current_etag)
        raise precondition_failed("The resource already exists in a matching version.")
    return None
