"""The part of the document the models library is given: `schema_subset`.

Each component schema goes in under its subset name (`subset_name`: its class name with a
lower-case first letter, see `generator.models.build`), with `$ref`s and discriminator
mappings rewritten to match, followed by operations' inline object schemas and any other
part of the document those schemas point into. Constraint values and defaults pydantic
would refuse at import are left out (`constraints`; `build.warn_unenforced` names
them).

Description texts may be swapped for numbered placeholders (`Placeholders`), so that a
changed text is not a changed cache key; `restore_descriptions` writes the real texts over
the placeholders' literals in the library's output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any
from urllib.parse import quote, unquote

from generator.models.constraints import CONSTRAINT_KEYS, constraint_problem, default_problem
from generator.models.inline import inline_data
from generator.schemas import is_inline_key
from generator.spec.load import unescape

SCHEMAS_PREFIX = "#/components/schemas/"
# What the library gets instead of a description text: `@apiforge-description-<n>@`, an ASCII
# string that the library writes as `'@apiforge-description-<n>@'`.
PLACEHOLDER = "@apiforge-description-"
_PLACEHOLDER_LITERAL = re.compile(r"'@apiforge-description-(\d+)@'")
# Keywords whose value is a schema, a list of schemas, or a map of names to schemas (JSON
# Schema 2020-12 and drafts 4 to 7 spellings, OpenAPI 3.0 and 3.1). Anything else in a schema
# (`default`, `example(s)`, `enum`, `const`, extensions, ...) is data and is copied as it is.
SUBSCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
SUBSCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
SUBSCHEMA_MAP = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)
# Keywords whose value is instance data: copied as written, even a `$ref` key inside it.
_DATA = frozenset({"default", "example", "examples", "enum", "const"})


class Placeholders:
    """Collects the description texts of a subset and gives out their placeholders: the
    same number for the same text, numbered in the order first met."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.placed = 0  # how many descriptions were replaced
        self._numbers: dict[str, int] = {}

    def clear(self) -> None:
        self.texts.clear()
        self.placed = 0
        self._numbers.clear()

    def __call__(self, text: str) -> str:
        number = self._numbers.get(text)
        if number is None:
            number = self._numbers[text] = len(self.texts)
            self.texts.append(text)
        self.placed += 1
        return f"{PLACEHOLDER}{number}@"


@cache
def _literal_writer() -> Callable[[Any], str] | None:
    """The function the library writes a string literal with (it escapes for the newest
    Python target, not for the running interpreter); None when this version has none."""
    try:
        from datamodel_code_generator.python_literal import represent_python_value
    except ImportError:  # pragma: no cover - another library version
        return None
    return represent_python_value


