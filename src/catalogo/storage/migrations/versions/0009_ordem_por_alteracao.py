"""The list in order of last change: one index, (atualizado_em, id), on live products.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

Like the orders by name and by price (0008), the order by `atualizado_em` walks its own index
from a cursor, so any page costs the first's, newest change first or oldest.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: an index.
OLDER_CODE_SERVES = True

_LIVE = sa.text("removido_em IS NULL")


def upgrade() -> None:
    op.create_index(
        "produtos_atualizado",
        "produtos",
        ["atualizado_em", "id"],
        sqlite_where=_LIVE,
        postgresql_where=_LIVE,
    )


def downgrade() -> None:
    op.drop_index("produtos_atualizado", "produtos")
