"""Remote `$ref`s (`https://host/common.yaml#/...`): fetched only when the user allows it.

Off by default: a spec that names a URL would otherwise make every run (and every CI job)
depend on that host, and let a spec make requests from the machine that reads it. Allowed by
`--allow-remote-refs` or `APIFORGE_ALLOW_REMOTE_REFS=1`. A fetch has a timeout and a size cap
(`APIFORGE_REMOTE_TIMEOUT` seconds, `APIFORGE_REMOTE_MAX_BYTES`), and its body is kept in the
cache (`load.cache_dir()`, kind `remote2`) by URL: a second run reads it from there, offline.

A kept copy is asked for again — conditionally, with its `ETag` / `Last-Modified`, so an
unchanged document costs a 304 — when it is older than `APIFORGE_REMOTE_MAX_AGE` seconds (no
limit unless set) or when the run says `--refresh-remote-refs`. A host that cannot answer
then (no connection, a timeout, a 5xx) does not stop the run: the kept copy is used, with a
warning at the `$ref` that says how old it is; a 4xx (the document is gone) is an error.
"""

from __future__ import annotations

import os
import time
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from generator.errors import ApiforgeError, Problem
from generator.log import logger
from generator.spec.load import cache_dir, cache_get, cache_put

ALLOW_ENV = "APIFORGE_ALLOW_REMOTE_REFS"
TIMEOUT_ENV = "APIFORGE_REMOTE_TIMEOUT"
MAX_BYTES_ENV = "APIFORGE_REMOTE_MAX_BYTES"
MAX_AGE_ENV = "APIFORGE_REMOTE_MAX_AGE"
REFRESH_ENV = "APIFORGE_REFRESH_REMOTE_REFS"
_CACHE_KIND = "remote2"  # (url, body, fetched at (epoch seconds), validators)
_VALIDATORS = (("etag", "If-None-Match"), ("last-modified", "If-Modified-Since"))
_allowed_by_flag = False  # set by the command line's --allow-remote-refs
_refresh_by_flag = False  # set by --refresh-remote-refs
_mirror: Path | None = None
ALLOW_HINT = f"pass --allow-remote-refs (or set {ALLOW_ENV}=1) to fetch it"


def allow(value: bool) -> None:
    """What `--allow-remote-refs` said, for this process (and what it forks)."""
    global _allowed_by_flag
    _allowed_by_flag = value


def refresh(value: bool) -> None:
    """What `--refresh-remote-refs` said: ask again for every kept copy (it allows too)."""
    global _refresh_by_flag
    _refresh_by_flag = value


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def allowed() -> bool:
    return _allowed_by_flag or _refresh_by_flag or _env_true(ALLOW_ENV) or _env_true(REFRESH_ENV)


def _stale(fetched_at: float) -> bool:
    """Whether a copy kept since `fetched_at` must be asked for again."""
    if _refresh_by_flag or _env_true(REFRESH_ENV):
        return True
    max_age = _number(MAX_AGE_ENV, 0.0)
    return max_age > 0 and time.time() - fetched_at > max_age


def is_remote(name: str) -> bool:
    return name.startswith(("http://", "https://"))


def _number(env: str, default: float) -> float:
    try:
        value = float(os.environ.get(env, default))
    except ValueError:
        return default
    return value if value > 0 else default


def timeout() -> float:
    return _number(TIMEOUT_ENV, 10.0)


def max_bytes() -> int:
    return int(_number(MAX_BYTES_ENV, 8 * 1024 * 1024))


def _key(url: str) -> str:
    import hashlib  # here: a cold lint does not need it

    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


def mirror_dir() -> Path:
    """Where fetched bodies are also kept as files, by host and path (`<host>/<path>`): what
    the models library reads remote `$ref`s from (its `http_local_ref_path`)."""
    global _mirror
    root = cache_dir()
    if root is not None:
        return root / "remote-files"
    if _mirror is None:  # no cache: a folder for this process
        import tempfile  # here: every `lint` imports this module, few fetch anything

        _mirror = Path(tempfile.mkdtemp(prefix="apiforge-remote-"))
    return _mirror


