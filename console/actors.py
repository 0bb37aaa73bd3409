"""Who an audit actor is, in words a person reads: the one place the console turns the
recorded ``staff:<id>``, ``key:<id>``, ``system:<job>`` and ``admin`` into names.

A page collects the actors it shows, `resolve` looks them up in two statements (staff emails,
key roles and prefixes) inside the page's own transaction, and the template's ``who`` filter
shows the name with the recorded value in a tooltip. Removed staff and revoked keys are still
found: their rows stay so that old events keep naming them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlmodel import Session

from app.staff import service as staff
from app.tenants import keys

# The context key every page passes its resolved actors under (the ``who`` filter reads it).
CONTEXT_KEY = "actors"
ADMIN = "admin"


def _id_of(actor: str, kind: str) -> uuid.UUID | None:
    if not actor.startswith(kind + ":"):
        return None
    try:
        return uuid.UUID(actor[len(kind) + 1:])
    except ValueError:
        return None


def resolve(session: Session, *, tenant_id: uuid.UUID,
            actors: Iterable[str | None]) -> dict[str, str]:
    """Actor → what the page shows for it, for every actor given (``None``s skipped)."""
    wanted = {actor for actor in actors if actor}
    staff_ids = [i for i in (_id_of(a, "staff") for a in wanted) if i is not None]
    key_ids = [i for i in (_id_of(a, "key") for a in wanted) if i is not None]
    emails = staff.emails(session, tenant_id=tenant_id, staff_ids=staff_ids)
    described = keys.described(session, tenant_id=tenant_id, key_ids=key_ids)
    names: dict[str, str] = {}
    for actor in wanted:
        staff_id, key_id = _id_of(actor, "staff"), _id_of(actor, "key")
        if staff_id is not None and staff_id in emails:
            names[actor] = emails[staff_id]
        elif key_id is not None and key_id in described:
            role, prefix = described[key_id]
            # A key's prefix carries the start of its ID; an older key's is all role
            # ("lethe_compliance"), so the ID's start is added to tell two such keys apart.
            short = str(key_id).replace("-", "")[:8]
            names[actor] = (f"{role.value} key {prefix}…" if short in prefix
                            else f"{role.value} key {prefix}… (id {short})")
        else:
            names[actor] = unresolved(actor)
    return names


def unresolved(actor: str) -> str:
    """What is shown for an actor nobody looked up (or whose row is gone): its kind, never
    a bare ID."""
    if actor == ADMIN:
        return "operator (admin token)"
    kind, _, rest = actor.partition(":")
    if kind == "system":
        return f"Lethe ({rest.replace('_', ' ')})"
    if kind == "staff":
        return "a staff member"
    if kind == "key":
        return "an API key"
    return actor
