"""Query parameters in OpenAPI's `style` / `explode` forms, as flat `key=value` pairs.

httpx sends a query parameter as one value or as a repeated key (`?tag=a&tag=b`: `form`,
exploded). Generated methods hand every other parameter to `RequestOptions.params` as
`Styled(value, style, explode)`, and `encode_query` writes it:

- `deepObject`: an object as `name[key]=v`, nested `name[key][sub]=v`, lists inside it with
  indexes (`name[key][0]=v`, as Stripe, PHP, Rails and `qs` read them);
- `form`, exploded (the default), for an object: each property as a key of its own
  (`?gte=1&lte=9`; a list value as a repeated key);
- `form` not exploded: `name=k1,v1,k2,v2` for an object, `name=a,b,c` for a list;
  `spaceDelimited` / `pipeDelimited`: `name=a b c`, `name=a|b|c`;
- a list of objects or of lists, whatever the style: `name[0][key]=v` (OpenAPI defines no
  other form), and likewise what no style defines (an object inside a delimited value);
- a scalar, whatever the style: `name=v` (the scalar member of a union, Stripe's `created=…`).

Values are written as httpx writes them: `true` / `false` for booleans, `str()` for numbers
and strings; None values (and empty lists and objects) are left out. The value should be JSON
data (callers dump models first, see `_base.to_jsonable`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

STYLES = ("form", "spaceDelimited", "pipeDelimited", "deepObject")
_DELIMITERS = {"form": ",", "spaceDelimited": " ", "pipeDelimited": "|"}


@dataclass(frozen=True, slots=True)
class Styled:
    """A query parameter's value with the serialisation its operation declares."""

    value: Any
    style: str = "form"
    explode: bool | None = None  # None: OpenAPI's default (exploded for `form` only)


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _text(value: object) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _mapping(value: object) -> Mapping[Any, Any] | None:
    if not isinstance(value, Mapping):
        return None
    found: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
    return found


def _sequence(value: object) -> list[Any] | None:
    return list(cast("Sequence[Any]", value)) if isinstance(value, list | tuple) else None


def _brackets(prefix: str, value: Any) -> list[tuple[str, str]]:
    """`prefix[key]…=v` pairs: objects by key, lists by index."""
    if value is None:
        return []
    mapping, sequence = _mapping(value), _sequence(value)
    pairs: list[tuple[str, str]] = []
    if mapping is not None:
        for key, item in mapping.items():
            pairs += _brackets(f"{prefix}[{key}]", item)
        return pairs
    if sequence is not None:
        for index, item in enumerate(sequence):
            pairs += _brackets(f"{prefix}[{index}]", item)
        return pairs
    return [(prefix, _text(value))]


def encode_query(
    name: str, value: Any, *, style: str = "form", explode: bool | None = None
) -> list[tuple[str, str]]:
    """The `(key, value)` pairs of the query parameter `name` (see the module docstring)."""
    if style not in STYLES:
        raise ValueError(f"unknown query style {style!r}: one of {', '.join(STYLES)}")
    exploded = style == "form" if explode is None else explode
    if value is None:
        return []
    if _scalar(value):
        return [(name, _text(value))]
    if style == "deepObject":
        return _brackets(name, value)
    mapping, sequence = _mapping(value), _sequence(value)
    if mapping is not None:
        items = [(str(k), v) for k, v in mapping.items() if v is not None]
        if style == "form" and exploded:
            pairs: list[tuple[str, str]] = []
            for key, item in items:
                listed = _sequence(item)
                if _scalar(item):
                    pairs.append((key, _text(item)))
                elif listed is not None and all(_scalar(v) for v in listed):
                    pairs += [(key, _text(v)) for v in listed]
                else:
                    pairs += _brackets(key, item)
            return pairs
        if items and all(_scalar(v) for _, v in items):
            delimiter = _DELIMITERS[style]
            return [(name, delimiter.join(f"{k}{delimiter}{_text(v)}" for k, v in items))]
        return _brackets(name, value)
    if sequence is not None:
        items_ = [v for v in sequence if v is not None]
        if not all(_scalar(v) for v in items_):
            return _brackets(name, value)
        if exploded:
            return [(name, _text(v)) for v in items_]
        return [(name, _DELIMITERS[style].join(_text(v) for v in items_))] if items_ else []
    return [(name, _text(value))]
