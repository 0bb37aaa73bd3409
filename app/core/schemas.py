"""Base schema classes shared by every domain."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict

# Strict bodies parse JSON as written: `true` is not a number, "3" is not a float. UUIDs arrive
# as JSON strings, so fields holding them opt back into lax parsing.
BodyUUID = Annotated[uuid.UUID, Strict(False)]


class StrictModel(BaseModel):
    """Request bodies: unknown fields are an error, types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class PublicModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)
