"""History: every change to a product as an event, and removal that keeps the product.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

`eventos` gets one row per create, update, removal and restore, written by storage in the
transaction of the change itself; rows are never changed or deleted, not even when a removed
product is purged, and their ids never come back (AUTOINCREMENT on SQLite, identity on
PostgreSQL). `antes` and `depois` hold the product's fields as JSON text made by Python, so
both databases return the very same bytes. `quem` is the user's name, `token` the label of the
token used, both NULL for an anonymous change.

Products gain `criado_em` and `atualizado_em` (seconds since the epoch, as elsewhere); products
that existed before this revision carry the time of the upgrade, the first time known for them.
`removido_em` set means removed: out of every listing, 404 at its URI, restorable.
"""

import time

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: older code would change products without recording events.
OLDER_CODE_SERVES = False

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite: the rowid itself


def upgrade() -> None:
    now = repr(time.time())
    op.add_column(
        "produtos", sa.Column("criado_em", sa.Float, nullable=False, server_default=sa.text(now))
    )
    op.add_column(
        "produtos",
        sa.Column("atualizado_em", sa.Float, nullable=False, server_default=sa.text(now)),
    )
    op.add_column("produtos", sa.Column("removido_em", sa.Float))
    op.create_table(
        "eventos",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("produto_id", _ID, nullable=False),
        sa.Column("tipo", sa.Text, nullable=False),
        sa.Column("versao", _ID, nullable=False),
        sa.Column("antes", sa.Text),
        sa.Column("depois", sa.Text),
        sa.Column("quem", sa.Text),
        sa.Column("token", sa.Text),
        sa.Column("origem", sa.Text, nullable=False),
        sa.Column("lote", sa.Text),
        sa.Column("request_id", sa.Text),
        sa.Column("em", sa.Float, nullable=False),
        sa.CheckConstraint(
            "tipo IN ('criado', 'alterado', 'removido', 'restaurado')", name="tipo_conhecido"
        ),
        sa.CheckConstraint(
            "origem IN ('web', 'api', 'cli', 'importacao', 'lote')", name="origem_conhecida"
        ),
        sqlite_autoincrement=True,
    )
    op.create_index("eventos_produto", "eventos", ["produto_id", "id"])
    removed = sa.text("removido_em IS NOT NULL")  # the trash, and purging it: a few rows
    op.create_index(
        "produtos_removidos",
        "produtos",
        ["removido_em"],
        sqlite_where=removed,
        postgresql_where=removed,
    )


def downgrade() -> None:
    op.drop_index("produtos_removidos", "produtos")
    op.drop_table("eventos")
    for column in ("removido_em", "atualizado_em", "criado_em"):
        op.drop_column("produtos", column)
