"""Imports staged in the database: a dry run's report and rows, kept for an hour so that any
instance can show or confirm it (imports.py, docs/importing.md).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25

`importacoes` holds one import: who staged it and when, its state (`preparada` until it is
confirmed, `aplicada`, `desfeita`; a `preparada` one past `expira_em` is expired), the report's
counts (`resumo`, JSON), the file itself while it may still be confirmed (`conteudo`, to make a
fresh report when the catalog moved on) and the Idempotency-Key its confirmation came with.
`importacao_linhas` holds the report's lines in the file's order (`posicao`), each of a kind
(`novo`, `alterado`, `erro`) and as JSON: what a page shows and, for a write, what confirming
writes, read in that order. Its id is the `lote` of the events the import writes.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: tables older code never reads.
OLDER_CODE_SERVES = True


def upgrade() -> None:
    op.create_table(
        "importacoes",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("arquivo", sa.Text, nullable=False),
        sa.Column("codificacao", sa.Text, nullable=False),
        sa.Column("quem", sa.Text),
        sa.Column("token", sa.Text),
        sa.Column("criada_em", sa.Float, nullable=False),
        sa.Column("expira_em", sa.Float, nullable=False),
        sa.Column("estado", sa.Text, nullable=False),
        sa.Column("resumo", sa.Text, nullable=False),
        sa.Column("conteudo", sa.LargeBinary),
        sa.Column("chave", sa.Text),
        sa.Column("aplicada_em", sa.Float),
        sa.Column("aplicada_por", sa.Text),
        sa.Column("desfeita_em", sa.Float),
        sa.Column("desfeita_por", sa.Text),
        sa.CheckConstraint(
            "estado IN ('preparada', 'aplicada', 'desfeita')", name="estado_conhecido"
        ),
    )
    op.create_index("importacoes_criada_em", "importacoes", ["criada_em"])
    op.create_table(
        "importacao_linhas",
        sa.Column(
            "importacao_id",
            sa.Text,
            sa.ForeignKey("importacoes.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("posicao", sa.Integer, nullable=False),
        sa.Column("tipo", sa.Text, nullable=False),
        sa.Column("dados", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("importacao_id", "posicao"),
        sa.CheckConstraint("tipo IN ('novo', 'alterado', 'erro')", name="tipo_conhecido"),
    )
    op.create_index(
        "importacao_linhas_tipo", "importacao_linhas", ["importacao_id", "tipo", "posicao"]
    )


def downgrade() -> None:
    op.drop_table("importacao_linhas")
    op.drop_table("importacoes")
