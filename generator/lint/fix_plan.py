"""The plan of `apiforge lint --fix`: what the fixes add, made in memory first.

Each rule's fix (next to the rule, in `generator/patterns/*.py`) asks the plan to add a
parameter, a response, a header, a media type or a shared component. The plan adds it to the
loaded documents' data (so the next lint round sees it, and a later fix into the same new
node just extends it) and, when the container it goes into is written in a file, records
a `Request` for that container; `generator.lint.fix_files` turns the requests into text.

Shared components live in the root document's `components` and are found before they are
made: by content (an equal one), by name, or by what the spec already uses for the same
purpose (its own `Problem` schema, its own 429 response). A `$ref` written into another file
of a multi-file spec is relative to that file.

A fix either happens whole or not at all: what it added is taken back when one of its steps
cannot be written into the text (`CannotFix`), and the finding stays, reported.
"""

from __future__ import annotations

import copy
import os
import posixpath
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from generator.errors import ApiforgeError
from generator.ir import Api, Operation, Where
from generator.lint.fix_text import CannotFix, Entry, Rank, Request, SourceText
from generator.lint.model import Finding, RuleGate
from generator.spec.load import Document, unescape
from generator.spec.refs import Resolver

if TYPE_CHECKING:
    from generator.lint.fix_json import JsonFile
    from generator.lint.fix_yaml import YamlFile

_MISSING: Any = object()

# --- where new keys go among existing ones ---------------------------------------------


def _order(*keys: str) -> Rank:
    index = {k: i for i, k in enumerate(keys)}

    def rank(key: Any) -> tuple[int, str]:
        return (index.get(str(key), len(keys)), "")

    return rank


ROOT_ORDER = _order(
    "openapi",
    "info",
    "jsonSchemaDialect",
    "servers",
    "paths",
    "webhooks",
    "components",
    "security",
    "tags",
    "externalDocs",
)
COMPONENTS_ORDER = _order(
    "schemas",
    "responses",
    "parameters",
    "examples",
    "requestBodies",
    "headers",
    "securitySchemes",
    "links",
    "callbacks",
    "pathItems",
)
OPERATION_ORDER = _order(
    "tags",
    "summary",
    "description",
    "externalDocs",
    "operationId",
    "parameters",
    "requestBody",
    "responses",
    "callbacks",
    "deprecated",
    "security",
    "servers",
)
RESPONSE_ORDER = _order("description", "headers", "content", "links")


def status_rank(key: Any) -> tuple[int, str]:
    """`200` < `2XX` < `404` < `4XX` < `500` < `default` (and anything else last)."""
    text = str(key).upper()
    if len(text) == 3 and text[0].isdigit():
        if text.isdigit():
            return (int(text) * 10, "")
        if text[1:] == "XX":
            return (int(text[0]) * 1000 + 999, "")
    return (10**6 if text == "DEFAULT" else 10**7, text)


def name_rank(key: Any) -> tuple[str, str]:
    """Alphabetical, as people sort names (case aside)."""
    text = str(key)
    return (text.casefold(), text)


# --- records ---------------------------------------------------------------------------


@dataclass(slots=True)
class Fix:
    """One change the fixes made, and the findings it resolves."""

    rule: str
    message: str  # what was added, e.g. "POST /v1/charges: added `Idempotency-Key` (…)"
    where: Where  # the added node
    findings: int = 1
    line: int = 0  # where it is in the fixed file (once written)
    column: int = 0


@dataclass(slots=True)
class Unfixed:
    """A finding of a rule that has a fix, which could not be fixed, and why."""

    finding: Finding
    reason: str


Fixer = Callable[["Finding", "FixPlan"], "tuple[Where, str] | None"]


@dataclass(slots=True)
class _Undo:
    actions: list[Callable[[], None]] = field(default_factory=list)


def relative_ref(from_file: str, target: Where) -> str:
    """The `$ref` text, written in `from_file`, for the node at `target`."""
    fragment = "#" + quote(target.pointer, safe="/~-._!$&'()*+,;=:@")
    if os.path.normpath(from_file) == os.path.normpath(target.file):
        return fragment
    base = posixpath.dirname(from_file.replace(os.sep, "/"))
    path = posixpath.relpath(target.file.replace(os.sep, "/"), base or ".")
    return quote(path, safe="/-._~!$&'()*+,;=:@") + fragment


def member(mapping: dict[Any, Any], token: str) -> Any:
    """The key of `mapping` that the pointer token `token` names: `token` itself, else the
    integer a YAML spec wrote unquoted (`200:` is the integer 200), else None."""
    if token in mapping:
        return token
    if token.isdigit() and int(token) in mapping and str(int(token)) == token:
        return int(token)
    return None


def _parent(where: Where) -> tuple[Where, str]:
    head, _, token = where.pointer.rpartition("/")
    return Where(where.file, head), unescape(token)


