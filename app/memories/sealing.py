"""What Lethe remembers, sealed under its subject's data key: every version's text, a
memory's metadata and a retraction's `about` phrase are AES-256-GCM ciphertexts bound to
their row and column (`row_aad`), so no table, index, WAL segment, dump or replica of the
database holds them readable, and an erasure, which destroys the key, makes every copy
unreadable at once (docs/decisions.md, "Nothing readable at rest").

Every `subject` parameter here is the subject as stored: its keyed digest
(`app/keys/digests.py`), which names its data key. A subject or source a row must show is kept
as a sealed copy beside its digest (`seal_subject`, `Opener.subject`).

An empty value is stored as no bytes at all: a purged version or a tombstone's metadata
holds nothing to open, needs no key, and reads as empty even after the key is destroyed.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.keys import digests, sealed_json, subjects
from app.keys.subjects import SubjectKey

EMPTY = b""


def key_for_writing(tenant_id: uuid.UUID, subject: str) -> SubjectKey:
    """The subject's data key, made on its first write."""
    return subjects.subject_key(tenant_id, subject)


def key_for_reading(tenant_id: uuid.UUID, subject: str) -> SubjectKey | None:
    """The subject's data key, or None once an erasure destroyed it (what it sealed then
    reads as erased: empty). A read never makes a key: a sealed value whose key is absent
    is a key store that lost it (`LookupError`), never a value to show as empty."""
    try:
        return subjects.subject_key(tenant_id, subject, create=False)
    except subjects.KeyDestroyed:
        return None


def seal(tenant_id: uuid.UUID, subject: str, column: tuple[str, uuid.UUID, str],
         text: str, *, key: SubjectKey | None = None) -> bytes:
    """``text`` as stored in (table, row ID, column); empty: no bytes. ``key``: the
    subject's, when the caller holds it already."""
    if not text:
        return EMPTY
    return subjects.seal_text(key or key_for_writing(tenant_id, subject), text,
                              aad=subjects.row_aad(*column))


@dataclass
class Opener:
    """Opens the values of one read, asking the key store once per subject (each ask checks
    the key still exists: an erasure in another process is seen at the next read)."""

    _keys: dict[tuple[uuid.UUID, str], SubjectKey | None] = field(default_factory=dict)

    def key(self, tenant_id: uuid.UUID, subject: str) -> SubjectKey | None:
        slot = (tenant_id, subject)
        if slot not in self._keys:
            # An erasure's stand-in names no key: what it left sealed reads as erased.
            self._keys[slot] = (None if subject.startswith(digests.ERASED)
                                else key_for_reading(tenant_id, subject))
        return self._keys[slot]

    def erased(self, tenant_id: uuid.UUID, subject: str, sealed: bytes | None) -> bool:
        """Whether ``sealed`` was sealed under a key an erasure has destroyed since: what a
        copy of the database restored from before the erasure still holds of its subject.
        A memory whose current text is such a value reads as erased (absent, like a
        forgotten one), never as a live memory with empty text. Nothing stored is never
        erased. Asks the store nothing more than `open` does (once per subject per read)."""
        if not sealed:
            return False
        key = self.key(tenant_id, subject)
        return key is None or subjects.generation_of(bytes(sealed)) < key.generation

    def open(self, tenant_id: uuid.UUID, subject: str, column: tuple[str, uuid.UUID, str],
             sealed: bytes | None) -> str:
        """What `seal` stored in (table, row ID, column), read: `subjects.Tampered` if it is
        not that row's, empty if nothing was stored or the subject's key was destroyed."""
        if not sealed:
            return ""
        key = self.key(tenant_id, subject)
        if key is None:
            return ""
        try:
            return subjects.open_text(key, bytes(sealed), aad=subjects.row_aad(*column))
        except subjects.KeyDestroyed:  # sealed under a key an earlier erasure destroyed
            return ""
        except subjects.Tampered as refused:  # where, for the log (IDs only)
            table, row_id, name = column
            raise subjects.Tampered(f"{refused.reason}: {table}.{name} of {row_id}") from None

    def text(self, tenant_id: uuid.UUID, subject: str, version_id: uuid.UUID,
             sealed: bytes) -> str:
        """A version's text as stored, read."""
        return self.open(tenant_id, subject, ("memory_version", version_id, "text"), sealed)

    def metadata(self, tenant_id: uuid.UUID, subject: str, memory_id: uuid.UUID,
                 sealed: bytes | None) -> dict[str, Any]:
        """A memory's metadata as stored, read."""
        opened = self.open(tenant_id, subject, ("memory", memory_id, "metadata"), sealed)
        metadata: dict[str, Any] = json.loads(opened) if opened else {}
        return metadata

    def name(self, tenant_id: uuid.UUID, subject: str, column: tuple[str, uuid.UUID, str],
             stored: str, sealed: bytes | None) -> str:
        """A subject or source a row names (``stored``: its digest, or an erasure's stand-in),
        as shown: its sealed copy opened; the stand-in where there is no copy; `erased:` and
        the digest once the subject's key is destroyed."""
        if not sealed:
            return stored
        return self.open(tenant_id, subject, column, sealed) or digests.ERASED + stored

    def subject(self, tenant_id: uuid.UUID, subject: str, memory_id: uuid.UUID,
                sealed: bytes | None) -> str:
        """A memory's subject as shown (``subject``: the stored digest)."""
        return self.name(tenant_id, subject, ("memory", memory_id, "subject"), subject, sealed)

    def source(self, tenant_id: uuid.UUID, subject: str, memory_id: uuid.UUID,
               stored: str | None, sealed: bytes | None) -> str | None:
        """A memory's source as shown (``stored``: the stored digest)."""
        if stored is None:
            return None
        return self.name(tenant_id, subject, ("memory", memory_id, "source"), stored, sealed)

    def about(self, tenant_id: uuid.UUID, subject: str, retraction_id: uuid.UUID,
              sealed: bytes | None) -> str | None:
        """A retraction's `about` phrase as stored, read (None once the key is destroyed)."""
        if sealed is None:
            return None
        return self.open(tenant_id, subject, ("retraction", retraction_id, "about"),
                         sealed) or None


