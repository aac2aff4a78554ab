"""`apiforge inspect`: operations by detected patterns, for people (table) and machines (JSON).

The JSON shape (`"format": "apiforge-inspect/1"`) is stable; see docs/inspect.md.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from generator.client.gaps import client_gaps, location
from generator.client.method_names import client_methods
from generator.ir import Api, OperationPatterns, Where

FORMAT = "apiforge-inspect/1"
PATTERN_NAMES = (
    "security",
    "idempotency",
    "rate_limit",
    "concurrency",
    "async_job",
    "problems",
    "pagination",
)


def to_json_value(value: Any) -> Any:
    """IR values as JSON: `Where` as "file#pointer", sets sorted, dataclasses as objects."""
    if isinstance(value, Where):
        return f"{value.file}#{value.pointer}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, frozenset | set):
        return sorted(to_json_value(v) for v in value)
    if isinstance(value, tuple | list):
        return [to_json_value(v) for v in value]
    return value


def inspect_data(api: Api) -> dict[str, Any]:
    methods = client_methods(api).paths()
    operations = [
        {
            "id": op.id,
            "method": op.method.upper(),
            "path": op.path,
            "tags": list(op.tags),
            "client": methods[op.id],
            "where": to_json_value(op.where),
            "patterns": to_json_value(op.patterns),
        }
        for op in api.operations
    ]
    webhooks = [
        {
            "name": hook.name,
            "source": hook.source,
            "method": hook.operation.method.upper(),
            "where": to_json_value(hook.operation.where),
            "signature": to_json_value(hook.signature),
        }
        for hook in api.webhooks
    ]
    summary = {"operations": len(api.operations), "webhooks": len(api.webhooks)}
    for name in PATTERN_NAMES:
        summary[name] = sum(1 for op in api.operations if getattr(op.patterns, name) is not None)
    summary["signed_webhooks"] = sum(
        1 for h in api.webhooks if h.signature is not None and h.signature.signature_header
    )
    # what the generated client cannot express (it warns about each when generated)
    gaps = [
        {"subject": g.subject, "what": g.what, "where": to_json_value(g.where)}
        for g in client_gaps(api)
    ]
    summary["client_gaps"] = len(gaps)
    return {
        "format": FORMAT,
        "api": {
            "title": api.title,
            "version": api.version,
            "openapi": api.openapi,
            "root": api.root,
        },
        "summary": summary,
        "operations": operations,
        "webhooks": webhooks,
        "client_gaps": gaps,
    }


def render_json(api: Api) -> str:
    return json.dumps(inspect_data(api), indent=2, ensure_ascii=False) + "\n"


def _security(p: OperationPatterns) -> str:
    """`a|b` for alternatives, `a+b` for schemes AND-ed, `[scopes]`, `public`."""
    if p.security is None:
        return "-"
    alternatives = [
        "+".join(name + (f"[{','.join(scopes)}]" if scopes else "") for name, scopes in alt)
        for alt in p.security.alternatives
    ]
    if p.security.public:
        alternatives.insert(0, "public")
    return "|".join(alternatives)


def _pagination(p: OperationPatterns) -> str:
    """`cursor ?after <- next_cursor`, `link`, `next_url <- links.next`, `page ?page`, …;
    `(x-apiforge)` when the extension stated it."""
    spec = p.pagination
    if spec is None:
        return "-"
    text: str = spec.style
    if spec.param:
        text += f" ?{spec.param}"
    if spec.style == "cursor" and not spec.next:
        text += " <- last id"
    elif spec.next:
        text += " <- " + ".".join(spec.next)
    if spec.source == "extension":
        text += " (x-apiforge)"
    return text


def _cells(p: OperationPatterns) -> list[str]:
    idem = rate = etag = job = problems = "-"
    if p.idempotency:
        idem = ("required" if p.idempotency.required else "optional") + "".join(
            f" {s}" for s in sorted(p.idempotency.responses)
        )
    if p.rate_limit:
        rate = p.rate_limit.family + (" 429" if p.rate_limit.has_429 else "")
        rate += " Retry-After" if p.rate_limit.retry_after else ""
    if p.concurrency:
        c = p.concurrency
        parts = ["ETag"] if c.etag else []
        parts += ["If-Match" + ("!" if c.if_match_required else "")] if c.if_match else []
        parts += ["If-None-Match"] if c.if_none_match else []
        etag = " ".join(parts + sorted(c.responses))
    if p.async_job:
        j = p.async_job
        job = (
            "202" + (" Location" if j.location else "") + (" Retry-After" if j.retry_after else "")
        )
        job += f" -> {j.status_operation}" if j.status_operation else ""
    if p.problems:
        total = len(p.problems.problem_statuses) + len(p.problems.other_statuses)
        problems = f"{len(p.problems.problem_statuses)}/{total}"
    return [_security(p), idem, rate, etag, job, problems, _pagination(p)]


def render_table(api: Api, locate: Callable[[Where], tuple[int, int]] | None = None) -> str:
    """The table; `locate` (the resolver's) turns a client gap's node into file:line."""
    header = [
        "OPERATION",
        "ID",
        "CLIENT METHOD",
        "SECURITY",
        "IDEMPOTENCY",
        "RATE LIMIT",
        "CONCURRENCY",
        "ASYNC",
        "PROBLEMS",
        "PAGINATION",
    ]
    methods = client_methods(api).paths()
    rows = [[op.label, op.id, methods[op.id], *_cells(op.patterns)] for op in api.operations]
    rows += [
        [
            f"WEBHOOK {h.name}",
            h.operation.id,
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            (h.signature.scheme + f" {h.signature.signature_header}")
            if h.signature and h.signature.signature_header
            else "unsigned",
            "-",
        ]
        for h in api.webhooks
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    title = f"{api.title or api.root} {api.version} (OpenAPI {api.openapi}): {len(api.operations)} operations, {len(api.webhooks)} webhooks"
    gaps = client_gaps(api)
    if gaps:
        lines += ["", f"The generated client cannot express ({len(gaps)}):"]
        lines += [f"  {location(g.where, locate)}: {g.subject}: {g.what}" for g in gaps]
    return title + "\n\n" + "\n".join(lines) + "\n"
