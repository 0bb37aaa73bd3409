"""Resolve what this process connects to: database roles, broker and secrets.

Embedded mode starts the bundled PostgreSQL; otherwise the URLs come from the environment.
Secrets that were not given are generated once and kept in the data folder (mode 0600), so
every process of one installation agrees on them.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlalchemy.engine import make_url

from app.core import embedded
from app.core.config import Settings, get_settings

SECRETS_FILE = "secrets.json"


@dataclass(frozen=True)
class Runtime:
    owner_url: str
    app_url: str
    broker_url: str
    admin_token: str
    secret_key: str
    app_role: str
    app_password: str
    embedded_server: embedded.EmbeddedServer | None
    generated_admin_token: bool


def resolve(settings: Settings) -> Runtime:
    server = (embedded.start(settings.data_dir,
                             shared_buffers_mb=settings.embedded_shared_buffers_mb)
              if settings.embedded else None)
    owner_url = server.url() if server else with_driver(settings.database_url or "")
    stored = _load_or_create_secrets(settings.data_dir) if _needs_secrets(settings) else {}
    app_password = settings.app_db_password or stored.get("app_db_password", "")
    if settings.app_database_url:
        app_url = with_driver(settings.app_database_url)
    else:
        app_url = (
            make_url(owner_url)
            .set(username=settings.app_db_role, password=app_password)
            .render_as_string(hide_password=False)
        )
    broker_url = settings.celery_broker_url or "sqla+" + owner_url
    return Runtime(
        owner_url=owner_url,
        app_url=app_url,
        broker_url=broker_url,
        admin_token=settings.admin_token or stored["admin_token"],
        secret_key=settings.secret_key or stored["secret_key"],
        app_role=make_url(app_url).username or settings.app_db_role,
        app_password=make_url(app_url).password or app_password,
        embedded_server=server,
        generated_admin_token=settings.admin_token is None,
    )


@lru_cache
def get_runtime() -> Runtime:
    return resolve(get_settings())


def release() -> None:
    """Stop the embedded server if this process started it: a one-off command (`lethe
    doctor`, `lethe tenants list`) leaves no database behind, and leaves running one it found
    running (under `lethe serve`)."""
    if get_runtime.cache_info().currsize == 0:
        return  # never resolved: nothing started
    server = get_runtime().embedded_server
    if server is not None and server.started_here and embedded.is_running(server.pgdata):
        server.stop()


def _needs_secrets(settings: Settings) -> bool:
    return not (
        settings.admin_token
        and settings.secret_key
        and (settings.app_db_password or settings.app_database_url)
    )


def with_driver(url: str) -> str:
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def _load_or_create_secrets(data_dir: Path) -> dict[str, str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SECRETS_FILE
    if path.exists():
        stored: dict[str, str] = json.loads(path.read_text())
    else:
        stored = {}
    wanted = ("admin_token", "secret_key", "app_db_password")
    if all(stored.get(name) for name in wanted):
        return stored
    for name in wanted:
        stored.setdefault(name, secrets.token_urlsafe(32))
    # Written with 0600 from the first byte: the admin token must never be world-readable.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(stored, handle)
    os.chmod(path, 0o600)
    return stored
