"""Specs read from git: `REF:PATH` (`origin/main:openapi.yaml`) is the file PATH as commit REF
has it, read with `git show` in the working directory's repository. A multi-file spec's
relative `$ref`s resolve to files of the same commit (`REF:dir/common.yaml`)."""

from __future__ import annotations

import functools
import re
import subprocess

from generator.errors import ApiforgeError, Problem

# `REF:PATH`, REF without spaces; not a Windows drive (`C:\…`) nor a URL (`https://…`)
_REF_PATH = re.compile(r"(?P<ref>[^\s:][^\s:]+):(?P<path>(?!//)[^:]+)")


def split(source: str) -> tuple[str, str] | None:
    """(REF, PATH) when `source` is written `REF:PATH`, else None."""
    match = _REF_PATH.fullmatch(source)
    return (match["ref"], match["path"].removeprefix("./")) if match else None


@functools.lru_cache(maxsize=256)
def _show(ref: str, path: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "show", f"{ref}:{path}"], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def exists(source: str) -> bool:
    """Whether `source` is `REF:PATH` naming a file git has."""
    parts = split(source)
    return parts is not None and _show(*parts) is not None


def read(source: str) -> bytes | None:
    """The text of `source` at its commit; None when `source` is not written `REF:PATH`.
    A `REF:PATH` git cannot show is an error that says why."""
    parts = split(source)
    if parts is None:
        return None
    text = _show(*parts)
    if text is None:
        ref, path = parts
        try:
            why = subprocess.run(
                ["git", "show", f"{ref}:{path}"], capture_output=True, check=False, timeout=60
            ).stderr.decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = str(exc)
        reason = why.strip().splitlines()[0] if why.strip() else "git cannot show it"
        raise ApiforgeError(
            Problem(f"cannot read {source} from git: {reason.removeprefix('fatal: ')}"),
            "write REF:PATH with a commit, branch or tag git knows and a path in it",
        )
    return text
