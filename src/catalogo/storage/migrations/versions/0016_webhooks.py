"""Webhooks: subscriptions to the catalog's events, delivered from the events table itself
(webhooks.py, delivery.py, docs/webhooks.md).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27

`webhooks` holds one subscription: its URL, the kinds of event it wants (`eventos`, a
comma-separated list), the secret it is signed with, and where its delivery stands:
`ultimo_evento`, the id of the last event done with (delivered, or not of its kinds); the
failures in a row for the next one (`falhas`, since `falhando_desde`) and when it may be tried
again (`proxima_em`); the last answer (`ultimo_status`, `ultima_resposta`, at most 1 KB, and
`ultima_em`); and, when it is off, when and why (`desativado_em`, `motivo`). `dono` and
`posse_ate` are the lease of the instance delivering it now: one at a time, across every
instance, and a lease that ends with its holder (kill -9) passes to another.

A token may now be an admin's (for automation: webhooks): its role's check admits `admin`. On
SQLite the table's SQL is rewritten where SQLite keeps it, as 0015 does (every row already
passes the wider check), with comparisons rather than an IN list, for 0015's reason.
"""

import sqlalchemy as sa
from alembic import op

_NARROW = "CHECK (papel IN ('leitor', 'editor'))"
_WIDE = "CHECK (papel = 'leitor' OR papel = 'editor' OR papel = 'admin')"

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: tables older code never reads; the instances on the new code deliver.
OLDER_CODE_SERVES = True


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("eventos", sa.Text, nullable=False),
        sa.Column("segredo", sa.Text, nullable=False),
        sa.Column("criado_em", sa.Float, nullable=False),
        sa.Column("criado_por", sa.Text),
        sa.Column("ultimo_evento", sa.BigInteger, nullable=False),
        sa.Column("falhas", sa.Integer, nullable=False, server_default="0"),
        sa.Column("falhando_desde", sa.Float),
        sa.Column("proxima_em", sa.Float, nullable=False, server_default="0"),
        sa.Column("ultimo_status", sa.Integer),
        sa.Column("ultima_resposta", sa.Text),
        sa.Column("ultima_em", sa.Float),
        sa.Column("desativado_em", sa.Float),
        sa.Column("motivo", sa.Text),
        sa.Column("dono", sa.Text),
        sa.Column("posse_ate", sa.Float, nullable=False, server_default="0"),
    )
    op.create_index("webhooks_a_entregar", "webhooks", ["proxima_em"])
    _token_roles(_NARROW, _WIDE)


def downgrade() -> None:
    _token_roles(_WIDE, _NARROW)
    op.drop_table("webhooks")


def _token_roles(old: str, new: str) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        op.drop_constraint("papel_de_token", "tokens", type_="check")
        op.create_check_constraint("papel_de_token", "tokens", new.removeprefix("CHECK "))
        return
    (version,) = bind.exec_driver_sql("PRAGMA schema_version").one()
    (sql,) = bind.exec_driver_sql("SELECT sql FROM sqlite_schema WHERE name = 'tokens'").one()
    bind.exec_driver_sql("PRAGMA writable_schema=ON")
    bind.exec_driver_sql(
        "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'tokens'",
        (sql.replace(old, new),),
    )
    bind.exec_driver_sql(f"PRAGMA schema_version={int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema=OFF")
