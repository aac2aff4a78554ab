"""A plain, non-editable install of the wheel works from anywhere: templates ship inside it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")


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
    # compiled: it says which Python it serves (this one), not "any"
    assert wheel.name == f"apiforge-0.1.0-{TAG}-{TAG}-{PLATFORM}.whl"
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


def test_the_pure_wheel_serves_every_python(tmp_path: Path) -> None:
    """`APIFORGE_PURE_WHEEL=1`: a `py3-none-any` wheel without the compiled reader, for the
    Pythons the compiled wheel does not serve; its metadata says which those are."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), ROOT],
        check=True,
        env={**os.environ, "APIFORGE_PURE_WHEEL": "1"},
    )
    (wheel,) = tmp_path.glob("apiforge-*.whl")
    assert wheel.name == "apiforge-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("apiforge-0.1.0.dist-info/METADATA").decode()
        tags = archive.read("apiforge-0.1.0.dist-info/WHEEL").decode()
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    assert "generator/spec/fast_yaml.py" in names and "generator/rule_docs/etag-missing.md" in names
    assert "Root-Is-Purelib: true" in tags and "Tag: py3-none-any" in tags
    assert "Requires-Python: >=3.11" in metadata and "License-Expression: MIT" in metadata
    for version in ("3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in metadata
