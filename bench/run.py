"""`make bench`: `apiforge generate` beside the generators users would pick instead.

    .venv/bin/python bench/run.py [--specs stripe,github,cloudflare] [--tools SUBSTRINGS]
                                  [--skip-install] [--no-lint] [--no-regen] [--write-docs]
                                  [--only-regen] [--regen-baseline REF]

1. Installs the peers into bench/.peers/ (git-ignored), each Python tool in its own venv so
   their pins do not fight ours: openapi-python-client, fastapi-code-generator,
   datamodel-code-generator (with black and isort, its default formatters),
   openapi-generator-cli (needs Java); @stoplight/spectral-cli and @redocly/cli through
   bench/lint_bench.py's installer.
2. Runs every tool on Stripe, GitHub and Cloudflare from ../shared/corpus (`--tools`: only those
   whose name contains one of these comma-separated substrings), alternating tools within each
   repetition (a busy machine hurts all alike), `BENCH_REPEAT` repetitions (default 3): wall
   time median, peak RSS (os.wait4), success, apiforge's ratio to each peer that succeeded.
   apiforge runs cold: APIFORGE_NO_CACHE=1, server + client, formatted, validated.
   Two peers fail on the big specs with their default options, so each runs twice: as it comes,
   and with the workaround a user would find in its error message:
   - openapi-python-client stops on Stripe with `ValueError: Duplicate key GMT0 in enum ...;
     consider setting literal_enums in your config`: the workaround is a config file with
     `literal_enums: true` (`--config`). It runs with its own venv's bin first on PATH, so its
     default post-hooks (`ruff check --fix`, `ruff format`) find ruff, as in an activated venv.
   - openapi-generator's parser (swagger-parser/SnakeYAML) refuses Stripe's 4 MB YAML: "The
     incoming YAML document exceeds the limit: 3145728 code points"; the limit is the JVM
     system property `maxYamlCodePoints` (JAVA_OPTS=-DmaxYamlCodePoints=..., which the pip
     wrapper passes to java). GitHub's spec fails its validation, hence `--skip-validate-spec`
     as well: the workaround variant has both.
   JAVA_OPTS, JAVA_TOOL_OPTIONS and _JAVA_OPTIONS are removed from every other tool's
   environment, so "default" means default.
3. Regeneration, paired: this checkout's code against `--regen-baseline` (a git ref, default
   `main`; extracted with `git archive`, both with their bytecode compiled, each run as
   `python -c ...generator.cli...` with its own tree first on PYTHONPATH, so a worktree times
   its own code and not the venv's editable install). Each tree gets its own copy of the
   spec and private cache; in every repetition (`BENCH_REGEN_REPEAT`, default 5) and kind
   (unchanged, one description edited, one GET operation added under a new path) both
   trees go back to the original (a warm regeneration) and are timed on the same new edit,
   taking turns; wall and CPU seconds (user + system, with the processes each run waits
   for), the median of the per-pair ratios, and the load average (the machine is shared).
   `--only-regen` runs this part alone (the copy is edited; ../shared is never touched).
4. Prints Markdown tables; `--write-docs` puts them into docs/performance.md's "Generation"
   section (other sections are left as they are); then runs bench/lint_bench.py unless
   `--no-lint`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Run, Summary, machine, run_once, summarize

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / ".peers"
CORPUS = ROOT.parent / "shared" / "corpus"
APIFORGE = ROOT / ".venv" / "bin" / "apiforge"
DOCS = ROOT / "docs" / "performance.md"

# lifts swagger-parser's SnakeYAML limit of 3 Mi code points (Stripe's YAML has ~4.1 M)
YAML_CODE_POINTS = "-DmaxYamlCodePoints=100000000"
OPC_CONFIG = PEERS / "openapi-python-client.literal-enums.yaml"

SPECS = {
    "stripe": CORPUS / "stripe" / "spec3.2023-09-12.yaml",
    "github": CORPUS / "github" / "api.github.com.2022-06-11.json",
    "cloudflare": CORPUS / "cloudflare" / "openapi.2024-08-06.json",
}
# (venv name, pip requirements, console script)
PY_PEERS = {
    "openapi-python-client": (["openapi-python-client==0.29.*"], "openapi-python-client"),
    "fastapi-code-generator": (["fastapi-code-generator==0.8.*"], "fastapi-codegen"),
    "datamodel-code-generator": (
        ["datamodel-code-generator==0.89.0", "black", "isort"],
        "datamodel-codegen",
    ),
    "openapi-generator": (["openapi-generator-cli==7.*"], "openapi-generator-cli"),
}


@dataclass
class Tool:
    name: str
    argv: Callable[[Path, Path], list[str]]  # (spec, output dir) -> argv
    env: dict[str, str]
    ok_codes: tuple[int, ...] = (0,)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def peer_bin(name: str) -> Path:
    return PEERS / name / "bin" / PY_PEERS[name][1]


def install_peers(names: list[str]) -> None:
    for name in names:
        reqs, _ = PY_PEERS[name]
        if peer_bin(name).exists():
            continue
        log(f"installing {' '.join(reqs)} into {(PEERS / name).relative_to(ROOT)} ...")
        venv.EnvBuilder(with_pip=True, clear=True).create(PEERS / name)
        subprocess.run([str(PEERS / name / "bin" / "pip"), "install", "--quiet", *reqs], check=True)
    try:
        import lint_bench

        lint_bench.install_peers()  # spectral and redocly (npm)
    except (SystemExit, subprocess.CalledProcessError) as exc:
        log(f"npm peers not installed: {exc}")


def base_env() -> dict[str, str]:
    java = ("JAVA_OPTS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")  # no workaround by accident
    # bytecode (and apiforge's compiled dataclass methods) written as on a user's machine
    dropped = {*java, "PYTHONDONTWRITEBYTECODE"}
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("APIFORGE_") and k not in dropped
    }
    env["NO_COLOR"] = "1"
    return env


def peer_env(name: str) -> dict[str, str]:
    """The peer's venv bin first on PATH, as when it is activated (tools that run helpers, like
    openapi-python-client's ruff post-hooks, find them)."""
    env = base_env()
    env["PATH"] = os.pathsep.join([str(PEERS / name / "bin"), env.get("PATH", os.defpath)])
    env["VIRTUAL_ENV"] = str(PEERS / name)
    return env


