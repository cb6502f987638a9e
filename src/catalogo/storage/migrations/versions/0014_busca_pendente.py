"""SQLite's search index written once per commit: the triggers queue each change in a plain
table, `busca_pendente`, and the writer moves the queue into the index before it commits.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25

FTS5 keeps the rows a transaction adds in memory and writes them out (a segment, merged
later) at every savepoint, and the statement a trigger runs in is one: written by 0010's
triggers, each product made a segment of its own, 20 µs of a create. Queued, a commit's
changes go in as one statement, one segment (bench/results/history.md). A row of the queue is a
product's text to take out of the index (`apagar`) or to put in, in the order they happened
(`seq`). PostgreSQL's index is the table's own and needs nothing.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: on SQLite older code would not move the queue into the search index.
OLDER_CODE_SERVES = False

_TRIGGERS = ("produtos_busca_criado", "produtos_busca_alterado", "produtos_busca_apagado")
_QUEUED = (
    "CREATE TRIGGER produtos_busca_criado AFTER INSERT ON produtos "
    "WHEN new.removido_em IS NULL BEGIN "
    "INSERT INTO busca_pendente (id, busca, apagar) VALUES (new.id, new.busca, 0); END",
    "CREATE TRIGGER produtos_busca_alterado AFTER UPDATE OF busca, removido_em ON produtos "
    "WHEN old.removido_em IS NOT new.removido_em OR new.busca IS NOT old.busca BEGIN "
    "INSERT INTO busca_pendente (id, busca, apagar) "
    "SELECT old.id, old.busca, 1 WHERE old.removido_em IS NULL; "
    "INSERT INTO busca_pendente (id, busca, apagar) "
    "SELECT new.id, new.busca, 0 WHERE new.removido_em IS NULL; END",
    "CREATE TRIGGER produtos_busca_apagado AFTER DELETE ON produtos "
    "WHEN old.removido_em IS NULL BEGIN "
    "INSERT INTO busca_pendente (id, busca, apagar) VALUES (old.id, old.busca, 1); END",
)
# 0010's, which wrote the index themselves.
_DIRECT = (
    "CREATE TRIGGER produtos_busca_criado AFTER INSERT ON produtos "
    "WHEN new.removido_em IS NULL BEGIN "
    "INSERT INTO produtos_busca (rowid, busca) VALUES (-new.id, new.busca); END",
    "CREATE TRIGGER produtos_busca_alterado AFTER UPDATE OF busca, removido_em ON produtos "
    "WHEN old.removido_em IS NOT new.removido_em OR new.busca IS NOT old.busca BEGIN "
    "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
    "SELECT 'delete', -old.id, old.busca WHERE old.removido_em IS NULL; "
    "INSERT INTO produtos_busca (rowid, busca) "
    "SELECT -new.id, new.busca WHERE new.removido_em IS NULL; END",
    "CREATE TRIGGER produtos_busca_apagado AFTER DELETE ON produtos "
    "WHEN old.removido_em IS NULL BEGIN "
    "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
    "VALUES ('delete', -old.id, old.busca); END",
)


# sqlite.busca.INDEX_PENDING as this revision has it.
_PENDING_IN = (
    "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
    "SELECT 'delete', -q.id, q.busca FROM busca_pendente q "
    "JOIN (SELECT min(seq) AS seq FROM busca_pendente GROUP BY id) f ON f.seq = q.seq "
    "WHERE q.apagar ORDER BY q.id DESC",
    "INSERT INTO produtos_busca (rowid, busca) "
    "SELECT -q.id, q.busca FROM busca_pendente q "
    "JOIN (SELECT max(seq) AS seq FROM busca_pendente GROUP BY id) l ON l.seq = q.seq "
    "WHERE NOT q.apagar ORDER BY q.id DESC",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.create_table(
        "busca_pendente",
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("busca", sa.Text, nullable=False),
        sa.Column("apagar", sa.Boolean, nullable=False),
    )
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER {name}")
    for trigger in _QUEUED:
        op.execute(trigger)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in _PENDING_IN:  # what is queued goes in first
        op.execute(statement)
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER {name}")
    for trigger in _DIRECT:
        op.execute(trigger)
    op.drop_table("busca_pendente")
