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

import functools
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from generator.forked import Forked
from generator.ir import Schema, Where
from generator.render.inline_models import model_schemas
from generator.render.model_isolation import refs_located
from generator.render.models import (
    generate_models,
    prefetch_models,
    preloaded,
    usable_classes,
    warn_missing_classes,
    warn_unenforced,
)
from generator.render.plan_cache import PlanInputs, kept
from generator.render.writer import (
    Deferred,
    GeneratedFile,
    PendingTree,
    WriteReport,
    formatter_ready,
    marker_line,
    same_on_disk,
    start_render_tree,
    tree_drift,
    tree_roots,
    usable_output_dir,
    write_tree,
)
from generator.render.written import WrittenIndex
from generator.spec.located import Said, recorded, recording_complete, replay
from generator.spec.validate import Found, find_problems, known_valid, report_problems

SERVER_DIR = "server"
CLIENT_DIR = "client"


class Progress:
    """Stages and counts on `stream` (stderr), one line per stage, once the run has taken
    longer than `delay` seconds (`APIFORGE_PROGRESS_DELAY`; default 1 on a terminal, 2
    otherwise, so CI logs show what a long run is doing); a quick run sees nothing, and
    `APIFORGE_NO_PROGRESS=1` (or `--quiet`) turns it off."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        enabled: bool | None = None,
        delay: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        try:
            terminal = self.stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
        if enabled is None:
            enabled = not os.environ.get("APIFORGE_NO_PROGRESS")
        self.enabled = enabled
        if delay is None:
            default = 1.0 if terminal else 2.0
            try:
                delay = float(os.environ.get("APIFORGE_PROGRESS_DELAY", default))
            except ValueError:
                delay = default
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
    # files found on disk with their bytes already (vouched for by the last run's index, or
    # compared by a forked child): not in `rendered`
    on_disk: frozenset[str] = frozenset()
    keys: dict[str, str] = field(default_factory=dict)  # the files' output keys, for the index


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
    # the summary only counts findings: locating them would build the whole source map
    result = lint(loaded, config, locate=False)
    return summary_line(result), result.fails(config.fail_on)


@dataclass
class _Checks:
    """Validation, in a forked process while this one reads the spec, builds the IR, plans
    and renders; and the lint summary, here. Said in the order a run without the fork says
    them.

    With two cores, validation starts before this process reads the spec (`start_early`):
    the child reads it itself, on the core that is idle meanwhile, so it shares no parsed
    spec with this process (whose later work copy-on-wrote the shared pages: ~4,500 page
    faults on Stripe), and it is done before the client's child starts. Its answer is used
    only for the text this process read (a single file, by its digest); otherwise, or on one
    core, or with remote references (fetched once, here), validation starts once the
    document is resolved (`load_spec(resolved=)`), from this process's parse. The lint
    summary (~40 ms of rules on Stripe) had a forked process too, but a third fork's
    copy-on-write page faults cost this process more than the rules."""

    spec: str
    validate: bool
    lint: bool
    resolver: Any = None
    loaded: Any = None
    validation: Forked[Any] | None = None
    early: bool = False  # `validation` reads the spec itself: its answer is (digest, Found)
    # the lint summary made ahead (`lint_ahead`, in the client's child): what it said, and
    # the summary (None: it failed there, or was not made — `report` makes it)
    ahead: tuple[list[Said], tuple[str | None, bool]] | None = None

    def start_early(self) -> None:
        """Start validating now, from the spec's file (see the class docstring), when that
        can be: two cores, a file (not stdin), no remote references to fetch."""
        from generator.spec import remote

        if self.validate and self.spec != "-" and not remote.allowed() and _cores() >= 2:
            self.validation = Forked.start(_validated, self.spec)
            self.early = self.validation is not None

    def start_validation(self, resolver: Any) -> None:
        self.resolver = resolver
        if self.validate and self.validation is None:
            self.validation = Forked.start(find_problems, resolver)

    def _found(self) -> Found | None:
        """The validation child's answer, if it is one for this process's spec."""
        made = self.validation.result() if self.validation is not None else None
        if not self.early or made is None:
            return made
        digest, found = made
        single = len(self.resolver.documents) == 1
        return found if single and digest == self.resolver.root.digest else None

    def report(self, progress: Progress, *, strict: bool) -> tuple[str | None, bool]:
        """Warn about (or, `strict`, raise) the validation errors; the lint summary. A failed
        validation child: the same work here meets the same error."""
        operations = len(self.loaded.api.operations)
        if self.validate:
            progress.stage(f"validating {operations} operations")
        elif self.lint:
            progress.stage(f"linting {operations} operations")
        if self.validate:
            found = self._found()
            if found is None:
                found = find_problems(self.resolver)
            report_problems(self.resolver, found, strict=strict)
        if not self.lint:
            return None, False
        if self.ahead is None:
            return _lint_summary(self.spec, self.loaded)
        said, made = self.ahead
        replay(said)
        return made

    def lint_ahead(self) -> None:
        """Make the lint summary now (in a forked child that would otherwise only wait for
        this process); `report` says what it said, where a run without the child does. One
        that fails is left to `report`, which meets the error where such a run does."""
        if not self.lint or self.loaded is None or self.ahead is not None:
            return
        with recorded() as said:
            try:
                made = _lint_summary(self.spec, self.loaded)
            except Exception:
                return
        self.ahead = (said, made)

    def cancel(self) -> None:
        if self.validation is not None:
            self.validation.cancel()


_USED_IN = {"server": "routers", "client": "client methods"}


def _warn_about_models(
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


def _validated(spec: str) -> tuple[str, Found] | None:
    """In a forked process (`_Checks.start_early`): the validation of the spec at `spec`,
    read here, with the digest of the text it is for; None for a spec of several files (the
    parent validates those from its own reading)."""
    import hashlib

    from generator.spec import check_root, read_swagger2
    from generator.spec.load import parse_document, read_source
    from generator.spec.refs import Resolver

    name, path, text = read_source(spec)
    digest = hashlib.sha256(text).hexdigest()
    if known_valid(digest):  # the clean verdict of this very text: not even parsed
        return digest, (0, [])
    document = parse_document(name, path, text)
    document.digest = digest  # made already: not again
    root = read_swagger2(document)
    check_root(root)
    resolver = Resolver(root)
    found = find_problems(resolver)
    if len(resolver.documents) != 1:
        return None
    return root.digest, found


def _said_ahead(
    checks: _Checks,
    schemas: Mapping[str, Schema],
    class_names: dict[str, str],
    models_text: str,
    kinds: list[str],
) -> tuple[tuple[list[Said], tuple[str | None, bool]] | None, list[Said]]:
    """In the client's child, its tree made (`beside`'s `after`): the lint summary and the
    models' warnings, for the parent to say where a run without the child says them."""
    checks.lint_ahead()
    with recorded() as models_said:
        _warn_about_models(schemas, class_names, models_text, kinds)
    return checks.ahead, models_said


