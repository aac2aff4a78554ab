"""Credentials: which ones each call sends, and how they are sent.

Public API:

- `Scheme(name, kind, *, argument="", location="", parameter="", token_url="")`: one of the
  spec's `securitySchemes`, as generated code declares it. `kind`:
  - "bearer": `Authorization: Bearer <token>` (http bearer, openIdConnect);
  - "oauth2": the same, and the token may also come from the client-credentials grant
    (`token_url`: the spec's `clientCredentials.tokenUrl`, "" when it declares none);
  - "basic": `Authorization: Basic <base64(username:password)>`;
  - "apiKey": the key in the header, query parameter or cookie `parameter` (`location`);
  - "external": what this client does not send itself (mutualTLS, other http schemes):
    configure it on the `http_client` you pass; it never blocks a call.
  `argument` is the client constructor's keyword for it (error messages name it).
- `Security(alternatives=(), *, public=False)`: what one operation requires, as the spec
  says: `alternatives` is an OR of requirement objects, each mapping scheme names to the
  scopes it needs (an AND); `public` when an empty requirement (or `security: []`) makes
  credentials optional.
- Credential values: a token string; a token provider (`TokenProvider`: a callable returning
  a token, called for each request, so it can rotate tokens; `AsyncTokenProvider` may also
  return an awaitable); `BasicAuth(username, password)` or a `(username, password)` tuple;
  `ClientCredentials(client_id, client_secret, *, token_url=None, scopes=(),
  auth_method="client_secret_basic", extra_params={})` for the OAuth2 client-credentials
  grant. Reprs of these and of every holder mask the secret. An empty string counts as not
  given.
- `Credentials(schemes, given, *, base_url, clock)`: what one client holds.
  - `.select(security, what) -> Selection`: the credentials of the first alternative this
    client holds everything for (external schemes count as held, but an alternative of
    external schemes only comes after any that sends something); else nothing when the
    operation is public, an alternative needs external schemes only, or `security` is None
    (the operation declares no security); else raises `MissingCredentials` naming the
    constructor arguments (and schemes) that would satisfy it. `what` names the call.
  - `.apply(selection, client) -> Applied` / `await .apply_async(selection, client)`: the
    headers, query parameters and cookies of one attempt. An OAuth2 client-credentials token
    is fetched with `client` (form POST to the token URL, a relative one resolved against
    `base_url`; the client authenticates by HTTP basic or in the body) for the scopes the
    operation needs plus `ClientCredentials.scopes`, cached per scope set until
    `EXPIRY_MARGIN` (at most a tenth of its lifetime) before it expires, and fetched once
    however many threads (a lock) or tasks (an asyncio lock) need it at the same moment.
  - `.invalidate(selection, applied) -> bool`: after a 401, forget the managed tokens that
    attempt sent (unless another call already replaced them); True when a new attempt may
    get a different token.
- `redact_query_keys(names)`: masks these query parameters' values in httpx's request log
  lines (httpx logs full URLs at INFO); `Credentials` registers its query API keys;
  `redacted_query_keys()` lists them (the client's own log lines mask them too).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, NamedTuple, cast
from urllib.parse import quote

import httpx

from ._errors import MissingCredentials, TokenRequestFailed

log = logging.getLogger(__name__)

TokenProvider = Callable[[], str]
AsyncTokenProvider = Callable[[], str | Awaitable[str]]
SchemeKind = Literal["bearer", "oauth2", "basic", "apiKey", "external"]
ApiKeyLocation = Literal["header", "query", "cookie", ""]

# A cached token is renewed this long (at most a tenth of its lifetime) before it expires.
EXPIRY_MARGIN = 30.0
REDACTED = "REDACTED"
# RFC 6265 cookie-octet: printable ASCII but space, `"`, `,`, `;` and `\`.
_COOKIE_OCTETS = frozenset(chr(c) for c in range(0x21, 0x7F)) - set('",;\\')


@dataclass(frozen=True, slots=True)
class Scheme:
    """One security scheme of the spec (see the module docstring)."""

    name: str
    kind: SchemeKind
    _: KW_ONLY
    argument: str = ""
    location: ApiKeyLocation = ""
    parameter: str = ""
    token_url: str = ""


@dataclass(frozen=True, slots=True)
class Security:
    """What one operation requires: an OR of requirement objects (scheme → scopes, AND-ed)."""

    alternatives: tuple[Mapping[str, tuple[str, ...]], ...] = ()
    _: KW_ONLY
    public: bool = False


class BasicAuth(NamedTuple):
    """HTTP basic credentials; the password never shows in a repr."""

    username: str
    password: str

    def __repr__(self) -> str:
        return f"BasicAuth(username={self.username!r}, password='***')"


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """The OAuth2 client-credentials grant. `token_url` overrides the spec's; `scopes` are
    requested on top of those each operation needs; `auth_method` sends the client's
    credentials as HTTP basic (RFC 6749 §2.3.1) or in the form body; `extra_params` go into
    the token request's form (e.g. an `audience`)."""

    client_id: str
    client_secret: str
    _: KW_ONLY
    token_url: str | None = None
    scopes: Sequence[str] = ()
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    extra_params: Mapping[str, str] = field(default_factory=dict[str, str])

    def __repr__(self) -> str:
        return (
            f"ClientCredentials(client_id={self.client_id!r}, client_secret='***', "
            f"token_url={self.token_url!r}, scopes={tuple(self.scopes)!r})"
        )


