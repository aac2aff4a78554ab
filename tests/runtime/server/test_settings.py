"""Settings (runtime/settings.py): defaults, environment parsing, documentation."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.server.conftest import RuntimeModules


def test_defaults(rt: RuntimeModules) -> None:
    s = rt.settings.Settings()
    assert s.store_url == "sqlite:///./data/app.db"
    assert s.rate_limit_storage_url == "memory://"
    assert s.rate_limit_strategy == "sliding-window-counter"
    assert s.rate_limit_default == "100/minute"
    assert s.max_body_bytes == 1_048_576
    assert s.idempotency_ttl_seconds == 86_400
    assert s.webhook_secrets == () and s.rate_limit_tiers == {} and s.rate_limit_enabled


def test_from_env(rt: RuntimeModules) -> None:
    env = {
        "APIFORGE_STORE_URL": "memory://",
        "APIFORGE_RATE_LIMIT_STORAGE_URL": "redis://127.0.0.1:6379/1",
        "APIFORGE_RATE_LIMIT_ENABLED": "off",
        "APIFORGE_RATE_LIMIT_TIERS": "free=10/minute, pro=1000/hour",
        "APIFORGE_AUTH_FAILURE_LIMIT": "5/minute",
        "APIFORGE_MAX_BODY_BYTES": "2_000",
        "APIFORGE_WEBHOOK_SECRETS": "new, old",
        "APIFORGE_UNKNOWN": "ignored",
        "OTHER_STORE_URL": "ignored",
    }
    s = rt.settings.Settings.from_env(environ=env)
    assert s.store_url == "memory://"
    assert s.rate_limit_storage_url == "redis://127.0.0.1:6379/1"
    assert s.rate_limit_enabled is False
    assert s.rate_limit_tiers == {"free": "10/minute", "pro": "1000/hour"}
    assert s.auth_failure_limit == "5/minute"
    assert s.max_body_bytes == 2000
    assert s.webhook_secrets == ("new", "old")
    assert s.idempotency_ttl_seconds == 86_400
    other = rt.settings.Settings.from_env(prefix="SHOP_", environ={"SHOP_MAX_BODY_BYTES": "5"})
    assert other.max_body_bytes == 5


def test_repr_masks_secrets(rt: RuntimeModules) -> None:
    s = rt.settings.Settings(
        webhook_secrets=("whsec_topsecret",),
        rate_limit_storage_url="redis://user:hunter2@cache:6379/0",
    )
    shown = repr(s)
    assert "whsec_topsecret" not in shown and "hunter2" not in shown
    assert "webhook_secrets='***'" in shown
    assert "redis://user:***@cache:6379/0" in shown
    assert repr(rt.settings.Settings()).count("***") == 0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("APIFORGE_MAX_BODY_BYTES", "big"),
        ("APIFORGE_RATE_LIMIT_ENABLED", "maybe"),
        ("APIFORGE_RATE_LIMIT_TIERS", "free"),
        ("APIFORGE_RATE_LIMIT_TIERS", "{bad json"),
    ],
)
def test_bad_values_name_the_variable(rt: RuntimeModules, name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name):
        rt.settings.Settings.from_env(environ={name: value})


def test_every_setting_is_documented(rt: RuntimeModules) -> None:
    rows = rt.settings.Settings.documented()
    assert [r[0] for r in rows] == [
        "APIFORGE_" + f.name.upper() for f in dataclasses.fields(rt.settings.Settings)
    ]
    for env, _default, doc in rows:
        assert doc, f"{env} has no #: documentation"
    assert rows[0][:2] == ("APIFORGE_STORE_URL", "sqlite:///./data/app.db")


def test_subclass_adds_documented_settings(rt: RuntimeModules, tmp_path: Any) -> None:
    # a generated server extends the dataclass in its own module; from_env and documented follow
    source = (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "from .runtime.settings import Settings as Base\n\n"
        "@dataclass(frozen=True)\n"
        "class Settings(Base):\n"
        "    #: Seconds a job may run.\n"
        "    job_timeout_seconds: int = 30\n"
    )
    pkg_dir = Path(rt.settings.__file__).parent.parent
    (pkg_dir / "ext_settings.py").write_text(source)
    ext = rt.app_module("ext_settings")
    s = ext.Settings.from_env(
        environ={"APIFORGE_JOB_TIMEOUT_SECONDS": "5", "APIFORGE_MAX_BODY_BYTES": "9"}
    )
    assert (s.job_timeout_seconds, s.max_body_bytes) == (5, 9)
    rows = {env: doc for env, _default, doc in ext.Settings.documented()}
    assert rows["APIFORGE_JOB_TIMEOUT_SECONDS"] == "Seconds a job may run."
    assert rows["APIFORGE_STORE_URL"].startswith("Where resources")


def test_problems_read_urls_and_limits_as_the_server_will(rt: RuntimeModules) -> None:
    assert rt.settings.Settings().problems() == []
    ok = rt.settings.Settings(
        rate_limit_storage_url="memcached://cache:11211",  # any `limits` storage
        rate_limit_tiers={"pro": "10/second;1000/hour"},
    )
    assert ok.problems() == []
    bad = rt.settings.Settings(
        store_url="sqlite:///",
        rate_limit_storage_url="postgres://u:pw@db/x",
        rate_limit_tiers={"pro": "fast"},
        health_path="healthz",
    )
    found = "\n".join(bad.problems())
    assert "APIFORGE_STORE_URL: 'sqlite:///' is not a store URL" in found
    assert "APIFORGE_RATE_LIMIT_STORAGE_URL: 'postgres://u:***@db/x'" in found
    assert "APIFORGE_RATE_LIMIT_TIERS (pro): 'fast' is not a limit" in found
    assert "APIFORGE_HEALTH_PATH: 'healthz' must start with '/'" in found
    assert len(bad.problems()) == 4
