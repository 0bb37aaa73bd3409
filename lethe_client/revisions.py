"""Which revision an edit's If-Match names: the one the caller read."""

from __future__ import annotations

from uuid import UUID

from lethe_client.models import Memory


def revision_of(memory: Memory | UUID | str, revision: int | None) -> tuple[str, int]:
    """(id, revision) of an edit: a `Memory` brings the revision it was read at; a bare ID
    needs ``revision``, since guessing the current one would defeat the check."""
    if isinstance(memory, Memory):
        return str(memory.id), memory.revision if revision is None else revision
    if revision is None:
        raise TypeError("pass the Memory you read, or revision= with its ID")
    return str(memory), revision
