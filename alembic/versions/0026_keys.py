"""Tenant keys move into the key store; erasure requests record the data key they destroyed.

Each tenant's `digest_key` is written into the key store (`app/keys/`) as the tenant's key,
unchanged, so every digest already kept (subjects of erasure requests, source exclusions,
audit names) still matches; then the column goes, and a dump of the database can no longer
be checked against guessed subjects. The key store must be reachable from wherever
`lethe migrate` runs (`LETHE_KEY_STORE`, or `keys` in its data folder).

Revision ID: 0026_keys
Revises: 0025_console_session_generation
Create Date: 2026-12-04
"""

import hmac
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.keys import tenant_keys

revision: str = "0026_keys"
down_revision: str | None = "0025_console_session_generation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, digest_key FROM tenant ORDER BY id")).all()
    for tenant_id, digest_key in rows:
        stored = tenant_keys.create_tenant_key(tenant_id, bytes(digest_key))
        if not hmac.compare_digest(stored, bytes(digest_key)):
            # Another key under this tenant's name: this is not the store these digests were
            # made with. Dropping the column now would lose the only right key.
            raise RuntimeError(
                f"the key store holds another key for tenant {tenant_id}: check "
                "LETHE_KEY_STORE before migrating")
    op.drop_column("tenant", "digest_key")

    op.add_column("erasure_request", sa.Column("data_key_id", sa.String(64), nullable=True))
    op.add_column("erasure_request", sa.Column("key_destroyed_at", sa.DateTime(timezone=True),
                                               nullable=True))


def downgrade() -> None:
    op.drop_column("erasure_request", "key_destroyed_at")
    op.drop_column("erasure_request", "data_key_id")

    bind = op.get_bind()
    op.add_column("tenant", sa.Column("digest_key", sa.LargeBinary(), nullable=True))
    for tenant_id in bind.execute(sa.text("SELECT id FROM tenant")).scalars().all():
        bind.execute(sa.text("UPDATE tenant SET digest_key = :key WHERE id = :id"),
                     {"key": tenant_keys.tenant_key(tenant_id), "id": tenant_id})
    op.alter_column("tenant", "digest_key", nullable=False)
