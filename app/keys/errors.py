"""What the key store and the ciphers refuse with."""

from __future__ import annotations

from app.core.errors import LetheError

# Long enough for a remounted volume or a restarted KMS, short enough that a client's retry
# is not what keeps a recovered store idle.
RETRY_AFTER_SECONDS = 5


class KeyStoreUnavailable(LetheError):
    """The key store cannot be read or written. The API answers 503 with Retry-After and the
    request's transaction rolls back: without a key nothing is read, and nothing is written in
    clear instead."""

    status, slug, title = 503, "key-store-unavailable", "Key store unavailable"

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(
            detail or "The key store cannot be read; nothing was changed. Retry after the "
            "time given.",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )


class KeyDestroyed(Exception):
    """The (tenant, subject) data key was destroyed by an erasure: what it sealed is gone."""


class Tampered(Exception):
    """A ciphertext failed authentication: the wrong key, another row's ciphertext moved here,
    or altered bytes."""
