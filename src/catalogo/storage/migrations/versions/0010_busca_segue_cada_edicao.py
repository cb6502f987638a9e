"""SQLite's search index follows every edit: one trigger takes the old text out, then puts the
new one in; and the index is made again from the products.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24

0008 kept the trigram index in step with two triggers on the same update, one taking the old
text out and one putting the new text in. SQLite fires triggers of one event newest first, so
the new text went in before the old came out, and taking the old text out of a contentless
FTS5 table also took out every trigram the two texts share: an edit that kept a word ("caixa
com 6" to "caixa com 12") left the product unfindable by it. Here one trigger does both, in
that order, and the index is rebuilt from `busca`, which was always right. PostgreSQL's index
is the table's own and needs nothing.
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: SQLite's triggers only; nothing older code writes changes.
OLDER_CODE_SERVES = True

_OLD = ("produtos_busca_antes", "produtos_busca_depois")
_TRIGGER = (
    "CREATE TRIGGER produtos_busca_alterado AFTER UPDATE OF busca, removido_em ON produtos "
    "WHEN old.removido_em IS NOT new.removido_em OR new.busca IS NOT old.busca BEGIN "
    "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
    "SELECT 'delete', -old.id, old.busca WHERE old.removido_em IS NULL; "
    "INSERT INTO produtos_busca (rowid, busca) "
    "SELECT -new.id, new.busca WHERE new.removido_em IS NULL; END"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name in _OLD:
        op.execute(f"DROP TRIGGER {name}")
    op.execute(_TRIGGER)
    op.execute("INSERT INTO produtos_busca (produtos_busca) VALUES ('delete-all')")
    op.execute(
        "INSERT INTO produtos_busca (rowid, busca) "
        "SELECT -id, busca FROM produtos WHERE removido_em IS NULL"
    )


def downgrade() -> None:
    """Back to 0008's two triggers, as 0008 wrote them (and with their fault)."""
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER produtos_busca_alterado")
    op.execute(
        "CREATE TRIGGER produtos_busca_antes AFTER UPDATE OF busca, removido_em ON produtos "
        "WHEN old.removido_em IS NULL AND "
        "(new.removido_em IS NOT NULL OR new.busca IS NOT old.busca) BEGIN "
        "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
        "VALUES ('delete', -old.id, old.busca); END"
    )
    op.execute(
        "CREATE TRIGGER produtos_busca_depois AFTER UPDATE OF busca, removido_em ON produtos "
        "WHEN new.removido_em IS NULL AND "
        "(old.removido_em IS NOT NULL OR new.busca IS NOT old.busca) BEGIN "
        "INSERT INTO produtos_busca (rowid, busca) VALUES (-new.id, new.busca); END"
    )
