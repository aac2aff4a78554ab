"""`format: email` (and `idn-email`) checked in request bodies: the models' `EmailStr`.

The other common string formats are asserted by the models' own types (`UUID`, `date`,
`AwareDatetime`, `AnyUrl`, `IPv4Address`, `IPv6Address`); pydantic's `EmailStr` would need
the `email-validator` package and rewrites the address it accepts (normalised case and
Unicode), so the server's models take this one instead: a string is accepted as it was sent
when it is an RFC 5321 mailbox (RFC 6531 letters allowed, so `idn-email` is checked alike):

- at most 254 characters, exactly one `@` outside a quoted local part;
- a local part of at most 64 characters: dot-separated atoms (letters, digits and
  ``!#$%&'*+/=?^_`{|}~-``, no empty atom), or a quoted string;
- a domain of dot-separated labels (letters, digits, `-` inside; at most 63 characters each),
  or an address literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`).

Deliverability is not checked (no DNS). The check is one pass over at most 254 characters:
linear, whatever a caller sends. The client's models read these members as plain strings (a
response is never refused for an address). A spec with `x-apiforge-format-checks: false` at
its top level gets plain strings here too (and for the other formats).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

_MAX = 254
_LOCAL_MAX = 64
# an atom: ASCII atext or any non-ASCII letter (RFC 6531's UTF8-non-ascii); no `.` in it, so
# `atom(.atom)*` matches in one pass
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\U0010ffff]+"
_DOT_ATOM = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")
_QUOTED = re.compile(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\U0010ffff]|\\[\x20-\x7e])*"')
_LABEL = re.compile(
    r"[A-Za-z0-9\u0080-\U0010ffff](?:[A-Za-z0-9\-\u0080-\U0010ffff]{0,61}"
    r"[A-Za-z0-9\u0080-\U0010ffff])?"
)


def is_email(value: str) -> bool:
    """Whether `value` is a mailbox as the module docstring says."""
    if len(value) > _MAX or "@" not in value:
        return False
    local, _, domain = value.rpartition("@")
    if not local or len(local) > _LOCAL_MAX or not domain:
        return False
    if not (_DOT_ATOM.fullmatch(local) or _QUOTED.fullmatch(local)):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        return _address_literal(domain[1:-1])
    return all(_LABEL.fullmatch(label) for label in domain.split("."))


def _address_literal(text: str) -> bool:
    try:
        if text[:5].lower() == "ipv6:":
            ipaddress.IPv6Address(text[5:])
        else:
            ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _checked(value: str) -> str:
    if not is_email(value):
        raise ValueError("value is not a valid email address")
    return value


EmailStr = Annotated[
    str, AfterValidator(_checked), WithJsonSchema({"type": "string", "format": "email"})
]
