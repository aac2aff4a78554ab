"""Which stage of `apiforge generate` runs where, and when: the one module that forks,
speculates and replays warnings. `generate` calls `Checks` and `plan_with_models`; what they
do is what a run in one process would do, in the same order of warnings and errors.

Two cores, a cold run (the models module not cached), time running to the right:

    this process   load ─┬─ plan+render both trees as if every model class exists ─ report ─┐
                         │  (speculate; `Unknown` stands for the models text)     (validate, │
                         │                                                         lint)     │
    child: models        ├─ datamodel-code-generator (`prefetch_models`) ─────────────── join ┤
    child: validation    └─ validate (`Checks.start_early`: reads the spec itself) ──────────┘
                                   then: models.py rendered (`with_models`); a class missing:
                                   both trees planned again (`abandon`, `plan`) → format → write

Two cores, a warm run (the models module cached):

    this process   load ─ models text ─ plan+render the server ─────── report ─ replay ─ write
    child: client           └ plan+render+format the client, its gaps, the lint summary and
                              the models' warnings (`beside`, `client_made`, `said_ahead`)
    child: validation  validate ─────────────────────────────────────┘

What a child says is recorded (`spec.located.recorded`) and replayed by this process where a
run without the child says it: the client's warnings, then the server's; the lint summary
and the models' warnings after validation's. A child that fails, or a platform without
fork, or one core: this process does the same work itself (`cores`, `Forked.start` → None).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.forked import Forked
from generator.ir import Schema
from generator.models.build import prefetch_models, preloaded, usable_classes
from generator.pipeline.progress import Progress
from generator.pipeline.trees import (
    CLIENT_DIR,
    Build,
    Planned,
    Product,
    models_files,
    models_module,
    warn_about_models,
)
from generator.render.writer import (
    Deferred,
    GeneratedFile,
    PendingTree,
    formatter_ready,
    same_on_disk,
)
from generator.spec.located import Said, recorded, recording_complete, replay
from generator.spec.validate import Found, find_problems, known_valid, report_problems


def lint_summary(spec: str, loaded: Any) -> tuple[str | None, bool]:
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
class Checks:
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

        if self.validate and self.spec != "-" and not remote.allowed() and cores() >= 2:
            self.validation = Forked.start(validated, self.spec)
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
            return lint_summary(self.spec, self.loaded)
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
                made = lint_summary(self.spec, self.loaded)
            except Exception:
                return
        self.ahead = (said, made)

    def cancel(self) -> None:
        if self.validation is not None:
            self.validation.cancel()


def validated(spec: str) -> tuple[str, Found] | None:
    """In a forked process (`Checks.start_early`): the validation of the spec at `spec`,
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


def said_ahead(
    checks: Checks,
    schemas: Mapping[str, Schema],
    class_names: dict[str, str],
    models_text: str,
    kinds: list[str],
) -> tuple[tuple[list[Said], tuple[str | None, bool]] | None, list[Said]]:
    """In the client's child, its tree made (`beside`'s `after`): the lint summary and the
    models' warnings, for the parent to say where a run without the child says them."""
    checks.lint_ahead()
    with recorded() as models_said:
        warn_about_models(schemas, class_names, models_text, kinds)
    return checks.ahead, models_said


