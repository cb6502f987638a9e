"""The list in PostgreSQL: every search, filter and order, in one statement per page.

Each word is a `LIKE '%word%'` on the folded `busca` column, which pg_trgm's GIN index answers
(the word's `%`, `_` and `\\` escaped, so a person's text is never a pattern). Unlike SQLite,
PostgreSQL keeps statistics of its own, so its planner chooses between that index and the
order's (nome_chave, id) or (preco, id) index; the choice is measured in bench/search.py.

Every statement stops at statement_timeout (CATALOGO_QUERY_TIMEOUT_MS): a page that would take
longer is `QueryTimeout`, a count that would is left out. Counts are capped
(paging.COUNT_CAP) and remembered while the database's snapshot is the same
(`pg_current_snapshot()`: no write has begun or ended since), so a catalog read more than it is
written counts each query once.
"""

from collections.abc import AsyncGenerator, Hashable
from decimal import Decimal
from functools import cached_property
from typing import Any

import asyncpg

from catalogo.domain.busca import Position, Query, keyer
from catalogo.domain.errors import QueryTimeout
from catalogo.domain.produtos import Produto
from catalogo.storage import paging
from catalogo.storage.paging import Cursor, Number, Page, Rows, Step
from catalogo.storage.postgres.historico import produto_of
from catalogo.storage.postgres.pool import Connection, PostgresPool

_KEYS = {
    "id": "p.id",
    "nome": "p.nome_chave",
    "preco": "p.preco",
    "atualizado_em": "p.atualizado_em",
}
_SELECT = (
    "SELECT p.id, p.nome, p.descricao, p.preco, p.versao, p.criado_em, p.atualizado_em, "
    "p.codigo, p.nome_chave FROM produtos p"
)


def _pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class _Plan:
    """One query's WHERE, and how to walk it in order."""

    def __init__(self, query: Query) -> None:
        self.query = query
        self.where = ["p.removido_em IS NULL"]
        self.params: list[Any] = []
        for term in query.terms:
            self._add("p.busca LIKE {}", _pattern(term))
        if query.preco_min is not None:
            self._add("p.preco >= {}", query.preco_min)
        if query.preco_max is not None:
            self._add("p.preco <= {}", query.preco_max)
        if query.ids:
            self._add("p.id = ANY({}::bigint[])", list(query.ids))
        if query.codigos:
            self._add("p.codigo_chave = ANY({}::text[])", list(query.codigos))

    def _add(self, condition: str, value: Any) -> None:
        self.params.append(value)
        self.where.append(condition.format(f"${len(self.params)}"))

    def page(
        self, cursor: Cursor[Position], limit: int, counted: bool = False
    ) -> tuple[str, list[Any]]:
        """The statement for `limit` rows from the cursor on, in the walking direction; or,
        `counted`, for how many of them there are."""
        column, ascending, position = paging.walk(self.query.ordem, cursor)
        where, params = list(self.where), list(self.params)
        column_key = _KEYS[column]
        direction = "ASC" if ascending else "DESC"
        sign = ">" if ascending else "<"
        if position is not None and column == "id":
            params.append(position.id)
            where.append(f"p.id {sign} ${len(params)}")
        elif position is not None:
            key = position.key
            params += [Decimal(key).scaleb(-2) if column == "preco" else key, position.id]
            where.append(f"({column_key}, p.id) {sign} (${len(params) - 1}, ${len(params)})")
        order = (
            f"p.id {direction}" if column == "id" else f"{column_key} {direction}, p.id {direction}"
        )
        params.append(limit)
        select = "SELECT 1 FROM produtos p" if counted else _SELECT
        sql = f"{select} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ${len(params)}"
        if counted:
            sql = f"SELECT count(*) FROM ({sql}) AS counted"
        return sql, params

    def count(self, up_to: int) -> tuple[str, list[Any]]:
        params = [*self.params, up_to + 1]
        sql = f"SELECT 1 FROM produtos p WHERE {' AND '.join(self.where)} LIMIT ${len(params)}"
        return f"SELECT count(*) FROM ({sql}) AS found", params


class PostgresSearch(PostgresPool):
    """The list: mixed into PostgresStorage."""

    @cached_property
    def _counts(self) -> paging.Counts:
        return paging.Counts()

    async def find(
        self,
        query: Query,
        cursor: Cursor[Position],
        count: int | None = None,
        position: bool = False,
    ) -> Page[Produto, Position]:
        plan = _Plan(query)

        async def read(connection: Connection) -> Page[Produto, Position]:
            steps = paging.finding(plan, cursor, count, position)
            return await paging.run_async(steps, lambda step: self._answer(connection, plan, step))

        if count is None and cursor == Cursor(cursor.limit):
            return await self._run(read)  # one statement: no transaction to open
        return await self._snapshot(read)

    async def export(
        self, query: Query, chunk: int = paging.EXPORT_CHUNK
    ) -> AsyncGenerator[list[Produto], None]:
        plan = _Plan(query)
        cursor: Cursor[Position] | None = Cursor(chunk)
        async with (
            self._held() as connection,
            connection.transaction(isolation="repeatable_read", readonly=True),
        ):
            while cursor is not None:
                rows = await self._answer(connection, plan, Rows(cursor))
                items, cursor = paging.next_chunk(cursor, rows)
                if items:
                    yield items

    async def _answer(self, connection: Connection, plan: _Plan, step: Step) -> Any:
        """One step of paging.finding, in the snapshot's transaction. A statement stopped by
        statement_timeout ends it: a page's is QueryTimeout, a count's is left out (None)."""
        if isinstance(step, Rows):
            sql, params = plan.page(step.cursor, step.cursor.limit + 1)
            try:
                found = await connection.fetch(sql, *params)
            except asyncpg.QueryCanceledError as error:
                raise QueryTimeout(self._query_timeout_ms) from error
            key = keyer(plan.query)
            return [
                (produto_of(row), key(row[0], row[8], int(row[3] * 100), row[6])) for row in found
            ]
        if isinstance(step, Number):
            sql, params = step.statement
            return await connection.fetchval(sql, *params)
        try:
            counted, statement = step.counting
            return await self._remembered(connection, counted, statement, step.up_to)
        except asyncpg.QueryCanceledError:
            return None

    async def _remembered(
        self,
        connection: Connection,
        counted: Hashable,
        statement: paging.Statement,
        up_to: int,
    ) -> int:
        moment = await connection.fetchval("SELECT pg_current_snapshot()::text")
        if (known := self._counts.known(moment, counted, up_to)) is not None:
            return known
        sql, params = statement
        return self._counts.remember(counted, up_to, await connection.fetchval(sql, *params))