def seal_text(tenant_id: uuid.UUID, subject: str, version_id: uuid.UUID, text: str, *,
              key: SubjectKey | None = None) -> bytes:
    """A version's text as stored."""
    return seal(tenant_id, subject, ("memory_version", version_id, "text"), text, key=key)


def open_text(tenant_id: uuid.UUID, subject: str, version_id: uuid.UUID, sealed: bytes) -> str:
    """A version's text as stored, read (`Opener.text` for many)."""
    return Opener().text(tenant_id, subject, version_id, sealed)


def seal_metadata(tenant_id: uuid.UUID, subject: str, memory_id: uuid.UUID,
                  metadata: dict[str, Any]) -> bytes:
    """A memory's metadata as stored: its JSON, sealed (none: no bytes)."""
    return seal(tenant_id, subject, ("memory", memory_id, "metadata"),
                json.dumps(metadata, separators=(",", ":")) if metadata else "")


def open_metadata(tenant_id: uuid.UUID, subject: str, memory_id: uuid.UUID,
                  sealed: bytes | None) -> dict[str, Any]:
    """A memory's metadata as stored, read."""
    return Opener().metadata(tenant_id, subject, memory_id, sealed)


def seal_subject(tenant_id: uuid.UUID, digest: str, memory_id: uuid.UUID, subject: str
                 ) -> bytes:
    """A memory's sealed copy of its subject (``digest``: the subject's, as stored)."""
    return seal(tenant_id, digest, ("memory", memory_id, "subject"), subject)


def seal_source(tenant_id: uuid.UUID, digest: str, memory_id: uuid.UUID, source: str | None
                ) -> bytes | None:
    """A memory's sealed copy of its source, under its subject's key (None: no source)."""
    if source is None:
        return None
    return seal(tenant_id, digest, ("memory", memory_id, "source"), source)


def seal_tenant_name(tenant_id: uuid.UUID, column: tuple[str, uuid.UUID, str],
                     text: str | None) -> bytes | None:
    """A source a row names for no one subject (a source hold, a source exclusion), sealed
    under the tenant's sealing key; an erasure of a subject citing it empties the copy."""
    return sealed_json.seal_tenant_text(tenant_id, text, aad=subjects.row_aad(*column))


def open_tenant_name(tenant_id: uuid.UUID, column: tuple[str, uuid.UUID, str],
                     sealed: bytes | None) -> str | None:
    return sealed_json.open_tenant_text(tenant_id, sealed, aad=subjects.row_aad(*column))


def seal_hold_names(tenant_id: uuid.UUID, hold_id: uuid.UUID, subject: str | None,
                    source: str | None) -> tuple[bytes | None, bytes | None]:
    """A legal hold's sealed copies of the subject (under its key) or source it names."""
    sealed_subject = None if subject is None else seal(
        tenant_id, digests.subject_digest(tenant_id, subject),
        ("legal_hold", hold_id, "subject"), subject)
    return sealed_subject, seal_tenant_name(tenant_id, ("legal_hold", hold_id, "source"), source)


def seal_about(tenant_id: uuid.UUID, subject: str, retraction_id: uuid.UUID,
               about: str | None) -> bytes | None:
    """A retraction's `about` phrase as stored (None: the record has none)."""
    if about is None:
        return None
    return seal(tenant_id, subject, ("retraction", retraction_id, "about"), about)


def open_about(tenant_id: uuid.UUID, subject: str, retraction_id: uuid.UUID,
               sealed: bytes | None) -> str | None:
    """A retraction's `about` phrase as stored, read."""
    return Opener().about(tenant_id, subject, retraction_id, sealed)