def beside(
    build: Build,
    kinds: list[str],
    classes: dict[str, dict[str, str]],
    models_text: str,
    after: Callable[[], Any] | None = None,
) -> list[Planned]:
    """`build.plan`, the client planned, rendered and formatted in a forked child (the other
    core) while this process plans the server; each tree's warnings are said afterwards,
    the client's first, as `plan` says them. A failed child: the client is planned here.

    `after`: work this process would do once both trees are made, which the child does
    once the client is made (it would only wait for the server otherwise); its value
    (plain data) is the client's `ahead` (None: not done, this process does the work)."""
    if sorted(kinds) != ["client", "server"] or not recording_complete() or cores() < 2:
        return build.plan(kinds, classes, models_text)
    if build.inputs is not None:  # made once, before the fork: both planners read them
        with suppress(ValueError):
            build.inputs.digests()
    ready_for_both()
    child = Forked.start(client_made, build, (models_text, classes["client"]), after)
    if child is None:
        return build.plan(kinds, classes, models_text)
    server: Planned | None = None
    failure: BaseException | None = None
    try:
        with recorded() as server_said:
            server = build.plan_one("server", (models_text, classes["server"]))
            server.pending.append(build.start(server, server.product.files))
    except Exception as exc:  # said after the client's warnings and errors, as `plan` does
        failure = exc
    except BaseException:
        child.cancel()
        raise
    made = child.result()
    if made is None:
        client = build.plan_one("client", (models_text, classes["client"]))
        client.pending.append(build.start(client, client.product.files))
    else:
        client = made.planned(build.out / CLIENT_DIR)
        replay(made.said)
    replay(server_said)
    if failure is not None:
        raise failure
    assert server is not None
    return [{"server": server, "client": client}[k] for k in kinds]


