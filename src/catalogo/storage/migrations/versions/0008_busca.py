"""Search and orders: folded text, its indexes, and one index per order.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24

`busca` holds a product's folded name and description, `nome_chave` its folded name
(search.py folds them, in Python, so both databases hold the very same strings); existing
products are folded here. Only live products are indexed (removed ones are never listed):

- SQLite: `produtos_busca`, a contentless FTS5 table of trigrams whose rowid is minus the
  product's id, so that its natural order is the list's (newest first); triggers keep it in
  step with every path that writes `produtos`. A later migration that rebuilds `produtos` in
  batch mode must create these triggers again.
- PostgreSQL: pg_trgm's GIN index on `busca` (the extension is trusted: a database owner may
  create it); `nome_chave` compares in "C" order, code point by code point, as SQLite does.

Orders by name and by price walk their own index, (key, id), so any page costs the first's.
"""

import sqlalchemy as sa
from alembic import op

from catalogo.domain.busca import name_key, searchable

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: older code would leave `busca` empty: its products could not be found.
OLDER_CODE_SERVES = False

_BATCH = 10_000
_LIVE = sa.text("removido_em IS NULL")
_TRIGGERS = {
    # Each fires only when what the index holds changes: a new price leaves it alone.
    "produtos_busca_criado": (
        "AFTER INSERT ON produtos WHEN new.removido_em IS NULL BEGIN "
        "INSERT INTO produtos_busca (rowid, busca) VALUES (-new.id, new.busca); END"
    ),
    "produtos_busca_antes": (
        "AFTER UPDATE OF busca, removido_em ON produtos WHEN old.removido_em IS NULL AND "
        "(new.removido_em IS NOT NULL OR new.busca IS NOT old.busca) BEGIN "
        "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
        "VALUES ('delete', -old.id, old.busca); END"
    ),
    "produtos_busca_depois": (
        "AFTER UPDATE OF busca, removido_em ON produtos WHEN new.removido_em IS NULL AND "
        "(old.removido_em IS NOT NULL OR new.busca IS NOT old.busca) BEGIN "
        "INSERT INTO produtos_busca (rowid, busca) VALUES (-new.id, new.busca); END"
    ),
    "produtos_busca_apagado": (
        "AFTER DELETE ON produtos WHEN old.removido_em IS NULL BEGIN "
        "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
        "VALUES ('delete', -old.id, old.busca); END"
    ),
}


def upgrade() -> None:
    bind = op.get_bind()
    postgresql = bind.dialect.name == "postgresql"
    if postgresql:
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute(
            "ALTER TABLE produtos ADD COLUMN nome_chave text COLLATE \"C\" NOT NULL DEFAULT '', "
            "ADD COLUMN busca text NOT NULL DEFAULT ''"
        )
    else:
        op.add_column(
            "produtos", sa.Column("nome_chave", sa.Text, nullable=False, server_default="")
        )
        op.add_column("produtos", sa.Column("busca", sa.Text, nullable=False, server_default=""))
    _fold_existing(bind)
    price = "preco" if postgresql else "preco_centavos"
    op.create_index(
        "produtos_nome",
        "produtos",
        ["nome_chave", "id"],
        sqlite_where=_LIVE,
        postgresql_where=_LIVE,
    )
    op.create_index(
        "produtos_preco", "produtos", [price, "id"], sqlite_where=_LIVE, postgresql_where=_LIVE
    )
    if postgresql:
        op.execute(
            "CREATE INDEX produtos_busca ON produtos USING gin (busca gin_trgm_ops) "
            "WHERE removido_em IS NULL"
        )
        return
    op.execute(
        "CREATE VIRTUAL TABLE produtos_busca USING fts5("
        "busca, content='', tokenize='trigram case_sensitive 1')"
    )
    op.execute(
        "INSERT INTO produtos_busca (rowid, busca) "
        "SELECT -id, busca FROM produtos WHERE removido_em IS NULL"
    )
    for name, body in _TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {body}")


def _fold_existing(bind: sa.Connection) -> None:
    after = 0
    while rows := bind.execute(
        sa.text("SELECT id, nome, descricao FROM produtos WHERE id > :after ORDER BY id LIMIT :n"),
        {"after": after, "n": _BATCH},
    ).all():
        bind.execute(
            sa.text("UPDATE produtos SET nome_chave = :chave, busca = :busca WHERE id = :id"),
            [
                {"id": id, "chave": name_key(nome), "busca": searchable(nome, descricao)}
                for id, nome, descricao in rows
            ],
        )
        after = rows[-1][0]


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _TRIGGERS:
            op.execute(f"DROP TRIGGER {name}")
        op.execute("DROP TABLE produtos_busca")
    else:
        op.drop_index("produtos_busca", "produtos")
    op.drop_index("produtos_preco", "produtos")
    op.drop_index("produtos_nome", "produtos")
    op.drop_column("produtos", "busca")
    op.drop_column("produtos", "nome_chave")