class FixPlan:
    def __init__(self, resolver: Resolver, rules: RuleGate) -> None:
        self.resolver = resolver
        self.rules = rules
        self.root = resolver.root
        self.requests: dict[tuple[str, str], Request] = {}
        self.documents: dict[str, Document] = {}  # by name: those with requests
        self.fixes: dict[tuple[str, Where], Fix] = {}
        self.unfixed: list[Unfixed] = []
        self._created: set[int] = set()  # containers this plan made (in no file's text)
        self._files: dict[str, YamlFile | JsonFile] = {}
        self._checked: dict[tuple[str, str], str | None] = {}  # container → why not editable
        self._undo = _Undo()
        self._params: dict[Where, set[str]] = {}  # per operation: header parameters added
        self._statuses: dict[Where, set[str]] = {}  # per operation: responses added
        self._components: dict[tuple[str, str], Where] = {}
        self._nodes: dict[tuple[str, str], Any] = {}  # `get`'s answers for containers
        self._refs: dict[tuple[str, Where], str] = {}
        self.memo: dict[str, Any] = {}  # what fixes work out once per spec (header family …)
        self.api: Api  # the API as this round of lint saw it (set by each round)

    # --- running fixes ----------------------------------------------------------------

    def run(self, fixer: Fixer, finding: Finding) -> bool:
        """Run one rule's fix for one finding: all of it is made, or none of it."""
        mark = len(self._undo.actions)
        try:
            done = fixer(finding, self)
        except CannotFix as exc:
            while len(self._undo.actions) > mark:
                self._undo.actions.pop()()
            self._nodes.clear()  # what was taken back may have been looked up
            self.unfixed.append(Unfixed(finding, str(exc)))
            return False
        del self._undo.actions[mark:]
        if done is None:
            return False
        where, message = done
        self.record(finding.rule, where, message)
        return True

    def record(self, rule: str, where: Where, message: str) -> None:
        key = (rule, where)
        fix = self.fixes.get(key)
        if fix is None:
            self.fixes[key] = Fix(rule, message, where)
        else:
            fix.findings += 1

    def allows(self, rule_id: str, op: Operation | None) -> bool:
        return self.rules.allows(rule_id, op)

    # --- the data ------------------------------------------------------------------------

    def document(self, where: Where) -> Document:
        return self.resolver.document(where.file)

    def get(self, where: Where) -> Any:
        """The node at `where` (not following a `$ref` it is), or `_MISSING`."""
        key = (where.file, where.pointer)
        node: Any = self._nodes.get(key)
        if node is not None:
            return node
        stable = True  # reached through mappings only: a sequence's items can move (JSON)
        if not where.pointer:
            node = self.document(where).data
        else:
            head, _, raw = where.pointer.rpartition("/")
            parent = self.get(Where(where.file, head))
            token = unescape(raw)
            found = member(parent, token) if isinstance(parent, dict) else None
            if found is not None:
                node = parent[found]
                stable = (where.file, head) in self._nodes
            elif isinstance(parent, list) and token.isdigit() and int(token) < len(parent):
                node = parent[int(token)]
                stable = False
            else:
                return _MISSING
        if stable and isinstance(node, dict | list):
            self._nodes[key] = node
        return node

    def deref(self, where: Where) -> tuple[Where, Any]:
        """The node at `where`, through the `$ref`s it may be."""
        node = self.get(where)
        if node is _MISSING:
            return where, node
        return self.resolver.deref(where, node)

    def mapping(self, where: Where, rank: Rank | None) -> dict[str, Any]:
        """The mapping at `where`; made (empty) when it is missing or null. `rank` orders
        the key that makes it among its parent's keys."""
        node = self.get(where)
        if isinstance(node, dict):
            return node
        if node is not _MISSING and node is not None:
            raise CannotFix(f"#{where.pointer} is not a mapping")
        parent_at, key = _parent(where)
        parent = self.get(parent_at)
        if not isinstance(parent, dict):
            raise CannotFix(f"#{parent_at.pointer} is not a mapping")
        made: dict[str, Any] = {}
        if node is None:  # written as an empty value: new keys go below it in the text
            self._editable(where, sequence=False)
            key = member(parent, key)
            parent[key] = made
            self._undo.actions.append(lambda: parent.__setitem__(key, None))
            return made
        self._insert(parent_at, parent, key, made, rank)
        return made

    def add(self, where: Where, key: str | int, value: Any, rank: Rank | None) -> bool:
        """Add `key: value` to the mapping at `where` (made when missing); False when the
        key is there already."""
        container = self.get(where)
        if not isinstance(container, dict):
            raise CannotFix(f"#{where.pointer} is not a mapping")
        if member(container, str(key)) is not None:
            return False
        self._insert(where, container, key, value, rank)
        return True

    def append(self, where: Where, value: Any, rank: Rank | None) -> int:
        """Add `value` to the sequence at `where` (made when missing); its index."""
        node = self.get(where)
        if node is _MISSING or node is None:
            parent_at, key = _parent(where)
            if node is None:
                raise CannotFix(f"#{where.pointer} is null")
            parent = self.mapping(parent_at, None)
            self._insert(parent_at, parent, key, [value], rank)
            return 0
        if not isinstance(node, list):
            raise CannotFix(f"#{where.pointer} is not a sequence")
        if id(node) in self._created:
            self._mark(value)
            node.append(value)
            self._undo.actions.append(node.pop)
            return len(node) - 1
        request = self._request(where, sequence=True, rank=None)
        self._mark(value)
        entry = Entry(None, value)
        index = len(node)
        if self._format(where) == "json":  # JSON grows at its start: see fix_json
            index = len(request.entries)
        node.insert(index, value)
        request.entries.append(entry)

        def undo() -> None:
            node.pop(index)
            request.entries.remove(entry)

        self._undo.actions.append(undo)
        return index

    def _insert(
        self,
        where: Where,
        container: dict[Any, Any],
        key: str | int,
        value: Any,
        rank: Rank | None,
    ) -> None:
        if id(container) in self._created:
            self._mark(value)
            container[key] = value
            if rank is not None:  # a new mapping is written in its keys' order
                ordered = sorted(container.items(), key=lambda kv: rank(kv[0]))
                container.clear()
                container.update(ordered)
            self._undo.actions.append(lambda: container.pop(key))
            return
        request = self._request(where, sequence=False, rank=rank)  # before the data changes
        self._mark(value)
        container[key] = value
        entry = Entry(key, value)
        request.entries.append(entry)

        def undo() -> None:
            container.pop(key)
            request.entries.remove(entry)

        self._undo.actions.append(undo)

    def _mark(self, value: Any) -> None:
        if isinstance(value, dict):
            self._created.add(id(value))
            for v in value.values():
                self._mark(v)
        elif isinstance(value, list):
            self._created.add(id(value))
            for v in value:
                self._mark(v)

    def _request(self, where: Where, *, sequence: bool, rank: Rank | None) -> Request:
        doc = self.document(where)
        key = (doc.name, where.pointer)
        request = self.requests.get(key)
        if request is None:
            self._editable(where, sequence)
            request = self.requests[key] = Request(where.pointer, sequence, rank)
            self.documents[doc.name] = doc
        return request

    def _format(self, where: Where) -> str:
        return "json" if self.document(where).is_json else "yaml"

    def text_file(self, doc: Document) -> YamlFile | JsonFile:
        found = self._files.get(doc.name)
        if found is None:
            from generator.lint.fix_json import JsonFile
            from generator.lint.fix_yaml import YamlFile

            if doc.path is None and doc.name != "<stdin>":
                raise CannotFix(f"{doc.name} is not a file")
            src = SourceText(doc)
            found = self._files[doc.name] = JsonFile(src) if doc.is_json else YamlFile(src)
        return found

    def _editable(self, where: Where, sequence: bool) -> None:
        """Refuse (CannotFix) a container of the original text that new entries cannot be
        written into; checked once per container, before anything goes into it."""
        doc = self.document(where)
        key = (doc.name, where.pointer)
        if key not in self._checked:
            reason = None
            try:
                self._check(doc, where.pointer, sequence)
            except CannotFix as exc:
                reason = str(exc)
            self._checked[key] = reason
        reason = self._checked[key]
        if reason is not None:
            raise CannotFix(reason)

    def _check(self, doc: Document, pointer: str, sequence: bool) -> None:
        from generator.lint.fix_json import JsonFile

        file = self.text_file(doc)
        node = self.get(Where(doc.name, pointer))
        if isinstance(file, JsonFile):  # (the member a new one goes before: when it is written)
            file.opening(pointer)
            return
        box = file.container(pointer, sequence)
        if box.kind == "block" and isinstance(node, dict) and not sequence:
            file.entries(pointer, box, list(node))
        elif box.kind == "block" and isinstance(node, list) and sequence:
            file.last_item(pointer, box, len(node))

    # --- references and components -------------------------------------------------------

    def ref(self, at: Where, target: Where) -> dict[str, Any]:
        """A `{"$ref": …}` to `target`, as written in the file of `at`."""
        name = self.document(at).name
        text = self._refs.get((name, target))
        if text is None:
            text = self._refs[(name, target)] = relative_ref(name, target)
        return {"$ref": text}

    def component(
        self,
        section: str,
        name: str,
        content: Any,
        same: Callable[[str, Any], bool] | None = None,
    ) -> Where:
        """The root document's `components/<section>` entry to refer to for `content`: one
        with equal content, else one `same` accepts (its name and its content, after its
        `$ref`s), else `name` made with `content` (`name2`, … when `name` is taken)."""
        memo = self._components.get((section, name))
        if memo is not None:
            return memo
        root = Where(self.root.name, "")
        components = self.get(root.child("components"))
        entries = components.get(section) if isinstance(components, dict) else None
        entries = entries if isinstance(entries, dict) else {}
        found = None
        for key, value in entries.items():
            if value == content:
                found = key
                break
        if found is None and same is not None:
            for key in entries:
                try:
                    _, value = self.deref(root.child("components", section, str(key)))
                except ApiforgeError:  # a `$ref` that does not resolve: not this one
                    continue
                if value is not _MISSING and same(str(key), value):
                    found = key
                    break
        if found is None:
            taken = {str(k).casefold() for k in entries}
            found, n = name, 1
            while found.casefold() in taken:
                n += 1
                found = f"{name}{n}"
            self.mapping(root.child("components"), ROOT_ORDER)
            self.mapping(root.child("components", section), COMPONENTS_ORDER)
            self.add(root.child("components", section), found, copy.deepcopy(content), name_rank)
        where = root.child("components", section, str(found))
        self._components[(section, name)] = where
        self._undo.actions.append(lambda: self._forget(section, name))
        return where

    def _forget(self, section: str, name: str) -> None:
        self._components.pop((section, name), None)

    # --- what operations and responses have, or will have -----------------------------------

    def has_parameter(self, op: Operation, name: str) -> bool:
        return op.parameter(name, "header") is not None or name.lower() in self._params.get(
            op.where, set()
        )

    def has_response(self, op: Operation, status: str) -> bool:
        return op.response(status) is not None or status in self._statuses.get(op.where, set())

    def add_parameter(self, op: Operation, name: str, param: Where) -> Where:
        """A `$ref` to the shared header parameter `param` in `op`'s own `parameters`."""
        at = op.where.child("parameters")
        index = self.append(at, self.ref(at, param), OPERATION_ORDER)
        self._note(self._params, op.where, name.lower())
        return at.child(index)

    def add_response(self, op: Operation, status: str, response: Where) -> Where:
        """`status: {$ref: response}` in `op`'s responses (nothing when it has one)."""
        at = op.where.child("responses")
        responses = self.mapping(at, OPERATION_ORDER)
        # in the spec's own spelling: beside `200:` (YAML integers), `422:`, not `'422':`
        keys: list[Any] = list(responses)  # YAML integers among them
        spelled = status.isdigit() and any(isinstance(k, int) for k in keys)
        self.add(at, int(status) if spelled else status, self.ref(at, response), status_rank)
        self._note(self._statuses, op.where, status)
        return at.child(status)

    def add_header(self, response: Where, name: str, header: Where) -> Where:
        """`name: {$ref: header}` in the headers of the response at `response` (where it
        lives: a shared response is changed once)."""
        at = response.child("headers")
        self.mapping(at, RESPONSE_ORDER)
        headers = self.get(at)
        existing = next((k for k in headers if str(k).lower() == name.lower()), None)
        if existing is None:
            self.add(at, name, self.ref(at, header), name_rank)
        return at.child(existing or name)

    def _note(self, notes: dict[Where, set[str]], where: Where, value: str) -> None:
        found = notes.setdefault(where, set())
        if value not in found:
            found.add(value)
            self._undo.actions.append(lambda: found.discard(value))

    def own_response(self, status: str) -> Where | None:
        """The shared response (a `$ref` target) the API's operations use most for `status`,
        if any: a fix that adds that status reuses it rather than make another."""
        key = f"own-response/{status}"
        if key not in self.memo:
            counts: Counter[Where] = Counter()
            for op in self.api.operations:
                response = op.response(status)
                if response is not None and response.where != op.where.child("responses", status):
                    counts[response.where] += 1
            best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            self.memo[key] = best[0][0] if best else None
        found: Where | None = self.memo[key]
        return found

    def label(self, finding: Finding) -> str:
        """How a fix's message names what it fixed: the operation, or the webhook."""
        op = finding.operation
        if finding.webhook is not None and op is not None:
            return f"webhook `{finding.webhook}` ({op.method.upper()})"
        return op.label if op is not None else finding.pointer

    def status(self, finding: Finding) -> str:
        """The status of the response a finding is located at (\"\" when it is not one)."""
        op = finding.operation
        where = Where(finding.file, finding.pointer)
        for response in op.responses if op is not None else ():
            if response.where == where:
                return response.status
        return ""

    def add_media(self, response: Where, media_type: str, value: Any) -> Where:
        at = response.child("content")
        self.mapping(at, RESPONSE_ORDER)
        self.add(at, media_type, value, name_rank)
        return at.child(media_type)