def client_made(
    build: Build, models: tuple[str, dict[str, str]], after: Callable[[], Any] | None
) -> MadeTree:
    """In the forked child: the client tree's bytes, its warnings, its gaps, and what
    `after` gives (None when it fails: the parent does that work)."""
    build.progress = Progress(enabled=False)  # the parent shows the stages
    from generator.client.gaps import warn_gaps

    with recorded() as said:
        item = build.plan_one("client", models)
        pending = build.start(item, item.product.files)
    product = item.product
    if any(f.create_once for f in product.files):  # (none today) not all in `rendered`
        pending.join()
        raise NotImplementedError("create-once client files are made in the parent")
    # while ruff (another process) formats: the gaps, and `after`
    try:
        with recorded() as gaps:
            warn_gaps(build.api, build.locate)
        ahead = None
        if after is not None:
            with suppress(Exception):
                ahead = after()
    except BaseException:
        pending.join()  # ruff's scratch tree is gone before this process is
        raise
    rendered = pending.result()
    # compared with the tree on disk here, on this core: only what differs goes back
    same = same_on_disk(build.out / CLIENT_DIR, rendered) | pending.on_disk
    return MadeTree(
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


def ready_for_both() -> None:
    """What both trees' processes need, made once before the fork instead of in each: jinja2
    and its environments, ruff's path and version, the modules both planners import (~40 ms
    of the child's CPU, on the two cores the parent's server plan shares with it)."""
    import generator.render.pytypes
    import generator.render.resources  # noqa: F401
    from generator.render.env import environment

    environment("client")
    environment("server")
    formatter_ready()


def cores() -> int:
    """The cores this process may run on: with one, a child planning the client would only
    add a fork's cost."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


@dataclass
class MadeTree:
    """The client tree as a forked child made it (`Build.beside`): what the parent needs to
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

    def planned(self, out_dir: Path) -> Planned:
        files = [
            GeneratedFile(
                path,
                self.rendered[path] if path in self.rendered else read_later(out_dir / path),
                fmt,
                once,
                executable,
                key,
            )
            for path, fmt, once, executable, key in self.files
        ]
        product = Product("client", out_dir, self.package, files, {}, self.summary)
        product.on_disk = frozenset(self.on_disk)
        models = models_files(product)
        done = PendingTree(dict(self.rendered), [], [], {}, {}, keys=dict(self.keys))
        return Planned("client", None, product, models, [done], gaps=self.gaps, ahead=self.ahead)


def read_later(path: Path) -> Deferred:
    """A file's content found on disk (`MadeTree.on_disk`), read only if ever asked for."""
    return Deferred(lambda: path.read_bytes().decode("utf-8"))


def speculate(build: Build, kinds: list[str], class_names: dict[str, str]) -> list[Planned] | None:
    """Plan and render both trees before the models module is there, as if it defines every
    class. None when that fails: the trees are then planned once the module is there, which
    meets the same error where a run always met it (after the models step's own errors)."""
    try:
        return build.plan(kinds, dict.fromkeys(kinds, class_names), None)
    except Exception:
        return None


@dataclass
class Made:
    """What `plan_with_models` gives: both trees planned (their rendering started), the
    models module's text, and the lint summary (None: not linted) with whether it fails."""

    planned: list[Planned]
    models_text: str
    lint_summary: str | None
    lint_failed: bool


def plan_with_models(
    build: Build,
    checks: Checks,
    root: Any,
    lifted: Any,
    kinds: list[str],
    *,
    header: str,
    strict: bool,
) -> Made:
    """The stages validate → models → plan → render of one run, overlapped as the module
    docstring draws: `root` is the spec's root document, `lifted` the models step's input
    (`model_schemas`), `checks` the validation already started, `header` the models
    module's first line."""
    api, source, progress = build.api, build.source, build.progress
    class_names = dict(lifted.class_names)
    planned: list[Planned] | None = None
    speculative: list[Planned] | None = None
    models_text: str | None = None
    early_error: Exception | None = None
    with preloaded(
        source, root.data, digest=root.digest, components_digest=root.entry_digest("components")
    ):
        # The models module is most of a cold run: it is generated in a forked process while
        # this one plans and renders both trees (all only read the parsed document), as if
        # the module defines every class (checked once it is there). Validation runs in a
        # forked process of its own (`Checks`).
        prefetch = prefetch_models(source, class_names=class_names, header=header)
        if prefetch is None:
            # The module is there already (cached): both trees are planned and rendered while
            # validation runs, and ruff (another process) formats them meanwhile.
            # A failure here is reported after validation and lint, as it was before.
            try:
                models_text = models_module(api, source, class_names, header)
                planned = _plan_beside_checks(
                    build, checks, lifted, class_names, kinds, models_text
                )
            except Exception as exc:
                early_error = exc
        ahead = next((p.ahead for p in planned or () if p.ahead is not None), None)
        if ahead is not None:
            checks.ahead = ahead[0]
        try:
            lint_summary, lint_failed = checks.report(progress, strict=strict)
            if prefetch is not None:
                speculative = speculate(build, kinds, class_names)
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
            models_text = models_module(api, source, class_names, header)
    if speculative is not None:  # ruff formats models.py while its classes are checked
        build.with_models(speculative, models_text)
    if ahead is not None:
        replay(ahead[1])
    else:
        warn_about_models(lifted.schemas, class_names, models_text, kinds)
    if planned is None:
        planned = _plan_with_module(build, class_names, kinds, models_text, speculative)
    return Made(planned, models_text, lint_summary, lint_failed)


def _plan_beside_checks(
    build: Build,
    checks: Checks,
    lifted: Any,
    class_names: dict[str, str],
    kinds: list[str],
    models_text: str,
) -> list[Planned]:
    """Both trees planned and rendered with the models module already there, while
    validation runs; what the models step would warn about is worked out meanwhile."""
    from generator.spec.load import gc_paused

    usable = usable_classes(class_names, models_text)  # (the same for both trees)
    classes = {kind: usable for kind in kinds}
    # planning allocates much and frees it by reference counts: no collections
    # (they were 40-80 ms of a Stripe regeneration)
    ahead_work = functools.partial(
        said_ahead, checks, lifted.schemas, class_names, models_text, kinds
    )
    with gc_paused():
        return beside(build, kinds, classes, models_text, ahead_work)


def _plan_with_module(
    build: Build,
    class_names: dict[str, str],
    kinds: list[str],
    models_text: str,
    speculative: list[Planned] | None,
) -> list[Planned]:
    """The trees once the models module is there: the speculation (planned as if every
    class were defined) when it was right, else planned again with the real classes."""
    usable = usable_classes(class_names, models_text)
    classes = {kind: usable for kind in kinds}
    if speculative is not None and all(classes[k] == class_names for k in kinds):
        return speculative
    if speculative is not None:  # a class is missing: plan again with the real classes
        build.abandon(speculative)
    return build.plan(kinds, classes, models_text)
