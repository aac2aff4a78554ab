"""`model_isolation.isolate` against a stand-in for the library that fails on chosen schemas
(the real library's failures are in test_import_safety.py): how it finds them, and its bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.models.isolation import MAX_RUNS, isolate, left_out

NAMES = [f"s{i:03d}" for i in range(300)]


def _subset() -> dict[str, Any]:
    return {"openapi": "3.1.0", "components": {"schemas": {n: {"type": "object"} for n in NAMES}}}


class Library:
    """Fails while any of `bad` is still a real schema; names it in its error or not."""

    def __init__(self, *bad: str, named: bool = False) -> None:
        self.bad = bad
        self.named = named
        self.runs = 0

    def __call__(self, subset: Mapping[str, Any], options: Mapping[str, Any]) -> str:
        self.runs += 1
        schemas = subset["components"]["schemas"]
        for name in self.bad:
            if schemas[name] != {}:
                where = f"#/components/schemas/{name}" if self.named else "somewhere"
                raise ValueError(f"Error at schema path '{where}': cannot take it")
        return "# models\n"

    def first_error(self) -> Exception:
        try:
            self(_subset(), {})
        except ValueError as exc:
            self.runs = 0
            return exc
        raise AssertionError("the stand-in did not fail")


def test_a_schema_the_error_names_is_left_out_in_one_more_run() -> None:
    library = Library("s123", named=True)
    text = isolate(_subset(), {}, library.first_error(), library)
    assert text is not None and library.runs == 1
    assert left_out(text) == {"s123": "ValueError: cannot take it"}


def test_a_schema_the_error_does_not_name_is_found_by_bisection() -> None:
    library = Library("s201")
    text = isolate(_subset(), {}, library.first_error(), library)
    assert text is not None and list(left_out(text)) == ["s201"]
    assert library.runs <= 11  # all blanked, ~log2(300) halvings, the final run


def test_two_schemas_are_both_left_out() -> None:
    library = Library("s007", "s250", named=True)
    text = isolate(_subset(), {}, library.first_error(), library)
    assert text is not None and sorted(left_out(text)) == ["s007", "s250"]


def test_a_failure_no_schema_explains_gives_up_within_the_bound() -> None:
    class Broken(Library):
        def __call__(self, subset: Mapping[str, Any], options: Mapping[str, Any]) -> str:
            self.runs += 1
            raise ValueError("#/components/schemas/s001 is fine; the options are not")

    library = Broken()
    assert isolate(_subset(), {}, ValueError("the options are not"), library) is None
    assert 1 <= library.runs <= MAX_RUNS


def test_the_note_is_comment_lines_a_hostile_message_cannot_leave() -> None:
    library = Library("s001", named=True)
    error = ValueError('Error at schema path \'#/components/schemas/s001\': x\n"""; import os')
    text = isolate(_subset(), {}, error, library)
    assert text is not None
    assert all(line.startswith("#") for line in text.splitlines()[1:] if line)
    compile(text, "models.py", "exec")


def test_left_out_reads_only_whole_note_lines() -> None:
    notes = "# apiforge-left-out: A1: RecursionError\n# apiforge-left-out: B: it failed: badly\n"
    assert left_out("x = 1\n" + notes) == {"A1": "RecursionError", "B": "it failed: badly"}
    assert left_out("x = 1\n") == {}
    # the marker inside a line is no note (the quick test for it must not make it one)
    assert left_out('x = "# apiforge-left-out: C: no"\n') == {}
