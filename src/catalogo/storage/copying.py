"""A SQLite catalog copied whole into an empty PostgreSQL database (`catalogo copiar`): every
table, ids and the events' order kept, in one transaction (all or nothing: a copy cut short,
even by kill -9, leaves the target as empty as it found it), checked at the end by each
table's row count and a checksum of its rows read back from PostgreSQL.

Driven by the two schemas, not by a list: every table the two databases share is copied,
column by column by name, so that a table a later migration adds is copied with no change
here. Only `LEFT_BEHIND` is not, each for its reason, and only `CONVERTED` columns differ.
"""

import graphlib
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from catalogo.domain.errors import CatalogoError
from catalogo.storage.postgres import loading
from catalogo.storage.sqlite.snapshot import Snapshot

# Tables not copied, and why.
LEFT_BEHIND = {
    "alembic_version": "cada banco guarda a sua revisão do esquema, a mesma nos dois",
    "schema_floor": "o código mais antigo que serve o esquema: o migrate do destino o grava",
    "sessions": "as sessões abertas: quem estava conectado entra de novo",
    "login_attempts": "as tentativas de entrar dos últimos minutos, para o limite",
    "busca_pendente": "a fila do índice de busca do SQLite; o PostgreSQL busca nas colunas",
    "produtos_busca": "o índice de busca do SQLite (FTS5); o PostgreSQL tem o seu",
    "produtos_busca_config": "parte do índice de busca do SQLite",
    "produtos_busca_data": "parte do índice de busca do SQLite",
    "produtos_busca_docsize": "parte do índice de busca do SQLite",
    "produtos_busca_idx": "parte do índice de busca do SQLite",
}

# (table, SQLite's column) -> PostgreSQL's column and the value it takes there.
CONVERTED: dict[tuple[str, str], tuple[str, Callable[[Any], Any]]] = {
    ("produtos", "preco_centavos"): ("preco", lambda centavos: Decimal(centavos).scaleb(-2)),
}

_AS_STORED: dict[str, Callable[[Any], Any]] = {  # a value as PostgreSQL's type takes it
    "boolean": bool,
    "bytea": bytes,
    "double precision": float,
    "bigint": int,
    "integer": int,
    "smallint": int,
}


class CopyRefused(CatalogoError):
    """The copy was not made, and the target is as it was; the message says why."""


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int


async def copy(source: str, target: str, told: Callable[[str], None]) -> list[Copied]:
    """Copies the SQLite file `source` into the PostgreSQL database at `target`, whose schema
    is current and which holds no row; `told` hears of each table as it is done."""
    snapshot = Snapshot(source)
    connection = await loading.connect(target)
    try:
        target_columns = await loading.columns(connection)
        plan = _plan(snapshot.tables, target_columns, await loading.references(connection))
        async with connection.transaction():
            await loading.hold_for_copy(connection)
            await _refuse_filled(connection, target_columns)
            done = []
            for table, pairs, types in plan:
                count, sent = await _copy_table(connection, snapshot, table, pairs, types)
                read = await _checksum_read(connection, table, [p[1] for p in pairs], types)
                if (count, sent) != read:
                    raise CopyRefused(
                        f"a conferência de {table} falhou ({count} linhas enviadas, {read[0]} "
                        "lidas de volta, ou somas diferentes); nada foi gravado"
                    )
                told(f"{table}: {count} linhas, conferidas")
                done.append(Copied(table, count))
            await loading.continue_sequences(connection, [table for table, _, _ in plan])
        return done
    finally:
        await connection.close()
        snapshot.close()


async def refuse_filled(target: str) -> None:
    """Refuses a target that holds any row, before anything (its migration included) touches
    it."""
    connection = await loading.connect(target)
    try:
        await _refuse_filled(connection, await loading.columns(connection))
    finally:
        await connection.close()


async def _refuse_filled(connection: Any, tables: Iterable[str]) -> None:
    bookkeeping = ("alembic_version", "schema_floor")  # the schema's, written by its migrate
    refused = await loading.filled(connection, [t for t in tables if t not in bookkeeping])
    if refused:
        raise CopyRefused(
            "o banco de destino já tem dados (" + ", ".join(refused) + "): copie para um banco "
            "vazio, recém-criado; nada foi gravado"
        )


Pairs = list[tuple[str, str]]  # (SQLite's column, PostgreSQL's)


def _plan(
    source: dict[str, list[str]],
    target: dict[str, dict[str, str]],
    references: dict[str, set[str]],
) -> list[tuple[str, Pairs, list[str]]]:
    """For each table to copy, a table its foreign keys point at before it: its columns
    paired by name (or by CONVERTED) and PostgreSQL's type of each. A table or column on one
    side only, and not left behind on purpose, stops the copy: its data would be lost, or the
    schemas are not the same revision."""
    tables = list(
        graphlib.TopologicalSorter(
            {t: references.get(t, set()) for t in sorted(set(source) | set(target))}
        ).static_order()
    )
    tables = [table for table in tables if table not in LEFT_BEHIND]
    plan = []
    for table in tables:
        if table not in source or table not in target:
            side = "SQLite" if table in source else "PostgreSQL"
            raise CopyRefused(
                f"a tabela {table} só existe no {side}: os dois esquemas devem estar na mesma "
                "revisão (rode `catalogo migrate` nos dois)"
            )
        pairs = [
            (column, CONVERTED.get((table, column), (column, None))[0]) for column in source[table]
        ]
        missing = set(target[table]) - {theirs for _, theirs in pairs}
        extra = [ours for ours, theirs in pairs if theirs not in target[table]]
        if missing or extra:
            raise CopyRefused(
                f"as colunas de {table} diferem entre os dois bancos "
                f"({', '.join(sorted(missing | set(extra)))}): os dois esquemas devem estar na "
                "mesma revisão"
            )
        plan.append((table, pairs, [target[table][theirs] for _, theirs in pairs]))
    return plan


async def _copy_table(
    connection: Any, snapshot: Snapshot, table: str, pairs: Pairs, types: list[str]
) -> tuple[int, int]:
    convert = [
        CONVERTED[(table, ours)][1] if (table, ours) in CONVERTED else _AS_STORED.get(kind)
        for (ours, _), kind in zip(pairs, types, strict=True)
    ]
    count = total = 0
    for chunk in snapshot.rows(table, [ours for ours, _ in pairs]):
        rows = [
            tuple(
                value if value is None or to is None else to(value)
                for value, to in zip(row, convert, strict=True)
            )
            for row in chunk
        ]
        await loading.write(connection, table, [theirs for _, theirs in pairs], rows)
        count += len(rows)
        total = (total + _sum(rows, types)) % _MODULUS
    return count, total


async def _checksum_read(
    connection: Any, table: str, names: list[str], types: list[str]
) -> tuple[int, int]:
    count = total = 0
    async for row in loading.read(connection, table, names):
        count += 1
        total = (total + _sum([row], types)) % _MODULUS
    return count, total


_MODULUS = 2**128


def _sum(rows: Iterable[tuple[Any, ...]], types: list[str]) -> int:
    """Rows' checksum, blind to their order (PostgreSQL returns them in its own): the sum of
    each row's hash. Values are compared as PostgreSQL's types hold them (a price as a
    number, not as its digits)."""
    total = 0
    for row in rows:
        canonical = repr(
            tuple(
                value.normalize() if kind == "numeric" and value is not None else value
                for value, kind in zip(row, types, strict=True)
            )
        )
        total += int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:16], "big")
    return total
