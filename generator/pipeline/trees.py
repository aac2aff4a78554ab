"""The trees of one run, planned and rendered in this process: `Build` plans the server and
the client (`generator.server.plan`, `generator.client.plan`) and starts rendering each as
soon as it is planned (ruff formats in the background, `writer.start_render_tree`); the
models module's text and the warnings about what it does not enforce.

Which of this runs in a forked child, and what is planned before the models module is there,
is `concurrency`'s business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.ir import Schema, Where
from generator.models.build import (
    generate_models,
    warn_missing_classes,
    warn_unenforced,
)
from generator.models.isolation import refs_located
from generator.pipeline.progress import Progress
from generator.render.plan_cache import PlanInputs, kept
from generator.render.writer import (
    Deferred,
    GeneratedFile,
    PendingTree,
    WriteReport,
    start_render_tree,
    tree_roots,
)
from generator.render.written import WrittenIndex
from generator.spec.located import Said

SERVER_DIR = "server"
CLIENT_DIR = "client"


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
    # files found on disk with their bytes already (vouched for by the last run's index, or
    # compared by a forked child): not in `rendered`
    on_disk: frozenset[str] = frozenset()
    keys: dict[str, str] = field(default_factory=dict)  # the files' output keys, for the index


@dataclass
class Planned:
    """One tree's plan, and its bytes being computed (`PendingTree`s: ruff in the background)."""

    kind: str
    plan: Any
    product: Product
    models: list[GeneratedFile]  # the models module (the client's: its package's modules)
    pending: list[PendingTree] = field(default_factory=list)
    unknown: Unknown | None = None  # the models text a speculative plan waits for
    gaps: list[Said] | None = None  # the client's gaps, found in a forked child (`beside`)
    ahead: Any = None  # what `beside`'s `after` gave in that child

    def result(self) -> dict[str, bytes]:
        rendered: dict[str, bytes] = {}
        for pending in self.pending:
            rendered.update(pending.result())
        return {path: rendered[path] for path in sorted(rendered)}

    def written(self) -> tuple[dict[str, str], set[str]]:
        """The files' output keys, and those the last run's index vouches for."""
        keys: dict[str, str] = {}
        on_disk: set[str] = set()
        for pending in self.pending:
            keys.update(pending.keys)
            on_disk |= pending.on_disk
        return keys, on_disk


