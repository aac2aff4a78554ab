"""The shell commands of the generated READMEs work as written, in a fresh virtual
environment: the server's "Run it" block (install, then serve) and the client's install line.

The fresh environment takes the generated projects' dependencies from apiforge's own (a
`.pth` file), so the test needs no network; `pip install` still builds and installs each
project as the README says. The only change made to a command is the server's port (a free
one instead of 8000, which another program may hold). A block with a placeholder for the
reader to fill in (`HOST`, `<your proxy>`) is not run; the production block (it listens on
every interface, which a test must not) is checked instead: valid shell, and every flag it
gives uvicorn is one uvicorn has; every other block is run."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import httpx

from tests.support import free_port, stop_process_group, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\bHOST\b|<[^>]+>")
EVERY_INTERFACE = "--host 0.0.0.0"


def sh_blocks(readme: Path) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)


def fresh_venv(where: Path) -> Path:
    venv.create(where, with_pip=True)
    site = next((where / "lib").glob("python*/site-packages"))
    (site / "apiforge-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def assert_imports(bin_dir: Path, module: str, cwd: Path) -> None:
    """The fresh venv's Python imports `module` from elsewhere than its project: installed."""
    check = subprocess.run(
        [bin_dir / "python", "-c", f"import {module}"], cwd=cwd, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr


def test_the_generated_readmes_commands_work_as_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    made = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", "specs/acme.yaml", "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    bin_dir = fresh_venv(tmp_path / "venv")
    # the venv's pip first; uvicorn (a dependency, without its script here) from apiforge's
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
        + os.environ["PATH"],
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    env.pop("VIRTUAL_ENV", None)

    client_blocks = sh_blocks(out / "client" / "README.md")
    assert client_blocks[0].startswith("pip install .")
    for block in client_blocks:
        assert not PLACEHOLDER.search(block), block
        done = subprocess.run(
            ["bash", "-euc", block], cwd=out / "client", env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (block, done.stderr[-2000:])
    assert_imports(bin_dir, "acme_payments_api_client", tmp_path)

    server = out / "server"
    blocks = sh_blocks(server / "README.md")
    runnable = [b for b in blocks if not PLACEHOLDER.search(b)]
    run_it = blocks[0]
    assert run_it in runnable
    install, serve = run_it.strip().splitlines()
    done = subprocess.run(
        ["bash", "-euc", install], cwd=server, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, (install, done.stderr[-2000:])
    assert_imports(bin_dir, "acme_payments_api_server.settings", tmp_path)
    port = free_port()
    assert " --port 8000" in serve
    command = serve.replace(" --port 8000", f" --port {port}")
    proc = subprocess.Popen(
        shlex.split(command),
        cwd=server,
        env={**env, "APIFORGE_STORE_URL": "memory://"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for_port(port, timeout=60, proc=proc)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    finally:
        stop_process_group(proc)
    production = [b for b in runnable if EVERY_INTERFACE in b]
    assert runnable == [run_it, *production], (
        "a README block neither run, checked nor a placeholder"
    )
    for block in production:
        assert subprocess.run(["bash", "-n", "-c", block]).returncode == 0, block
        flags = re.findall(r"(?<=\s)--[a-z][a-z-]*", block.split("uvicorn", 1)[1])
        usage = subprocess.run(
            [sys.executable, "-m", "uvicorn", "--help"], capture_output=True, text=True
        ).stdout
        assert flags and all(flag in usage for flag in flags), (flags, block)
