"""The request log masks credentials; the environment variable switches it on."""

from __future__ import annotations

import logging

import httpx

from templates.client.runtime._logs import (
    is_secret,
    logger,
    redact_headers,
    redact_url,
    setup_logging,
)


def test_credential_like_names_are_masked() -> None:
    url = httpx.URL(
        "https://u:p@api.test/x?page=2&access_token=a&API_KEY=b&sig=c&sort=name&client_secret=d"
    )
    assert redact_url(url) == (
        "https://u:REDACTED@api.test/x?page=2&access_token=REDACTED&API_KEY=REDACTED"
        "&sig=REDACTED&sort=name&client_secret=REDACTED"
    )
    headers = httpx.Headers(
        {"Authorization": "Bearer x", "X-Tenant-Key": "k", "Cookie": "s", "Accept": "a/b"}
    )
    assert redact_headers(headers, ["X-Tenant-Key"]) == {
        "authorization": "REDACTED",
        "x-tenant-key": "REDACTED",
        "cookie": "REDACTED",
        "accept": "a/b",
    }
    assert not is_secret("keywords") and is_secret("X-Auth-Token") and is_secret("Set-Cookie")


def test_setup_logging_from_the_environment() -> None:
    level, handlers = logger.level, list(logger.handlers)
    try:
        setup_logging("X_LOG", {"X_LOG": "nonsense"})
        assert logger.level == level and logger.handlers == handlers
        setup_logging("X_LOG", {"X_LOG": " Debug "})
        assert logger.level == logging.DEBUG and len(logger.handlers) == len(handlers) + 1
        setup_logging("X_LOG", {"X_LOG": "info"})  # a handler is added once
        assert logger.level == logging.INFO and len(logger.handlers) == len(handlers) + 1
    finally:
        logger.setLevel(level)
        logger.handlers[:] = handlers
