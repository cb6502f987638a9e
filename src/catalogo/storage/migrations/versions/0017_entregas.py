"""Each subscription's latest delivery attempts, for its page (/webhooks/{id}).

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: a table older code never reads (its deliveries are not listed there).
OLDER_CODE_SERVES = True


def upgrade() -> None:
    op.create_table(
        "entregas",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
        sa.Column("webhook_id", sa.BigInteger, nullable=False),
        sa.Column("evento_id", sa.BigInteger),
        sa.Column("em", sa.Float, nullable=False),
        sa.Column("status", sa.Integer),
        sa.Column("resposta", sa.Text, nullable=False),
        sa.Column("entregue", sa.Boolean, nullable=False),
    )
    op.create_index("entregas_do_webhook", "entregas", ["webhook_id", "id"])


def downgrade() -> None:
    op.drop_table("entregas")
