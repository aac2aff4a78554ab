from __future__ import annotations

import difflib

import pytest

from tests.golden import PRODUCTS, golden_files, produce, spec_names

CASES = [(spec, name, args) for spec in spec_names() for name, args in PRODUCTS]


@pytest.mark.parametrize(("spec", "name", "args"), CASES, ids=[f"{s}/{n}" for s, n, _ in CASES])
def test_output_matches_golden(spec: str, name: str, args: list[str]) -> None:
    expected = golden_files(spec, name)
    assert expected, f"golden/{spec}/{name} is missing: run `make golden` and read the diff"
    actual = produce(spec, args)
    assert sorted(actual) == sorted(expected), "the set of files differs from golden"
    for rel, data in actual.items():
        if data != expected[rel]:
            diff = difflib.unified_diff(
                expected[rel].decode(errors="replace").splitlines(),
                data.decode(errors="replace").splitlines(),
                f"golden/{spec}/{name}/{rel}",
                "generated",
                lineterm="",
            )
            pytest.fail(
                "output differs from golden (run `make golden` if intended):\n"
                + "\n".join(list(diff)[:80])
            )
