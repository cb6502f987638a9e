"""A PostgreSQL database filled whole, as `catalogo copiar` fills it from a SQLite file: what
tables and columns its schema has, which hold rows, every table's rows written with COPY and
read back, and the sequences set past the ids copied. All in the caller's one transaction."""

from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import asyncpg

from catalogo.domain.errors import CatalogoError

# Taken for the length of a copy: two copies into one database take turns, and the second
# then finds the first's rows and refuses.
_COPY_LOCK = 0x636F706961  # "copia"


class TargetUnusable(CatalogoError):
    """The database to copy into cannot be reached or used; the message says why."""


async def connect(url: str) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(url)
    except asyncpg.InvalidCatalogNameError:
        raise TargetUnusable(
            "o banco de destino não existe: crie-o antes (createdb, ou CREATE DATABASE)"
        ) from None
    except (OSError, asyncpg.PostgresError) as error:
        raise TargetUnusable(f"não consigo conectar ao banco de destino: {error}") from None
    except ValueError:  # not even a URL (an unclosed "[", a bad port)
        raise TargetUnusable(
            "--para não é uma URL do PostgreSQL: postgresql://usuario:senha@host:5432/banco"
        ) from None


async def columns(connection: asyncpg.Connection) -> dict[str, dict[str, str]]:
    """Every table of the schema, and each column's type (`information_schema`'s name)."""
    found: dict[str, dict[str, str]] = {}
    for row in await connection.fetch(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ):
        found.setdefault(row["table_name"], {})[row["column_name"]] = row["data_type"]
    return found


async def references(connection: asyncpg.Connection) -> dict[str, set[str]]:
    """For each table, the tables its foreign keys point at: they must be filled first."""
    found: dict[str, set[str]] = {}
    for row in await connection.fetch(
        "SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent "
        "FROM pg_constraint WHERE contype = 'f' "
        "AND connamespace = current_schema()::regnamespace"
    ):
        found.setdefault(row["child"].strip('"'), set()).add(row["parent"].strip('"'))
    return found


async def filled(connection: asyncpg.Connection, tables: Iterable[str]) -> list[str]:
    """The tables among `tables` that hold at least one row."""
    return [
        table
        for table in tables
        if await connection.fetchval(f'SELECT EXISTS (SELECT 1 FROM "{table}")')
    ]


async def hold_for_copy(connection: asyncpg.Connection) -> None:
    """Within a transaction: waits for any other copy into this database to end."""
    await connection.execute("SELECT pg_advisory_xact_lock($1)", _COPY_LOCK)


async def write(
    connection: asyncpg.Connection, table: str, names: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    try:
        await connection.copy_records_to_table(table, records=rows, columns=list(names))
    except (asyncpg.PostgresError, asyncpg.DataError) as error:
        raise TargetUnusable(f"o PostgreSQL recusou linhas de {table}: {error}") from None


async def read(
    connection: asyncpg.Connection, table: str, names: Sequence[str]
) -> AsyncIterator[tuple[Any, ...]]:
    """`table`'s rows as stored, within the caller's transaction."""
    listed = ", ".join(f'"{name}"' for name in names)
    async for record in connection.cursor(f'SELECT {listed} FROM "{table}"', prefetch=5_000):
        yield tuple(record)


async def continue_sequences(connection: asyncpg.Connection, tables: Iterable[str]) -> None:
    """Every sequence behind a column of `tables` (serial or identity) set to that column's
    largest value, so that the next row made gets the next id, as on the source."""
    for table in tables:
        for row in await connection.fetch(
            "SELECT column_name, pg_get_serial_sequence(quote_ident($1), column_name) AS s "
            "FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = $1",
            table,
        ):
            if row["s"] is None:
                continue
            await connection.execute(
                f'SELECT setval($1, coalesce(max("{row["column_name"]}"), 1), '
                f'max("{row["column_name"]}") IS NOT NULL) FROM "{table}"',
                row["s"],
            )
