"""SQLite's checks of an event's kind and origin, and of an import line's kind, written as
comparisons instead of IN lists.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27

SQLite (3.40, Debian's, which Python's sqlite3 uses) checks `tipo IN ('criado', ...)` by
building a table of the list's values in memory for every row it inserts: two tables for each
event, 65,000 of the 895,000 instructions of an update's whole request (bench/results/history.md).
`tipo = 'criado' OR tipo = ...` accepts and refuses the same values, NULL included, and asks for
no table. The tables' SQL is rewritten where SQLite keeps it, as SQLite documents for a change
that leaves every row as it is (https://sqlite.org/lang_altertable.html, "writable_schema"): no
table is copied, however many events it holds. PostgreSQL checks an IN list as cheaply as the
comparisons: nothing changes there.
"""

import re
from collections.abc import Callable

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: SQLite's checks, rewritten to accept the same rows.
OLDER_CODE_SERVES = True

_TABLES = ("eventos", "importacao_linhas")
_IN_LIST = re.compile(r"\b(tipo|origem) IN \(((?:'[a-z]+'(?:, )?)+)\)")
_COMPARISONS = re.compile(r"\b(tipo|origem) = '[a-z]+'(?: OR \1 = '[a-z]+')+")


def _as_comparisons(found: re.Match[str]) -> str:
    column, values = found[1], re.findall(r"'([a-z]+)'", found[2])
    return " OR ".join(f"{column} = '{value}'" for value in values)


def _as_list(found: re.Match[str]) -> str:
    column, values = found[1], re.findall(r"'([a-z]+)'", found[0])
    return f"{column} IN ({', '.join(repr(value) for value in values)})"


def upgrade() -> None:
    _rewrite(lambda sql: _IN_LIST.sub(_as_comparisons, sql))


def downgrade() -> None:
    _rewrite(lambda sql: _COMPARISONS.sub(_as_list, sql))


def _rewrite(change: Callable[[str], str]) -> None:
    """Each table's CREATE TABLE changed by `change`, in the migration's transaction; the
    schema's version moves on, so that every connection reads the tables' SQL again."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    (version,) = bind.exec_driver_sql("PRAGMA schema_version").one()
    bind.exec_driver_sql("PRAGMA writable_schema=ON")
    for table in _TABLES:
        (sql,) = bind.exec_driver_sql(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)
        ).one()
        bind.exec_driver_sql(
            "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
            (change(sql), table),
        )
    bind.exec_driver_sql(f"PRAGMA schema_version={int(version) + 1}")
    bind.exec_driver_sql("PRAGMA writable_schema=OFF")
