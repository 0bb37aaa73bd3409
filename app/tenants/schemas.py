from __future__ import annotations

import uuid

from pydantic import Field

from app.core.schemas import CleanStr, PublicModel, StrictModel


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
