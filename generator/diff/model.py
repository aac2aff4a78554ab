"""What a comparison finds: one `Change` per kind and place, with the operations it reaches
on each side. A leaf module: the comparison, the client effect and the reporters share it."""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.ir import Operation, Where

Reach = tuple[Operation | None, Operation | None]  # (the old operation, the new one)


@dataclass(frozen=True, slots=True)
class Change:
    """One change: its kind, a message that says what changed, where it is in the old file
    and in the new one (the nearest node that is there when a side lacks it), the
    operations it reaches, and what names it in the client: a parameter's wire name
    (`argument`), or a model and its field (`model`; `prop`: the property's path from the
    model, or from the body when the schema has no name, dotted)."""

    kind: str
    message: str
    old: Where | None
    new: Where | None
    reach: tuple[Reach, ...] = ()
    argument: str = ""
    argument_in: str = ""
    model: str = ""
    prop: str = ""
    webhook: str = ""
    body: bool = False  # about the request body (the client's `body=` argument)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What makes two findings the same change (a shared schema reached from many
        operations is one change that names them all)."""
        old = f"{self.old.file}#{self.old.pointer}" if self.old else ""
        new = f"{self.new.file}#{self.new.pointer}" if self.new else ""
        return (self.kind, old, new, self.message)


@dataclass(frozen=True, slots=True)
class Located:
    """A change as reported: its level after configuration, both places as file:line:col and
    the pointer as written, the operations it reaches, and what it does to the client."""

    change: Change
    level: str
    old_file: str = ""
    old_line: int = 0
    old_column: int = 0
    old_pointer: str = ""
    new_file: str = ""
    new_line: int = 0
    new_column: int = 0
    new_pointer: str = ""
    operations: tuple[str, ...] = ()  # `POST /v1/customers` labels, sorted
    client: tuple[str, ...] = field(default=())  # `client.customers.create(address=…)`

    @property
    def kind(self) -> str:
        return self.change.kind

    @property
    def message(self) -> str:
        return self.change.message
