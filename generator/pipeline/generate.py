"""`apiforge generate`: the server and the client from one load of the spec, or `--check`.

One run:

1. loads the spec once (parse cache by content hash);
2. gets the models module once (`models.preloaded`: the parsed document goes to
   datamodel-code-generator as a dict; the result is cached by content) — the server and the
   client share it, and its class names are checked once
   (`models.warn_missing_classes` says what it lacks, for the server and the client alike);
3. plans the client (DIR/client) and the server (DIR/server) and starts rendering them: each
   file's final bytes come from the content-addressed caches (`generator.render.env`: whole
   files by templates + code + exact context, macro calls of the client's big module;
   `writer`: ruff's output by text), and ruff formats only what no cache has, in another
   process, in the background (`writer.start_render_tree`);
4. validates (cached by content hash) meanwhile, in a forked process, and lints (the summary
   line only counts findings, so nothing is located);
5. writes both trees (each all or nothing), or with `check` compares them with the disk and
   writes nothing. Create-once handler modules already on disk are never rendered.

When the models module is not cached (a cold run), datamodel-code-generator runs in a forked
process, and this one validates, lints, then plans, renders and formats both trees meanwhile
as if the module defines every component's class; once the module is there, `models.py` is
formatted while its classes are checked, and if one is missing both trees are planned again
with the real classes (the output is always what planning after the models step gives).

A run longer than about a second shows its stages and counts on stderr when stderr is a
terminal; piped, it prints nothing extra.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.models.inline import model_schemas
from generator.pipeline.concurrency import Checks, Made, plan_with_models
from generator.pipeline.progress import Progress
from generator.pipeline.trees import CLIENT_DIR, SERVER_DIR, Build, Planned, Product
from generator.render.plan_cache import PlanInputs
from generator.render.writer import marker_line, tree_drift, usable_output_dir, write_tree
from generator.spec.located import replay


@dataclass
class GenerateResult:
    spec_name: str
    products: list[Product]
    lint_summary: str | None  # None when the lint engine is not installed
    lint_failed: bool
    seconds: float

    @property
    def drift(self) -> list[str]:
        return [f"{p.kind}/{path}" for p in self.products for path in p.drift]


def _package_names(prefix: str | None) -> tuple[str | None, str | None]:
    if prefix is None:
        return None, None
    return f"{prefix}_server", f"{prefix}_client"


def _server_available() -> bool:
    return importlib.util.find_spec("generator.server.plan") is not None


def generate(
    spec: str,
    out_dir: Path | str,
    *,
    package_prefix: str | None = None,
    check: bool = False,
    validate: bool = True,
    strict: bool = False,
    lint: bool = True,
    progress: Progress | None = None,
) -> GenerateResult:
    """Generate (or with `check`, compare) DIR/server and DIR/client for `spec`. Validation
    errors are warnings (on the "apiforge" logger), or with `strict` an ApiforgeError.

    The stages: load → validate → models → plan → render → format → write; validation,
    the models step and the client's plan may run in forked processes meanwhile
    (`concurrency`)."""
    progress = progress or Progress(enabled=False)
    started = time.perf_counter()
    out = usable_output_dir(out_dir)
    progress.stage(f"loading {spec}")
    checks = Checks(spec, validate=validate, lint=lint)  # validation starts on the other core
    loaded, lifted = _load(spec, checks)
    build = _build(loaded, out, package_prefix, check=check, progress=progress)
    kinds = [*(["server"] if _server_available() else []), "client"]
    made = plan_with_models(
        build,
        checks,
        loaded.resolver.root,
        lifted,
        kinds,
        header=marker_line(loaded.resolver.root.name),
        strict=strict,
    )
    products = _format(made.planned, progress)
    _write(build, made.planned, check=check, progress=progress)
    _say_client_gaps(made, loaded, kinds)
    files = sum(len(p.files) for p in products)
    progress.finish(f"{'checked' if check else 'generated'} {files} files")
    return GenerateResult(
        spec_name=loaded.resolver.root.name,
        products=products,
        lint_summary=made.lint_summary,
        lint_failed=made.lint_failed,
        seconds=time.perf_counter() - started,
    )


def _load(spec: str, checks: Checks) -> tuple[Any, Any]:
    """Load: the spec read once, the IR built, and the models step's schemas (the component
    schemas and the inline ones); validation starts as soon as the document is resolved."""
    from generator.spec import load_spec

    checks.start_early()
    try:
        loaded = load_spec(spec, validate=False, resolved=checks.start_validation)
        checks.loaded = loaded
        lifted = model_schemas(loaded.api)
    except BaseException:
        checks.cancel()
        raise
    return loaded, lifted


def _build(
    loaded: Any, out: Path, package_prefix: str | None, *, check: bool, progress: Progress
) -> Build:
    """What plans and renders both trees, with the inputs of the per-resource plan cache."""
    root = loaded.resolver.root
    server_package, client_package = _package_names(package_prefix)
    return Build(
        loaded.api,
        source=loaded.source,
        spec_name=root.name,
        out=out,
        packages={"server": server_package, "client": client_package},
        check=check,
        progress=progress,
        locate=loaded.resolver.locate,
        inputs=PlanInputs(
            root.data,
            tuple((d.name, d.digest) for d in loaded.resolver.documents if d is not root),
            (root.entry_blocks(), root.entry_blocks("paths")),
        ),
    )


def _format(planned: list[Planned], progress: Progress) -> list[Product]:
    """Format: wait for each tree's bytes (ruff ran in the background) and its output keys."""
    products = [p.product for p in planned]
    total = sum(sum(1 for f in p.files if f.format) for p in products)
    progress.stage(f"formatting {total} Python files")
    for item in planned:
        item.product.rendered = item.result()
        keys, on_disk = item.written()
        item.product.keys.update(keys)
        item.product.on_disk |= on_disk
    return products


def _write(build: Build, planned: list[Planned], *, check: bool, progress: Progress) -> None:
    """Write each tree (all or nothing) and record it in the output index, or with `check`
    compare it with the disk; the server's handler modules checked against its plan."""
    server_plan: Any = next((p.plan for p in planned if p.kind == "server"), None)
    for p in (item.product for item in planned):
        if check:
            progress.stage(f"comparing {p.kind} with {p.out_dir}")
            p.drift = tree_drift(p.files, p.out_dir, rendered=p.rendered)
        else:
            progress.stage(f"writing {len(p.files)} {p.kind} files")
            p.report = write_tree(p.files, p.out_dir, rendered=p.rendered, unchanged=p.on_disk)
            build.index(p.out_dir).record(p.keys, [*p.report.written, *p.report.unchanged])
            if p.kind == "server":
                from generator.server.handlers import handler_modules, misplaced_handlers
                from generator.server.plan import missing_handlers

                modules = handler_modules(server_plan, p.out_dir)  # read once for both
                misplaced_handlers(server_plan, p.out_dir, modules=modules)  # warns
                p.missing_handlers = len(missing_handlers(server_plan, p.out_dir, modules=modules))


def _say_client_gaps(made: Made, loaded: Any, kinds: list[str]) -> None:
    """What the client cannot express, warned (found beside, with the client's plan, or now)."""
    if "client" not in kinds:
        return
    from generator.client.gaps import warn_gaps

    gaps = next((p.gaps for p in made.planned if p.gaps is not None), None)
    if gaps is not None:
        replay(gaps)
    else:
        warn_gaps(loaded.api, loaded.resolver.locate)


__all__ = ["CLIENT_DIR", "SERVER_DIR", "GenerateResult", "Product", "Progress", "generate"]
