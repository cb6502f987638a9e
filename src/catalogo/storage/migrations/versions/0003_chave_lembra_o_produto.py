"""Idempotency keys remember the product they created, not an HTTP answer.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

The answer to a retry is rebuilt from the product the first request created (its values are
the retry's own: the same key with other values is refused), so the database keeps data, not
status lines and headers. `produto_id` is NULL while the first request is still being handled.

Keys answered before this revision: a JSON creation's kept body names the product, so its key
keeps working. A form's 303 names none; those keys (only a script sends a form with an
Idempotency-Key, and keys last 24 hours) are dropped, and a retry of one creates again.
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: older code reads and writes the keys' former columns.
OLDER_CODE_SERVES = False


def upgrade() -> None:
    op.execute("ALTER TABLE idempotency_keys ADD COLUMN produto_id BIGINT")
    keys = op.get_bind().execute(
        sa.text("SELECT key, status, body FROM idempotency_keys WHERE status IS NOT NULL")
    )
    for key, status, body in keys.fetchall():
        if status == 201:
            statement = "UPDATE idempotency_keys SET produto_id = :id WHERE key = :key"
            op.execute(sa.text(statement).bindparams(id=json.loads(body)["id"], key=key))
        else:
            op.execute(sa.text("DELETE FROM idempotency_keys WHERE key = :key").bindparams(key=key))
    for column in ("status", "headers", "body"):
        op.execute(f"ALTER TABLE idempotency_keys DROP COLUMN {column}")


def downgrade() -> None:
    op.execute("DELETE FROM idempotency_keys")
    op.execute("ALTER TABLE idempotency_keys DROP COLUMN produto_id")
    op.add_column("idempotency_keys", sa.Column("status", sa.Integer))
    op.add_column("idempotency_keys", sa.Column("headers", sa.Text))
    op.add_column("idempotency_keys", sa.Column("body", sa.LargeBinary))
