"""Remote `$ref`s (`https://host/common.yaml#/...`): fetched only when the user allows it.

Off by default: a spec that names a URL would otherwise make every run (and every CI job)
depend on that host, and let a spec make requests from the machine that reads it. Allowed by
`--allow-remote-refs` or `APIFORGE_ALLOW_REMOTE_REFS=1`. A fetch has a timeout and a size cap
(`APIFORGE_REMOTE_TIMEOUT` seconds, `APIFORGE_REMOTE_MAX_BYTES`), and its body is kept in the
cache (`load.cache_dir()`, kind `remote1`) by URL: a second run reads it from there, offline.
To fetch again, remove the cache folder (or set `APIFORGE_NO_CACHE`, which also stops caching).
"""

from __future__ import annotations

import os
import time
from contextlib import suppress
from pathlib import Path
from urllib.parse import unquote, urlsplit

from generator.errors import ApiforgeError, Problem
from generator.spec.load import cache_dir, cache_get, cache_put

ALLOW_ENV = "APIFORGE_ALLOW_REMOTE_REFS"
TIMEOUT_ENV = "APIFORGE_REMOTE_TIMEOUT"
MAX_BYTES_ENV = "APIFORGE_REMOTE_MAX_BYTES"
_CACHE_KIND = "remote1"
_allowed_by_flag = False  # set by the command line's --allow-remote-refs
_mirror: Path | None = None
ALLOW_HINT = f"pass --allow-remote-refs (or set {ALLOW_ENV}=1) to fetch it"


def allow(value: bool) -> None:
    """What `--allow-remote-refs` said, for this process (and what it forks)."""
    global _allowed_by_flag
    _allowed_by_flag = value


def allowed() -> bool:
    env = os.environ.get(ALLOW_ENV, "").strip().lower()
    return _allowed_by_flag or env in ("1", "true", "yes", "on")


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


def fetch(url: str, at: Problem) -> bytes:
    """The body at `url` (no fragment): from the cache, or fetched and cached. `at` locates
    the `$ref` that names it, for the error when it cannot be had."""
    cached = cache_get(_CACHE_KIND, _key(url))
    if isinstance(cached, tuple) and len(cached) == 2 and cached[0] == url:
        body: bytes = cached[1]
    else:
        body = _download(url, at)
        cache_put(_CACHE_KIND, _key(url), (url, body))
    _mirror_file(url, body)
    return body


def _fail(at: Problem, message: str, hint: str) -> ApiforgeError:
    from dataclasses import replace

    return ApiforgeError(replace(at, message=f"{at.message}: {message}"), hint)


def _download(url: str, at: Problem) -> bytes:
    import httpx

    limit, seconds = max_bytes(), timeout()
    too_big = f"the response is over the {limit:,} byte limit"
    size_hint = f"raise {MAX_BYTES_ENV}, or download the file and refer to it by a relative path"
    try:
        with (
            httpx.Client(timeout=seconds, follow_redirects=True, max_redirects=5) as client,
            client.stream(
                "GET", url, headers={"Accept": "application/yaml, application/json"}
            ) as response,
        ):
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
            return b"".join(chunks)
    except httpx.TimeoutException:
        raise _fail(
            at,
            f"no complete answer from {url} within {seconds:g} s",
            f"try again, or raise {TIMEOUT_ENV}",
        ) from None
    except httpx.HTTPError as exc:
        raise _fail(
            at, f"cannot fetch {url}: {type(exc).__name__}: {exc}"[:300], "check the URL"
        ) from None