def _opc(spec: Path, out: Path, *extra: str) -> list[str]:
    return [
        str(peer_bin("openapi-python-client")),
        "generate",
        "--path",
        str(spec),
        "--output-path",
        str(out),
        "--overwrite",
        *extra,
    ]


def _oag(spec: Path, out: Path, *extra: str) -> list[str]:
    return [
        str(peer_bin("openapi-generator")),
        "generate",
        "-i",
        str(spec),
        "-g",
        "python",
        "-o",
        str(out),
        *extra,
    ]


def tools(with_peers: bool) -> list[Tool]:
    env = base_env()
    found = [
        Tool(
            "apiforge generate",
            lambda s, o: [str(APIFORGE), "generate", str(s), "-o", str(o)],
            {**env, "APIFORGE_NO_CACHE": "1"},
        ),
        Tool(
            "apiforge generate --no-validate",
            lambda s, o: [str(APIFORGE), "generate", str(s), "-o", str(o), "--no-validate"],
            {**env, "APIFORGE_NO_CACHE": "1"},
        ),
    ]
    if not with_peers:
        return found
    OPC_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    OPC_CONFIG.write_text("literal_enums: true\n", encoding="utf-8")
    found += [
        Tool(
            "fastapi-code-generator",
            lambda s, o: [str(peer_bin("fastapi-code-generator")), "-i", str(s), "-o", str(o)],
            env,
        ),
        Tool("openapi-python-client", _opc, peer_env("openapi-python-client")),
        Tool(
            "openapi-python-client, workaround: literal_enums",
            lambda s, o: _opc(s, o, "--config", str(OPC_CONFIG)),
            peer_env("openapi-python-client"),
        ),
        Tool("openapi-generator (python)", _oag, env),
        Tool(
            "openapi-generator (python), workaround: maxYamlCodePoints, --skip-validate-spec",
            lambda s, o: _oag(s, o, "--skip-validate-spec"),
            {**env, "JAVA_OPTS": YAML_CODE_POINTS},
        ),
        Tool(
            "datamodel-code-generator alone",
            lambda s, o: [
                str(peer_bin("datamodel-code-generator")),
                "--input",
                str(s),
                "--input-file-type",
                "openapi",
                "--output",
                str(o / "models.py"),
            ],
            env,
        ),
    ]
    return found


def run_tool(tool: Tool, spec: Path, scratch: Path) -> Run:
    out = scratch / re.sub(r"[^a-z0-9]+", "-", tool.name.lower())
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    try:
        return run_once(tool.argv(spec, out), env=tool.env, cwd=str(scratch))
    finally:
        shutil.rmtree(out, ignore_errors=True)


