"""Reading and changing a tenant's settings."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import ValidationError
from sqlmodel import Session

from app.audit import service as audit
from app.core.errors import Conflict, NotFound
from app.core.models import utcnow
from app.tenant_settings.models import TenantSettings
from app.tenant_settings.schemas import (
    Console,
    Erasure,
    ForgetCascade,
    HalfLives,
    Limits,
    Retention,
    Retractions,
    SettingsPatch,
    SettingsPublic,
    Supersession,
    Working,
)


class SettingsConflict(Conflict):
    slug, title = "settings-conflict", "The settings would contradict each other"


def create_defaults(session: Session, *, tenant_id: uuid.UUID) -> TenantSettings:
    row = TenantSettings(
        tenant_id=tenant_id,
        half_lives=HalfLives().model_dump(),
        retention=Retention().model_dump(),
        working=Working().model_dump(),
        supersession=Supersession().model_dump(),
        detect_forget_requests=False,
        forget=ForgetCascade().model_dump(),
        retractions=Retractions().model_dump(),
        erasure=Erasure().model_dump(),
        console=Console().model_dump(),
        limits=Limits().model_dump(),
    )
    session.add(row)
    return row


def get(session: Session, *, tenant_id: uuid.UUID) -> SettingsPublic:
    return _public(_row(session, tenant_id))


def update(
    session: Session, *, tenant_id: uuid.UUID, patch: SettingsPatch, actor: str
) -> SettingsPublic:
    """Merge ``patch`` into the settings; audited as ``settings.updated`` naming ``actor``
    and the fields whose values changed (names only)."""
    row = _row(session, tenant_id, for_update=True)
    current = _public(row).model_dump()
    changes = patch.model_dump(exclude_none=True)
    merged: dict[str, Any] = {
        key: ({**current[key], **changes[key]} if isinstance(current[key], dict) else changes[key])
        if key in changes else current[key]
        for key in current
    }
    try:
        updated = SettingsPublic.model_validate(merged)
    except ValidationError as exc:
        # Each field was valid on its own (the body passed validation), so the clash is with
        # the settings as they stand: a conflict, not a malformed request.
        raise SettingsConflict(
            "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in exc.errors())
        ) from None
    row.half_lives = updated.half_lives.model_dump()
    row.retention = updated.retention.model_dump()
    row.working = updated.working.model_dump()
    row.supersession = updated.supersession.model_dump()
    row.detect_forget_requests = updated.detect_forget_requests
    row.forget = updated.forget.model_dump()
    row.retractions = updated.retractions.model_dump()
    row.erasure = updated.erasure.model_dump()
    row.console = updated.console.model_dump()
    row.limits = updated.limits.model_dump()
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    audit.record(session, tenant_id=tenant_id, actor=actor, action="settings.updated",
                 target_kind="settings", target_id=tenant_id,
                 details={"changed": changed_fields(current, updated.model_dump())})
    return updated


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Dotted names of the settings whose values differ, e.g. ``half_lives.situational``."""
    changed: list[str] = []
    for key in sorted(after):
        if isinstance(after[key], dict):
            changed += [f"{key}.{name}" for name in sorted(after[key])
                        if after[key][name] != before[key].get(name)]
        elif after[key] != before[key]:
            changed.append(key)
    return changed


def _row(session: Session, tenant_id: uuid.UUID, *, for_update: bool = False) -> TenantSettings:
    row = session.get(TenantSettings, tenant_id, with_for_update=for_update)
    if row is None:
        raise NotFound("No settings for this tenant.")
    return row


def _public(row: TenantSettings) -> SettingsPublic:
    return SettingsPublic(
        half_lives=HalfLives.model_validate(row.half_lives),
        retention=Retention.model_validate(row.retention),
        working=Working.model_validate(row.working),
        supersession=Supersession.model_validate(row.supersession),
        detect_forget_requests=row.detect_forget_requests,
        # An empty object (a row from before these settings) reads as the defaults.
        forget=ForgetCascade.model_validate(row.forget),
        retractions=Retractions.model_validate(row.retractions),
        erasure=Erasure.model_validate(row.erasure),
        console=Console.model_validate(row.console),
        limits=Limits.model_validate(row.limits),
    )
