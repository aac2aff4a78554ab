"""A `default` checked against the schema it is in, as openapi-spec-validator's
ValueValidator checks it (`DefaultChecker`, used by validation's semantic walk)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import ApiforgeError
from generator.ir import Where
from generator.spec import remote
from generator.spec.load import load_document
from generator.spec.refs import Resolver
from generator.spec.rs_checks import (
    ANNOTATION_FORMATS,
    any_value,
    plain,
    rs_errors,
    valid_regex,
    worded,
)


class DefaultChecker:
    """A `default` against the schema it is in (openapi-spec-validator's ValueValidator):
    draft 4 (OAS 3.0) or 2020-12 (3.1) by jsonschema-rs, the OAS format checkers' formats
    (`int32`, `byte`, `regex`, ...) asserted as openapi-schema-validator asserts them and no
    other, `$ref`s resolved in the spec's own files."""

    def __init__(self, resolver: Resolver, v30: bool) -> None:
        import jsonschema_rs

        self.resolver = resolver
        self.v30 = v30
        self.rs = jsonschema_rs
        formats: dict[str, Any] = dict.fromkeys(ANNOTATION_FORMATS, any_value)
        for name in _JSONSCHEMA_FORMATS:  # checked as Python's `jsonschema` checks them
            formats[name] = _jsonschema_format(name)
        formats.update(
            {
                "int32": lambda v: _int_in(v, 31),
                "int64": lambda v: _int_in(v, 63),
                "regex": valid_regex,
                "byte": _is_byte if v30 else any_value,
            }
        )
        self.formats = formats
        self.registries: dict[int, Any] = {}  # by how many files the spec had read
        self.uris: dict[str, str] = {}

    def _uri(self, file: str) -> str:
        uri = self.uris.get(file)
        if uri is None:
            # its path as the resolver reads `$ref`s, relative to the name (symlinks unresolved);
            # a remote document's name is its URL
            if remote.is_remote(file):
                uri = file
            elif file == "<stdin>":
                uri = "urn:apiforge:stdin"
            else:
                uri = Path(os.path.abspath(file)).as_uri()
            self.uris[file] = uri
        return uri

    def _registry(self) -> Any:
        """Every file of the spec read so far, for jsonschema-rs, or None if it refuses them.

        jsonschema-rs reads every file a `$ref` in them names when the registry is made (and
        refuses to make it if one is missing): a file not read yet comes from `_retrieve`."""
        count = len(self.resolver.documents)
        if count not in self.registries:  # made again only when more files have been read
            resources = [(self._uri(d.name), d.data) for d in self.resolver.documents]
            draft = self.rs.Draft4 if self.v30 else self.rs.Draft202012
            registry = None
            try:
                try:
                    registry = self.rs.Registry(resources, draft=draft, retriever=self._retrieve)
                except ValueError:  # YAML values JSON has not: see `plain`
                    registry = self.rs.Registry(
                        [(uri, plain(data)) for uri, data in resources],
                        draft=draft,
                        retriever=self._retrieve,
                    )
            except (ValueError, self.rs.ReferencingError):
                registry = None  # e.g. a `$ref` jsonschema-rs cannot place (from stdin)
            self.registries = {count: registry}
        return self.registries[count]

    def _retrieve(self, uri: str) -> Any:
        """A file that a `$ref` names and the registry was not given. One that is missing
        or unreadable stands for any value: its `$ref`s are errors where they are written
        (`validate._Semantic.refs`), and a `default` is not checked against what is not there."""
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(uri)
        for doc in self.resolver.documents:  # a remote document the resolver fetched
            if doc.name == uri:
                return plain(doc.data)
        if parts.scheme == "file":
            path = unquote(parts.path)
            for doc in self.resolver.documents:
                if doc.path is not None and os.path.abspath(doc.name) == path:
                    return plain(doc.data)
            if os.path.isfile(path):
                try:
                    return plain(load_document(path).data)
                except ApiforgeError:
                    pass
        return {}

    def errors(self, where: Where, schema: Any, default: Any) -> Iterator[Any]:
        # jsonschema-rs applies formats to strings only; openapi-schema-validator's int32 and
        # int64 apply to integers (the schema's own format; nested ones go unchecked)
        original = schema
        fmt = schema.get("format") if isinstance(schema, Mapping) else None
        if fmt in ("int32", "int64") and not _int_in(default, 31 if fmt == "int32" else 63):
            yield _Plain(f"{default!r} is not a {fmt!r}", [])
        options: dict[str, Any] = {"validate_formats": True, "formats": self.formats}
        if _has_ref(schema):
            # validated where it is in its document, so its `#/...` references resolve there
            from urllib.parse import quote

            registry = self._registry()
            if registry is None:
                return
            schema = {"$ref": f"{self._uri(where.file)}#{quote(where.pointer, safe='/~')}"}
            options["registry"] = registry
        cls = self.rs.Draft4Validator if self.v30 else self.rs.Draft202012Validator
        try:
            try:
                validator = cls(schema, **options)
            except ValueError:  # YAML values JSON has not: see `plain`
                validator = cls(plain(schema), **options)
        except self.rs.ValidationError:
            # the schema itself breaks its meta-schema (reported by the meta-schema check);
            # jsonschema-rs will not compile it, so its default goes unchecked
            return
        except (ValueError, self.rs.ReferencingError) as exc:
            yield _Plain(f"the schema of this default cannot be compiled: {exc}"[:300], [])
            return
        wrapped = schema is not original
        try:
            found = rs_errors(validator, default)
        except (ValueError, self.rs.ReferencingError):
            return  # a `$ref` jsonschema-rs resolves only now and cannot (reported as such)
        for error in found:
            if (
                self.v30
                and error.instance is None
                and getattr(error.kind, "name", "") == "type"
                and self._nullable(where, original, list(error.schema_path)[wrapped:-1])
            ):
                continue  # OAS 3.0 `nullable: true` (jsonschema-rs does not know it)
            yield _Plain(worded(error), list(error.instance_path))

    def _nullable(self, where: Where, node: Any, tokens: list[Any]) -> bool:
        """Whether the subschema at `tokens` (jsonschema-rs's schema path) says nullable."""
        try:
            for token in tokens:
                if token == "$ref":
                    where, node = self.resolver.deref(where, node)
                else:
                    node = node[token]
                    where = where.child(token)
            where, node = self.resolver.deref(where, node)
        except (KeyError, IndexError, TypeError, ApiforgeError):
            return False
        return isinstance(node, Mapping) and node.get("nullable") is True


@dataclass(frozen=True, slots=True)
class _Plain:
    message: str
    path: list[Any]


def _has_ref(node: Any) -> bool:
    todo = [node]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if "$ref" in node:
                return True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return False


# the formats openapi-schema-validator's format checkers get from `jsonschema.FormatChecker`
# (the ones whose checks need no optional package)
_JSONSCHEMA_FORMATS = (
    "date",
    "date-time",
    "email",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "time",
    "uuid",
)
_format_checker: list[Any] = []


def _jsonschema_format(name: str) -> Any:
    def check(value: Any) -> bool:
        if not _format_checker:  # imported on the first such format met
            from jsonschema import FormatChecker

            _format_checker.append(FormatChecker())
        return bool(_format_checker[0].conforms(value, name))

    return check


def _int_in(value: Any, bits: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, int):
        return True
    return ~(1 << bits) < value < 1 << bits


def _is_byte(value: Any) -> bool:
    import base64
    import binascii

    if not isinstance(value, str):
        return True
    try:
        base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
