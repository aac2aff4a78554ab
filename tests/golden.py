"""The golden record: `specs/<name>.yaml` → `golden/<name>/...`, produced by the CLI itself.

Each product is one CLI invocation: its stdout becomes a file, or (with `{out}`) the
directory it writes becomes a tree. `make golden` rewrites them all; the tests compare byte
for byte. A golden diff is a product change: read it as one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"
GOLDEN = ROOT / "golden"

# (golden name, CLI arguments). "{spec}" is specs/<name>.yaml as a relative path, so messages
# are stable; "{out}" makes the product a directory tree instead of stdout.
PRODUCTS: list[tuple[str, list[str]]] = [
    ("inspect.json", ["inspect", "{spec}", "--format", "json"]),
    ("client", ["client", "{spec}", "-o", "{out}"]),
    ("server", ["server", "{spec}", "-o", "{out}"]),
    ("lint.txt", ["lint", "{spec}", "--format", "text"]),
    ("lint.sarif", ["lint", "{spec}", "--format", "sarif"]),
]


def spec_names() -> list[str]:
    return sorted(p.stem for p in SPECS.glob("*.yaml"))


def produce(spec: str, args: list[str]) -> dict[str, bytes]:
    """Run one product for `spec`; return {relative path: bytes} ('' for a stdout product)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        argv = [a.replace("{spec}", f"specs/{spec}.yaml").replace("{out}", str(out)) for a in args]
        env = {**os.environ, "NO_COLOR": "1", "APIFORGE_NO_CACHE": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "generator.cli", *argv], cwd=ROOT, capture_output=True, env=env
        )
        if proc.returncode not in (0, 1):
            raise RuntimeError(
                f"apiforge {' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode()}"
            )
        if "{out}" not in " ".join(args):
            return {"": proc.stdout}
        return {
            str(p.relative_to(out)): p.read_bytes()
            for p in sorted(out.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }


def golden_files(spec: str, name: str) -> dict[str, bytes]:
    target = GOLDEN / spec / name
    if target.is_file():
        return {"": target.read_bytes()}
    if target.is_dir():
        return {
            str(p.relative_to(target)): p.read_bytes()
            for p in sorted(target.rglob("*"))
            if p.is_file()
        }
    return {}


def write(spec: str, name: str, files: dict[str, bytes]) -> None:
    import shutil

    target = GOLDEN / spec / name
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    for rel, data in files.items():
        path = target / rel if rel else target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def main() -> None:
    for spec in spec_names():
        for name, args in PRODUCTS:
            write(spec, name, produce(spec, args))
            print(f"golden/{spec}/{name}")


if __name__ == "__main__":
    main()
