"""Component schemas → Pydantic v2 models, through datamodel-code-generator's public API.

`generate_models(source, class_names=..., header=...)` gives the text of one `models.py`:
Pydantic v2 `BaseModel`s for Python 3.11, `Annotated` constraints, `X | None` unions,
populate-by-name aliases (snake_case fields), `StrEnum` enums with enum-member defaults —
the options chosen so the module is `mypy --strict` clean and needs only pydantic.

Class names are ours, not the library's: `class_names` maps each component schema name to
the identifier the generator picked (see `model_class_names`), and is passed as
`model_name_map`, so templates know every model's name without reading the output.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError, Problem
from generator.render.names import NameAllocator, pascal_case

# `format`s that would need packages beyond pydantic (email-validator): plain strings.
_TYPE_MAPPINGS = ["email=string", "idn-email=string"]


def model_class_names(schema_names: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A stable, unique PascalCase class name for each component schema name (sorted order)."""
    allocator = NameAllocator(reserved, separator="")
    return {
        name: allocator.allocate(name, pascal_case(name, fallback="Model"))
        for name in sorted(schema_names)
    }


def generate_models(
    source: Path | str,
    *,
    class_names: Mapping[str, str] | None = None,
    header: str = "",
) -> str:
    """The models module for the spec at `source` (a path, so relative `$ref`s resolve, or the
    spec's text). Raises ApiforgeError when the library cannot handle the schemas."""
    import datamodel_code_generator as dcg
    from datamodel_code_generator.enums import DataModelType, InputFileType, OpenAPIScope
    from datamodel_code_generator.format import Formatter, PythonVersion

    name_map = {f"#/components/schemas/{k}": v for k, v in sorted((class_names or {}).items())}
    options: dict[str, Any] = {
        "input_file_type": InputFileType.OpenAPI,
        "output_model_type": DataModelType.PydanticV2BaseModel,
        "target_python_version": PythonVersion.PY_311,
        "openapi_scopes": [OpenAPIScope.Schemas],
        "use_annotated": True,
        "use_standard_collections": True,
        "use_union_operator": True,
        "field_constraints": True,
        "snake_case_field": True,
        "allow_population_by_field_name": True,
        "capitalise_enum_members": True,
        "set_default_enum_member": True,
        "use_double_quotes": True,
        "disable_timestamp": True,
        "enable_version_header": False,
        "use_schema_description": False,
        "use_field_description": False,
        "type_mappings": _TYPE_MAPPINGS,
        "formatters": [Formatter.BUILTIN],
        "model_name_map": name_map or None,
        "custom_file_header": header or None,
        "allow_remote_refs": False,
    }
    stderr = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(stderr):
            warnings.simplefilter("ignore")
            result = dcg.generate(Path(source) if isinstance(source, Path) else source, **options)
    except RecursionError:
        raise
    except Exception as exc:
        raise ApiforgeError(
            Problem(f"generating models from the schemas failed: {_first_line(exc)}"),
            "check the schemas under components/schemas (datamodel-code-generator could "
            "not handle them)",
        ) from exc
    if not isinstance(result, str):
        raise ApiforgeError(Problem("generating models produced no single module"))
    return result


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