def _mirror_file(url: str, body: bytes) -> None:
    parsed = urlsplit(url)
    parts = [unquote(p) for p in parsed.path.split("/") if p]
    host = parsed.netloc.rpartition("@")[2]
    if not host or not parts or any(p in (".", "..") or "\\" in p or "/" in p for p in parts):
        return  # a URL the models library would not look up in the mirror either
    path = mirror_dir().joinpath(host, *parts)
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(body)
        os.replace(tmp, path)


class _Unreachable(Exception):
    """The host gave no usable answer (no connection, a timeout, a 5xx): a kept copy may
    stand in; without one, it is an error (`reason`, `hint`)."""

    def __init__(self, reason: str, hint: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


def fetch(url: str, at: Problem) -> bytes:
    """The body at `url` (no fragment): from the cache, or fetched and cached (asked for
    again, conditionally, when the kept copy is stale: see the module docstring). `at`
    locates the `$ref` that names it, for the error when it cannot be had."""
    cached = cache_get(_CACHE_KIND, _key(url))
    kept = cached if isinstance(cached, tuple) and len(cached) == 4 and cached[0] == url else None
    if kept is not None and not _stale(kept[2]):
        body: bytes = kept[1]
    else:
        ask = {header: kept[3][name] for name, header in _VALIDATORS if kept and name in kept[3]}
        try:
            answer = _download(url, at, ask)
        except _Unreachable as failed:
            if kept is None:
                raise _fail(at, failed.reason, failed.hint) from None
            message = f"{failed.reason}; using the copy fetched {_age(kept[2])} ago"
            logger().warning(
                "warning: %s", replace(at, message=f"{at.message}: {message}").render()
            )
            body = kept[1]
        else:
            if answer is not None:
                body, validators = answer
            else:  # 304: the kept copy is current (a 304 comes only to a conditional request)
                assert kept is not None
                body, validators = kept[1], kept[3]
            cache_put(_CACHE_KIND, _key(url), (url, body, time.time(), validators))
    _mirror_file(url, body)
    return body


def _age(since: float) -> str:
    seconds = max(0.0, time.time() - since)
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} seconds"


def _fail(at: Problem, message: str, hint: str) -> ApiforgeError:
    return ApiforgeError(replace(at, message=f"{at.message}: {message}"), hint)


def _download(
    url: str, at: Problem, conditions: dict[str, str]
) -> tuple[bytes, dict[str, str]] | None:
    """The body at `url` and its validators (`etag`, `last-modified`), or None for a 304 to
    the `conditions` (request headers). Raises `_Unreachable` when the host gives no usable
    answer, `ApiforgeError` for any other failure."""
    import httpx

    limit, seconds = max_bytes(), timeout()
    too_big = f"the response is over the {limit:,} byte limit"
    size_hint = f"raise {MAX_BYTES_ENV}, or download the file and refer to it by a relative path"
    try:
        with (
            httpx.Client(timeout=seconds, follow_redirects=True, max_redirects=5) as client,
            client.stream(
                "GET", url, headers={"Accept": "application/yaml, application/json", **conditions}
            ) as response,
        ):
            if response.status_code == 304 and conditions:
                return None
            if response.status_code >= 500:
                raise _Unreachable(f"HTTP {response.status_code} from {url}", "try again")
            if response.status_code != 200:
                raise _fail(
                    at,
                    f"HTTP {response.status_code} from {url}",
                    "check the URL of the $ref",
                )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _fail(at, too_big, size_hint)
            chunks: list[bytes] = []
            size = 0
            deadline = time.monotonic() + seconds  # httpx's timeout is per read, not in all
            for chunk in response.iter_bytes():
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the whole answer took too long")
                size += len(chunk)
                if size > limit:
                    raise _fail(at, too_big, size_hint)
                chunks.append(chunk)
            validators = {name: response.headers.get(name, "") for name, _ in _VALIDATORS}
            return b"".join(chunks), {k: v for k, v in validators.items() if v}
    except httpx.TimeoutException:
        raise _Unreachable(
            f"no complete answer from {url} within {seconds:g} s",
            f"try again, or raise {TIMEOUT_ENV}",
        ) from None
    except httpx.HTTPError as exc:
        raise _Unreachable(
            f"cannot fetch {url}: {type(exc).__name__}: {exc}"[:300], "check the URL"
        ) from None
