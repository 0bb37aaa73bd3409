from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import Field, Strict

from app.core.schemas import CleanStr, PublicModel, StrictModel
from app.tenants.models import Role


class TenantCreate(StrictModel):
    name: CleanStr = Field(
        min_length=1, max_length=200, description="Display name of the tenant."
    )


class ApiKeysOnce(PublicModel):
    app: str = Field(description="Key for product backends.")
    compliance: str = Field(description="Key for compliance staff and the console.")


class TenantCreated(PublicModel):
    id: uuid.UUID
    name: str
    api_keys: ApiKeysOnce | None = Field(
        description="Shown once. Null on an idempotent replay: keys are stored only hashed."
    )


RoleIn = Annotated[Role, Strict(False)]


class ApiKeyCreate(StrictModel):
    role: RoleIn = Field(description="`app` for product backends, `compliance` for staff tools.")


class ApiKeyPublic(PublicModel):
    id: uuid.UUID
    role: Role
    prefix: str = Field(description="The key's first characters, to tell keys apart.")
    created_at: datetime
    last_used_at: datetime | None = Field(
        description="When the key last authenticated, to the minute; null if never."
    )


class ApiKeyCreated(PublicModel):
    id: uuid.UUID
    role: Role
    prefix: str
    created_at: datetime
    key: str | None = Field(
        description="Shown once. Null on an idempotent replay: keys are stored only hashed."
    )


class ApiKeyList(PublicModel):
    data: list[ApiKeyPublic]
    next_cursor: str | None = None
