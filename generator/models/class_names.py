"""Class names of the models module: a stable, unique PascalCase name for each component
schema (`model_class_names`), chosen by us rather than by datamodel-code-generator, so that
templates know every model's name without reading the generated module.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Iterable

from generator.render.names import RESERVED, NameAllocator, pascal_case

_CLASSES_CACHE_KIND = "classnames1"  # component schema name → class name

# Names datamodel-code-generator may import into models.py: a component class of one of these
# names would be renamed by the library (`BaseModel` → `BaseModelModel`), so it gets that name
# from us instead, and the templates know it.
_LIBRARY_NAMES = frozenset(
    {
        "Annotated",
        "Any",
        "AnyUrl",
        "AwareDatetime",
        "BaseModel",
        "ConfigDict",
        "Decimal",
        "Enum",
        "Field",
        "IntEnum",
        "Literal",
        "NaiveDatetime",
        "Optional",
        "RootModel",
        "StrEnum",
        "StringConstraints",
        "TypeAlias",
        "TypeAliasType",
        "UUID",
        "Union",
    }
)


def model_class_names(schema_names: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A stable, unique PascalCase class name for each component schema name (sorted order),
    spelled as the library keeps it: no underscores (it drops them: `Model_123` would
    become `Model123`), and never a name it imports or a Python keyword or builtin (`None`,
    `Warning`, `BaseModel` get `Model` appended)."""
    from generator.render.fingerprint import code_digest
    from generator.spec.load import cache_dir, cache_get, cache_put

    names, avoided = sorted(schema_names), sorted(reserved)

    def make() -> dict[str, str]:
        allocator = NameAllocator(avoided, separator="")
        return {name: allocator.allocate(name, _class_name(name)) for name in names}

    if cache_dir() is None:
        return make()
    # a pure function of the names (and the code): kept between runs, as spelling Stripe's
    # ~800 names was ~15-30 ms of every regeneration
    material = (_CLASSES_CACHE_KIND, code_digest(), tuple(names), tuple(avoided))
    key = hashlib.sha256(marshal.dumps(material, 2)).hexdigest()
    hit = cache_get(_CLASSES_CACHE_KIND, key)
    if isinstance(hit, dict) and list(hit) == names:
        return hit
    made = make()
    cache_put(_CLASSES_CACHE_KIND, key, made)
    return made


def _class_name(schema_name: str) -> str:
    name = pascal_case(schema_name, fallback="Model").replace("_", "")
    if name in RESERVED or name in _LIBRARY_NAMES:
        name += "Model"
    return name
