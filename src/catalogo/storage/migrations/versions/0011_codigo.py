"""The shop's own code for a product: `codigo`, optional, unique blind to case.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24

`codigo` is kept as typed; `codigo_chave` is its casefold (produtos.codigo_key), the same in
both databases, so that "can-az-300" and "CAN-AZ-300" are one code without a collation of
either database deciding it. One unique index on the key serves both the rule (removed products
keep their code, so a restore can never collide) and the lookup by code; products without a
code are not in it.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: older code leaves `codigo` as it is, and makes products without one.
OLDER_CODE_SERVES = True

_HAS_CODE = sa.text("codigo_chave IS NOT NULL")


def upgrade() -> None:
    # Plain ALTER TABLE in both (never a batch copy of the table, which would drop SQLite's
    # search triggers).
    op.add_column("produtos", sa.Column("codigo", sa.Text(), nullable=True))
    op.add_column("produtos", sa.Column("codigo_chave", sa.Text(), nullable=True))
    op.create_index(
        "produtos_codigo",
        "produtos",
        ["codigo_chave"],
        unique=True,
        sqlite_where=_HAS_CODE,
        postgresql_where=_HAS_CODE,
    )


def downgrade() -> None:
    op.drop_index("produtos_codigo", "produtos")
    op.execute("ALTER TABLE produtos DROP COLUMN codigo_chave")
    op.execute("ALTER TABLE produtos DROP COLUMN codigo")
