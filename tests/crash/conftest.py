"""Crash runs: prints what each run measured at the end of the session (test_exactly_once.py)."""

from __future__ import annotations

from typing import Any

from tests.crash.test_exactly_once import FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("crash runs (workers SIGKILLed at seeded points, 2 workers)")
        for figures in FIGURES:
            for name, value in figures.items():
                terminalreporter.write_line(f"    {name}: {value}")