# --- regeneration ------------------------------------------------------------------------


def _edit_description(text: str, is_json: bool, rep: int = 0) -> str:
    """One line changed: the first plain one-line description under `paths` gets a sentence
    more (the API description in JSON); `rep` makes the sentence differ each repetition."""
    sentence = f" Regenerated {rep + 1}."
    if is_json:
        data = json.loads(text)
        info = data.setdefault("info", {})
        info["description"] = str(info.get("description", "")) + sentence
        return json.dumps(data, indent=2)
    start = text.find("\npaths:\n")  # an operation's, not a schema's
    pattern = re.compile(r"^( +description: )([A-Za-z][^#\n]*[A-Za-z.])$", re.M)
    match = pattern.search(text, max(start, 0))
    if match is None:
        raise SystemExit("no one-line description to edit")
    return text[: match.end()] + sentence + text[match.end() :]


def _add_operation(text: str, is_json: bool, rep: int = 0) -> str:
    """One new operation: GET /apiforge-bench/ping<rep> answering 200 with a string."""
    name = f"ping{rep + 1}"
    op = {
        "operationId": f"ApiforgeBench_{name}",
        "summary": "Added by the benchmark",
        "responses": {
            "200": {
                "description": "pong",
                "content": {"application/json": {"schema": {"type": "string"}}},
            }
        },
    }
    if is_json:
        data = json.loads(text)
        data["paths"][f"/apiforge-bench/{name}"] = {"get": op}
        return json.dumps(data, indent=2)
    block = (
        f"  /apiforge-bench/{name}:\n    get:\n      operationId: ApiforgeBench_{name}\n"
        "      summary: Added by the benchmark\n      responses:\n        '200':\n"
        "          description: pong\n          content:\n            application/json:\n"
        "              schema:\n                type: string\n"
    )
    if "\npaths:\n" not in text:
        raise SystemExit("no block `paths:` to add an operation to")
    return text.replace("\npaths:\n", "\npaths:\n" + block, 1)


REGEN_KINDS = ("unchanged", "description", "operation")