def _models_module(api: Any, source: Path | str, class_names: dict[str, str], header: str) -> str:
    """The models module's text (from the memory the prefetch filled, else the caches or the
    library); a spec without component schemas gets a stub, as `models.models_for` gives."""
    if not class_names:  # datamodel-code-generator refuses a spec without any schemas
        return f'{header}\n"""The spec declares no component schemas."""\n'
    with refs_located(api.schemas):
        return generate_models(source, class_names=class_names, header=header)


@dataclass
class _Planned:
    """One tree's plan, and its bytes being computed (`PendingTree`s: ruff in the background)."""

    kind: str
    plan: Any
    product: Product
    models: GeneratedFile
    pending: list[PendingTree] = field(default_factory=list)
    unknown: _Unknown | None = None  # the models text a speculative plan waits for
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
class _Build:
    """Plans the trees of one run and starts rendering them, each as soon as it is planned."""

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
    ) -> list[_Planned]:
        """Plan `kinds` (server, client) and start rendering them. `models_text` None: the
        models module is not there yet — everything else is rendered and formatted now, the
        module once `with_models` has it."""
        planned: dict[str, _Planned] = {}
        # the client first: its one module for every operation is ruff's longest job, which
        # then runs while the server is planned
        for kind in sorted(kinds, key=lambda k: k != "client"):
            unknown = _Unknown() if models_text is None else None
            content: str | Deferred = unknown if unknown is not None else models_text or ""
            planned[kind] = item = self._plan_one(kind, (content, classes[kind]))
            item.unknown = unknown
            wanted = item.product.files
            if models_text is None:
                wanted = [f for f in wanted if f is not item.models]
            item.pending.append(self._start(item, wanted))
        return [planned[k] for k in kinds]

    def beside(
        self,
        kinds: list[str],
        classes: dict[str, dict[str, str]],
        models_text: str,
        after: Callable[[], Any] | None = None,
    ) -> list[_Planned]:
        """`plan`, the client planned, rendered and formatted in a forked child (the other
        core) while this process plans the server; each tree's warnings are said afterwards,
        the client's first, as `plan` says them. A failed child: the client is planned here.

        `after`: work this process would do once both trees are made, which the child does
        once the client is made (it would only wait for the server otherwise); its value
        (plain data) is the client's `ahead` (None: not done, this process does the work)."""
        if sorted(kinds) != ["client", "server"] or not recording_complete() or _cores() < 2:
            return self.plan(kinds, classes, models_text)
        if self.inputs is not None:  # made once, before the fork: both planners read them
            with suppress(ValueError):
                self.inputs.digests()
        _ready_for_both()
        child = Forked.start(self._client_made, (models_text, classes["client"]), after)
        if child is None:
            return self.plan(kinds, classes, models_text)
        server: _Planned | None = None
        failure: BaseException | None = None
        try:
            with recorded() as server_said:
                server = self._plan_one("server", (models_text, classes["server"]))
                server.pending.append(self._start(server, server.product.files))
        except Exception as exc:  # said after the client's warnings and errors, as `plan` does
            failure = exc
        except BaseException:
            child.cancel()
            raise
        made = child.result()
        if made is None:
            client = self._plan_one("client", (models_text, classes["client"]))
            client.pending.append(self._start(client, client.product.files))
        else:
            client = made.planned(self.out / CLIENT_DIR)
            replay(made.said)
        replay(server_said)
        if failure is not None:
            raise failure
        assert server is not None
        return [{"server": server, "client": client}[k] for k in kinds]

    def _client_made(
        self, models: tuple[str, dict[str, str]], after: Callable[[], Any] | None
    ) -> _MadeTree:
        """In the forked child: the client tree's bytes, its warnings, its gaps, and what
        `after` gives (None when it fails: the parent does that work)."""
        self.progress = Progress(enabled=False)  # the parent shows the stages
        from generator.render.client_gaps import warn_gaps

        with recorded() as said:
            item = self._plan_one("client", models)
            pending = self._start(item, item.product.files)
        product = item.product
        if any(f.create_once for f in product.files):  # (none today) not all in `rendered`
            pending.join()
            raise NotImplementedError("create-once client files are made in the parent")
        # while ruff (another process) formats: the gaps, and `after`
        try:
            with recorded() as gaps:
                warn_gaps(self.api, self.locate)
            ahead = None
            if after is not None:
                with suppress(Exception):
                    ahead = after()
        except BaseException:
            pending.join()  # ruff's scratch tree is gone before this process is
            raise
        rendered = pending.result()
        # compared with the tree on disk here, on this core: only what differs goes back
        same = same_on_disk(self.out / CLIENT_DIR, rendered) | pending.on_disk
        return _MadeTree(
            product.package,
            product.summary,
            [(f.path, f.format, f.create_once, f.executable, f.key) for f in product.files],
            {path: data for path, data in rendered.items() if path not in same},
            sorted(same),
            pending.keys,
            said,
            gaps,
            ahead,
        )

    def with_models(self, planned: list[_Planned], models_text: str) -> list[_Planned]:
        """The speculative plans, now that the models module is there: its file is rendered."""
        for item in planned:
            assert item.unknown is not None  # (the client's file wraps it: client_models)
            item.unknown.known = models_text
            item.pending.append(self._start(item, [item.models]))
        return planned

    def abandon(self, planned: list[_Planned]) -> None:
        for item in planned:
            for pending in item.pending:
                pending.result()  # wait for ruff; what it gave is cached, and correct

    def _plan_one(self, kind: str, models: tuple[str | Deferred, dict[str, str]]) -> _Planned:
        api = self.api
        self.progress.stage(f"{kind}: {len(api.operations)} operations")
        if kind == "server":
            from generator.render.server import plan_server

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
            from generator.render.client import plan_client

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
        models_file = next(f for f in product.files if f.path == f"{product.package}/models.py")
        return _Planned(kind, plan, product, models_file)

    def _start(self, item: _Planned, files: list[GeneratedFile]) -> PendingTree:
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


