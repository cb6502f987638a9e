"""A batch's events found at once: an index on `eventos.lote`, for undoing an import (or a bulk
change) without reading the whole history.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25

Partial: most events belong to no batch, and they stay out of the index.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: an index.
OLDER_CODE_SERVES = True

_IN_A_BATCH = sa.text("lote IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "eventos_lote",
        "eventos",
        ["lote", "id"],
        sqlite_where=_IN_A_BATCH,
        postgresql_where=_IN_A_BATCH,
    )


def downgrade() -> None:
    op.drop_index("eventos_lote", "eventos")
