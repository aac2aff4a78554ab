"""Path, header and cookie parameters as generated methods write them (query parameters:
`_query`, with `iso` for dates).

A `datetime.date` is written `YYYY-MM-DD`, a `datetime.datetime` in RFC 3339 with its offset
(a naive one is local time, as Python reads it, and gets the local offset); `True` / `False`
as `true` / `false`.
"""

from __future__ import annotations

import datetime
from urllib.parse import quote


def iso(value: datetime.date) -> str:
    """A date as `2024-05-01`, a date-time as RFC 3339 (`2024-05-01T12:00:00+00:00`)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        value = value.astimezone()
    return value.isoformat()


def header_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date):
        return iso(value)
    return str(value)


def path_segment(value: object) -> str:
    """One path parameter, percent-encoded (a `/` in a value stays inside its segment)."""
    return quote(header_value(value), safe="")


def cookie_value(value: object) -> str:
    """A cookie parameter's value, percent-encoded (no `;`, `,` or space can end it)."""
    return quote(header_value(value), safe="")