def restore_descriptions(text: str, descriptions: Sequence[str]) -> str | None:
    """`text` (the library's output for a subset with placeholders) with the literal of each
    placeholder replaced by the literal of its description text; None when a placeholder is
    left that was not a whole literal (the library combined or changed it: run it again
    with the real texts)."""
    if not descriptions:
        return text
    write = _literal_writer()
    if write is None:  # pragma: no cover - another library version: run with the real texts
        return None
    literals: dict[int, str] = {}

    def literal(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if number >= len(descriptions):
            return match.group(0)  # left in place: reported below
        found = literals.get(number)
        if found is None:
            found = literals[number] = write(descriptions[number])
        return found

    restored = _PLACEHOLDER_LITERAL.sub(literal, text)
    return None if PLACEHOLDER in restored else restored


def subset_name(class_name: str) -> str:
    """The name a schema has in the subset: its class name with a lower-case first letter
    (see the module docstring). Class names start with an upper-case ASCII letter, so this
    is never a class name and never the name of another schema."""
    return class_name[:1].lower() + class_name[1:]


def unescape_token(token: str) -> str:
    """A `$ref`'s (URI-encoded) pointer token as the key it names."""
    return unescape(unquote(token))


def schema_subset(
    data: Any, class_names: Mapping[str, str], *, placeholders: Placeholders | None = None
) -> dict[str, Any] | None:
    """What the library needs of the document `data`: `openapi`, each component schema under
    its subset name (`subset_name` of its class name; `$ref`s and discriminator mappings
    rewritten to match), and any other part of the document those schemas point into. None
    when a schema points into another file (the library must read the files itself then) or
    the document is not shaped as expected.

    With `placeholders`, each non-blank string `description` of a component schema (or of a
    schema inside it, at any depth) is replaced by its placeholder — not a property *named*
    `description`, nor anything inside `default`, `example(s)`, `enum`, `const` or an
    extension, which are data."""
    if not isinstance(data, Mapping):
        return None
    components = data.get("components")
    schemas = components.get("schemas") if isinstance(components, Mapping) else None
    if schemas is None and all(is_inline_key(k) for k in class_names):
        schemas = {}  # (only operations' inline schemas)
    if not isinstance(schemas, Mapping):
        return None
    inline = {k: inline_data(data, k) for k in class_names if is_inline_key(k) and k not in schemas}
    if set(schemas) != set(class_names) - set(inline):
        return None
    if not all(isinstance(node, dict) for node in inline.values()):
        return None
    if len(set(class_names.values())) != len(class_names):
        return None
    run = _Subset(schemas, class_names, placeholders)
    subset: dict[str, Any] = {"openapi": data.get("openapi", "3.1.0")}
    parts: dict[str, Any] = {
        "schemas": {subset_name(class_names[k]): run.schema(v, k) for k, v in schemas.items()}
    }
    # operations' inline object schemas (`inline`), after the components: the library
    # names the models nested in components first, as it did without them
    parts["schemas"].update({subset_name(class_names[k]): run.schema(v) for k, v in inline.items()})
    done: set[tuple[str, ...]] = set()
    while run.wanted:
        path = run.wanted.pop()
        if path in done or path == ("components", "schemas"):
            continue
        done.add(path)
        node: Any = data
        for token in path:
            node = node.get(token) if isinstance(node, Mapping) else None
        if node is None:
            continue  # a dangling pointer: the library reports it
        if path[0] == "components":
            parts[path[1]] = run.copy(node)
        else:
            subset[path[0]] = run.copy(node)
    if run.external:
        return None
    if run.into_text and placeholders is not None:
        placeholders.clear()  # the real texts go in
        return schema_subset(data, class_names)
    subset["components"] = parts
    return subset


class _Subset:
    """One making of a schema subset (`schema_subset`): `$ref`s and discriminator mappings
    rewritten to the subset's names, descriptions replaced by placeholders, and what else of
    the document the schemas point into (`wanted`) or whether they point into another file
    (`external`) or maybe at a description text (`into_text`)."""

    def __init__(
        self,
        schemas: Mapping[str, Any],
        class_names: Mapping[str, str],
        placeholders: Placeholders | None,
    ) -> None:
        self.schemas = schemas
        self.class_names = class_names
        self.placeholders = placeholders
        self.external = False
        self.into_text = False  # a `$ref` that may point at a description text
        self.wanted: list[tuple[str, ...]] = []  # other parts of the document pointed into
        # Subtypes by inheritance: the components whose `allOf` refers to a component, directly
        # or through others (document order).
        self.heirs: dict[str, list[str]] = {}
        for heir, body in schemas.items():
            all_of = body.get("allOf") if isinstance(body, dict) else None
            for member in all_of if isinstance(all_of, list) else ():
                parent = self.component(member.get("$ref")) if isinstance(member, dict) else None
                if parent is not None and parent != heir:
                    self.heirs.setdefault(parent, []).append(heir)

    def ref(self, value: str) -> str:
        if not value.startswith("#"):
            self.external = True
            return value
        if value.startswith(SCHEMAS_PREFIX):
            head, sep, rest = value[len(SCHEMAS_PREFIX) :].partition("/")
            if "description" in rest:
                self.into_text = True
            name = unescape_token(head)
            if name in self.class_names:
                return (
                    SCHEMAS_PREFIX
                    + quote(subset_name(self.class_names[name]), safe="")
                    + sep
                    + rest
                )
            return value
        tokens = tuple(unescape_token(t) for t in value[2:].split("/"))
        if tokens and tokens[0]:
            # the whole section (`components/parameters`, `paths`, ...): pointers stay valid
            self.wanted.append(tokens[:2] if tokens[0] == "components" else tokens[:1])
        return value

    def mapping_ref(self, value: str) -> str:
        # a discriminator mapping value: a reference, or the bare name of a component schema
        if "/" not in value and "#" not in value:
            return subset_name(self.class_names[value]) if value in self.class_names else value
        return self.ref(value)

    def copy(self, node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (self.ref(v) if k == "$ref" and isinstance(v, str) else self.copy(v))
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [self.copy(v) for v in node]
        return node

    def component(self, value: Any) -> str | None:
        # the component schema a `$ref` value or a mapping value names, if it names one
        if not isinstance(value, str):
            return None
        if "/" not in value and "#" not in value:
            return value if value in self.class_names else None
        if not value.startswith(SCHEMAS_PREFIX) or "/" in value[len(SCHEMAS_PREFIX) :]:
            return None
        name = unescape_token(value[len(SCHEMAS_PREFIX) :])
        return name if name in self.class_names else None

    def component_schema(self, value: str) -> Mapping[str, Any] | None:
        name = self.component(value)
        target = self.schemas.get(name) if name is not None and "/" in value else None
        return target if isinstance(target, Mapping) else None

    def subtypes(self, name: str) -> list[str]:
        found: list[str] = []
        todo = list(self.heirs.get(name, ()))
        while todo:
            heir = todo.pop(0)
            if heir not in found and heir != name:
                found.append(heir)
                todo.extend(self.heirs.get(heir, ()))
        return found

    def discriminator(self, value: dict[Any, Any], node: dict[Any, Any], owner: str | None) -> Any:
        # Mapping values follow the renamed schemas. A subtype the mapping leaves out is
        # told by its schema's name (OpenAPI), which the library would take from the name
        # the schema has in the subset: such subtypes (`$ref` members of the `oneOf`/`anyOf`
        # beside the discriminator or, without those, the components inheriting from the one
        # that holds it) are added to the mapping under their names in the document.
        out = self.copy(value)
        mapping = value.get("mapping")
        given = mapping if isinstance(mapping, dict) else {}
        new = {
            k: self.mapping_ref(v) if isinstance(v, str) else self.copy(v) for k, v in given.items()
        }
        members = [m for k in ("oneOf", "anyOf") if isinstance(node.get(k), list) for m in node[k]]
        implicit = [self.component(m.get("$ref")) for m in members if isinstance(m, dict)]
        if owner is not None and not members:  # (beside a oneOf, the subtypes are its members)
            implicit += self.subtypes(owner)
        mapped = {self.component(v) for v in given.values()}
        for name in implicit:
            if name is not None and name not in new and name not in mapped:
                new[name] = SCHEMAS_PREFIX + quote(subset_name(self.class_names[name]), safe="")
                mapped.add(name)
        if new or isinstance(mapping, dict):
            out["mapping"] = new
        return out

    def schema(self, node: Any, owner: str | None = None) -> Any:
        if not isinstance(node, dict):
            return self.copy(node)
        out: dict[Any, Any] = {}
        for k, v in node.items():
            if k in CONSTRAINT_KEYS and constraint_problem(node, k):
                continue  # a value pydantic refuses at import (`warn_unenforced` says so)
            if k == "default" and default_problem(node, self.component_schema):
                continue  # not a value of the schema (`warn_unenforced` says so)
            if k == "$ref" and isinstance(v, str):
                out[k] = self.ref(v)
            elif k == "description" and self.placeholders is not None and isinstance(v, str):
                out[k] = self.placeholders(v) if v.strip() else v
            elif k == "discriminator" and isinstance(v, dict):
                out[k] = self.discriminator(v, node, owner)
            elif k in SUBSCHEMA_MAP and isinstance(v, dict):
                out[k] = {name: self.schema(s) for name, s in v.items()}
            elif k in SUBSCHEMA_LIST and isinstance(v, list):
                out[k] = [self.schema(s) for s in v]
            elif k in SUBSCHEMA:
                out[k] = self.schema(v)
            elif k in _DATA:
                out[k] = _data_copy(v)
            else:
                out[k] = self.copy(v)
        return out


def _data_copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _data_copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_data_copy(v) for v in node]
    return node
