"""A plain, non-editable install of the wheel works from anywhere: templates ship inside it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = wheels.glob("apiforge-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # the wheel itself, unpacked as pip would; its dependencies from the dev venv (a plain path,
    # so the dev venv's editable finder for `generator` is not activated)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            site,
            str(wheel),
        ],
        check=True,
    )
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    where = subprocess.run(
        [py, "-c", "import generator; print(generator.__file__)"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert where.startswith(site), where
    assert Path(site, "generator", "templates", "server", "runtime", "problems.py").is_file()
    assert Path(site, "generator", "templates", "client", "runtime").is_dir()
    assert Path(site, "generator", "rule_docs", "idempotency-key-missing.md").is_file()

    proc = subprocess.run(
        [
            py,
            "-m",
            "generator.cli",
            "inspect",
            str(ROOT / "specs" / "acme.yaml"),
            "--format",
            "json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"createPayment"' in proc.stdout
