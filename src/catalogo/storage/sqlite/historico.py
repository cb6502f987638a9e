"""History in the SQLite file: the half of storage/sqlite/store.py's store that reads events and
removed products (the history page, the trash, the change feed) and purges the trash, in the same
way (reads inline, writes on the writer thread).

A product's events are found by (produto_id, versao), unique (migration 0007), so a history
page newest first costs the same at any depth and for any number of events. The trash is
ordered by removal (removido_em, then id, its partial index) and paged by product id.
"""

import functools
import sqlite3
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from catalogo import storage
from catalogo.domain.historico import Evento
from catalogo.domain.produtos import Produto, stored
from catalogo.storage import paging, sql
from catalogo.storage.sql import EVENT_COLUMNS, EVENTS, evento_of

T = TypeVar("T")
COLUMNS = "id, nome, descricao, preco_centavos, versao, criado_em, atualizado_em, codigo"
LIVE = "removido_em IS NULL"
_TRASH = sql.trash("preco_centavos")
_REMOVED = _TRASH.rows


def produto_of(row: tuple[Any, ...]) -> Produto:
    id, nome, descricao, centavos, versao, criado_em, atualizado_em, codigo = row
    preco = Decimal(centavos).scaleb(-2)
    return stored(id, versao, criado_em, atualizado_em, codigo, nome, descricao, preco)


# Products by the row they were read from, for the reads that show them (a list, a product's
# GET): every value a product is made of, so a kept one is never stale. A list page reads 51
# rows, most of them read before, and built 51 models anew. Products are frozen, so one may be
# shared. A write's own read of the row it changes is not kept: that row is never read again.
kept_produto_of = functools.lru_cache(maxsize=5_000)(produto_of)


def _removal(row: tuple[Any, ...]) -> storage.Removal:
    return storage.Removal(row[8], row[9], row[10], produto_of(row[:8]), row[11], row[12])


class SQLiteHistory:
    """Mixed into SQLiteStorage, whose `_read` and `_submit` these use."""

    if TYPE_CHECKING:

        def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

        async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

    async def removed(self, id: int) -> storage.Removal | None:
        rows = self._read(f"{_REMOVED} AND p.id = ?", (id,))
        return _removal(rows[0]) if rows else None

    async def trash(
        self, cursor: paging.Cursor[int], terms: tuple[str, ...] = ()
    ) -> paging.Page[storage.Removal, int]:
        listed = sql.narrowed(_TRASH, terms)
        return self._keyed(listed, cursor, lambda row: (_removal(row), row[0]))

    def _keyed(
        self,
        listed: paging.KeyedList,
        cursor: paging.Cursor[int],
        item: Callable[[tuple[Any, ...]], tuple[T, int]],
    ) -> paging.Page[T, int]:
        def answer(step: paging.KeyedStep) -> Any:
            rows = self._read(*listed.statement(step))
            return [item(row) for row in rows] if isinstance(step, paging.Slice) else rows[0][0]

        self._read("BEGIN")  # one snapshot for the page and what lies around it
        try:
            return paging.run(paging.keyed(cursor), answer)
        finally:
            self._read("COMMIT")

    async def purge(self, removed_before: float) -> int:
        def run(connection: sqlite3.Connection) -> int:
            return connection.execute(
                "DELETE FROM produtos WHERE removido_em IS NOT NULL AND removido_em < ?",
                (removed_before,),
            ).rowcount

        return await self._submit(run)

    async def history(self, id: int, cursor: paging.Cursor[int]) -> paging.Page[Evento, int]:
        events = EVENTS._replace(params=(id,))
        return self._keyed(events, cursor, lambda row: (evento_of(row), row[3]))

    async def versions(self, id: int, since: int, limit: int) -> list[Evento]:
        rows = self._read(
            f"{EVENTS.rows} AND versao >= ? ORDER BY versao LIMIT ?",
            (id, since, limit),
        )
        return [evento_of(row) for row in rows]

    async def events(self, after: int, limit: int) -> list[Evento]:
        rows = self._read(
            f"SELECT id, {EVENT_COLUMNS} FROM eventos WHERE id > ? ORDER BY id LIMIT ?",
            (after, limit),
        )
        return [evento_of(row) for row in rows]
