"""Security: who may call an operation (`security` / `components/securitySchemes`).

The first pattern: every other one is keyed by the principal this one verifies. Detection
resolves OpenAPI's rules once, so the server and the client read the same answer: the
operation's own `security` replaces the API's, a list of requirement objects is an OR, the
schemes inside one object are an AND, and an empty object (or an empty list) makes the
operation public.
"""

from __future__ import annotations

from generator.ir import Api, Operation, SecurityRequirement, SecuritySpec


def detect(op: Operation, api: Api) -> SecuritySpec | None:
    """None when neither the operation nor the API says anything about security."""
    own = op.security is not None
    requirements: tuple[SecurityRequirement, ...] = (
        op.security if op.security is not None else api.security
    )
    if not own and not api.security:
        return None
    known = {s.name for s in api.security_schemes}
    alternatives = tuple(
        tuple((name, tuple(scopes)) for name, scopes in requirement.items())
        for requirement in requirements
    )
    public = not alternatives or any(not alternative for alternative in alternatives)
    unknown = tuple(dict.fromkeys(n for alt in alternatives for n, _ in alt if n not in known))
    where = op.where.child("security") if own else api.where.child("security")
    return SecuritySpec(
        alternatives=tuple(a for a in alternatives if a),
        public=public,
        own=own,
        unknown=unknown,
        where=where,
    )


RULES = ()
