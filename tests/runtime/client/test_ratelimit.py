"""Rate-limit headers of the three families into one RateLimit."""

from __future__ import annotations

import httpx
import pytest

from templates.client.runtime import RateLimit, parse_rate_limit

NOW = 1_700_000_000.0


def test_legacy_x_ratelimit_with_epoch_reset() -> None:
    headers = {
        "X-RateLimit-Limit": "1000",
        "X-RateLimit-Remaining": "942",
        "X-RateLimit-Reset": "1767225600",
    }
    assert parse_rate_limit(headers, now=NOW) == RateLimit(1000, 942, 1767225600.0)


def test_legacy_reset_as_delta_seconds_and_milliseconds() -> None:
    delta = parse_rate_limit(
        {"X-Rate-Limit-Limit": "60", "X-Rate-Limit-Remaining": "0", "X-Rate-Limit-Reset": "30"},
        now=NOW,
    )
    assert delta == RateLimit(60, 0, NOW + 30)
    assert delta is not None and delta.exhausted and delta.seconds_until_reset(NOW + 10) == 20
    millis = parse_rate_limit({"x-ratelimit-reset": "1767225600500"}, now=NOW)
    assert millis == RateLimit(None, None, 1767225600.5)


def test_ratelimit_dash_family_reset_is_a_delta() -> None:
    headers = httpx.Headers(
        {"RateLimit-Limit": "100, 100;w=60", "RateLimit-Remaining": "7", "RateLimit-Reset": "12"}
    )
    assert parse_rate_limit(headers, now=NOW) == RateLimit(100, 7, NOW + 12)


def test_ietf_structured_fields_with_policy() -> None:
    headers = {"RateLimit": '"default";r=50;t=30', "RateLimit-Policy": '"default";q=100;w=60'}
    assert parse_rate_limit(headers, now=NOW) == RateLimit(100, 50, NOW + 30)


def test_ietf_several_policies_the_most_restrictive_binds() -> None:
    headers = {
        "RateLimit": '"hour";r=500;t=1800, "burst";r=2;t=5',
        "RateLimit-Policy": '"burst";q=10;w=10, "hour";q=1000;w=3600',
    }
    assert parse_rate_limit(headers, now=NOW) == RateLimit(10, 2, NOW + 5)


def test_ietf_without_policy_header_has_no_limit() -> None:
    assert parse_rate_limit({"RateLimit": '"p";r=0;t=9'}, now=NOW) == RateLimit(None, 0, NOW + 9)


def test_older_draft_dictionary_form() -> None:
    headers = {"RateLimit": "limit=100, remaining=50, reset=30"}
    assert parse_rate_limit(headers, now=NOW) == RateLimit(100, 50, NOW + 30)


def test_structured_field_wins_over_legacy_headers() -> None:
    headers = {"RateLimit": '"p";r=1;t=2', "X-RateLimit-Remaining": "99"}
    result = parse_rate_limit(headers, now=NOW)
    assert result is not None and result.remaining == 1


@pytest.mark.parametrize(
    "headers", [{}, {"Content-Type": "application/json"}, {"RateLimit": "garbage"}]
)
def test_no_rate_limit_headers(headers: dict[str, str]) -> None:
    assert parse_rate_limit(headers, now=NOW) is None


def test_garbage_values_become_unknown_not_errors() -> None:
    result = parse_rate_limit({"X-RateLimit-Limit": "lots", "X-RateLimit-Remaining": "3"}, now=NOW)
    assert result == RateLimit(None, 3, None)
    assert result is not None and not result.exhausted and result.seconds_until_reset(NOW) is None