Credential = str | BasicAuth | tuple[str, str] | ClientCredentials | AsyncTokenProvider


@dataclass(frozen=True, slots=True)
class Need:
    """One scheme of the chosen alternative, with the scopes the operation needs of it."""

    scheme: Scheme
    scopes: tuple[str, ...] = ()


Selection = tuple[Need, ...]


class Applied:
    """What one attempt carries: headers, query parameters, cookies, and the managed tokens
    it sent (to know, after a 401, which ones to forget). Its repr shows names only."""

    __slots__ = ("cookies", "headers", "params", "tokens")

    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self.params: list[tuple[str, str]] = []
        self.cookies: list[tuple[str, str]] = []
        self.tokens: dict[str, str] = {}

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies)

    def __repr__(self) -> str:
        names = [*self.headers, *(n for n, _ in self.params), *(n for n, _ in self.cookies)]
        return f"<Applied {', '.join(names) or 'nothing'}>"


class _Secret:
    """A string that never shows itself in a repr."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "'***'"


def _check_value(value: str, argument: str, what: str) -> str:
    """`value` as it may go into a header: printable ASCII (the message never shows it)."""
    if not all(0x20 <= ord(c) < 0x7F for c in value):
        raise ValueError(f"the {what} for `{argument}=` contains a control or non-ASCII character")
    return value


class _TokenSource:
    """Where bearer tokens come from: a fixed token, a provider, or the client-credentials
    grant. Only the last one is managed (cached, and forgotten after a 401)."""

    managed = False

    def sync(self, scopes: tuple[str, ...], client: httpx.Client) -> str:
        raise NotImplementedError

    async def asynchronous(self, scopes: tuple[str, ...], client: httpx.AsyncClient) -> str:
        raise NotImplementedError

    def invalidate(self, scopes: tuple[str, ...], token: str) -> None:
        return None


class _FixedToken(_TokenSource):
    def __init__(self, token: str, argument: str) -> None:
        self._token = _Secret(_check_value(token, argument, "token"))

    def sync(self, scopes: tuple[str, ...], client: httpx.Client) -> str:
        return self._token.value

    async def asynchronous(self, scopes: tuple[str, ...], client: httpx.AsyncClient) -> str:
        return self._token.value

    def __repr__(self) -> str:
        return "<token '***'>"


class _ProvidedToken(_TokenSource):
    def __init__(self, provider: AsyncTokenProvider, argument: str) -> None:
        self._provider = provider
        self._argument = argument

    def _checked(self, token: object) -> str:
        if not isinstance(token, str) or not token:
            raise TypeError(
                f"the token provider given as `{self._argument}=` returned "
                f"{type(token).__name__}, not a non-empty str"
            )
        return _check_value(token, self._argument, "token")

    def sync(self, scopes: tuple[str, ...], client: httpx.Client) -> str:
        token = self._provider()
        if inspect.isawaitable(token):
            if inspect.iscoroutine(token):
                token.close()  # never awaited: close it rather than warn
            raise TypeError(
                f"the token provider given as `{self._argument}=` is asynchronous: "
                "use it with the AsyncClient"
            )
        return self._checked(token)

    async def asynchronous(self, scopes: tuple[str, ...], client: httpx.AsyncClient) -> str:
        token = self._provider()
        if inspect.isawaitable(token):
            token = await token
        return self._checked(token)

    def __repr__(self) -> str:
        return f"<token provider {self._provider!r}>"


@dataclass(slots=True)
class _Token:
    value: str = field(repr=False)
    expires_at: float | None  # None: until the server rejects it


class _ClientCredentialsToken(_TokenSource):
    """OAuth2 client credentials: one cached token per scope set, one fetch at a time."""

    managed = True

    def __init__(
        self,
        grant: ClientCredentials,
        token_url: str,
        *,
        argument: str,
        clock: Callable[[], float],
    ) -> None:
        self._grant = grant
        self._secret = _Secret(grant.client_secret)
        self.token_url = token_url
        self._argument = argument
        self._clock = clock
        self._tokens: dict[frozenset[str], _Token] = {}
        self._lock = threading.Lock()
        self._async_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"<client credentials {self._grant.client_id!r} at {self.token_url!r}>"

    def _key(self, scopes: tuple[str, ...]) -> frozenset[str]:
        return frozenset(scopes) | frozenset(self._grant.scopes)

    def _cached(self, key: frozenset[str]) -> str | None:
        token = self._tokens.get(key)
        if token is None:
            return None
        if token.expires_at is not None and self._clock() >= token.expires_at:
            return None
        return token.value

    def sync(self, scopes: tuple[str, ...], client: httpx.Client) -> str:
        key = self._key(scopes)
        token = self._cached(key)
        if token is not None:
            return token
        with self._lock:
            token = self._cached(key)  # another thread may have fetched it meanwhile
            if token is None:
                request = self._request(client, key)
                try:
                    response = client.send(request)
                except httpx.TransportError as exc:
                    raise self._unreachable(exc) from exc
                token = self._store(key, response)
        return token

    async def asynchronous(self, scopes: tuple[str, ...], client: httpx.AsyncClient) -> str:
        key = self._key(scopes)
        token = self._cached(key)
        if token is not None:
            return token
        async with self._async_lock:
            token = self._cached(key)  # another task may have fetched it meanwhile
            if token is None:
                request = self._request(client, key)
                try:
                    response = await client.send(request)
                except httpx.TransportError as exc:
                    raise self._unreachable(exc) from exc
                token = self._store(key, response)
        return token

    def invalidate(self, scopes: tuple[str, ...], token: str) -> None:
        key = self._key(scopes)
        with self._lock:
            cached = self._tokens.get(key)
            if cached is not None and cached.value == token:
                del self._tokens[key]

    def _request(
        self, client: httpx.Client | httpx.AsyncClient, key: frozenset[str]
    ) -> httpx.Request:
        grant = self._grant
        form = {**grant.extra_params, "grant_type": "client_credentials"}
        if key:
            form["scope"] = " ".join(sorted(key))
        headers = {"Accept": "application/json"}
        if grant.auth_method == "client_secret_post":
            form["client_id"] = grant.client_id
            form["client_secret"] = self._secret.value
        else:
            # RFC 6749 §2.3.1: each part form-urlencoded before the basic encoding
            pair = f"{quote(grant.client_id, safe='')}:{quote(self._secret.value, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        return client.build_request("POST", self.token_url, data=form, headers=headers)

    def _unreachable(self, exc: httpx.TransportError) -> TokenRequestFailed:
        return TokenRequestFailed(
            f"could not reach the token endpoint {self.token_url} for `{self._argument}=`: "
            f"{type(exc).__name__}"
        )

    def _store(self, key: frozenset[str], response: httpx.Response) -> str:
        body = _json_object(response)
        if response.status_code != 200:
            error = body.get("error")
            code = error if isinstance(error, str) else None
            raise TokenRequestFailed(
                self._scrub(
                    f"the token endpoint {self.token_url} refused the client credentials of "
                    f"`{self._argument}=`: HTTP {response.status_code}"
                    + (f" {code}" if code else "")
                ),
                status_code=response.status_code,
                error=code,
            )
        token = body.get("access_token")
        token_type = body.get("token_type", "bearer")
        if not isinstance(token, str) or not token:
            raise TokenRequestFailed(
                f"the token endpoint {self.token_url} answered without an access_token",
                status_code=response.status_code,
            )
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise TokenRequestFailed(
                f"the token endpoint {self.token_url} issued a token of a type this client "
                "cannot send (not bearer)",
                status_code=response.status_code,
            )
        _check_value(token, self._argument, "token")
        lifetime = _seconds(body.get("expires_in"))
        expires_at = None
        if lifetime is not None:
            expires_at = self._clock() + lifetime - min(EXPIRY_MARGIN, lifetime / 10)
        self._tokens[key] = _Token(token, expires_at)
        log.debug(
            "fetched an OAuth2 token for `%s=` (scopes: %s; expires in %s s)",
            self._argument,
            " ".join(sorted(key)) or "none",
            "?" if lifetime is None else f"{lifetime:g}",
        )
        return token

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret.value, "***") if self._secret.value else text


def _json_object(response: httpx.Response) -> Mapping[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return cast("Mapping[str, Any]", body) if isinstance(body, Mapping) else {}


def _seconds(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, int | float) and value > 0:
        return float(value)
    return None


def _basic(value: object, argument: str) -> _Secret:
    pair_given: tuple[object, ...] = (
        cast("tuple[object, ...]", value) if isinstance(value, tuple) else ()
    )
    username, password = pair_given if len(pair_given) == 2 else (None, None)
    if not (isinstance(username, str) and isinstance(password, str)):
        raise TypeError(f"`{argument}=` takes BasicAuth(username, password) or a (str, str) tuple")
    if ":" in username:
        raise ValueError(f"the username for `{argument}=` cannot contain ':' (RFC 7617)")
    pair = f"{username}:{password}".encode()
    return _Secret("Basic " + base64.b64encode(pair).decode("ascii"))


def _api_key(value: object, scheme: Scheme) -> _Secret:
    if not isinstance(value, str):
        raise TypeError(f"`{scheme.argument}=` takes the API key as a str")
    _check_value(value, scheme.argument, "API key")
    if scheme.location == "cookie" and not set(value) <= _COOKIE_OCTETS:
        raise ValueError(
            f"the API key for `{scheme.argument}=` cannot be sent in a cookie: it contains "
            "a space, a quote, a comma, a semicolon, a backslash or a non-ASCII character"
        )
    return _Secret(value)


def _token_source(
    value: object, scheme: Scheme, base_url: str, clock: Callable[[], float]
) -> _TokenSource:
    if isinstance(value, str):
        return _FixedToken(value, scheme.argument)
    if isinstance(value, ClientCredentials):
        if scheme.kind != "oauth2":
            raise TypeError(f"`{scheme.argument}=` is not an OAuth2 scheme: pass a token")
        url = value.token_url or scheme.token_url
        if not url:
            raise ValueError(
                f"the spec declares no client-credentials token URL for `{scheme.argument}=`: "
                "pass ClientCredentials(..., token_url=...)"
            )
        # A relative token URL is relative to the API's base URL (OpenAPI 3.1).
        token_url = str(httpx.URL(base_url.rstrip("/") + "/").join(url))
        return _ClientCredentialsToken(value, token_url, argument=scheme.argument, clock=clock)
    if callable(value):
        # what it returns is checked on each call (`_checked`)
        return _ProvidedToken(cast(AsyncTokenProvider, value), scheme.argument)
    raise TypeError(f"`{scheme.argument}=` takes a token (str) or a callable returning one")


_Held = _TokenSource | _Secret


class Credentials:
    """What one client holds, and the choice of what each call sends (module docstring)."""

    def __init__(
        self,
        schemes: Sequence[Scheme],
        given: Mapping[str, Credential | None],
        *,
        base_url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._schemes = {s.name: s for s in schemes}
        self._held: dict[str, _Held] = {}
        for scheme in schemes:
            value = given.get(scheme.name)
            if value is None or value == "" or scheme.kind == "external":
                continue
            if scheme.kind == "basic":
                self._held[scheme.name] = _basic(value, scheme.argument)
            elif scheme.kind == "apiKey":
                self._held[scheme.name] = _api_key(value, scheme)
            else:
                self._held[scheme.name] = _token_source(value, scheme, base_url, clock)
        unknown = sorted(set(given) - set(self._schemes))
        if unknown:
            raise TypeError(f"no security scheme named {', '.join(map(repr, unknown))}")
        redact_query_keys(
            s.parameter
            for s in schemes
            if s.kind == "apiKey" and s.location == "query" and s.name in self._held
        )

    def __repr__(self) -> str:
        return f"<Credentials {', '.join(self._held) or 'none'}>"

    @property
    def held(self) -> tuple[str, ...]:
        """The names of the schemes this client has credentials for."""
        return tuple(self._held)

    def header_names(self) -> frozenset[str]:
        """Every request header that may carry a credential (lower case): the standard ones
        and each API key header of the spec, for stripping on a redirect to another origin."""
        keys = {
            s.parameter.lower()
            for s in self._schemes.values()
            if s.kind == "apiKey" and s.location == "header"
        }
        return frozenset({"authorization", "proxy-authorization", "cookie", *keys})

    def _holds(self, name: str) -> bool:
        scheme = self._schemes.get(name)
        return scheme is not None and (scheme.kind == "external" or name in self._held)

    def select(self, security: Security | None, what: str) -> Selection:
        """The credentials to send for one call (see the module docstring)."""
        if security is None:
            return ()
        fallback = security.public
        for alternative in security.alternatives:
            if not all(self._holds(name) for name in alternative):
                continue
            needs = tuple(
                Need(self._schemes[name], tuple(scopes)) for name, scopes in alternative.items()
            )
            if any(n.scheme.kind != "external" for n in needs):
                return needs
            fallback = True  # sends nothing of its own: only if nothing better is held
        if fallback:
            return ()
        raise self._missing(security, what)

    def _missing(self, security: Security, what: str) -> MissingCredentials:
        ways: list[tuple[tuple[str, str], ...]] = []
        undefined: dict[str, None] = {}
        for alternative in security.alternatives:
            missing = [n for n in alternative if n not in self._schemes]
            undefined.update(dict.fromkeys(missing))
            if not missing:
                ways.append(
                    tuple(
                        (self._schemes[n].argument, n)
                        for n in alternative
                        if self._schemes[n].kind != "external"
                    )
                )
        return MissingCredentials(what, ways, undefined=tuple(undefined))

    def apply(self, selection: Selection, client: httpx.Client) -> Applied:
        """Headers, query parameters and cookies for one attempt (synchronous client)."""
        applied = Applied()
        for need in selection:
            held = self._held.get(need.scheme.name)
            if isinstance(held, _TokenSource):
                token = held.sync(need.scopes, client)
                self._place(applied, need.scheme, token, managed=held.managed)
            elif held is not None:
                self._place(applied, need.scheme, held.value)
        return applied

    async def apply_async(self, selection: Selection, client: httpx.AsyncClient) -> Applied:
        """Headers, query parameters and cookies for one attempt (asynchronous client)."""
        applied = Applied()
        for need in selection:
            held = self._held.get(need.scheme.name)
            if isinstance(held, _TokenSource):
                token = await held.asynchronous(need.scopes, client)
                self._place(applied, need.scheme, token, managed=held.managed)
            elif held is not None:
                self._place(applied, need.scheme, held.value)
        return applied

    @staticmethod
    def _place(applied: Applied, scheme: Scheme, value: str, *, managed: bool = False) -> None:
        # Two schemes of one requirement that both use `Authorization` cannot both be sent:
        # the first one is.
        if scheme.kind in ("bearer", "oauth2"):
            applied.headers.setdefault("Authorization", "Bearer " + value)
            if managed:
                applied.tokens[scheme.name] = value
        elif scheme.kind == "basic":
            applied.headers.setdefault("Authorization", value)
        elif scheme.location == "query":
            applied.params.append((scheme.parameter, value))
        elif scheme.location == "cookie":
            applied.cookies.append((scheme.parameter, value))
        else:
            applied.headers.setdefault(scheme.parameter, value)

    def invalidate(self, selection: Selection, applied: Applied) -> bool:
        """After a 401: forget the managed tokens `applied` sent. True when there were any
        (one more attempt gets a fresh token)."""
        refreshable = False
        for need in selection:
            held = self._held.get(need.scheme.name)
            token = applied.tokens.get(need.scheme.name)
            if isinstance(held, _TokenSource) and held.managed and token is not None:
                held.invalidate(need.scopes, token)
                refreshable = True
        return refreshable


class _RedactQueryKeys(logging.Filter):
    """Masks the values of API-key query parameters in the URLs httpx logs."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.names and isinstance(record.args, tuple):
            record.args = tuple(
                self._redact(arg) if isinstance(arg, httpx.URL) else arg for arg in record.args
            )
        return True

    def _redact(self, url: httpx.URL) -> httpx.URL:
        params = url.params
        if not any(name in params for name in self.names):
            return url
        return url.copy_with(
            params=[(k, REDACTED if k in self.names else v) for k, v in params.multi_items()]
        )


_REDACT = _RedactQueryKeys()


def redacted_query_keys() -> frozenset[str]:
    """The query parameters `redact_query_keys` was given so far."""
    return frozenset(_REDACT.names)


def redact_query_keys(names: Iterable[str]) -> None:
    """Mask these query parameters' values in httpx's log lines, from now on."""
    new = set(names) - _REDACT.names
    if not new:
        return
    _REDACT.names.update(new)
    logger = logging.getLogger("httpx")
    if _REDACT not in logger.filters:
        logger.addFilter(_REDACT)
