"""Reading a spec: load (YAML/JSON, cached), resolve `$ref`s, validate, build the IR."""

from __future__ import annotations

from dataclasses import dataclass

from generator.errors import ApiforgeError, Problem
from generator.ir import Api
from generator.spec.build import build_api
from generator.spec.load import Document, load_document
from generator.spec.located import remember
from generator.spec.refs import Resolver

SWAGGER_HINT = (
    "apiforge reads OpenAPI 3.0 and 3.1; convert Swagger 2.0 first, "
    "e.g. `npx swagger2openapi spec.yaml -o openapi.yaml`"
)


@dataclass(frozen=True)
class LoadedSpec:
    api: Api
    resolver: Resolver


def check_root(doc: Document) -> None:
    data = doc.data
    if not isinstance(data, dict):
        raise ApiforgeError(
            Problem(
                f"the document is a {type(data).__name__}, not an OpenAPI object",
                file=doc.name,
                line=1,
            ),
            "an OpenAPI document is a mapping that starts with `openapi: 3.1.0`",
        )
    if "swagger" in data:
        raise ApiforgeError(
            Problem(f"this is Swagger {data['swagger']}, not OpenAPI 3", file=doc.name, line=1),
            SWAGGER_HINT,
        )
    version = data.get("openapi")
    if not isinstance(version, str) or not version.startswith(("3.0", "3.1")):
        line, column = doc.locate("/openapi") if "openapi" in data else (1, 1)
        shown = repr(version) if version is not None else "missing"
        raise ApiforgeError(
            Problem(
                f"`openapi` version is {shown}",
                file=doc.name,
                line=line,
                column=column,
                pointer="/openapi",
            ),
            "apiforge reads OpenAPI 3.0.x and 3.1.x documents (`openapi: 3.1.0`)",
        )


def load_spec(source: str, *, validate: bool = False, strict: bool = True) -> LoadedSpec:
    """Read `source` (a path or "-"), optionally validate it, and build the patterned IR.

    Validation errors raise ApiforgeError when `strict`; otherwise they are warnings on the
    "apiforge" logger and the spec is used as it is (`generator.spec.validate.validate`)."""
    from generator.patterns import attach_patterns

    root = load_document(source)
    check_root(root)
    resolver = Resolver(root)
    remember(resolver)  # later warnings (rendering) name lines in these files
    api = build_api(resolver)
    if validate:
        from generator.spec.validate import validate as run_validation

        run_validation(resolver, strict=strict)
    return LoadedSpec(attach_patterns(api), resolver)
