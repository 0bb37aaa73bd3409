from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.core.config import DEVELOPMENT_SECRET, Settings


def test_production_refuses_missing_or_default_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LETHE_ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("LETHE_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="LETHE_ADMIN_TOKEN"):
        Settings(environment="production", secret_key="s" * 32)
    with pytest.raises(ValidationError, match="LETHE_SECRET_KEY"):
        Settings(environment="production", admin_token="a" * 32, secret_key=DEVELOPMENT_SECRET)
    ok = Settings(environment="production", admin_token="a" * 32, secret_key="s" * 32)
    assert ok.environment == "production"


def test_database_url_switches_off_embedded_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://lethe@db/lethe")
    assert not Settings().embedded
    monkeypatch.delenv("DATABASE_URL")
    assert Settings().embedded
