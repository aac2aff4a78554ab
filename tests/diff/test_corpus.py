"""`apiforge diff` on versions of real APIs from ../shared/corpus (a bounded few; the full sweep
is bench/diff_corpus.py): no crash, and the breaking changes their publishers made are found
where they are."""

from __future__ import annotations

import pytest

from generator.diff.engine import run_diff
from tests.conftest import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is beside the clone")


def _kinds(old: str, new: str) -> dict[str, list[str]]:
    result = run_diff(str(CORPUS / old), str(CORPUS / new))
    found: dict[str, list[str]] = {}
    for change in result.changes:
        found.setdefault(change.kind, []).append(change.message)
        assert change.new_line > 0 and change.new_file
    return found


def test_adyen_transfers_v2_to_v4() -> None:
    found = _kinds("apisguru/adyen.com__TransferService__2.yaml", "adyen/TransferService-v4.json")
    # the transfer became a 202 job, a pattern-aware change no general diff names
    assert found["sync-became-async"] == [
        "POST /transfers: the answer became 202 Accepted (a job to poll)"
    ]
    assert (
        "GET /transactions: query parameter `createdSince` became required"
        in found["parameter-became-required"]
    )


def test_twilio_sync_page_size_lowered() -> None:
    found = _kinds("apisguru/twilio.com__twilio_sync_v1__1.29.2.yaml", "twilio/twilio_sync_v1.json")
    assert (
        "GET /v1/Services/{ServiceSid}/Documents: query parameter `PageSize`: `maximum` 1000 → 100"
        in found["parameter-constraint-narrowed"]
    )


@pytest.mark.parametrize("name", ["petstore-expanded", "callback-example", "link-example"])
def test_same_example_republished_has_no_change(name: str) -> None:
    assert (
        _kinds(f"oai/spec-repo/_archive_pass/{name}.yaml", f"oai/spec-repo/v3.0/{name}.yaml") == {}
    )
