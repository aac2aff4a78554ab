"""`apiforge generate`: the server and the client from one load of the spec, or `--check`.

One run:

1. loads the spec once (parse cache by content hash), validates it (cached the same way);
2. generates the models module once (`models.preloaded`: the parsed document goes to
   datamodel-code-generator as a dict; the result is cached by content) in a forked process,
   while this one validates and lints — the server and the client share the module;
3. plans the server (DIR/server) and the client (DIR/client);
4. formats every Python file with ruff, through the content-addressed formatting cache;
5. (the lint summary line comes from step 2, when `generator.lint` is installed);
6. writes both trees (each all or nothing), or with `check` compares them with the disk and
   writes nothing.

A run longer than about a second shows its stages and counts on stderr when stderr is a
terminal; piped, it prints nothing extra.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from generator.errors import ApiforgeError, Problem
from generator.render.models import (
    generate_models,
    model_class_names,
    prefetch_models,
    preloaded,
)
from generator.render.writer import (
    GeneratedFile,
    WriteReport,
    marker_line,
    render_tree,
    tree_drift,
    write_tree,
)

SERVER_DIR = "server"
CLIENT_DIR = "client"


class Progress:
    """Stages and counts on `stream` (stderr) — only when it is a terminal, and only once the
    run has taken longer than `delay` seconds (default 1, `APIFORGE_PROGRESS_DELAY`); a quick
    run or a pipe sees nothing."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        enabled: bool | None = None,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            try:
                enabled = self.stream.isatty() and not os.environ.get("APIFORGE_NO_PROGRESS")
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled
        if delay is None:
            try:
                delay = float(os.environ.get("APIFORGE_PROGRESS_DELAY", "1.0"))
            except ValueError:
                delay = 1.0
        self.delay = delay
        self.clock = clock
        self.start = clock()
        self.shown = False  # whether anything was printed yet
        self._current: str | None = None
        self._printed: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if self.enabled:
            self._timer = threading.Timer(delay, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def stage(self, text: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._current = text
        if self.clock() - self.start >= self.delay:
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            text = self._current
            if text is None or text == self._printed:
                return
            self._printed = text
            self.shown = True
            elapsed = self.clock() - self.start
            try:
                self.stream.write(f"apiforge: {text} ({elapsed:.1f}s)\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def finish(self, text: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.enabled and self.shown:
            with self._lock:
                self._current = None
            try:
                self.stream.write(f"apiforge: {text} in {self.clock() - self.start:.1f}s\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass


@dataclass
class Product:
    """One generated tree (the server or the client) of a `generate` run."""

    kind: str  # "server" or "client"
    out_dir: Path
    package: str
    files: list[GeneratedFile]
    rendered: dict[str, bytes]
    summary: str  # "468 operations in 60 routers" / "... in 60 resources, 12 webhooks"
    report: WriteReport | None = None  # None with --check
    drift: list[str] = field(default_factory=list)  # with --check: paths that differ
    missing_handlers: int = 0


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
    return importlib.util.find_spec("generator.render.server") is not None


def _lint_summary(spec: str, loaded: Any) -> tuple[str | None, bool]:
    """The lint summary line (and whether it fails at the configured severity), or None when
    the lint engine is not part of this installation."""
    if importlib.util.find_spec("generator.lint.engine") is None:
        return None, False
    from generator.lint.config import resolve_config
    from generator.lint.engine import lint
    from generator.lint.report import summary_line

    config = resolve_config(spec, None, use_files=True)
    result = lint(loaded, config)
    return summary_line(result), result.fails(config.fail_on)


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
    errors are warnings (on the "apiforge" logger), or with `strict` an ApiforgeError."""
    from generator.render.client import plan_client
    from generator.spec import load_spec

    progress = progress or Progress(enabled=False)
    started = time.perf_counter()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ApiforgeError(
            Problem(f"{out} exists and is not a directory"), "choose another output directory"
        )
    server_package, client_package = _package_names(package_prefix)

    progress.stage(f"loading {spec}")
    loaded = load_spec(spec, validate=False)
    api = loaded.api
    root = loaded.resolver.root
    source: Path | str = (
        root.path if root.path is not None else root.text.decode("utf-8", "replace")
    )
    class_names = model_class_names(api.schemas)
    header = marker_line(root.name)

    products: list[Product] = []
    lint_summary, lint_failed = (None, False)
    with preloaded(source, root.data):
        # The models module is most of a cold run: it is generated in a forked process while
        # this one validates and lints (both only read the parsed document).
        prefetch = prefetch_models(source, class_names=class_names, header=header)
        try:
            if validate:
                from generator.spec.validate import validate as run_validation

                progress.stage(f"validating {len(api.operations)} operations")
                run_validation(loaded.resolver, strict=strict)
            if lint:
                progress.stage(f"linting {len(api.operations)} operations")
                lint_summary, lint_failed = _lint_summary(spec, loaded)
        except BaseException:
            if prefetch is not None:
                prefetch.cancel()
            raise
        progress.stage(f"models: {len(api.schemas)} schemas")
        if prefetch is not None:
            prefetch.join()
        # the server and the client plans take it from memory
        generate_models(source, class_names=class_names, header=header)
        if _server_available():
            from generator.render.server import plan_server

            progress.stage(f"server: {len(api.operations)} operations")
            splan = plan_server(
                api, spec_source=source, spec_name=root.name, package=server_package
            )
            products.append(
                Product(
                    "server",
                    out / SERVER_DIR,
                    splan.package,
                    splan.files,
                    {},
                    f"{sum(len(t.operations) for t in splan.tags)} operations in "
                    f"{len(splan.tags)} routers",
                )
            )
            server_plan: Any = splan
        progress.stage(f"client: {len(api.operations)} operations")
        cplan = plan_client(api, spec_source=source, spec_name=root.name, package=client_package)
        products.append(
            Product(
                "client",
                out / CLIENT_DIR,
                cplan.package,
                cplan.files,
                {},
                f"{sum(len(r.operations) for r in cplan.resources)} operations in "
                f"{len(cplan.resources)} resources, {len(cplan.webhooks)} webhooks",
            )
        )

    total = sum(sum(1 for f in p.files if f.format) for p in products)
    progress.stage(f"formatting {total} Python files")
    for p in products:
        p.rendered = render_tree(p.files, format_cache=True)

    for p in products:
        if check:
            progress.stage(f"comparing {p.kind} with {p.out_dir}")
            p.drift = tree_drift(p.files, p.out_dir, rendered=p.rendered)
        else:
            progress.stage(f"writing {len(p.files)} {p.kind} files")
            p.report = write_tree(p.files, p.out_dir, rendered=p.rendered)
            if p.kind == "server":
                from generator.render.server import missing_handlers

                p.missing_handlers = len(missing_handlers(server_plan, p.out_dir))
    files = sum(len(p.files) for p in products)
    progress.finish(f"{'checked' if check else 'generated'} {files} files")
    return GenerateResult(
        spec_name=root.name,
        products=products,
        lint_summary=lint_summary,
        lint_failed=lint_failed,
        seconds=time.perf_counter() - started,
    )


__all__ = ["CLIENT_DIR", "SERVER_DIR", "GenerateResult", "Product", "Progress", "generate"]
