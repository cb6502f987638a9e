"""The produtos table.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Prices are integer cents in SQLite, which would turn a NUMERIC into a float, and an exact
NUMERIC(12,2) in PostgreSQL. AUTOINCREMENT (SQLite) and an identity column (PostgreSQL, 64-bit
like the ids the routes accept) keep a removed product's id from ever naming another product.
The CHECKs repeat the field rules of produtos.py so that no path around the app can store
what the app would refuse.
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: the first: there is no older code.
OLDER_CODE_SERVES = False


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE TABLE produtos (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                nome text NOT NULL,
                descricao text NOT NULL DEFAULT '',
                preco numeric(12, 2) NOT NULL,
                CONSTRAINT nome_tamanho CHECK (char_length(nome) BETWEEN 1 AND 200),
                CONSTRAINT descricao_tamanho CHECK (char_length(descricao) <= 5000),
                CONSTRAINT preco_positivo_e_limitado CHECK (preco BETWEEN 0.01 AND 999999999.99)
            )
            """
        )
        return
    op.create_table(
        "produtos",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("nome", sa.Text, nullable=False),
        sa.Column("descricao", sa.Text, nullable=False, server_default=""),
        sa.Column("preco_centavos", sa.Integer, nullable=False),
        sa.CheckConstraint("length(nome) BETWEEN 1 AND 200", name="nome_tamanho"),
        sa.CheckConstraint("length(descricao) <= 5000", name="descricao_tamanho"),
        sa.CheckConstraint(
            "preco_centavos BETWEEN 1 AND 99999999999", name="preco_positivo_e_limitado"
        ),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("produtos")
