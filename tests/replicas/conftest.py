"""A real streaming standby of the test server, with an apply delay, and the settings that
send reads to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from app.core import db, replicas
from app.core.config import get_settings
from bench.standby import Standby, create, remove
from tests.conftest import _libpq

# Long enough that a recall sent right after a forget reaches the standby before it has
# replayed it; short enough that waiting for it stays cheap.
APPLY_DELAY = "2s"


@pytest.fixture(scope="module")
def standby(database: dict[str, Any]) -> Iterator[Standby]:
    if database["server"] is None:
        pytest.skip("a standby is made from the embedded server")
    made = create(database["server"], APPLY_DELAY)
    try:
        made.wait_until_replayed(_libpq(database["url"]))
        yield made
    finally:
        remove(made)


def _reset() -> None:
    db.dispose_engines()
    get_settings.cache_clear()
    replicas.REPLICAS.forget_skips()


@pytest.fixture
def use_replica(standby: Standby, database: dict[str, Any],
                monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``use_replica(fence=True, wait=0.05, gets=True)``: reads go to the standby, as the
    application role (a physical standby has the primary's roles)."""
    from app.core.runtime import get_runtime

    runtime = get_runtime()
    name = make_url(database["url"]).database
    assert name is not None

    def configure(*, fence: bool = True, wait: float = 0.05, gets: bool = True) -> None:
        monkeypatch.setenv("LETHE_READ_DATABASE_URLS",
                           standby.url(name, runtime.app_role, runtime.app_password))
        monkeypatch.setenv("LETHE_REPLICA_FENCE", "true" if fence else "false")
        monkeypatch.setenv("LETHE_REPLICA_WAIT_SECONDS", str(wait))
        monkeypatch.setenv("LETHE_REPLICA_GETS", "true" if gets else "false")
        _reset()

    yield configure
    monkeypatch.delenv("LETHE_READ_DATABASE_URLS", raising=False)
    monkeypatch.delenv("LETHE_REPLICA_FENCE", raising=False)
    monkeypatch.delenv("LETHE_REPLICA_WAIT_SECONDS", raising=False)
    monkeypatch.delenv("LETHE_REPLICA_GETS", raising=False)
    _reset()


def counted(name: str, **labels: str) -> float:
    from app.core.metrics import REGISTRY

    return REGISTRY.get_sample_value(name, labels) or 0.0