def code_tree(ref: str, dest: Path) -> Path:
    """apiforge's code at git `ref` in `dest`, its bytecode compiled (as `pip install` leaves
    it)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    compile_tree(dest)
    return dest


def compile_tree(tree: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "generator")],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env,
    )


def apiforge_in(tree: Path) -> tuple[list[str], dict[str, str]]:
    """How to run the `apiforge` command of the code in `tree` (argv head, environment)."""
    argv = [
        sys.executable,
        "-c",
        "import sys; from generator.cli import run; sys.argv[0] = 'apiforge'; run()",
    ]
    return argv, {**base_env(), "PYTHONPATH": str(tree)}


def regeneration(
    spec: Path, reps: int, extra: list[str], trees: dict[str, Path]
) -> dict[tuple[str, str], list[Run]]:
    """(tree label, kind) → runs: an unchanged spec, a one-line description change, one added
    operation, each timed on every tree in turn after a warm regeneration of the original."""
    results: dict[tuple[str, str], list[Run]] = {}
    with tempfile.TemporaryDirectory(prefix="apiforge-regen-") as tmp:
        original = spec.read_text(encoding="utf-8")
        is_json = spec.suffix == ".json"
        sides = {}
        for number, (label, tree) in enumerate(trees.items()):
            folder = Path(tmp) / f"tree{number}"
            folder.mkdir()
            head, env = apiforge_in(tree)
            env["APIFORGE_CACHE_DIR"] = str(folder / "cache")
            copy = folder / spec.name
            argv = [*head, "generate", str(copy), "-o", str(folder / "out"), *extra]
            sides[label] = (copy, argv, env, str(folder))
        for rep in range(reps):
            # every repetition's edit is new: an edit the cache has seen before would be timed
            # as a partly unchanged spec (its validation, for one, is cached by content)
            variants = {
                "unchanged": original,
                "description": _edit_description(original, is_json, rep),
                "operation": _add_operation(original, is_json, rep),
            }
            for name, text in variants.items():
                order = list(sides) if rep % 2 == 0 else list(reversed(sides))
                for label in order:
                    copy, argv, env, cwd = sides[label]
                    # back to the original (a warm cache of it), then the edit
                    copy.write_text(original, encoding="utf-8")
                    run_once(argv, env=env, cwd=cwd)
                    copy.write_text(text, encoding="utf-8")
                    results.setdefault((label, name), []).append(run_once(argv, env=env, cwd=cwd))
            log(f"regeneration {spec.name} {' '.join(extra)}: repetition {rep + 1}/{reps}")
    return results


def regeneration_table(baseline: str | None, reps: int) -> str:
    """Both variants (validated, --no-validate) on Stripe, this tree against `baseline`."""
    with tempfile.TemporaryDirectory(prefix="apiforge-baseline-") as tmp:
        compile_tree(ROOT)
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = code_tree(baseline, Path(tmp))
        load_before = os.getloadavg()
        rows = []
        for extra in ([], ["--no-validate"]):
            runs = regeneration(SPECS["stripe"], reps, extra, trees)
            for kind in REGEN_KINDS:
                label = f"{kind}{' (--no-validate)' if extra else ''}"
                rows.append(_regen_row(label, [runs[(t, kind)] for t in trees]))
        load_after = os.getloadavg()
    if baseline:
        head = (
            f"| regeneration (Stripe, warm cache, n={reps} pairs) | this tree: wall s | cpu s "
            f"| {baseline}: wall s | cpu s | wall ratio | cpu ratio | ok |\n"
            "|---|---:|---:|---:|---:|---:|---:|---|"
        )
    else:
        head = (
            f"| regeneration (Stripe, warm cache, n={reps}) | wall s | cpu s | ok |\n"
            "|---|---:|---:|---|"
        )
    loads = (
        f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
        f"after: {', '.join(f'{x:.2f}' for x in load_after)}. Medians; a ratio is the median "
        "of the pairs' ratios (this tree / baseline); cpu counts user + system seconds of the "
        "process and those it waits for (validation's fork, ruff)."
    )
    return "\n".join([head, *rows]) + "\n\n" + loads


def _regen_row(label: str, sides: list[list[Run]]) -> str:
    cells = []
    for runs in sides:
        cells += [
            f"{statistics.median(r.seconds for r in runs):.2f}",
            f"{statistics.median(r.cpu_s for r in runs):.2f}",
        ]
    if len(sides) == 2:
        ours, theirs = sides
        pairs = list(zip(ours, theirs, strict=True))
        cells += [
            f"{statistics.median(a.seconds / b.seconds for a, b in pairs):.2f}x",
            f"{statistics.median(a.cpu_s / max(b.cpu_s, 1e-9) for a, b in pairs):.2f}x",
        ]
    ok = all(r.returncode == 0 for runs in sides for r in runs)
    return f"| {label} | {' | '.join(cells)} | {'yes' if ok else 'no'} |"


# --- reporting -----------------------------------------------------------------------------


APIFORGE_TOOLS = ("apiforge generate", "apiforge generate --no-validate")


def _ours(results: dict[tuple[str, str], list[Run]], spec: str) -> tuple[str, Summary] | None:
    """apiforge's fastest successful variant on `spec`: what every ratio is against."""
    ours = [
        (name, summary)
        for name in APIFORGE_TOOLS
        if (runs := results.get((spec, name))) and (summary := summarize(runs)).ok
    ]
    return min(ours, key=lambda o: o[1].median_s, default=None)


def table(results: dict[tuple[str, str], list[Run]], tool_list: list[Tool], reps: int) -> str:
    lines = [
        f"| spec | tool | median s | peak RSS MB | ok | apiforge's speed-up (n={reps}) |",
        "|---|---|---:|---:|---|---|",
    ]
    for spec in SPECS:
        # the ratio is against apiforge's fastest successful run; a failed run has no ratio
        ours = _ours(results, spec)
        for tool in tool_list:
            runs = results.get((spec, tool.name))
            if not runs:
                continue
            s = summarize(runs, tool.ok_codes)
            if tool.name.startswith("apiforge"):
                ratio = ""
            elif ours is None:
                ran = any((spec, name) in results for name in APIFORGE_TOOLS)
                ratio = "- (apiforge failed)" if ran else "- (apiforge not run)"
            elif not s.ok:
                ratio = "- (peer failed)"
            else:
                ratio = f"{s.median_s / ours[1].median_s:.1f}x"
            codes = sorted({r.returncode for r in runs})
            ok = "yes" if s.ok else f"no (exit {','.join(map(str, codes))})"
            lines.append(
                f"| {spec} | {tool.name} | {s.median_s:.1f} | {s.peak_mb:.0f} | {ok} | {ratio} |"
            )
    return "\n".join(lines)


