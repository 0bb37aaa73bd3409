"""Base schema classes shared by every domain."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    StringConstraints,
)

# Strict bodies parse JSON as written: `true` is not a number, "3" is not a float. UUIDs arrive
# as JSON strings, so fields holding them opt back into lax parsing.
BodyUUID = Annotated[uuid.UUID, Strict(False)]
# A time in a JSON body: an ISO 8601 string with its offset (JSON has no time type).
def _time_string(value: Any) -> Any:
    # Lax parsing would take a number as a Unix timestamp; the schema says a string.
    if not isinstance(value, str | datetime):
        raise ValueError("a time is an RFC 3339 string with its offset")
    return value


BodyTime = Annotated[AwareDatetime, Strict(False), BeforeValidator(_time_string)]

# PostgreSQL text cannot hold NUL; saying so in the schema turns it into a 422, not a 500.
CleanStr = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]


def whole_number(value: Any) -> Any:
    # JSON does not tell 13 from 13.0 (JSON Schema calls both integers); "13" and true stay
    # refused by the strict check that follows.
    if type(value) is float and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(whole_number)]

# The largest value of an `integer` column (revisions, version numbers): a bigger one in a
# request is a 422 said by the schema, not a 500 from PostgreSQL.
INT32_MAX = 2**31 - 1
# Integers inside free-form JSON (metadata) are bounded too, at what a signed 64-bit integer
# holds, so every integer in the API has documented bounds.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class StrictModel(BaseModel):
    """Request bodies: unknown fields are an error, types are not coerced."""

    # NaN and Infinity (and 1e999, which parses as Infinity) are not JSON: jsonb refuses them.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class PublicModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


# PostgreSQL cannot store NUL, and a blank fact or subject is no fact: both said in the schema
# (so clients and property tests see them), not found later as a 500 or a junk row. `\s`
# differs between regex engines: U+0085 is whitespace to this server's (Unicode), not to a
# JSON Schema reader's (ECMAScript), and U+FEFF the other way round; naming both makes
# every engine draw the same line.
NonBlank = Annotated[str, StringConstraints(
    pattern=r"^[^\x00]*[^\s\x00\x85\ufeff][^\x00]*$")]
