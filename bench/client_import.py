"""Importing a generated client: the wall time and peak memory of a fresh interpreter that
imports it bare, and one that also touches three resources and builds their response models
(what a first call does before it sends anything), beside the openai SDK doing the same.

    .venv/bin/python bench/client_import.py --client DIR PACKAGE RESOURCES MODELS [--client ...]
        [--openai-python PATH] [--runs 5]

DIR is a generated client project (`apiforge client SPEC -o DIR --package PACKAGE`),
RESOURCES three attribute names of its `Client` (`customers,charges,payment_intents`),
MODELS the response models to build (`Customer,Charge,PaymentIntent`). `--openai-python`: an
interpreter with the `openai` package installed (its own environment), measured touching
`chat.completions`, `files` and `models` and loading `ChatCompletion`, `FileObject`, `Model`.
Prints one row per measurement: the median wall seconds and peak MB of `--runs` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import run_once

OPENAI_TOUCH = """
import openai
from openai.types import FileObject, Model
from openai.types.chat import ChatCompletion
client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9")
client.chat.completions, client.files, client.models
"""


def touch(package: str, resources: list[str], models: list[str]) -> str:
    """The code that touches `resources` of `package`'s client and builds `models`."""
    lines = [
        f"import {package}",
        f'client = {package}.Client(base_url="http://127.0.0.1:9")',
        *(f"client.{r}" for r in resources),
        *(f"{package}.models.{m}.model_rebuild()" for m in models),
    ]
    return "\n".join(lines)


def measure(
    name: str, python: str, code: str, cwd: str | None, runs: int
) -> tuple[str, float, float]:
    results = [run_once([python, "-c", code], cwd=cwd) for _ in range(runs + 1)][1:]
    failed = [r for r in results if r.returncode != 0]
    if failed:
        raise SystemExit(f"{name}: exit {failed[0].returncode} (run it by hand: {code!r})")
    seconds = statistics.median(r.seconds for r in results)
    return name, seconds, statistics.median(r.peak_mb for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", nargs=4, action="append", default=[], metavar="ARG")
    parser.add_argument("--openai-python")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    for directory, package, resources, models in args.client:
        cwd = str(Path(directory).resolve())
        rows.append(
            measure(f"{package}: import", sys.executable, f"import {package}", cwd, args.runs)
        )
        code = touch(package, resources.split(","), models.split(","))
        rows.append(
            measure(f"{package}: 3 resources + models", sys.executable, code, cwd, args.runs)
        )
    if args.openai_python:
        rows.append(measure("openai: import", args.openai_python, "import openai", None, args.runs))
        rows.append(
            measure(
                "openai: 3 resources + models", args.openai_python, OPENAI_TOUCH, None, args.runs
            )
        )
    width = max(len(r[0]) for r in rows)
    print(f"{'':{width}}  seconds  peak MB  (median of {args.runs})")
    for name, seconds, peak in rows:
        print(f"{name:{width}}  {seconds:7.2f}  {peak:7.0f}")


if __name__ == "__main__":
    main()
