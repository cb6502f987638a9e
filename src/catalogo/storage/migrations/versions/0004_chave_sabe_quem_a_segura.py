"""A claim on an idempotency key names the database session that holds it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

PostgreSQL notes in `holder` the session that claimed a key (its server process and when that
started), so that a retry takes over at once a claim whose session has ended: a request cut
short by a stopped server, an ended session or a process that died, which before answered 409
for a minute. NULL where no session is known (SQLite; claims made before this revision): those
keep the one-minute lease.
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: a column older code leaves NULL, which means the one-minute lease.
OLDER_CODE_SERVES = True


def upgrade() -> None:
    op.execute("ALTER TABLE idempotency_keys ADD COLUMN holder TEXT")


def downgrade() -> None:
    op.execute("ALTER TABLE idempotency_keys DROP COLUMN holder")
