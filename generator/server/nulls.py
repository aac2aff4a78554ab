"""Where a JSON request body may not hold `null`, although its model takes it.

The body models type an optional member `X | None = None` (absent and null are the same to
them), so a `null` the schema refuses would reach the handler. The server checks the parsed
body against rules made here from the schemas themselves (runtime/forms.py `NullGuard`).

A rule is plain data, named so that recursive schemas stay finite: an object's rule maps an
optional member (a required one's model refuses null itself) to `[null refused, the member's
own rule or None]`; an array's rule is
`[null refused for an item, the items' rule or None]`. A component's rule is named after the
component; an inline schema's after where it is (`Pet.owner`, `create_pet.body`).

Null is refused only where the schema says so beyond doubt: a `type` without "null" (and no
`nullable`, no `default: null`, no null in `enum`/`const`), or an `allOf` member that refuses
it, or `oneOf`/`anyOf` whose every branch does. Members under `oneOf`/`anyOf` are not
descended into (which branch applies is the model's business), nor `additionalProperties`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.ir import Schema
from generator.schemas import COMPONENTS, component_name

_DEPTH = 32  # of inline schemas within one another (components are named, so finite)


class NullRules:
    """The rules of one router module's bodies (`body` adds a body's, `table` gives them)."""

    def __init__(self, schemas: Mapping[str, Schema]) -> None:
        self.schemas = schemas
        self.rules: dict[str, Any] = {}

    def body(self, schema: Schema | None, name: str) -> str | None:
        """The name of the rule of a body whose schema is `schema` (`name` when inline), or
        None when null is allowed everywhere in it."""
        if schema is None:
            return None
        data = schema.data
        if schema.name is not None and schema.name in self.schemas:
            data = {"$ref": COMPONENTS + _escape(schema.name)}
        return self._rule(data, name, 0)

    def table(self) -> dict[str, Any]:
        """Name → rule. (A recursive component that turned out to refuse nothing is left
        out; a reference made while it was being made finds no rule, which refuses nothing.)"""
        return {name: rule for name, rule in sorted(self.rules.items()) if rule is not None}

    def _rule(self, node: Any, name: str, depth: int) -> str | None:
        component = self._component(node)
        if component is not None:
            name = component
            if name in self.rules:  # made already, or being made (a recursive schema)
                return name if self.rules[name] is not None else None
            node = self.schemas[component].data
        else:
            if depth > _DEPTH:
                return None
            while name in self.rules:  # member names may hold "." and "[]" too
                name += "'"
        self.rules[name] = {}  # what a recursive reference to it meets while it is made
        rule = self._made(node, name, depth)
        self.rules[name] = rule
        if rule is None:
            if component is None:
                del self.rules[name]
            return None
        return name

    def _made(self, node: Any, name: str, depth: int) -> Any:
        data = self._data(node)
        if data.get("type") == "array" or "items" in data:
            items = data.get("items")
            if not isinstance(items, Mapping):
                return None
            refused = not self.admits_null(items)
            inner = self._rule(items, f"{name}[]", depth + 1)
            return [refused, inner] if refused or inner else None
        members: dict[str, Any] = {}
        required = self._required(data)
        for member, schema in self._properties(data).items():
            # a required member's model refuses null itself
            refused = member not in required and not self.admits_null(schema)
            inner = self._rule(schema, f"{name}.{member}", depth + 1)
            if refused or inner:
                members[member] = [refused, inner]
        return members or None

    def admits_null(self, node: Any, depth: int = 0) -> bool:
        """Whether `null` is a value of the schema `node` (True when in doubt)."""
        data = self._data(node)
        if not data or depth > _DEPTH:
            return True
        if data.get("nullable") is True or data.get("x-nullable") is True:
            return True
        if "default" in data and data["default"] is None:
            return True
        if "const" in data:
            return data["const"] is None
        enum = data.get("enum")
        if isinstance(enum, list):
            return None in enum
        declared = data.get("type")
        if isinstance(declared, str) and declared != "null":
            return False
        if isinstance(declared, list) and declared and "null" not in declared:
            return False
        for member in _schemas(data.get("allOf")):
            if not self.admits_null(member, depth + 1):
                return False
        for keyword in ("oneOf", "anyOf"):
            branches = _schemas(data.get(keyword))
            if branches and not any(self.admits_null(b, depth + 1) for b in branches):
                return False
        return True

    def _properties(self, data: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
        """An object schema's members, its `allOf` members' included (its own win)."""
        found: dict[str, Any] = {}
        if depth > _DEPTH or _schemas(data.get("oneOf")) or _schemas(data.get("anyOf")):
            return found
        for member in _schemas(data.get("allOf")):
            found.update(self._properties(self._data(member), depth + 1))
        props = data.get("properties")
        if isinstance(props, Mapping):
            found.update({str(k): v for k, v in props.items() if isinstance(v, Mapping)})
        return found

    def _required(self, data: Mapping[str, Any], depth: int = 0) -> set[str]:
        found = {str(k) for k in data.get("required") or () if isinstance(k, str)}
        if depth <= _DEPTH:
            for member in _schemas(data.get("allOf")):
                found |= self._required(self._data(member), depth + 1)
        return found

    def _component(self, node: Any) -> str | None:
        name = component_name(node.get("$ref")) if isinstance(node, Mapping) else None
        return name if name in self.schemas else None

    def _data(self, node: Any) -> Mapping[str, Any]:
        """`node` after following `$ref`s to components ({} for anything else)."""
        for _ in range(8):
            if not isinstance(node, Mapping):
                return {}
            component = self._component(node)
            if component is None:
                return {} if "$ref" in node else node
            node = self.schemas[component].data
        return {}


def _schemas(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")
