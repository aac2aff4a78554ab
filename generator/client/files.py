"""The client plan's file list: which files `apiforge client` writes, each with the template
and the context it is rendered from (`plan.plan_client` makes the plan, then asks this).

Templates see each operation only as an `OperationView` (what they read of it), so the
context a file's cache key covers is exactly what its template can read; `_client.py` sees
the top-level resources only and each resource module its own resource only, so a new
operation re-renders (and re-formats) its resource's module alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import cast

from generator.client.body_args import MODULE as PARAMS_MODULE
from generator.client.body_args import TypedDictPlan
from generator.client.method_names import SHADOWABLE_BUILTINS, class_scope_safe
from generator.client.model_modules import model_files
from generator.client.plan_types import ClientPlan, Kept, ResourcePlan
from generator.ir import Operation
from generator.render.env import TemplateFiles, templates_root
from generator.render.fingerprint import operation_view
from generator.render.plan_cache import PlanCache
from generator.render.writer import Deferred, GeneratedFile, marker_line


def client_files(
    plan: ClientPlan,
    kept: Mapping[str, Kept],
    keys: Mapping[str, str | None],
    cache: PlanCache,
    *,
    models_source: str | Deferred,
    keep: frozenset[str],
    marker: str,
    scope: str,
    typed_dicts: Sequence[TypedDictPlan] = (),
) -> list[GeneratedFile]:
    """The files of `plan`'s project, each with its template and context. `kept`: the
    resources the plan cache served (module → their views), `keys`: each planned resource's
    plan-cache key; what this run planned of each resource is kept in `cache`."""
    # Templates see each operation only as an OperationView (what they read of it), so the
    # context a file's cache key covers is exactly what its template can read.
    views = [_resource_view(r, kept.get(r.module)) for r in plan.resources]
    view = replace(plan, resources=views, files=[])
    context = {
        "plan": view,
        "marker": marker,
        "html_marker": marker_line(plan.spec_name, style="html"),
    }
    templates = TemplateFiles("client", context, scope=scope)
    for resource in kept.values():  # their digests, from the run that planned them
        for ops, digests in (
            (resource.views, resource.digests),
            (resource.scoped, resource.scoped_digests),
        ):
            for op, digest in zip(ops, digests, strict=True):
                templates.fingerprints.remember(op, digest)
    # `_client.py` sees the top-level resources only, and each resource module its own
    # resource only: a new operation re-renders (and re-formats) its resource's module alone.
    tops = [replace(r, operations=()) for r in views if r.top_level]
    client_module = TemplateFiles(
        "client", {**context, "plan": replace(view, resources=tops)}, scope=scope
    )
    resource_modules = TemplateFiles("client", {"marker": marker}, scope=scope)
    # one digest per view, whichever file's key needs it first
    client_module.fingerprints = resource_modules.fingerprints = templates.fingerprints
    pkg = plan.package
    files = [
        templates.file("pyproject.toml", "pyproject.toml.j2"),
        templates.file("README.md", "README.md.j2"),
        GeneratedFile(f"{pkg}/py.typed", ""),
        templates.file(f"{pkg}/__init__.py", "__init__.py.j2", format=True),
        client_module.file(f"{pkg}/_client.py", "_client.py.j2", format=True),
        *model_files(pkg, models_source, keep, marker),
        GeneratedFile(
            f"{pkg}/resources/__init__.py",
            f'{marker}\n"""One module per resource: `client.<resource>` (see `_client`)."""\n',
        ),
    ]
    files += _resource_files(views, kept, keys, cache, templates, resource_modules, pkg)
    if typed_dicts:
        files.append(_params_file(typed_dicts, templates, pkg))
    cache.save()
    if plan.webhooks:
        files.append(templates.file(f"{pkg}/webhooks.py", "webhooks.py.j2", format=True))
    runtime = templates_root() / "client" / "runtime"
    for source in sorted(runtime.glob("*.py")):
        files.append(
            GeneratedFile(
                f"{pkg}/_runtime/{source.name}",
                f"{marker} (runtime: copied verbatim)\n" + source.read_text(),
            )
        )
    return files


def _resource_files(
    views: list[ResourcePlan],
    kept: Mapping[str, Kept],
    keys: Mapping[str, str | None],
    cache: PlanCache,
    templates: TemplateFiles,
    resource_modules: TemplateFiles,
    pkg: str,
) -> list[GeneratedFile]:
    """One module per resource, which sees its own resource only (a new operation re-renders
    its resource's module alone); a resource planned this run is kept for the next."""
    files: list[GeneratedFile] = []
    for resource in views:
        scoped = _class_scope_view(resource, kept.get(resource.module))
        files.append(
            resource_modules.file(
                f"{pkg}/resources/{resource.module}.py",
                "resource.py.j2",
                format=True,
                extra={"resource": scoped},
            )
        )
        if resource.module in keys:  # planned this run: kept for the next
            digest_of = templates.fingerprints.object_digest
            own = scoped.operations is not resource.operations
            cache.keep(
                keys[resource.module],
                Kept(
                    resource.operations,
                    tuple(digest_of(o) for o in resource.operations),
                    scoped.operations if own else (),
                    tuple(digest_of(o) for o in scoped.operations) if own else (),
                    scoped.uses_builtins,
                ),
            )
    return files


def _params_file(
    typed_dicts: Sequence[TypedDictPlan], templates: TemplateFiles, pkg: str
) -> GeneratedFile:
    """`params.py`: the TypedDicts of the bodies' nested objects (`body_args`)."""
    types = " ".join(
        f"{f.local_type} {'Required' if f.required else ''}" for t in typed_dicts for f in t.fields
    )
    used = {n for n in ("Any", "Literal", "Required", "FileSpec") if re.search(rf"\b{n}\b", types)}
    if re.search(r"(?<![\w.])models\.", types):
        used.add("models")  # a nested object takes its model too, imported for type checking
    typing_names = sorted((used - {"FileSpec", "models"}) | {"TypedDict"})
    if "models" in used:
        typing_names = sorted((*typing_names, "TYPE_CHECKING"))
    return templates.file(
        f"{pkg}/{PARAMS_MODULE}.py",
        "params.py.j2",
        format=True,
        extra={"typed_dicts": typed_dicts, "used": sorted(used), "typing_names": typing_names},
    )


def _resource_view(resource: ResourcePlan, kept: Kept | None = None) -> ResourcePlan:
    """`resource` as templates see it: each operation as an `OperationView` (`kept`: those
    views, from the plan cache)."""
    if kept is not None:
        return replace(resource, operations=kept.views)
    operations = tuple(
        replace(o, op=cast(Operation, operation_view(o.op))) for o in resource.operations
    )
    return replace(resource, operations=operations)


def _class_scope_view(resource: ResourcePlan, kept: Kept | None = None) -> ResourcePlan:
    """`resource` with its signatures' types safe inside its class body: where a method is
    named after a builtin (`list`), the annotations spell the builtin `builtins.list`
    (`kept`: those operations, from the plan cache)."""
    if kept is not None:
        if not kept.scoped:
            return resource
        return replace(resource, operations=kept.scoped, uses_builtins=kept.uses_builtins)
    shadowed = SHADOWABLE_BUILTINS.intersection(o.name for o in resource.operations)
    if not shadowed:
        return resource

    def safe(type_expr: str) -> str:
        return class_scope_safe(type_expr, shadowed)

    operations = tuple(
        replace(
            o,
            params=tuple(replace(p, type=safe(p.type)) for p in o.params),
            body=safe(o.body) if o.body else o.body,
            body_args=tuple(replace(a, type=safe(a.type)) for a in o.body_args),
            result=safe(o.result),
            media=replace(o.media, event_type=safe(o.media.event_type)),
        )
        for o in resource.operations
    )
    uses = any(
        "builtins." in t
        for o in operations
        for t in (
            o.body or "",
            o.result,
            o.media.event_type,
            *(p.type for p in (*o.params, *o.body_args)),
        )
    )
    return replace(resource, operations=operations, uses_builtins=uses)