def _ready_for_both() -> None:
    """What both trees' processes need, made once before the fork instead of in each: jinja2
    and its environments, ruff's path and version, the modules both planners import (~40 ms
    of the child's CPU, on the two cores the parent's server plan shares with it)."""
    import generator.render.pytypes
    import generator.render.resources  # noqa: F401
    from generator.render.env import environment

    environment("client")
    environment("server")
    formatter_ready()


def _cores() -> int:
    """The cores this process may run on: with one, a child planning the client would only
    add a fork's cost."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


@dataclass
class _MadeTree:
    """The client tree as a forked child made it (`_Build.beside`): what the parent needs to
    write it and say its warnings, all plain data."""

    package: str
    summary: str
    files: list[tuple[str, bool, bool, bool, str | None]]  # path, format, once, exec, key
    rendered: dict[str, bytes]  # the files that differ from the tree on disk
    on_disk: list[str]  # the others
    keys: dict[str, str]  # the files' output keys, for the index
    said: list[Said]
    gaps: list[Said]
    ahead: Any  # what `beside`'s `after` gave

    def planned(self, out_dir: Path) -> _Planned:
        files = [
            GeneratedFile(
                path,
                self.rendered[path] if path in self.rendered else _read_later(out_dir / path),
                fmt,
                once,
                executable,
                key,
            )
            for path, fmt, once, executable, key in self.files
        ]
        product = Product("client", out_dir, self.package, files, {}, self.summary)
        product.on_disk = frozenset(self.on_disk)
        models = next(f for f in files if f.path == f"{self.package}/models.py")
        done = PendingTree(dict(self.rendered), [], [], {}, {}, keys=dict(self.keys))
        return _Planned("client", None, product, models, [done], gaps=self.gaps, ahead=self.ahead)


def _read_later(path: Path) -> Deferred:
    """A file's content found on disk (`_MadeTree.on_disk`), read only if ever asked for."""
    return Deferred(lambda: path.read_bytes().decode("utf-8"))


