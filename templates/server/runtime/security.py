"""Authentication as the spec declares it: who calls, checked before anything else runs.

The spec's `securitySchemes` become `AuthScheme`s (one per scheme: where its credential is and
which verifier method checks it); each operation's `security` becomes an `AuthRequirement`
guard, with OpenAPI's semantics:

- the alternatives are an OR, the schemes inside one alternative an AND: every one must pass
  and every one must name the same principal `id` (a key of one account with the password of
  another is a 401); the principal is the one the alternative's first scheme returned, and
  `principals_of` (`ctx.principals`) gives each scheme's;
- a public operation (`security: []`, or an empty `{}` alternative) lets everyone in, but
  credentials that are present are still verified (`optional`), so handlers see who called:
  a rejected credential is a 401 there too, and a credential short of the alternative's
  scopes leaves the caller anonymous;
- a cookie credential (`apiKey` in a cookie) on an unsafe method is refused (403
  `cross-site-request`) when the browser says another site's page sent it (`Sec-Fetch-Site`,
  else `Origin`), unless that origin is allowed (`APIFORGE_CSRF_ALLOWED_ORIGINS`).

The verifier is the user's: an object with one method per scheme (`bearer`: `token`;
`basic`: `username`, `password`; `apiKey`: `key`; each also gets the `scopes` the alternative
requires and an `AuthContext`), returning a `Principal` or None. A method that is still a
stub (its body only raises NotImplementedError) or is missing never lets anyone in: an
operation that only such schemes could open answers 501, naming the scheme and the file to
edit (fail closed).

Answers (RFC 9457 problems):

- no usable credential, or one the verifier rejected → 401 with one `WWW-Authenticate`
  challenge per scheme (`Bearer realm=…` plus `error="invalid_token"` when a bearer token
  was rejected, RFC 6750; `Basic realm=…, charset="UTF-8"`; `APIKey realm=…, in=…, name=…`).
  The same answer whatever was wrong (unknown user or wrong password): nothing to guess from;
- a verified principal without the required scopes → 403, `error="insufficient_scope"`, and
  the scopes in the challenge and in the problem's `scopes` member;
- more than `failure_limit` rejected credentials from one client address → 429 +
  `Retry-After` for every credential from it, the right one included, before any verifier
  runs (brute force; the address as `client_address` resolves it: proxies' headers believed
  only from `APIFORGE_TRUSTED_PROXIES`, IPv6 by /64);
- no verifier for what the operation needs → 501.

The verified `Principal` is kept in `request.state.principal`: the rate limiter, the
idempotency scope, job ownership and handlers (`ctx.principal`) all read it from there.

Integration surface (the generated `auth.py`, `main.py` and routers):

- `AuthScheme(name, kind, method, location=, parameter=, description=)`;
- `install_authentication(app, schemes, verifier, *, realm, failure_limit, storage_url,
  verifier_file, allowed_origins)` — once in `create_app`;
- `AuthRequirement(alternatives, optional=(), public=False)` — a `RequestGuard`, the first
  dependency of every operation that declares security;
- `openapi_security(schemes)` — the `components.securitySchemes` for `/openapi.json`, made
  with FastAPI's own security classes.
"""

from __future__ import annotations

import ast
import base64
import binascii
import inspect
import logging
import math
import textwrap
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI
from limits import parse
from limits.aio.storage import Storage as AsyncStorage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string
from starlette.requests import Request

from .client_address import client_ip
from .observability import record
from .openapi_doc import with_room
from .problems import ProblemDetail, RequestGuard

logger = logging.getLogger(__name__)

Kind = Literal["bearer", "basic", "apiKey", ""]
Alternative = tuple[tuple[str, tuple[str, ...]], ...]
_STATE_AUTH = "apiforge_auth"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who called, as the verifier vouches: `id` keys rate limits, idempotency and job
    ownership; `tier` picks the rate limit (`APIFORGE_RATE_LIMIT_TIERS`); `scopes` are
    checked against what each operation requires."""

    id: str
    tier: str | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "tier": self.tier, "scopes": sorted(self.scopes)}

    @classmethod
    def from_json(cls, raw: Any) -> Principal | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            return None
        tier = raw.get("tier")
        scopes = raw.get("scopes")
        return cls(
            raw["id"],
            tier if isinstance(tier, str) else None,
            frozenset(s for s in scopes if isinstance(s, str))
            if isinstance(scopes, list)
            else frozenset(),
        )


@dataclass(frozen=True, slots=True)
class AuthContext:
    """What a verifier method gets besides the credential: the request (client address,
    headers) and the app's services (stores), for verifiers that look keys up."""

    request: Request
    scheme: str  # the scheme's name in the spec

    @property
    def services(self) -> Any:
        return getattr(self.request.app.state, "apiforge_services", None)