@dataclass
class Build:
    """Plans the trees of one run and starts rendering them, each as soon as it is planned
    (in this process; `concurrency.beside` plans the client in a forked child)."""

    api: Any
    source: Path | str
    spec_name: str
    out: Path
    packages: dict[str, str | None]
    check: bool
    progress: Progress
    inputs: PlanInputs | None = None  # for the per-resource plan cache
    indexes: dict[Path, WrittenIndex] = field(default_factory=dict)  # by output directory
    locate: Callable[[Where], tuple[int, int]] | None = None  # for the client's gaps

    def plan(
        self, kinds: list[str], classes: dict[str, dict[str, str]], models_text: str | None
    ) -> list[Planned]:
        """Plan `kinds` (server, client) and start rendering them. `models_text` None: the
        models module is not there yet — everything else is rendered and formatted now, the
        module once `with_models` has it."""
        planned: dict[str, Planned] = {}
        # the client first: its one module for every operation is ruff's longest job, which
        # then runs while the server is planned
        for kind in sorted(kinds, key=lambda k: k != "client"):
            unknown = Unknown() if models_text is None else None
            content: str | Deferred = unknown if unknown is not None else models_text or ""
            planned[kind] = item = self.plan_one(kind, (content, classes[kind]))
            item.unknown = unknown
            wanted = item.product.files
            if models_text is None:
                wanted = [f for f in wanted if all(f is not m for m in item.models)]
            item.pending.append(self.start(item, wanted))
        return [planned[k] for k in kinds]

    def with_models(self, planned: list[Planned], models_text: str) -> list[Planned]:
        """The speculative plans, now that the models module is there: its file is rendered."""
        for item in planned:
            assert item.unknown is not None  # (the client's file wraps it: client/models.py)
            item.unknown.known = models_text
            item.pending.append(self.start(item, item.models))
        return planned

    def abandon(self, planned: list[Planned]) -> None:
        for item in planned:
            for pending in item.pending:
                pending.result()  # wait for ruff; what it gave is cached, and correct

    def plan_one(self, kind: str, models: tuple[str | Deferred, dict[str, str]]) -> Planned:
        api = self.api
        self.progress.stage(f"{kind}: {len(api.operations)} operations")
        if kind == "server":
            from generator.server.plan import plan_server

            splan = plan_server(
                api,
                spec_source=self.source,
                spec_name=self.spec_name,
                package=self.packages["server"],
                models=models,
                inputs=self.inputs,
            )
            product = Product(
                "server",
                self.out / SERVER_DIR,
                splan.package,
                splan.files,
                {},
                f"{sum(len(t.operations) for t in splan.tags)} operations in "
                f"{len(splan.tags)} routers",
            )
            plan: Any = splan
        else:
            from generator.client.plan import plan_client

            cplan = plan_client(
                api,
                spec_source=self.source,
                spec_name=self.spec_name,
                package=self.packages["client"],
                models=models,
                inputs=self.inputs,
            )
            product = Product(
                "client",
                self.out / CLIENT_DIR,
                cplan.package,
                cplan.files,
                {},
                f"{sum(len(r.operations) for r in cplan.resources)} operations in "
                f"{len(cplan.resources)} resources, {len(cplan.webhooks)} webhooks",
            )
            plan = cplan
        return Planned(kind, plan, product, models_files(product))

    def start(self, item: Planned, files: list[GeneratedFile]) -> PendingTree:
        """Start rendering `files` of `item`'s tree. Create-once files whose bytes are not
        needed (all of them with --check; those on disk otherwise) are never rendered."""
        product = item.product
        skip = {
            f.path
            for f in files
            if f.create_once and (self.check or (product.out_dir / f.path).exists())
        }
        index = self.index(product.out_dir)
        return start_render_tree(files, skip=skip, roots=tree_roots(product.files), index=index)

    def index(self, out_dir: Path) -> WrittenIndex:
        """What the last run wrote into `out_dir` (`written.WrittenIndex`), read once."""
        if out_dir not in self.indexes:
            self.indexes[out_dir] = WrittenIndex(out_dir)
        return self.indexes[out_dir]


def models_files(product: Product) -> list[GeneratedFile]:
    """The files of `product`'s models: `models.py` (the server's) or `models/*.py`."""
    module, package = f"{product.package}/models.py", f"{product.package}/models/"
    return [f for f in product.files if f.path == module or f.path.startswith(package)]


class Unknown(Deferred):
    """The models module's text in a speculative plan: set once the module is there."""

    __slots__ = ("known",)

    def __init__(self) -> None:
        self.known: str | None = None
        super().__init__(self._get)

    def _get(self) -> str:
        if self.known is None:
            raise RuntimeError("the models module was read before it was generated")
        return self.known


def models_module(api: Any, source: Path | str, class_names: dict[str, str], header: str) -> str:
    """The models module's text (from the memory the prefetch filled, else the caches or the
    library); a spec without component schemas gets a stub, as `models.models_for` gives."""
    if not class_names:  # datamodel-code-generator refuses a spec without any schemas
        return f'{header}\n"""The spec declares no component schemas."""\n'
    with refs_located(api.schemas):
        return generate_models(source, class_names=class_names, header=header)


_USED_IN = {"server": "routers", "client": "client methods"}


def warn_about_models(
    schemas: Mapping[str, Schema], class_names: dict[str, str], models_text: str, kinds: list[str]
) -> None:
    """Say what the models do not enforce, and what the module lacks (typed Any), for `kinds`:
    kept between runs by what it reads (walking every schema was ~0.08 s of each run)."""

    def warn() -> None:
        warn_unenforced(schemas, models_text)
        for kind in kinds:  # what the module lacks is typed Any, and said
            warn_missing_classes(class_names, models_text, _USED_IN[kind], schemas)

    material = (
        models_text,
        sorted(class_names.items()),
        [_USED_IN[kind] for kind in kinds],
        [(name, s.where.file, s.where.pointer, s.data) for name, s in schemas.items()],
    )
    kept("models-warnings1", material, warn)
