"""Path, header and cookie parameters as generated methods write them (query parameters:
`_query`)."""

from __future__ import annotations

from urllib.parse import quote


def path_segment(value: object) -> str:
    """One path parameter, percent-encoded (a `/` in a value stays inside its segment)."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    return quote(str(value), safe="")


def header_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cookie_value(value: object) -> str:
    """A cookie parameter's value, percent-encoded (no `;`, `,` or space can end it)."""
    return quote(header_value(value), safe="")
