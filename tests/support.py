"""Real components for tests: a redis-server, a PostgreSQL cluster and uvicorn servers on
127.0.0.1."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(
    port: int, timeout: float = 20.0, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


@contextmanager
def redis_server() -> Iterator[str]:
    """A throwaway redis-server on a free port; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed: run `make test`, which installs it")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc=proc)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


POSTGRES_BIN_DIRS = (
    "/usr/lib/postgresql/17/bin",
    "/usr/lib/postgresql/16/bin",
    "/usr/lib/postgresql/15/bin",
)


def postgres_bin(name: str) -> str:
    """A PostgreSQL server binary: on PATH, else where Debian's packages put it."""
    for folder in POSTGRES_BIN_DIRS:
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed: run `make test`, which installs PostgreSQL")
    return found


def _unprivileged() -> dict[str, int]:
    """PostgreSQL refuses to run as root: as root, run it as the `postgres` user Debian's
    package creates (else `nobody`)."""
    if os.geteuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": entry.pw_uid, "group": entry.pw_gid}
    raise RuntimeError("running as root without a `postgres` or `nobody` user to run PostgreSQL as")


@contextmanager
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl in a temporary folder, fsync off) on a
    free port of 127.0.0.1; yields the URL of its `postgres` database (trust auth)."""
    as_user = _unprivileged()
    folder = Path(tempfile.mkdtemp(prefix="apiforge-pg-"))
    data = folder / "data"
    if as_user:
        os.chown(folder, as_user["user"], as_user["group"])
    port = free_port()
    run = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "cwd": str(folder), **as_user}
    try:
        subprocess.run(
            [
                postgres_bin("initdb"),
                "-D",
                str(data),
                "-U",
                "apiforge",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            check=True,
            **run,  # type: ignore[call-overload]
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        options += " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        subprocess.run(
            [
                postgres_bin("pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(folder / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ],
            check=True,
            **run,  # type: ignore[call-overload]
        )
        try:
            yield f"postgresql://apiforge@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                check=False,
                **run,  # type: ignore[call-overload]
            )
            pidfile = data / "postmaster.pid"
            if pidfile.exists():  # pg_ctl could not stop it: the postmaster by its own pid
                with suppress(ValueError, ProcessLookupError, OSError):
                    os.kill(int(pidfile.read_text().split()[0]), signal.SIGQUIT)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(admin_url: str, name: str) -> str:
    """Create database `name` on the cluster of `admin_url` (dropping an older one); its URL."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def sql_query(url: str, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
    """Run one statement on a store (`sqlite:///FILE` or `postgresql://…`, placeholders in
    the driver's style) from outside the server; its rows."""
    if url.startswith("sqlite:///"):
        import sqlite3

        with closing(sqlite3.connect(url.removeprefix("sqlite:///"), timeout=30)) as conn:
            rows = list(conn.execute(sql, tuple(params)).fetchall())
            conn.commit()
            return rows
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:
        cur = pg.execute(sql, tuple(params))  # type: ignore[arg-type]
        return list(cur.fetchall()) if cur.description else []


@contextmanager
def uvicorn_server(
    app: str,
    *,
    cwd: Path | str,
    env: dict[str, str] | None = None,
    workers: int = 1,
    extra_args: Sequence[str] = (),
    pythonpath: Sequence[str | Path] = (),
    output: Path | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Serve `app` ("module:attr") under uvicorn on 127.0.0.1; yields (base_url, process).
    `output`: a file that gets the server's stdout and stderr (its logs)."""
    port = free_port()
    full_env = {**os.environ, **(env or {})}
    paths = [str(p) for p in pythonpath] + [str(cwd)]
    if full_env.get("PYTHONPATH"):
        paths.append(full_env["PYTHONPATH"])
    full_env["PYTHONPATH"] = os.pathsep.join(paths)
    cmd = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--workers", str(workers), "--log-level", "warning", *extra_args]
    sink = open(output, "ab") if output is not None else None  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        cmd, cwd=str(cwd), env=full_env, start_new_session=True, stdout=sink, stderr=sink
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, proc=proc)
        # with several workers, wait until the app answers, not only the socket
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(base + "/__apiforge_ready__", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        yield base, proc
    finally:
        stop_process_group(proc)
        if sink is not None:
            sink.close()


def stop_process_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def models_text(side: Path) -> str:
    """The models of the one generated package in `side` (a server or client project folder)
    as one text: the server's `models.py`, or every module of the client's `models/` package."""
    (package,) = [p for p in side.iterdir() if (p / "__init__.py").is_file()]
    if (package / "models.py").is_file():
        return (package / "models.py").read_text()
    return "".join(p.read_text() for p in sorted((package / "models").glob("*.py")))
