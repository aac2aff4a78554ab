"""`apiforge mock SPEC`: the generated server of SPEC in mock mode, in one command.

The server is generated into apiforge's cache (`<cache>/mock/<digest of the spec's path>/`,
or a temporary folder removed at exit when the cache is off), never where the user works:
a second run of the same spec regenerates only what changed. It is served in this process
with mock mode on (every operation answers its declared example, else a value of its
schema; see the server runtime's `mock.py`), any well-formed credential accepted
(`APIFORGE_MOCK_ANY_CREDENTIAL`) and every store in memory. Settings the user exports
(`APIFORGE_RATE_LIMIT_DEFAULT=...`) still apply.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem

#: The generated package's name: fixed, so the folder and the import do not depend on the
#: spec's title.
PACKAGE = "apiforge_mock"
DEFAULT_PORT = 4010
#: A mock project not served for this long is removed by the next `apiforge mock`.
_STALE_SECONDS = 14 * 24 * 3600
#: What the server needs that apiforge itself does not.
_SERVER_MODULES = ("fastapi", "uvicorn", "pydantic", "limits", "prometheus_client")

#: The settings of a mock server, unless the environment sets them.
MOCK_SETTINGS = {
    "APIFORGE_MOCK": "1",
    "APIFORGE_MOCK_ANY_CREDENTIAL": "1",
    "APIFORGE_STORE_URL": "memory://",
    "APIFORGE_RATE_LIMIT_STORAGE_URL": "memory://",
    "APIFORGE_METRICS_PORT": "0",
    "APIFORGE_LOG_LEVEL": "error",  # not the warnings every mock server would repeat
}


@dataclass(frozen=True)
class MockProject:
    """A generated mock server: its folder, title and number of operations."""

    root: Path
    title: str
    operations: int
    secured: bool


def check_server_packages() -> None:
    """ApiforgeError naming what to install when the server's packages are missing."""
    import importlib.util

    missing = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise ApiforgeError(
            Problem(f"apiforge mock needs the server's packages; missing: {', '.join(missing)}"),
            "pip install 'apiforge[mock]' (or pipx inject apiforge fastapi uvicorn pydantic "
            "limits prometheus-client)",
        )


@contextmanager
def project_folder(spec: str) -> Iterator[Path]:
    """Where SPEC's mock server is generated: in the cache (kept for the next run), else in
    a temporary folder removed afterwards."""
    from generator.spec.load import cache_dir

    root = cache_dir()
    if root is None:
        with tempfile.TemporaryDirectory(prefix="apiforge-mock-") as tmp:
            yield Path(tmp)
        return
    where = "-" if spec == "-" else str(Path(spec).resolve())
    folder = root / "mock" / hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    _remove_stale(folder.parent, keep=folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".used").touch()
    except OSError as exc:
        raise ApiforgeError(
            Problem(f"cannot write the mock server into {folder}: {exc.strerror}"),
            "set APIFORGE_CACHE_DIR to a writable folder, or APIFORGE_NO_CACHE=1",
        ) from None
    yield folder


def _remove_stale(parent: Path, keep: Path) -> None:
    now = time.time()
    try:
        folders = [p for p in parent.iterdir() if p.is_dir() and p != keep]
    except OSError:
        return
    for folder in folders:
        try:
            used = (folder / ".used").stat().st_mtime
        except OSError:
            used = 0.0
        if now - used > _STALE_SECONDS:
            shutil.rmtree(folder, ignore_errors=True)


def generate(spec: str, folder: Path) -> MockProject:
    """SPEC's server, written into `folder` (only what changed since the last run)."""
    from generator.models.build import preloaded
    from generator.server.plan import write_server
    from generator.spec import load_spec

    loaded = load_spec(spec, validate=False)
    root = loaded.resolver.root
    source = loaded.source
    # the parsed document feeds the models step, whose module is then cached by content
    with preloaded(
        source, root.data, digest=root.digest, components_digest=root.entry_digest("components")
    ):
        plan, _, _ = write_server(
            loaded.api, folder, spec_source=source, spec_name=root.name, package=PACKAGE
        )
    operations = sum(len(t.operations) for t in plan.tags)
    secured = any(
        s is not None and not s.public
        for s in (op.patterns.security for op in loaded.api.operations)
    )
    project = MockProject(folder, loaded.api.title, operations, secured)
    files = {
        str(d.path.resolve()): d.digest for d in loaded.resolver.documents if d.path is not None
    }
    if spec != "-":
        _write_stamp(project, files)
    return project


_STAMP = ".generated.json"


def _identity() -> str:
    """What the generated server depends on besides the spec: apiforge's code, templates and
    Python."""
    from generator.render.env import render_identity

    return render_identity("server")


def _file_digest(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def up_to_date(spec: str, folder: Path) -> MockProject | None:
    """The project in `folder`, when it was generated from SPEC's files as they are now by
    this apiforge (its stamp says so), so nothing needs generating; else None."""
    if spec == "-":
        return None
    try:
        stamp = json.loads((folder / _STAMP).read_text(encoding="utf-8"))
        files: dict[str, str] = stamp["files"]
        if stamp["identity"] != _identity() or not files:
            return None
        if any(_file_digest(path) != digest for path, digest in files.items()):
            return None
        return MockProject(
            folder, str(stamp["title"]), int(stamp["operations"]), bool(stamp["secured"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_stamp(project: MockProject, files: dict[str, str]) -> None:
    stamp = {
        "identity": _identity(),
        "files": files,
        "title": project.title,
        "operations": project.operations,
        "secured": project.secured,
    }
    with suppress(OSError):
        (project.root / _STAMP).write_text(json.dumps(stamp), encoding="utf-8")


def load_app(project: MockProject) -> Any:
    """The ASGI application of `project`, built with the mock settings."""
    for name, value in MOCK_SETTINGS.items():
        if name in ("APIFORGE_MOCK", "APIFORGE_MOCK_ANY_CREDENTIAL"):
            os.environ[name] = value
        else:
            os.environ.setdefault(name, value)
    sys.path.insert(0, str(project.root))
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]  # another project imported earlier in this process
    try:
        module = importlib.import_module(f"{PACKAGE}.main")
    except SystemExit as exc:  # settings that are not usable: the server said which
        raise ApiforgeError(Problem("the mock server's settings are not usable")) from exc
    return module.app


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port (port 0: a free one), or ApiforgeError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        raise ApiforgeError(
            Problem(f"cannot listen on {host}:{port}: {exc.strerror or exc}"),
            "choose another --port (0: any free one)",
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(app: Any, sock: socket.socket, log_level: str = "warning") -> None:
    """Serve `app` on `sock` until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def run(
    spec: str,
    host: str,
    port: int,
    *,
    say: Callable[[str], None],
    log_level: str = "warning",
) -> None:
    """`apiforge mock`: generate, listen, say where, serve."""
    check_server_packages()
    started = time.perf_counter()
    sock = listen(host, port)  # first: a port in use is said at once
    with sock, project_folder(spec) as folder:
        project = up_to_date(spec, folder) or generate(spec, folder)
        app = load_app(project)
        ready = time.perf_counter() - started
        credentials = "any credential is accepted" if project.secured else "no credentials"
        say(
            f"mock server of {project.title} on {url_of(sock)}: {project.operations} "
            f"operations, {credentials} (ready in {ready:.1f} s; Ctrl+C stops it)"
        )
        say(
            "answers: the declared example, else a value of the schema; "
            "`Prefer: code=404` or `Prefer: example=NAME` chooses another"
        )
        serve(app, sock, log_level)
