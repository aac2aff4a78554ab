"""The generated client's runtime under `pyright --strict` (beside the `mypy --strict` that
`make check` runs on it): too slow for the test suite (about 30 s on acme), so run here.

    .venv/bin/python bench/client_pyright.py [SPEC ...]

Each spec (default: specs/acme.yaml) is generated into a temporary directory and pyright checks
its `<package>/_runtime` in strict mode. Prints the error count per spec and the errors; exits 1
when there are any. Needs pyright in the venv (`.venv/bin/pip install pyright`; it runs on node).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def runtime_errors(spec: Path, work: Path) -> list[str]:
    out = work / spec.stem
    subprocess.run(
        [BIN / "apiforge", "client", str(spec), "-o", str(out)], check=True, capture_output=True
    )
    (package,) = (p for p in out.iterdir() if (p / "_runtime").is_dir())
    config = {"typeCheckingMode": "strict", "include": [f"{package.name}/_runtime"]}
    (out / "pyrightconfig.json").write_text(json.dumps(config))
    checked = subprocess.run(
        [BIN / "pyright", "--outputjson", "--pythonpath", sys.executable],
        cwd=out,
        capture_output=True,
        text=True,
    )
    report = json.loads(checked.stdout)
    return [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
        f" ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]


def main(argv: list[str]) -> int:
    specs = [Path(a) for a in argv] or [ROOT / "specs" / "acme.yaml"]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            errors = runtime_errors(spec, Path(tmp))
            print(f"{spec.name}: {len(errors)} pyright --strict error(s) in the runtime")
            for error in errors:
                print(f"  {error}")
            failed = failed or bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
