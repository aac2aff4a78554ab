"""The server plan's file list: which files `apiforge server` writes, each with the template
and the context it is rendered from (`plan.plan_server` makes the plan, then asks this).

Templates see each operation only as an `OperationView` (what they read of it), so the
context a file's cache key covers is exactly what its template can read; a router or handler
module sees its own resource only, so a new operation re-renders its resource's modules alone.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace as dc_replace
from typing import Any, cast

from generator.ir import Api, Operation
from generator.models.format_checks import server_models
from generator.render.env import TemplateFiles, templates_root
from generator.render.fingerprint import fingerprint, operation_view
from generator.render.plan_cache import PlanCache
from generator.render.pytypes import is_plain_class
from generator.render.writer import Deferred, GeneratedFile, marker_line
from generator.server.conformance import mock_modules, mocks_json
from generator.server.error_views import error_views_json
from generator.server.model_bases import deferred_models
from generator.server.plan_types import Kept, ServerPlan, TagPlan


def server_files(
    plan: ServerPlan,
    api: Api,
    kept: Mapping[str, Kept],
    keys: Mapping[str, str | None],
    cache: PlanCache,
    *,
    models_source: str | Deferred,
    marker: str,
    scope: str,
    error_views: Mapping[str, Any],
) -> list[GeneratedFile]:
    """The files of `plan`'s project. `kept`: the resources the plan cache served (module →
    their views), `keys`: each planned resource's plan-cache key; what this run made of them
    is kept in `cache`."""
    tags = plan.tags
    view_tags = [tag_view(t, kept.get(t.module)) for t in tags]
    views = dict(zip((t.module for t in tags), view_tags, strict=True))
    context: dict[str, object] = {
        "plan": dc_replace(plan, tags=view_tags, files=[]),
        "marker": marker,
        "html_marker": marker_line(plan.spec_name, style="html"),
        "is_plain_class": is_plain_class,
    }
    templates = TemplateFiles("server", context, scope=scope)
    for resource in kept.values():  # their digests, from the run that planned them
        for op_view, digest in zip(resource.views, resource.digests, strict=True):
            templates.fingerprints.remember(op_view, digest)
    pkg = plan.package

    def gen(path: str, template: str, **extra: object) -> GeneratedFile:
        return templates.file(path, template, format=True, extra=extra)

    files = [
        templates.file("pyproject.toml", "pyproject.toml.j2"),
        templates.file("README.md", "README.md.j2"),
        GeneratedFile(f"{pkg}/py.typed", ""),
        gen(f"{pkg}/__init__.py", "__init__.py.j2"),
        gen(f"{pkg}/main.py", "main.py.j2"),
        gen(f"{pkg}/services.py", "services.py.j2"),
        gen(f"{pkg}/settings.py", "settings.py.j2"),
        gen(f"{pkg}/interfaces.py", "interfaces.py.j2"),
        gen(f"{pkg}/auth.py", "auth.py.j2"),
        templates.file(f"{pkg}/verifier.py", "verifier.py.j2", format=True, create_once=True),
        GeneratedFile(f"{pkg}/models.py", _checking(models_source), format=True),
        gen(f"{pkg}/routers/__init__.py", "routers_init.py.j2"),
        gen(f"{pkg}/handlers/__init__.py", "handlers_init.py.j2"),
    ]
    files += _resource_files(plan, views, templates, marker=marker, scope=scope)
    entries = _mock_entries(plan, api, kept, keys, cache, views, templates)
    if plan.has_jobs:
        files.append(gen(f"{pkg}/jobs.py", "jobs.py.j2"))
    # put together when rendered, after ruff has started on the Python files
    answers = {module: entry for module, entry in entries.items() if entry}
    mocks_file = Deferred(functools.partial(mocks_json, answers))
    files.append(GeneratedFile(f"{pkg}/mocks.json", mocks_file))
    if error_views:
        views_json = functools.partial(error_views_json, error_views)
        files.append(GeneratedFile(f"{pkg}/error_views.json", Deferred(views_json)))
    if plan.has_outbox:
        files.append(gen(f"{pkg}/events.py", "events.py.j2"))
    return files + _runtime_files(pkg, marker)


def _resource_files(
    plan: ServerPlan,
    views: Mapping[str, TagPlan],
    templates: TemplateFiles,
    *,
    marker: str,
    scope: str,
) -> list[GeneratedFile]:
    """Each resource's router module, and its handler module (created once) when it has
    operations a handler implements. They see their own resource only (and the few plan
    facts a handler names)."""
    pkg = plan.package
    per_resource = TemplateFiles(
        "server",
        {
            "marker": marker,
            "is_plain_class": is_plain_class,
            "plan": {"title": plan.title, "package": pkg, "has_outbox": plan.has_outbox},
        },
        scope=scope,
    )
    per_resource.fingerprints = templates.fingerprints  # one digest per view
    files = []
    for tag in plan.tags:
        view = views[tag.module]
        files.append(
            per_resource.file(
                f"{pkg}/routers/{tag.module}.py", "router.py.j2", format=True, extra={"tag": view}
            )
        )
        if tag.handler_operations:
            files.append(
                per_resource.file(
                    f"{pkg}/handlers/{tag.module}.py",
                    "handler.py.j2",
                    format=True,
                    create_once=True,
                    extra={"tag": view},
                )
            )
    return files


def _mock_entries(
    plan: ServerPlan,
    api: Api,
    kept: Mapping[str, Kept],
    keys: Mapping[str, str | None],
    cache: PlanCache,
    views: Mapping[str, TagPlan],
    templates: TemplateFiles,
) -> dict[str, str]:
    """mocks.json's entries, module → entry: a resource served by the plan cache has its own
    kept with it (made again only if the job result they answer with changed); the others
    are made. What this run planned is kept in `cache` (and the cache saved)."""
    tags = plan.tags
    job_view = plan.job_view
    try:
        job_result: str | None = fingerprint(job_view.result)
    except (TypeError, RecursionError):  # not plain data: the entries are not kept
        job_result = None
    entries: dict[str, str] = {}
    for module, resource in kept.items():
        if (
            resource.mocks is not None
            and job_result is not None
            and resource.mocks[0] == job_result
        ):
            entries[module] = resource.mocks[1]
    made = [t for t in tags if t.module not in entries]
    entries.update(mock_modules(made, api, job_view.result, partial=len(made) < len(tags)))
    for module, key in keys.items():  # (each view's digest is known: its file's key)
        ops = views[module].operations
        digests = tuple(templates.fingerprints.object_digest(o) for o in ops)
        mocks = (job_result, entries.get(module, "")) if job_result is not None else None
        cache.keep(key, Kept(ops, digests, mocks))
    cache.save()
    return entries


def _runtime_files(pkg: str, marker: str) -> list[GeneratedFile]:
    """templates/server/runtime, copied verbatim into `<pkg>/runtime/`."""
    runtime = templates_root() / "server" / "runtime"
    files = [GeneratedFile(f"{pkg}/runtime/__init__.py", f"{marker} (runtime package)\n")]
    for source in sorted(runtime.glob("*.py")):
        if source.name == "__init__.py":
            continue
        files.append(
            GeneratedFile(
                f"{pkg}/runtime/{source.name}",
                f"{marker} (runtime: copied verbatim)\n" + source.read_text(),
            )
        )
    return files


def tag_view(tag: TagPlan, kept: Kept | None = None) -> TagPlan:
    """`tag` as templates see it: each operation as an `OperationView` (`kept`: those views,
    from the plan cache)."""
    if kept is not None:
        return dc_replace(tag, operations=kept.views)
    operations = tuple(
        dc_replace(o, op=cast(Operation, operation_view(o.op))) for o in tag.operations
    )
    return dc_replace(tag, operations=operations)


def _checking(models_source: str | Deferred) -> str | Deferred:
    """The server's models module: the shared one with `EmailStr` from the runtime
    (`format_checks`) and built on first use (`model_bases`), when its text is there (else
    when it is)."""
    if isinstance(models_source, str):
        return deferred_models(server_models(models_source))
    return Deferred(lambda: deferred_models(server_models(models_source.text())))