def _speculate(
    build: _Build, kinds: list[str], class_names: dict[str, str]
) -> list[_Planned] | None:
    """Plan and render both trees before the models module is there, as if it defines every
    class. None when that fails: the trees are then planned once the module is there, which
    meets the same error where a run always met it (after the models step's own errors)."""
    try:
        return build.plan(kinds, dict.fromkeys(kinds, class_names), None)
    except Exception:
        return None


class _Unknown(Deferred):
    """The models module's text in a speculative plan: set once the module is there."""

    __slots__ = ("known",)

    def __init__(self) -> None:
        self.known: str | None = None
        super().__init__(self._get)

    def _get(self) -> str:
        if self.known is None:
            raise RuntimeError("the models module was read before it was generated")
        return self.known


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
    from generator.spec import load_spec
    from generator.spec.load import gc_paused

    progress = progress or Progress(enabled=False)
    started = time.perf_counter()
    out = usable_output_dir(out_dir)
    server_package, client_package = _package_names(package_prefix)

    progress.stage(f"loading {spec}")
    # validation only reads the parsed spec: it starts first, on the other core
    checks = _Checks(spec, validate=validate, lint=lint)
    checks.start_early()
    try:
        loaded = load_spec(spec, validate=False, resolved=checks.start_validation)
        checks.loaded = loaded
        lifted = model_schemas(loaded.api)  # the component schemas and the inline ones
    except BaseException:
        checks.cancel()
        raise
    api = loaded.api
    root = loaded.resolver.root
    source: Path | str = loaded.source
    class_names = dict(lifted.class_names)
    header = marker_line(root.name)

    kinds = [*(["server"] if _server_available() else []), "client"]
    build = _Build(
        api,
        source=source,
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
    planned: list[_Planned] | None = None
    speculative: list[_Planned] | None = None
    models_text: str | None = None
    early_error: Exception | None = None
    with preloaded(
        source, root.data, digest=root.digest, components_digest=root.entry_digest("components")
    ):
        # The models module is most of a cold run: it is generated in a forked process while
        # this one plans and renders both trees (all only read the parsed document), as if
        # the module defines every class (checked once it is there). Validation runs in a
        # forked process of its own (`_Checks`).
        prefetch = prefetch_models(source, class_names=class_names, header=header)
        if prefetch is None:
            # The module is there already (cached): both trees are planned and rendered while
            # validation runs, and ruff (another process) formats them meanwhile.
            # A failure here is reported after validation and lint, as it was before.
            try:
                models_text = _models_module(api, source, class_names, header)
                usable = usable_classes(class_names, models_text)  # (the same for both trees)
                classes = {kind: usable for kind in kinds}
                # planning allocates much and frees it by reference counts: no collections
                # (they were 40-80 ms of a Stripe regeneration)
                said_ahead = functools.partial(
                    _said_ahead, checks, lifted.schemas, class_names, models_text, kinds
                )
                with gc_paused():
                    planned = build.beside(kinds, classes, models_text, said_ahead)
            except Exception as exc:
                early_error = exc
        ahead = next((p.ahead for p in planned or () if p.ahead is not None), None)
        if ahead is not None:
            checks.ahead = ahead[0]
        try:
            lint_summary, lint_failed = checks.report(progress, strict=strict)
            if prefetch is not None:
                speculative = _speculate(build, kinds, class_names)
        except BaseException:
            if prefetch is not None:
                prefetch.cancel()
            raise
        finally:
            checks.cancel()
        if early_error is not None:
            raise early_error
        if prefetch is not None:
            progress.stage(f"models: {len(api.schemas)} schemas")
            prefetch.join()
        if models_text is None:
            models_text = _models_module(api, source, class_names, header)
    if speculative is not None:  # ruff formats models.py while its classes are checked
        build.with_models(speculative, models_text)
    if ahead is not None:
        replay(ahead[1])
    else:
        _warn_about_models(lifted.schemas, class_names, models_text, kinds)
    if planned is None:
        usable = usable_classes(class_names, models_text)
        classes = {kind: usable for kind in kinds}
        if speculative is not None and all(classes[k] == class_names for k in kinds):
            planned = speculative
        else:
            if speculative is not None:  # a class is missing: plan again with the real classes
                build.abandon(speculative)
            planned = build.plan(kinds, classes, models_text)
    products = [p.product for p in planned]
    server_plan: Any = next((p.plan for p in planned if p.kind == "server"), None)

    total = sum(sum(1 for f in p.files if f.format) for p in products)
    progress.stage(f"formatting {total} Python files")
    for item in planned:
        item.product.rendered = item.result()
        keys, on_disk = item.written()
        item.product.keys.update(keys)
        item.product.on_disk |= on_disk

    for p in products:
        if check:
            progress.stage(f"comparing {p.kind} with {p.out_dir}")
            p.drift = tree_drift(p.files, p.out_dir, rendered=p.rendered)
        else:
            progress.stage(f"writing {len(p.files)} {p.kind} files")
            p.report = write_tree(p.files, p.out_dir, rendered=p.rendered, unchanged=p.on_disk)
            build.index(p.out_dir).record(p.keys, [*p.report.written, *p.report.unchanged])
            if p.kind == "server":
                from generator.render.server import missing_handlers
                from generator.render.server_handlers import handler_modules, misplaced_handlers

                modules = handler_modules(server_plan, p.out_dir)  # read once for both
                misplaced_handlers(server_plan, p.out_dir, modules=modules)  # warns
                p.missing_handlers = len(missing_handlers(server_plan, p.out_dir, modules=modules))
    if "client" in kinds:
        from generator.render.client_gaps import warn_gaps

        gaps = next((p.gaps for p in planned if p.gaps is not None), None)
        if gaps is not None:  # found beside, with the client's plan
            replay(gaps)
        else:
            warn_gaps(api, loaded.resolver.locate)  # what the client cannot express
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
