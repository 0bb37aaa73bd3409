"""`lethe doctor` checks the key store: readable, its KEK present, private, and holding every
tenant's key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from app.cli import doctor
from app.core.config import get_settings
from app.core.runtime import get_runtime
from app.keys import subjects


def test_a_healthy_store_passes(store_folder: Path, tenant: dict[str, Any]) -> None:
    summary = doctor.key_store(get_runtime())
    assert "KEK kek-" in summary and "every tenant's key present" in summary


def test_an_empty_store_passes_until_a_tenant_needs_it(store_folder: Path, client: Any) -> None:
    assert "created on first use" in doctor.key_store(get_runtime())


def test_a_store_without_the_tenants_keys_fails(
    store_folder: Path, tenant: dict[str, Any], tmp_path: Path
) -> None:
    os.environ["LETHE_KEY_STORE"] = str(tmp_path / "another")  # the fixture restores it
    get_settings.cache_clear()
    subjects.forget_cached()
    with pytest.raises(RuntimeError, match="1 of 1 tenants have no key"):
        doctor.key_store(get_runtime())


def test_a_store_readable_by_others_fails(store_folder: Path, tenant: dict[str, Any]) -> None:
    os.chmod(store_folder, 0o755)
    with pytest.raises(RuntimeError, match="readable by others"):
        doctor.key_store(get_runtime())


def test_a_store_that_lost_its_kek_fails(store_folder: Path, tenant: dict[str, Any]) -> None:
    for kek in (store_folder / "kek").glob("*.kek"):
        kek.unlink()
    with pytest.raises(RuntimeError, match="missing"):
        doctor.key_store(get_runtime())
    (store_folder / "kek" / "current").unlink()
    with pytest.raises(RuntimeError, match="no current KEK"):
        doctor.key_store(get_runtime())
