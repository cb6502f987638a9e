"""Product versions (no lost updates) and idempotency keys (safe retries of creation).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

Every write increments `versao`; ETags and the edit form carry it. `idempotency_keys` keeps,
for 24 hours, the first answer to each `Idempotency-Key` so that a retry gets it again.
`status` is NULL while the first request is still being handled.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: older code would write without raising `versao`: lost updates.
OLDER_CODE_SERVES = False


def upgrade() -> None:
    # Plain ADD COLUMN, valid in SQLite and PostgreSQL alike: a batch (copy-and-move) migration
    # would rebuild the table and drop its AUTOINCREMENT, letting removed ids come back. BIGINT
    # is SQLite's INTEGER, and in PostgreSQL holds any version a client may name.
    op.execute(
        "ALTER TABLE produtos ADD COLUMN versao BIGINT NOT NULL DEFAULT 1 CHECK (versao >= 1)"
    )
    op.create_table(
        "idempotency_keys",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("fingerprint", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("headers", sa.Text),
        sa.Column("body", sa.LargeBinary),
    )
    op.create_index("idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_table("idempotency_keys")
    op.execute("ALTER TABLE produtos DROP COLUMN versao")