def ratio_lines(results: dict[tuple[str, str], list[Run]], tool_list: list[Tool]) -> str:
    """One line per spec and peer variant that succeeded: time and memory, apiforge's fastest
    successful variant against it (a variant that failed has no ratio; the table says so)."""
    lines = []
    for spec in SPECS:
        ours = _ours(results, spec)
        if ours is None:
            continue
        name, us = ours
        for tool in tool_list:
            runs = results.get((spec, tool.name))
            if tool.name.startswith("apiforge") or not runs:
                continue
            them = summarize(runs, tool.ok_codes)
            if not them.ok:
                continue
            lines.append(
                f"- {spec}: `{name}` {us.median_s:.1f} s, {us.peak_mb:.0f} MB vs {tool.name} "
                f"{them.median_s:.1f} s, {them.peak_mb:.0f} MB: "
                f"{them.median_s / us.median_s:.1f}x faster, "
                f"{us.peak_mb / max(them.peak_mb, 1e-9):.2f}x the memory"
            )
    if not lines:
        return ""
    head = "Ratios against every peer variant that succeeded (apiforge's fastest successful run):"
    return head + "\n\n" + "\n".join(lines)


def write_docs(section: str) -> None:
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    text = DOCS.read_text(encoding="utf-8") if DOCS.exists() else "# Performance\n"
    start = text.find("\n## Generation\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        nxt = text.find("\n## ", start + 1)
        end = len(text) if nxt == -1 else nxt
        text = text[:start] + "\n" + section.rstrip("\n") + "\n" + text[end:]
    DOCS.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", default=",".join(SPECS))
    parser.add_argument(
        "--tools", default="", help="Only tools whose name contains one of these (comma-separated)."
    )
    parser.add_argument("--skip-install", action="store_true", help="apiforge only.")
    parser.add_argument("--no-lint", action="store_true", help="Do not run bench/lint_bench.py.")
    parser.add_argument("--no-regen", action="store_true", help="Skip the regeneration timing.")
    parser.add_argument("--write-docs", action="store_true", help="Update docs/performance.md.")
    parser.add_argument(
        "--only-regen", action="store_true", help="Only the regeneration timing (no peers)."
    )
    parser.add_argument(
        "--regen-baseline",
        default="main",
        help="The git ref the regeneration is paired against ('' for none; default main).",
    )
    args = parser.parse_args()
    if args.only_regen:
        regen_reps = int(os.environ.get("BENCH_REGEN_REPEAT", "5"))
        print(f"machine: {machine()}\n\n{regeneration_table(args.regen_baseline, regen_reps)}")
        return
    reps = int(os.environ.get("BENCH_REPEAT", "3"))
    wanted = [s for s in args.specs.split(",") if s]
    if not args.skip_install:
        install_peers(list(PY_PEERS))
    tool_list = tools(with_peers=not args.skip_install)
    if wanted_tools := [t for t in args.tools.split(",") if t]:
        tool_list = [t for t in tool_list if any(w in t.name for w in wanted_tools)]
    results: dict[tuple[str, str], list[Run]] = {}
    with tempfile.TemporaryDirectory(prefix="apiforge-bench-") as tmp:
        scratch = Path(tmp)
        for rep in range(reps):
            for spec in wanted:
                for tool in tool_list:
                    run = run_tool(tool, SPECS[spec], scratch)
                    results.setdefault((spec, tool.name), []).append(run)
                    log(
                        f"{spec} {tool.name}: {run.seconds:.1f}s {run.peak_mb:.0f}MB "
                        f"exit {run.returncode} (repetition {rep + 1}/{reps})"
                    )
    out = [table(results, tool_list, reps)]
    if ratios := ratio_lines(results, tool_list):
        out.append(ratios)
    if not args.no_regen:
        regen_reps = int(os.environ.get("BENCH_REGEN_REPEAT", "5"))
        out.append(regeneration_table(args.regen_baseline, regen_reps))
    report = "\n\n".join(out)
    print(f"machine: {machine()}\n\n{report}")
    if args.write_docs:
        write_docs(f"## Generation\n\nMachine: {machine()}; BENCH_REPEAT={reps}.\n\n{report}\n")
    if not args.no_lint and not args.skip_install:
        subprocess.run([sys.executable, str(ROOT / "bench" / "lint_bench.py"), "--reps", str(reps)])


if __name__ == "__main__":
    main()
