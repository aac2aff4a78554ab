"""The server plan's security pieces: the verifier interface (one method per security scheme),
the scheme table of the generated `auth.py`, and each operation's requirement guard.

The runtime (templates/server/runtime/security.py) does the checking; this module only turns
the IR's `SecuritySpec` and `SecurityScheme`s into the Python literals the templates write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.ir import Api, Operation, SecurityScheme
from generator.render.escape import py_literal, py_string, py_tuple
from generator.render.names import NameAllocator, snake_case

# VerifierBase's own members: no scheme method may take their names.
_VERIFIER_MEMBERS = ("allow_destination",)
#: The URLs OpenAPI requires of each flow: kept even when the spec wrote them empty (a
#: Swagger 2.0 `authorizationUrl: ""` is common), or `/openapi.json` cannot be built.
_FLOW_URLS_REQUIRED = {
    "implicit": ("authorizationUrl",),
    "authorizationCode": ("authorizationUrl", "tokenUrl"),
    "password": ("tokenUrl",),
    "clientCredentials": ("tokenUrl",),
}

Alternative = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class SchemePlan:
    """One security scheme: the runtime's `AuthScheme(...)` and the verifier method."""

    name: str
    method: str
    kind: str  # bearer, basic, apiKey, "" (cannot be checked by the server)
    parameters: str  # the verifier method's credential parameters, e.g. "token: str"
    how: str  # how a caller sends it, for docs
    literal: str  # the `AuthScheme(...)` expression
    description: str


@dataclass(frozen=True)
class AuthPlan:
    """One operation's requirement: the `AuthRequirement(...)` expression and a summary."""

    literal: str
    openapi: str  # the operation's `security` exactly as the spec declares it, for /openapi.json
    summary: str  # README: "bearerAuth or (apiKeyHeader and basicAuth)", "public"


def _how(scheme: SecurityScheme) -> str:
    if scheme.kind == "bearer":
        what = {"oauth2": "an OAuth2 access token", "openIdConnect": "an OpenID Connect token"}
        return f"`Authorization: Bearer <token>` ({what.get(scheme.type, 'a bearer token')})"
    if scheme.kind == "basic":
        return "`Authorization: Basic <base64 of username:password>`"
    if scheme.kind == "apiKey":
        return f"an API key in the {scheme.location} `{scheme.parameter_name}`"
    return f"{scheme.type or 'an unknown type'}: not checkable by the application (always refused)"


_PARAMETERS = {
    "bearer": "token: str",
    "basic": "username: str, password: str",
    "apiKey": "key: str",
}


def scheme_plans(api: Api) -> list[SchemePlan]:
    allocator = NameAllocator(_VERIFIER_MEMBERS)
    plans = []
    for scheme in sorted(api.security_schemes, key=lambda s: s.name):
        method = allocator.allocate(scheme.name, snake_case(scheme.name, fallback="scheme"))
        args = [
            py_string(scheme.name),
            py_string(scheme.kind),
            py_string(method),
            f"type={py_string(scheme.type)}",
        ]
        if scheme.kind == "apiKey":
            args += [
                f"location={py_string(scheme.location)}",
                f"parameter={py_string(scheme.parameter_name)}",
            ]
        if scheme.description:
            from generator.render.escape import one_line

            args.append(f"description={py_string(one_line(scheme.description, limit=300))}")
        if scheme.bearer_format:
            args.append(f"bearer_format={py_string(scheme.bearer_format)}")
        if scheme.flows:
            flows = {
                flow.kind: {
                    key: value
                    for key, value in (
                        ("authorizationUrl", flow.authorization_url),
                        ("tokenUrl", flow.token_url),
                        ("refreshUrl", flow.refresh_url),
                    )
                    if value or key in _FLOW_URLS_REQUIRED.get(flow.kind, ())
                }
                | {"scopes": {s: "" for s in flow.scopes}}
                for flow in scheme.flows
            }
            args.append(f"flows={py_literal(flows)}")
        if scheme.open_id_connect_url:
            args.append(f"open_id_connect_url={py_string(scheme.open_id_connect_url)}")
        plans.append(
            SchemePlan(
                name=scheme.name,
                method=method,
                kind=scheme.kind,
                parameters=_PARAMETERS.get(scheme.kind, ""),
                how=_how(scheme),
                literal=f"AuthScheme({', '.join(args)})",
                description=scheme.description,
            )
        )
    return plans


def _alternative(alternative: Alternative) -> str:
    """`(("scheme", ("scope", ...)), ...)`: one requirement object as the runtime takes it."""
    return py_tuple(
        [
            py_tuple([py_string(name), py_tuple([py_string(s) for s in scopes])])
            for name, scopes in alternative
        ]
    )


def _summary(alternatives: Sequence[Alternative]) -> str:
    parts = []
    for alternative in alternatives:
        names = [
            name + (f" [{' '.join(scopes)}]" if scopes else "") for name, scopes in alternative
        ]
        text = " and ".join(names)
        parts.append(f"({text})" if len(names) > 1 and len(alternatives) > 1 else text)
    return " or ".join(parts)


def auth_plan(op: Operation, api: Api) -> AuthPlan | None:
    """None when neither the operation nor the API declares security (nothing to check)."""
    spec = op.patterns.security
    if spec is None:
        return None
    declared = op.security if op.security is not None else api.security
    openapi = py_literal([{name: list(scopes) for name, scopes in r.items()} for r in declared])
    if not spec.public:
        alternatives = ", ".join(_alternative(a) for a in spec.alternatives)
        return AuthPlan(f"AuthRequirement({alternatives})", openapi, _summary(spec.alternatives))
    # public: credentials that are present are still verified, against the operation's own
    # alternatives, else the API's default
    optional: tuple[Alternative, ...] = spec.alternatives
    if not optional and spec.own:
        optional = tuple(
            tuple((name, tuple(scopes)) for name, scopes in requirement.items())
            for requirement in api.security
            if requirement
        )
    if not optional:
        return AuthPlan("AuthRequirement(public=True)", openapi, "public")
    listed = py_tuple([_alternative(a) for a in optional])
    literal = f"AuthRequirement(public=True, optional={listed})"
    return AuthPlan(literal, openapi, f"public (verifies {_summary(optional)} when sent)")
