"""The key store's interface, and the one this installation uses.

A key store keeps keys wrapped under its key-encryption key (KEK), each entry named by its
tenant and a name (`tenant` for the tenant's own key, a data key's `key_id` otherwise). It
never sees a subject, and a key leaves it only unwrapped into the process that asked. The
embedded implementation is a folder (`app/keys/files.py`); an external KMS implements the same
methods with the KEK inside itself (wrapping and unwrapping become its calls) and the wrapped
entries wherever it keeps them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

TENANT_ENTRY = "tenant"


@dataclass(frozen=True)
class RotationStep:
    """Progress of a rotation: ``done`` of ``total`` entries re-wrapped under ``kek_id``."""

    kek_id: str
    done: int
    total: int


class KeyStore(Protocol):
    def describe(self) -> str:
        """Where the store is, for `lethe doctor` and logs (never a key)."""
        ...

    def current_kek_id(self) -> str:
        """The KEK new entries are wrapped under (created on the store's first use)."""
        ...

    def load(self, tenant_id: uuid.UUID, name: str) -> bytes | None:
        """The unwrapped key of the entry, None when there is none; `KeyDestroyed` when it
        was destroyed, `Tampered` when it does not unwrap."""
        ...

    def create(self, tenant_id: uuid.UUID, name: str, key: bytes) -> bytes:
        """Wrap and store ``key`` unless the entry exists: the key stored (the first
        writer's, when two processes create the same entry at once)."""
        ...

    def present(self, tenant_id: uuid.UUID, name: str) -> bool:
        """Cheaply: whether the entry still exists (neither destroyed nor removed). Every use
        of a cached key asks, so a destruction in another process takes effect at once."""
        ...

    def destroy(self, tenant_id: uuid.UUID, name: str) -> datetime:
        """Destroy the entry so that nothing of it stays readable; when it was destroyed
        (the first destruction's time: destroying again changes nothing)."""
        ...

    def destroyed_at(self, tenant_id: uuid.UUID, name: str) -> datetime | None:
        ...

    def entries(self) -> Iterator[tuple[uuid.UUID, str]]:
        """Every live entry."""
        ...

    def rotate(self, progress: Callable[[RotationStep], None]) -> RotationStep:
        """Re-wrap every entry under a new KEK, then destroy every older KEK."""
        ...

    def check(self) -> str:
        """Raise unless the store is readable, has its KEK and safe permissions; else a
        one-line summary."""
        ...