@dataclass(frozen=True, slots=True)
class AuthScheme:
    """One entry of `components/securitySchemes`: `kind` says what the credential is
    ("bearer" for http bearer, oauth2 and openIdConnect; "basic"; "apiKey" read from
    `location` under `parameter`; "" for what an application cannot read, e.g. mutualTLS,
    which therefore never passes)."""

    name: str
    kind: Kind
    method: str  # the verifier's method
    type: str = "http"  # the spec's type: http, apiKey, oauth2, openIdConnect, mutualTLS
    location: str = "header"
    parameter: str = ""
    description: str = ""
    bearer_format: str = ""
    flows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # oauth2
    open_id_connect_url: str = ""

    def credential(self, request: Request) -> tuple[str, ...] | None:
        """The credential this scheme reads from the request, or None when absent.
        Raises `_Malformed` for a credential that is present but unreadable."""
        if self.kind in ("bearer", "basic"):
            header = request.headers.get("authorization")
            if not header:
                return None
            scheme, _, value = header.strip().partition(" ")
            value = value.strip()
            if scheme.lower() != self.kind:
                return None
            if not value:
                raise _Malformed
            if self.kind == "bearer":
                return (value,)
            try:
                decoded = base64.b64decode(value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                raise _Malformed from None
            username, sep, password = decoded.partition(":")
            if not sep:
                raise _Malformed
            return (username, password)
        if self.kind == "apiKey":
            if self.location == "header":
                key = request.headers.get(self.parameter)
            elif self.location == "query":
                key = request.query_params.get(self.parameter)
            else:
                key = request.cookies.get(self.parameter)
            return (key,) if key else None
        return None

    def challenge(self, realm: str, *, error: str = "", scopes: Sequence[str] = ()) -> str:
        """This scheme's `WWW-Authenticate` challenge."""
        params = [f"realm={_quoted(realm)}"]
        if self.kind == "bearer":
            if error:
                params.append(f"error={_quoted(error)}")
            if scopes:
                params.append(f"scope={_quoted(' '.join(scopes))}")
            return "Bearer " + ", ".join(params)
        if self.kind == "basic":
            return "Basic " + ", ".join([*params, 'charset="UTF-8"'])
        params += [f"in={_quoted(self.location)}", f"name={_quoted(self.parameter)}"]
        return "APIKey " + ", ".join(params)

    def describe(self) -> str:
        """How a caller sends this credential, for problem details."""
        if self.kind == "bearer":
            return f"a bearer token ({self.name})"
        if self.kind == "basic":
            return f"HTTP basic credentials ({self.name})"
        if self.kind == "apiKey":
            return f"an API key in the {self.location} {self.parameter!r} ({self.name})"
        return f"{self.name} ({self.type}, which this server cannot check)"


class _Malformed(Exception):
    """A credential is present but cannot be read (counts as rejected)."""


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- the verifier --------------------------------------------------------------------------


def is_stub(function: Any) -> bool:
    """Whether `function`'s body only raises NotImplementedError (after its docstring): the
    shape apiforge writes for a verifier method the user has not implemented."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return False  # no source to read (e.g. built at runtime): trust it
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body:
        return True
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    exc = body[0].exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def implemented_schemes(verifier: Any, schemes: Iterable[AuthScheme]) -> frozenset[str]:
    """The schemes whose verifier method exists and is not a stub."""
    done = set()
    for scheme in schemes:
        method = getattr(verifier, scheme.method, None)
        if scheme.kind and callable(method) and not is_stub(method):
            done.add(scheme.name)
    return frozenset(done)


@dataclass
class Authentication:
    """What `install_authentication` keeps on the app: schemes, verifier and limits."""

    schemes: Mapping[str, AuthScheme]
    verifier: Any
    realm: str
    verifier_file: str
    implemented: frozenset[str]
    failures: AuthFailures | None
    #: origins besides the server's own whose pages may send cookie credentials (CSRF)
    allowed_origins: frozenset[str] = frozenset()

    async def verify(
        self,
        scheme: AuthScheme,
        credential: tuple[str, ...],
        scopes: tuple[str, ...],
        request: Request,
    ) -> Principal | None:
        method = getattr(self.verifier, scheme.method)
        result = method(*credential, scopes=scopes, ctx=AuthContext(request, scheme.name))
        if inspect.isawaitable(result):
            result = await result
        if result is not None and not isinstance(result, Principal):
            raise TypeError(
                f"the verifier's {scheme.method} returned {type(result).__name__}; "
                "return a Principal or None"
            )
        return result


class AuthFailures:
    """Rejected credentials per client address (`client_address.client_ip`), in a moving
    window (brute-force protection).

    On a shared store (Redis: every worker and host) every request that carries a credential
    asks the store first, so the limit holds across workers exactly: no worker lets a guess
    through that another one already counted. On `memory://` the count is the process's
    own, and a client this process has never rejected within the window is not looked up."""

    _MAX_SUSPECTS = 100_000  # clients remembered per process, oldest forgotten first

    def __init__(self, limit: str, storage_url: str = "memory://") -> None:
        try:
            self.item = parse(limit)
        except ValueError as exc:
            raise ValueError(
                f"auth failure limit {limit!r} is not a limit like '10/minute'"
            ) from exc
        url = storage_url if storage_url.startswith("async+") else "async+" + storage_url
        options: dict[str, str] = {}
        if url.startswith(("async+redis", "async+rediss")):
            options = {"implementation": "redispy", "key_prefix": "apiforge-auth"}
        storage = storage_from_string(url, **options)
        if not isinstance(storage, AsyncStorage):
            raise ValueError(f"auth failure storage {storage_url!r} has no async implementation")
        self.storage = storage
        self.strategy = MovingWindowRateLimiter(storage)
        self.shared = not url.startswith("async+memory")
        self._suspects: dict[str, float] = {}  # client → until when this process checks it

    async def retry_after(self, client: str) -> int | None:
        """Seconds the client must wait before its credentials are checked again; None: go."""
        if not self.shared:
            until = self._suspects.get(client)
            if until is None:
                return None
            if until < time.monotonic():
                del self._suspects[client]
                return None
        try:
            if await self.strategy.test(self.item, "auth-failures", client):
                return None
            stats = await self.strategy.get_window_stats(self.item, "auth-failures", client)
        except Exception:  # the store is down: checking credentials must go on
            logger.warning("auth failure store unavailable", exc_info=True)
            return None
        return max(1, math.ceil(stats.reset_time - time.time()))

    async def record(self, client: str) -> None:
        if not self.shared:
            if len(self._suspects) >= self._MAX_SUSPECTS:
                self._suspects.pop(next(iter(self._suspects)))
            self._suspects[client] = time.monotonic() + self.item.get_expiry()
        try:
            await self.strategy.hit(self.item, "auth-failures", client)
        except Exception:
            logger.warning("auth failure store unavailable", exc_info=True)


def install_authentication(
    app: FastAPI,
    schemes: Sequence[AuthScheme],
    verifier: Any,
    *,
    realm: str,
    failure_limit: str = "",
    storage_url: str = "memory://",
    verifier_file: str = "verifier.py",
    allowed_origins: Iterable[str] = (),
) -> Authentication:
    """Make `verifier` check the credentials of `app`'s secured operations (module doc).
    `failure_limit` (e.g. "10/minute") bounds rejected credentials per client address;
    empty: no bound. `verifier_file` is named in the 501 of schemes without a verifier.
    `allowed_origins` (`https://app.example.com`) may send cookie credentials besides the
    server's own origin."""
    by_name = {s.name: s for s in schemes}
    implemented = implemented_schemes(verifier, schemes)
    missing = sorted(n for n, s in by_name.items() if n not in implemented)
    if missing:
        logger.warning(
            "no verifier for security scheme(s) %s: operations that need them answer 501 "
            "until %s implements them",
            ", ".join(missing),
            verifier_file,
        )
    failures = AuthFailures(failure_limit, storage_url) if failure_limit else None
    auth = Authentication(
        by_name,
        verifier,
        header_text(realm) or "API",
        verifier_file,
        implemented,
        failures,
        frozenset(_origin(o) for o in allowed_origins if o.strip()),
    )
    setattr(app.state, _STATE_AUTH, auth)
    return auth


def authentication_of(request: Request) -> Authentication | None:
    """What `install_authentication` put on the request's app (None: nothing)."""
    auth = getattr(request.app.state, _STATE_AUTH, None)
    return auth if isinstance(auth, Authentication) else None


def header_text(text: str) -> str:
    """`text` as printable ASCII for a header value (accents dropped, other characters
    left out): HTTP header values are Latin-1 at most, and a title in any script must
    still make a valid `WWW-Authenticate` challenge."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return " ".join("".join(c for c in folded if c.isprintable()).split())


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def _origin(value: str) -> str:
    return value.strip().lower().rstrip("/")


def _host_of(origin: str) -> str:
    """`host[:port]` of an origin or a Host header, without the scheme's default port."""
    scheme, sep, rest = origin.partition("://")
    host = rest if sep else scheme
    for default in (":80", ":443"):
        host = host.removesuffix(default)
    return host


def refuse_cross_site(request: Request, allowed_origins: frozenset[str]) -> None:
    """403 for an unsafe request that a browser sent from another site's page, as its
    `Sec-Fetch-Site` or else its `Origin` says; a cookie would vouch for it otherwise
    (cross-site request forgery). Requests without either header are not a browser's
    cross-site request (browsers send `Origin` with every cross-origin unsafe request)."""
    if request.method in _SAFE_METHODS:
        return
    origin = _origin(request.headers.get("origin", ""))
    site = request.headers.get("sec-fetch-site", "").strip().lower()
    if origin and origin in allowed_origins:
        return
    if site:
        cross = site not in ("same-origin", "none")
    elif origin:
        cross = origin == "null" or _host_of(origin) != _host_of(
            request.headers.get("host", "").strip().lower()
        )
    else:
        return
    if cross:
        raise ProblemDetail(
            403,
            "cross-site-request",
            "Forbidden",
            "A cookie credential cannot be used by another site's page for this request "
            "(Origin / Sec-Fetch-Site). Allow that page's origin in APIFORGE_CSRF_ALLOWED_ORIGINS.",
        )


def principal_of(request: Request) -> Principal | None:
    """The principal authentication verified for this request (None: anonymous)."""
    state = request.scope.get("state") or {}
    principal = state.get("principal")
    return principal if isinstance(principal, Principal) else None


def principals_of(request: Request) -> Mapping[str, Principal]:
    """Every principal authentication verified for this request, by scheme name: one per
    credential of the alternative that passed (all with the same `id`); empty: anonymous."""
    state = request.scope.get("state") or {}
    found = state.get("principals")
    return dict(found) if isinstance(found, dict) else {}


# --- the per-operation guard ---------------------------------------------------------------


@dataclass
class _Outcome:
    """What trying the alternatives found, to pick the answer when none passed."""

    principal: Principal | None = None
    principals: dict[str, Principal] = field(default_factory=dict)
    rejected: list[AuthScheme] = field(default_factory=list)
    insufficient: list[tuple[AuthScheme, tuple[str, ...]]] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    presented: bool = False
    limit_checked: bool = False


class AuthRequirement(RequestGuard):
    """Who may call one operation (see the module docstring). `alternatives`: the OR of AND-ed
    (scheme, scopes) the operation requires; `public`: anyone may call, and `optional` are
    the alternatives whose credentials are verified when present."""

    def __init__(
        self,
        *alternatives: Alternative,
        public: bool = False,
        optional: Sequence[Alternative] = (),
    ) -> None:
        self.alternatives = tuple(alternatives)
        self.public = public
        self.optional = tuple(optional) if public else ()

    async def check(self, request: Request) -> None:
        auth = authentication_of(request)
        if auth is None:
            raise RuntimeError("AuthRequirement needs install_authentication(app, ...)")
        tried = self.alternatives if not self.public else self.optional
        try:
            outcome = await self._try(auth, request, tried)
        except ProblemDetail as refused:  # locked out (429) or a cross-site request (403)
            what = "locked_out" if refused.status == 429 else "cross_site"
            record("auth", what, log=f"client {client_ip(request)}")
            raise refused
        if outcome.principal is not None:
            request.state.principal = outcome.principal
            request.state.principals = outcome.principals
            record("auth", "authenticated")
            return
        if self.public:
            if outcome.rejected:
                record("auth", "rejected", log=f"client {client_ip(request)}")
                raise self._unauthorized(auth, tried, outcome)
            record("auth", "anonymous")
            return  # anonymous (also when only insufficient scopes: the operation is public)
        if outcome.insufficient:
            record("auth", "forbidden")
            raise self._forbidden(auth, outcome)
        if outcome.rejected or outcome.presented:
            record("auth", "rejected", log=f"client {client_ip(request)}")
            raise self._unauthorized(auth, tried, outcome)
        if outcome.unavailable and not self._available(auth, tried):
            record("auth", "not_implemented")
            raise self._not_implemented(auth, outcome)
        record("auth", "missing")
        raise self._unauthorized(auth, tried, outcome)

    @staticmethod
    def _available(auth: Authentication, alternatives: Sequence[Alternative]) -> bool:
        return any(all(n in auth.implemented for n, _ in alt) for alt in alternatives)

    async def _try(
        self, auth: Authentication, request: Request, alternatives: Sequence[Alternative]
    ) -> _Outcome:
        outcome = _Outcome()
        cache: dict[str, Principal | None] = {}
        for alternative in alternatives:
            verified = await self._alternative(auth, request, alternative, cache, outcome)
            if not verified:
                continue
            if len({p.id for p in verified.values()}) > 1:
                # an AND of credentials that name different accounts: no one is vouched for
                outcome.rejected.extend(auth.schemes[name] for name in verified)
                await self._failed(auth, request)
                continue
            outcome.principal = next(iter(verified.values()))
            outcome.principals = verified
            return outcome
        return outcome

    async def _alternative(
        self,
        auth: Authentication,
        request: Request,
        alternative: Alternative,
        cache: dict[str, Principal | None],
        outcome: _Outcome,
    ) -> dict[str, Principal] | None:
        """Every scheme of one AND-ed alternative, verified: scheme name → principal, or
        None when one is missing, rejected, unavailable or short of scopes."""
        verified: dict[str, Principal] = {}
        for name, scopes in alternative:
            scheme = auth.schemes.get(name)
            if scheme is None or name not in auth.implemented:
                outcome.unavailable.append(name)
                return None
            if name not in cache:
                try:
                    credential = scheme.credential(request)
                except _Malformed:
                    credential = ()  # present and unreadable: rejected below
                if credential is None:
                    return None
                outcome.presented = True
                await self._before_verifying(auth, request, scheme, outcome)
                try:
                    principal = (
                        await auth.verify(scheme, credential, scopes, request)
                        if credential
                        else None
                    )
                except NotImplementedError:
                    outcome.unavailable.append(name)
                    return None
                cache[name] = principal
                if principal is None:
                    outcome.rejected.append(scheme)
                    await self._failed(auth, request)
            principal = cache[name]
            if principal is None:
                return None
            if not set(scopes) <= principal.scopes:
                # short of scopes: a 403 where the operation is secured; anonymous on a
                # public operation (the principal is not one this alternative vouches for)
                outcome.insufficient.append((scheme, scopes))
                return None
            verified[name] = principal
        return verified

    @staticmethod
    async def _failed(auth: Authentication, request: Request) -> None:
        if auth.failures is not None:
            await auth.failures.record(client_ip(request))

    @staticmethod
    async def _before_verifying(
        auth: Authentication, request: Request, scheme: AuthScheme, outcome: _Outcome
    ) -> None:
        """Refuse before any verifier runs: a cookie credential on a cross-site unsafe
        request (403), a client past its limit of rejected credentials (429)."""
        if scheme.location == "cookie" and scheme.kind == "apiKey":
            refuse_cross_site(request, auth.allowed_origins)
        if outcome.limit_checked or auth.failures is None:
            return
        outcome.limit_checked = True
        retry = await auth.failures.retry_after(client_ip(request))
        if retry is not None:
            raise ProblemDetail(
                429,
                "rate-limited",
                "Too many requests",
                f"Too many rejected credentials from this address. Retry after {retry}s.",
                headers={"Retry-After": str(retry)},
            )

    def _unauthorized(
        self, auth: Authentication, alternatives: Sequence[Alternative], outcome: _Outcome
    ) -> ProblemDetail:
        rejected = {s.name for s in outcome.rejected}
        challenges: dict[str, None] = {}
        ways: list[str] = []
        for alternative in alternatives:
            parts = []
            for name, scopes in alternative:
                scheme = auth.schemes.get(name)
                if scheme is None or name not in auth.implemented:
                    continue
                error = "invalid_token" if name in rejected and scheme.kind == "bearer" else ""
                challenges[scheme.challenge(auth.realm, error=error, scopes=scopes)] = None
                parts.append(scheme.describe())
            if parts:
                ways.append(" and ".join(parts))
        if rejected:
            detail = "The credentials were not accepted."
        else:
            detail = "This operation needs " + " or ".join(dict.fromkeys(ways)) + "."
        return ProblemDetail(
            401,
            "unauthorized",
            "Unauthorized",
            detail,
            headers={"WWW-Authenticate": ", ".join(challenges)} if challenges else {},
        )

    @staticmethod
    def _forbidden(auth: Authentication, outcome: _Outcome) -> ProblemDetail:
        scheme, scopes = outcome.insufficient[0]
        challenge = scheme.challenge(auth.realm, error="insufficient_scope", scopes=scopes)
        return ProblemDetail(
            403,
            "insufficient-scope",
            "Forbidden",
            "The credentials lack a scope this operation requires: " + " ".join(scopes) + ".",
            headers={"WWW-Authenticate": challenge},
            extensions={"scopes": list(scopes)},
        )

    @staticmethod
    def _not_implemented(auth: Authentication, outcome: _Outcome) -> ProblemDetail:
        names = list(dict.fromkeys(outcome.unavailable))
        methods = [auth.schemes[n].method for n in names if n in auth.schemes]
        detail = (
            f"No verifier for the security scheme{'s' if len(names) > 1 else ''} "
            + ", ".join(repr(n) for n in names)
            + (
                f": implement {', '.join(methods)} in {auth.verifier_file}."
                if methods
                else " (not in components/securitySchemes, or of a type this server cannot check)."
            )
        )
        return ProblemDetail(501, "authentication-not-implemented", "Not implemented", detail)


# --- OpenAPI -------------------------------------------------------------------------------


def _fastapi_model(scheme: AuthScheme) -> dict[str, Any]:
    """The scheme's OpenAPI object, as FastAPI's own security classes describe it."""
    from fastapi.openapi.models import OAuthFlows
    from fastapi.security import (
        APIKeyCookie,
        APIKeyHeader,
        APIKeyQuery,
        HTTPBasic,
        HTTPBearer,
        OAuth2,
        OpenIdConnect,
    )

    description = scheme.description or None
    model: Any
    if scheme.type == "oauth2":
        flows = OAuthFlows.model_validate(dict(scheme.flows))
        model = OAuth2(flows=flows, scheme_name=scheme.name, description=description).model
    elif scheme.type == "openIdConnect":
        model = OpenIdConnect(
            openIdConnectUrl=scheme.open_id_connect_url,
            scheme_name=scheme.name,
            description=description,
        ).model
    elif scheme.kind == "basic":
        model = HTTPBasic(scheme_name=scheme.name, description=description).model
    elif scheme.kind == "bearer":
        model = HTTPBearer(
            bearerFormat=scheme.bearer_format or None,
            scheme_name=scheme.name,
            description=description,
        ).model
    elif scheme.kind == "apiKey":
        cls = {"header": APIKeyHeader, "query": APIKeyQuery, "cookie": APIKeyCookie}[
            scheme.location
        ]
        model = cls(name=scheme.parameter, scheme_name=scheme.name, description=description).model
    else:
        return {"type": scheme.type, **({"description": description} if description else {})}
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def openapi_security(schemes: Iterable[AuthScheme]) -> dict[str, Any]:
    """`components.securitySchemes` for the app's `/openapi.json`."""
    return {s.name: _fastapi_model(s) for s in schemes}


def install_openapi_security(app: FastAPI, schemes: Sequence[AuthScheme]) -> None:
    """Add the schemes to `/openapi.json` (each route's `security` comes from its
    `AuthRequirement` through `openapi_extra`), so `/docs` offers to authorize."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = with_room(build)  # models nested deeper than the default recursion limit
        if schemes:
            components = schema.setdefault("components", {})
            components.setdefault("securitySchemes", {}).update(openapi_security(schemes))
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
