"""Keeping audit rows content-free.

Audit rows outlive every forget and erasure (invariant 5 leaves "only the tombstone ID and
content-free audit rows"), so nothing a caller hands to `record` may carry memory text. Free
text is one short `reason`; `details` holds counts, flags and IDs. Anything longer is refused,
never truncated, so a caller that passes text fails loudly in its tests instead of leaking.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

REASON_MAX = 500
DETAIL_STRING_MAX = 200
DETAIL_KEY_MAX = 64
DETAILS_MAX_DEPTH = 4
DETAILS_MAX_ITEMS = 100
TARGET_ID_MAX = 255

ACTOR = re.compile(r"^((?:key|staff):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                   r"|system:[a-z][a-z0-9_.-]{0,62}|admin)$")
ACTION = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_-]*)+$")
KIND = re.compile(r"^[a-z][a-z0-9_]*$")
STATE = re.compile(r"^[a-z][a-z_]*$")
# A float this large is an integer that Python writes in exponent form; PostgreSQL's jsonb
# would hand it back as a plain integer and the recomputed hash would no longer match.
EXPONENT_FORM = 1e16


def check_token(name: str, value: str, pattern: re.Pattern[str], max_len: int) -> str:
    if len(value) > max_len or not pattern.fullmatch(value):
        raise ValueError(f"audit {name} {value[:40]!r} is not a valid {name}")
    return value


def check_optional_token(
    name: str, value: str | None, pattern: re.Pattern[str], max_len: int
) -> str | None:
    return None if value is None else check_token(name, value, pattern, max_len)


def check_text(name: str, value: str | None, max_len: int) -> str | None:
    """A free-text field: capped, and free of NUL (PostgreSQL text cannot hold it)."""
    if value is None:
        return None
    if len(value) > max_len:
        raise ValueError(f"audit {name} is {len(value)} characters; the cap is {max_len}")
    if "\x00" in value:
        raise ValueError(f"audit {name} contains NUL")
    return value


def normalize_details(details: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``details`` and return it in the exact form the database will hand back."""
    if details is None:
        return {}
    if not isinstance(details, Mapping):
        raise ValueError("audit details must be an object")
    normalized: dict[str, Any] = _value(details, depth=1)
    return normalized


def _value(value: Any, *, depth: int) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str):
        return check_text("details string", value, DETAIL_STRING_MAX)
    if depth > DETAILS_MAX_DEPTH:
        raise ValueError(f"audit details nest deeper than {DETAILS_MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        _check_size(len(value))
        return {_key(key): _value(item, depth=depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        _check_size(len(value))
        return [_value(item, depth=depth + 1) for item in value]
    raise ValueError(f"audit details cannot hold a {type(value).__name__}")


def _float(value: float) -> float | int:
    if not math.isfinite(value):
        raise ValueError("audit details cannot hold NaN or infinity")
    if value == 0:
        return 0.0  # jsonb has no negative zero
    if value.is_integer() and abs(value) >= EXPONENT_FORM:
        return int(value)
    return value


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise ValueError("audit details keys must be strings")
    checked = check_text("details key", key, DETAIL_KEY_MAX)
    assert checked is not None
    return checked


def _check_size(size: int) -> None:
    if size > DETAILS_MAX_ITEMS:
        raise ValueError(f"audit details hold more than {DETAILS_MAX_ITEMS} items in one place")
