"""The client plan's security part: the constructor's credential arguments and what each
operation requires.

- Every security scheme the client can send gets one keyword argument of `Client` and
  `AsyncClient`: the snake_case of the scheme's name, never one of the constructor's own
  arguments nor a name its body uses (`_2`, … in scheme-name order). Its type follows the
  scheme: a token or a token provider (http bearer, openIdConnect, oauth2; plus
  `ClientCredentials` when the oauth2 scheme declares the clientCredentials flow),
  `BasicAuth | tuple[str, str]` (http basic), a key `str` (apiKey in header, query or
  cookie). Schemes the client cannot send itself (mutualTLS, other http schemes) get no
  argument: they are configured on the `http_client` and never block a call.
- Every operation whose spec (or API) declares `security` passes a `Security(...)`
  expression to the runtime, which picks the credentials of each call (`_runtime/_auth.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.ir import Api, SecurityScheme, SecuritySpec
from generator.render.escape import py_string
from generator.render.names import NameAllocator, snake_case

# Names the generated constructor's signature and body use besides its own arguments.
_CONSTRUCTOR_BODY_NAMES = ("self", "httpx", "asyncio", "time", "random", "models", "pydantic")


@dataclass(frozen=True)
class AuthPlan:
    scheme: str  # the security scheme's name
    argument: str  # the constructor's keyword ("" for external schemes)
    kind: str  # bearer, oauth2, basic, apiKey, external
    location: str  # apiKey: header, query, cookie
    parameter: str  # apiKey: the header, query parameter or cookie name
    token_url: str  # oauth2: the clientCredentials flow's tokenUrl ("" when not declared)
    sync_type: str  # the argument's annotation on Client
    async_type: str  # and on AsyncClient
    declared: str  # how the spec declares it, for docs ("http bearer", "oauth2 (…)", …)
    description: str
    scopes: tuple[str, ...]  # oauth2: every scope its flows name
    expression: str  # the runtime `Scheme(...)` that describes it


@dataclass(frozen=True)
class SecurityPlan:
    expression: str  # the runtime `Security(...)` passed with each request
    summary: str  # Markdown for the README: what to pass for this operation


def _kind(s: SecurityScheme) -> str:
    if s.kind == "bearer":
        return "oauth2" if s.type == "oauth2" else "bearer"
    return s.kind or "external"


def _client_credentials_url(s: SecurityScheme) -> str:
    flow = next((f for f in s.flows if f.kind == "clientCredentials"), None)
    return flow.token_url if flow is not None else ""


def _declared(s: SecurityScheme) -> str:
    if s.type == "http":
        return f"http {s.scheme}".strip()
    if s.type == "apiKey":
        return f"apiKey in {s.location} `{s.parameter_name}`"
    if s.type == "oauth2":
        return "oauth2 (" + ", ".join(f.kind for f in s.flows) + ")" if s.flows else "oauth2"
    return s.type or "unknown"


def _types(kind: str, client_credentials: bool) -> tuple[str, str]:
    if kind == "basic":
        both = "BasicAuth | tuple[str, str] | None"
        return both, both
    if kind == "apiKey":
        return "str | None", "str | None"
    extra = " | ClientCredentials" if client_credentials else ""
    return f"str | TokenProvider{extra} | None", f"str | AsyncTokenProvider{extra} | None"


def _scheme_expression(
    name: str, kind: str, argument: str, location: str, parameter: str, token_url: str
) -> str:
    args = [py_string(name), py_string(kind)]
    if argument:
        args.append(f"argument={py_string(argument)}")
    if location:
        args.append(f"location={py_string(location)}")
    if parameter:
        args.append(f"parameter={py_string(parameter)}")
    if token_url:
        args.append(f"token_url={py_string(token_url)}")
    return f"Scheme({', '.join(args)})"


def plan_auth(api: Api, reserved: Iterable[str]) -> list[AuthPlan]:
    """One plan per security scheme, in scheme-name order (the spec's components order)."""
    allocator = NameAllocator((*reserved, *_CONSTRUCTOR_BODY_NAMES))
    plans: list[AuthPlan] = []
    for s in api.security_schemes:
        kind = _kind(s)
        argument = ""
        if kind != "external":
            argument = allocator.allocate(s.name, snake_case(s.name, fallback="credential"))
        token_url = _client_credentials_url(s) if kind == "oauth2" else ""
        location = s.location if kind == "apiKey" else ""
        parameter = s.parameter_name if kind == "apiKey" else ""
        sync_type, async_type = _types(kind, bool(token_url))
        scopes = sorted({scope for flow in s.flows for scope in flow.scopes})
        plans.append(
            AuthPlan(
                scheme=s.name,
                argument=argument,
                kind=kind,
                location=location,
                parameter=parameter,
                token_url=token_url,
                sync_type=sync_type,
                async_type=async_type,
                declared=_declared(s),
                description=s.description,
                scopes=tuple(scopes),
                expression=_scheme_expression(
                    s.name, kind, argument, location, parameter, token_url
                ),
            )
        )
    return plans


def plan_security(spec: SecuritySpec | None, auth: Sequence[AuthPlan]) -> SecurityPlan | None:
    """What one operation passes to the runtime (None: it declares no security)."""
    if spec is None:
        return None
    alternatives = [
        "{"
        + ", ".join(
            f"{py_string(name)}: {_tuple(py_string(s) for s in scopes)}"
            for name, scopes in alternative
        )
        + "}"
        for alternative in spec.alternatives
    ]
    public = ", public=True" if spec.public else ""
    expression = f"Security({_tuple(alternatives)}{public})"
    return SecurityPlan(expression=expression, summary=_summary(spec, auth))


def _tuple(items: Iterable[str]) -> str:
    """A tuple display of Python expressions, as the formatter writes it."""
    listed = list(items)
    if len(listed) == 1:
        return f"({listed[0]},)"
    return "(" + ", ".join(listed) + ")"


def _summary(spec: SecuritySpec, auth: Sequence[AuthPlan]) -> str:
    by_scheme = {a.scheme: a for a in auth}
    ways = []
    for alternative in spec.alternatives:
        parts = []
        for name, scopes in alternative:
            plan = by_scheme.get(name)
            if plan is None:
                parts.append(f"scheme `{name}` (not defined in the spec)")
                continue
            part = f"`{plan.argument}=`" if plan.argument else f"{plan.declared} (`{name}`)"
            if scopes:
                label = "scope" if len(scopes) == 1 else "scopes"
                part += f" ({label} {', '.join(f'`{s}`' for s in scopes)})"
            parts.append(part)
        ways.append(" and ".join(parts))
    if not ways:
        return "Public: sends no credentials."
    needs = " or ".join(ways)
    if spec.public:
        return f"Public; sends {needs} when the client has it, so the server knows who calls."
    return f"Credentials: {needs}."


def example_arguments(api: Api, auth: Sequence[AuthPlan]) -> str:
    """Constructor arguments for the README's first example: the API's default requirement
    (its first alternative), else the first scheme the client can send."""
    by_scheme = {a.scheme: a for a in auth if a.argument}
    names = next((list(r) for r in api.security if r), [])
    chosen = [by_scheme[n] for n in names if n in by_scheme] or list(by_scheme.values())[:1]
    return ", ".join(f"{a.argument}={_example(a)}" for a in chosen)


def _example(plan: AuthPlan) -> str:
    return '("username", "password")' if plan.kind == "basic" else '"..."'
