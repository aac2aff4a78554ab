"""The one error type for bad input: what is wrong, where, and what to do. The CLI prints
it and exits 2; nothing else turns bad input into a message."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    message: str
    file: str = ""
    line: int = 0  # 1-based; 0 when unknown
    column: int = 0  # 1-based; 0 when unknown
    pointer: str | None = None  # JSON pointer in `file`, when the problem is a spec node

    def render(self) -> str:
        where = self.file
        if where and self.line:
            where += f":{self.line}:{self.column or 1}"
        if self.pointer is not None:
            where += f" (#{self.pointer})" if where else f"#{self.pointer}"
        return f"{where}: {self.message}" if where else self.message


class ApiforgeError(Exception):
    """Bad input or usage: one or more problems, and a hint for what to do."""

    def __init__(self, problems: list[Problem] | Problem, hint: str = "") -> None:
        self.problems = problems if isinstance(problems, list) else [problems]
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"error: {p.render()}" for p in self.problems]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)
