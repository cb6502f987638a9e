"""Accounts: users and their roles, sessions, API tokens, and the sign-in attempts throttled.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

Sessions and tokens are kept as SHA-256 digests of their secrets (`secret_hash`), never the
secrets. Users and tokens are never deleted, only deactivated or revoked, so that what they
did keeps a name; their ids never come back (AUTOINCREMENT on SQLite, identity on PostgreSQL).
Times are seconds since the epoch, as in idempotency_keys. The CHECKs repeat accounts.py's
rules, so that no path around the app stores a role the app would refuse.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: older code knows no accounts: it would let anyone change the catalog.
OLDER_CODE_SERVES = False

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite: the rowid itself


def upgrade() -> None:
    op.create_table(
        "usuarios",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("nome", sa.Text, nullable=False, unique=True),
        sa.Column("papel", sa.Text, nullable=False),
        sa.Column("ativo", sa.Boolean, nullable=False, server_default=sa.true()),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.CheckConstraint("papel IN ('leitor', 'editor', 'admin')", name="papel_conhecido"),
        sa.CheckConstraint("length(nome) BETWEEN 1 AND 64", name="nome_tamanho"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "tokens",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("usuario_id", _ID, sa.ForeignKey("usuarios.id"), nullable=False),
        sa.Column("nome", sa.Text, nullable=False),
        sa.Column("papel", sa.Text, nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float),
        sa.Column("last_used_at", sa.Float),
        sa.Column("revoked_at", sa.Float),
        sa.CheckConstraint("papel IN ('leitor', 'editor')", name="papel_de_token"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "sessions",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("usuario_id", _ID, sa.ForeignKey("usuarios.id"), nullable=False),
        sa.Column("secret_hash", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("address", sa.Text, nullable=False),
        sa.Column("user_agent", sa.Text, nullable=False),
    )
    op.create_index("sessions_usuario_id", "sessions", ["usuario_id"])
    op.create_index("sessions_expires_at", "sessions", ["expires_at"])
    op.create_table(
        "login_attempts",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("nome", sa.Text, nullable=False),
        sa.Column("address", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
    )
    op.create_index("login_attempts_nome", "login_attempts", ["nome", "at"])
    op.create_index("login_attempts_address", "login_attempts", ["address", "at"])
    op.create_index("login_attempts_at", "login_attempts", ["at"])


def downgrade() -> None:
    for table in ("login_attempts", "sessions", "tokens", "usuarios"):
        op.drop_table(table)
