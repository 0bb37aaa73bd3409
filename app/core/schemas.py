"""Base schema classes shared by every domain."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict, StringConstraints

# Strict bodies parse JSON as written: `true` is not a number, "3" is not a float. UUIDs arrive
# as JSON strings, so fields holding them opt back into lax parsing.
BodyUUID = Annotated[uuid.UUID, Strict(False)]

# PostgreSQL text cannot hold NUL; saying so in the schema turns it into a 422, not a 500.
CleanStr = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]


class StrictModel(BaseModel):
    """Request bodies: unknown fields are an error, types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class PublicModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)
