"""History in PostgreSQL: the half of storage/postgres/store.py's store that reads events and
removed products (the history page, the trash, the change feed) and purges the trash, on the same
pool.

The indexes and orders are storage/sqlite/historico.py's. A page and what lies around it are read in
one read-only REPEATABLE READ transaction, so they are one snapshot.

The feed's order. Writers commit at once, so an event whose id was taken from the sequence
early can become visible after one with a larger id: a reader that went by what it sees would
pass over it for good. So every writer holds WRITING_EVENT, an advisory lock in shared mode,
from its event's insert (where the id is taken) to its commit; a feed read first takes the same
lock exclusively, for one statement: that waits until every writer holding an id has committed
or rolled back, and reads the largest id committed then, the horizon. Events up to the horizon
can no longer change; the read goes no further. Writers never wait on each other (only, for an
instant, on a reader), which an exclusive lock around each insert made them do:
bench/eventlock.py measures both.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from catalogo import storage
from catalogo.domain.historico import Evento
from catalogo.domain.produtos import Produto, stored
from catalogo.storage import paging, sql
from catalogo.storage.postgres.pool import Connection, PostgresPool
from catalogo.storage.sql import EVENT_COLUMNS, EVENTS, evento_of, numbered

T = TypeVar("T")
_EVENTS_KEY = 7161125707150441327  # any constant of our own: "catalogo" in ASCII
WRITING_EVENT = f"SELECT pg_advisory_xact_lock_shared({_EVENTS_KEY})"
_READING_EVENTS = f"SELECT pg_advisory_xact_lock({_EVENTS_KEY})"
_TRASH = sql.trash("preco")
_REMOVED = _TRASH.rows


def produto_of(row: Any) -> Produto:
    return stored(row[0], row[4], row[5], row[6], row[7], row[1], row[2], row[3])


def _removal(row: Any) -> storage.Removal:
    return storage.Removal(row[8], row[9], row[10], produto_of(row), row[11], row[12])


class PostgresHistory(PostgresPool):
    async def removed(self, id: int) -> storage.Removal | None:
        rows = await self._fetch(f"{_REMOVED} AND p.id = $1", id)
        return _removal(rows[0]) if rows else None

    async def trash(
        self, cursor: paging.Cursor[int], terms: tuple[str, ...] = ()
    ) -> paging.Page[storage.Removal, int]:
        listed = sql.narrowed(_TRASH, terms)
        return await self._keyed(listed, cursor, lambda row: (_removal(row), row[0]))

    async def _keyed(
        self,
        listed: paging.KeyedList,
        cursor: paging.Cursor[int],
        item: Callable[[Any], tuple[T, int]],
    ) -> paging.Page[T, int]:
        async def read(connection: Connection) -> paging.Page[T, int]:
            async def answer(step: paging.KeyedStep) -> Any:
                sql, params = listed.statement(step)
                if isinstance(step, paging.Slice):
                    return [item(row) for row in await connection.fetch(numbered(sql), *params)]
                return await connection.fetchval(numbered(sql), *params)

            return await paging.run_async(paging.keyed(cursor), answer)

        return await self._snapshot(read)

    async def purge(self, removed_before: float) -> int:
        async def purge(connection: Connection) -> int:
            status = await connection.execute(
                "DELETE FROM produtos WHERE removido_em IS NOT NULL AND removido_em < $1",
                removed_before,
            )
            return int(status.split()[-1])

        return await self._run(purge)  # running it again deletes what is left: the same

    async def history(self, id: int, cursor: paging.Cursor[int]) -> paging.Page[Evento, int]:
        events = EVENTS._replace(params=(id,))
        return await self._keyed(events, cursor, lambda row: (evento_of(row), row[3]))

    async def versions(self, id: int, since: int, limit: int) -> list[Evento]:
        rows = await self._fetch(
            numbered(f"{EVENTS.rows} AND versao >= ? ORDER BY versao LIMIT ?"), id, since, limit
        )
        return [evento_of(row) for row in rows]

    async def events(self, after: int, limit: int) -> list[Evento]:
        async def read(connection: Connection) -> list[Any]:
            async with connection.transaction(isolation="read_committed"):
                await connection.execute(_READING_EVENTS)
                # A statement of its own: its snapshot is taken once the lock is held.
                horizon = await connection.fetchval("SELECT max(id) FROM eventos")
            if horizon is None or horizon <= after:
                return []
            return await connection.fetch(
                f"SELECT id, {EVENT_COLUMNS} FROM eventos WHERE id > $1 AND id <= $2 "
                "ORDER BY id LIMIT $3",
                after,
                horizon,
                limit,
            )

        return [evento_of(row) for row in await self._run(read)]
