"""Full OpenAPI schema validation (openapi-spec-validator): every error, each with its
location. A separate stage because it is slow (2.2 s on the GitHub spec); a clean result is
cached by content hash so regenerating does not pay it again."""

from __future__ import annotations

from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.ir import Where
from generator.spec.load import cache_get, cache_put
from generator.spec.refs import Resolver
from generator.spec.sourcemap import escape

_CACHE_KIND = "valid1"
MAX_REPORTED = 50


def validate(resolver: Resolver) -> None:
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

    root = resolver.root
    single_file = len(resolver.documents) == 1
    if single_file and cache_get(_CACHE_KIND, root.digest):
        return
    version = str(root.data.get("openapi", ""))
    validator_class: Any = (
        OpenAPIV30SpecValidator if version.startswith("3.0") else OpenAPIV31SpecValidator
    )
    base_uri = root.path.resolve().as_uri() if root.path is not None else ""
    problems: list[Problem] = []
    try:
        errors = list(validator_class(root.data, base_uri=base_uri).iter_errors())
    except RecursionError:
        raise ApiforgeError(
            Problem("the spec is nested too deeply to validate", file=root.name)
        ) from None
    except Exception as exc:  # the validator's own resolver failing on a broken $ref
        raise ApiforgeError(
            Problem(f"the validator could not read the spec: {exc}", file=root.name),
            "fix the reported $ref, or skip validation with --no-validate",
        ) from None
    for error in errors[:MAX_REPORTED]:
        pointer = "".join("/" + escape(str(token)) for token in error.path)
        problems.append(resolver.problem(error.message[:500], Where(root.name, pointer)))
    if problems:
        more = len(errors) - len(problems)
        hint = "fix these, or skip validation with --no-validate"
        if more > 0:
            hint = f"{more} more not shown; " + hint
        raise ApiforgeError(problems, hint)
    if single_file:
        cache_put(_CACHE_KIND, root.digest, True)
