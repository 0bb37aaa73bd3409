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


class Tampered(LetheError):
    """A ciphertext failed authentication: the wrong key, another row's ciphertext moved here,
    or altered bytes. Nothing of it is shown: the API answers 500 problem+json of type
    `sealed-value-rejected` (not a 503: retrying reads the same bytes), and logs ``reason``
    (which check failed, and where: table, column and row ID, never content)."""

    status, slug, title = 500, "sealed-value-rejected", "Stored value rejected"

    def __init__(self, reason: str) -> None:
        super().__init__(
            "A stored value failed its integrity check and was not shown; nothing was "
            "changed. The operator has been told.")
        self.reason = reason

    def logged(self) -> str:
        return self.reason
