from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field, Strict, StringConstraints

from app.core.schemas import PublicModel, StrictModel
from app.staff import passwords
from app.staff.models import StaffRole

EMAIL_MAX = 254
# Deliberately loose: one @, a dot in the domain, no spaces. Whether mail arrives is the
# tenant's business; this only keeps typos such as a missing @ out.
EMAIL_PATTERN = r"^[^@\s\x00]+@[^@\s\x00]+\.[^@\s\x00]+$"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normalize_email(email: str) -> str:
    """Emails compare case-insensitively in practice. Only ASCII letters are lowered: full
    Unicode lower-casing can lengthen a string (İ → i̇) past what was validated."""
    return email.translate(_ASCII_LOWER)


Email = Annotated[
    str,
    StringConstraints(max_length=EMAIL_MAX, pattern=EMAIL_PATTERN),
    AfterValidator(normalize_email),
]
StaffRoleIn = Annotated[StaffRole, Strict(False)]


class StaffCreate(StrictModel):
    email: Email = Field(description="Sign-in name; stored lower-cased, unique per tenant.")
    role: StaffRoleIn = Field(description="`officer` acts in the console; `viewer` only reads.")
    password: str | None = Field(
        None, min_length=passwords.MIN_LENGTH, max_length=passwords.MAX_LENGTH,
        description="Null: a strong password is generated and shown once in the answer.",
    )


class StaffRoleChange(StrictModel):
    role: StaffRoleIn = Field(description="The new role; the member's console sessions end.")


class StaffPublic(PublicModel):
    id: uuid.UUID
    email: str
    role: StaffRole
    created_at: datetime


class StaffCreated(StaffPublic):
    password: str | None = Field(
        None,
        description="The generated password, shown once; null when the caller chose it, and "
        "on an idempotent replay (only its hash is stored).",
    )


class StaffList(PublicModel):
    data: list[StaffPublic]
    next_cursor: str | None = None
