"""The retry policy on its own: which requests may be repeated, and how long to wait."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from templates.client.runtime import (
    RETRYABLE_STATUS_CODES,
    RetryPolicy,
    backoff_delay,
    is_safe_to_repeat,
    parse_retry_after,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("method", "has_key", "safe"),
    [
        ("GET", False, True),
        ("head", False, True),
        ("OPTIONS", False, True),
        ("PUT", False, True),
        ("DELETE", False, True),
        ("POST", False, False),
        ("PATCH", False, False),
        ("POST", True, True),
        ("patch", True, True),
        ("TRACE", True, False),
    ],
)
def test_safe_to_repeat(method: str, has_key: bool, safe: bool) -> None:
    assert is_safe_to_repeat(method, has_idempotency_key=has_key) is safe


def test_retryable_statuses_are_exactly_the_documented_ones() -> None:
    assert frozenset({408, 409, 429, 500, 502, 503, 504}) == RETRYABLE_STATUS_CODES
    policy = RetryPolicy()
    for status in range(400, 600):
        expected = status in RETRYABLE_STATUS_CODES
        got = policy.should_retry(
            method="GET", has_idempotency_key=False, retries_taken=0, status_code=status
        )
        assert got is expected, status


def test_backoff_doubles_from_half_a_second_and_caps_at_eight() -> None:
    no_jitter = [backoff_delay(n, jitter=lambda: 0.0) for n in range(7)]
    assert no_jitter == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    # full jitter takes a quarter off, never more
    assert [backoff_delay(n, jitter=lambda: 1.0) for n in range(3)] == [0.375, 0.75, 1.5]


def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = {"Retry-After-Ms": "1500", "Retry-After": "30"}
    assert parse_retry_after(headers, now=NOW) == 1.5


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after({"retry-after": "7"}, now=NOW) == 7.0
    date = formatdate(NOW + 42, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=NOW) == 42.0
    # a date already past means "now", not a negative wait
    assert parse_retry_after({"Retry-After": formatdate(NOW - 10, usegmt=True)}, now=NOW) == 0.0


@pytest.mark.parametrize("value", ["soon", "-3", "nan", "inf", ""])
def test_unusable_retry_after_is_ignored(value: str) -> None:
    assert parse_retry_after({"Retry-After": value}, now=NOW) is None
    assert parse_retry_after({"retry-after-ms": value}, now=NOW) is None


def test_server_delay_above_the_cap_means_give_up() -> None:
    policy = RetryPolicy(max_server_delay=60.0, jitter=lambda: 0.0)
    kwargs = {"method": "GET", "has_idempotency_key": False, "retries_taken": 0, "now": NOW}
    assert policy.decide(status_code=429, headers={"Retry-After": "60"}, **kwargs) == 60.0
    assert policy.decide(status_code=429, headers={"Retry-After": "61"}, **kwargs) is None
    assert policy.decide(status_code=429, headers={"retry-after-ms": "60001"}, **kwargs) is None
    # no server hint: backoff
    assert policy.decide(status_code=503, headers={}, **kwargs) == 0.5


def test_x_should_retry_is_obeyed_but_cannot_make_a_post_safe() -> None:
    policy = RetryPolicy()
    base = {"retries_taken": 0, "now": NOW}
    assert (
        policy.decide(
            method="GET",
            has_idempotency_key=False,
            status_code=400,
            headers={"x-should-retry": "true"},
            **base,
        )
        is not None
    )
    assert (
        policy.decide(
            method="GET",
            has_idempotency_key=False,
            status_code=503,
            headers={"X-Should-Retry": "false"},
            **base,
        )
        is None
    )
    assert (
        policy.decide(
            method="POST",
            has_idempotency_key=False,
            status_code=503,
            headers={"x-should-retry": "true"},
            **base,
        )
        is None
    )


def test_connection_errors_retry_only_when_safe_unless_nothing_was_sent() -> None:
    policy = RetryPolicy(jitter=lambda: 0.0)
    post = {"method": "POST", "has_idempotency_key": False, "retries_taken": 0, "now": NOW}
    assert policy.decide(**post) is None  # the server may have acted: do not repeat
    assert policy.decide(request_sent=False, **post) == 0.5  # connect failed: nothing to repeat
    assert policy.decide(method="POST", has_idempotency_key=True, retries_taken=1, now=NOW) == 1.0


def test_max_retries_bounds_the_attempts() -> None:
    policy = RetryPolicy(max_retries=2)
    args = {"method": "GET", "has_idempotency_key": False, "status_code": 503}
    assert policy.should_retry(retries_taken=1, **args)
    assert not policy.should_retry(retries_taken=2, **args)
    assert not RetryPolicy(max_retries=0).should_retry(retries_taken=0, **args)
