"""The list in the SQLite file: every search, filter and order, a plan chosen per query.

SQLite's planner cannot weigh the trigram index against an order's index (it has no statistics
for FTS5), and the wrong choice costs a thousand times the right one at a million products: a
rare word walked through the order index reads the whole table, a common word through the
trigram index finds a hundred thousand rows to sort. So the plan is chosen here, and named in
every statement (docs/search.md has the measurements behind each choice):

- id orders with words: the FTS5 table drives. Its rowid is minus the product's id, so its
  natural order is newest first and it stops after one page, rare or common word alike. It is
  asked for the words' trigrams (busca.trigrams), and each word itself decides (`instr`).
- other orders with words: FTS5 is first asked whether the words are rare (fewer than PROBE
  products); if so it finds them all and they are sorted, else the order's index is walked
  and each product checked.
- a price range in another order than price: the same choice, asked of the price index.
- ids, or codes (the unique index on codigo_chave): looked up, and sorted.
- otherwise the order's index is walked: the rowid for id orders, `produtos_nome` (nome_chave,
  id) and `produtos_preco` (preco_centavos, id), partial on live products.

Counts are capped (paging.COUNT_CAP) and remembered until the file changes (`PRAGMA
data_version`, which every commit of another connection moves), so a catalog read more than it
is written counts each query once; so are the probes that choose a plan.

Written products reach the index in bulk, not at each commit: the triggers queue each change
(migration 0014) and the writer moves the queue in (INDEX_PENDING) once it holds PENDING_MAX
rows, when the writer is idle, and before any search that asks the index. So a search still
sees every write committed before it began, and a write no longer pays for the index: FTS5
writes a segment (and merges them) each time it is given rows, whether one product's or a
thousand's, so moving them in a commit at a time cost an update at random half of its writer's
CPU (bench/results/history.md).

A list with words or a price range, or counted exactly, is read on a reader thread, never on
the event loop (storage/sqlite/readers.py), and each of its statements within the time budget.

The pages last read are kept, by what was asked, until anything is committed (the mark of
storage/sqlite/changes.py, as products read by id are): the first page of the list is asked far more
often than the catalog changes, and reading it was a quarter of its cost, a search's nearly all.
"""

import asyncio
import sqlite3
from collections.abc import AsyncGenerator, Hashable
from typing import TYPE_CHECKING, Any

from catalogo.domain.busca import Position, Query, keyer, trigrams
from catalogo.domain.errors import QueryTimeout
from catalogo.domain.produtos import Produto
from catalogo.runtime.kept import Kept
from catalogo.storage import paging
from catalogo.storage.paging import Cursor, Number, Page, Rows, Step
from catalogo.storage.sqlite.changes import Changes
from catalogo.storage.sqlite.historico import COLUMNS, LIVE, kept_produto_of
from catalogo.storage.sqlite.readers import Reader, Readers
from catalogo.storage.sqlite.writer import Writer

PAGES_KEPT = 32  # a list page's products are about 50 KB

# The search index's queued changes (migration 0014), moved into it: for each product, the
# text the index holds taken out (its first change, if it took some out) and the text it
# holds after them put in (its last, if it put some in), the rowids growing (minus the id:
# the ids falling), in one statement each.
INDEX_PENDING = (
    "INSERT INTO produtos_busca (produtos_busca, rowid, busca) "
    "SELECT 'delete', -q.id, q.busca FROM busca_pendente q "
    "JOIN (SELECT min(seq) AS seq FROM busca_pendente GROUP BY id) f ON f.seq = q.seq "
    "WHERE q.apagar ORDER BY q.id DESC",
    "INSERT INTO produtos_busca (rowid, busca) "
    "SELECT -q.id, q.busca FROM busca_pendente q "
    "JOIN (SELECT max(seq) AS seq FROM busca_pendente GROUP BY id) l ON l.seq = q.seq "
    "WHERE NOT q.apagar ORDER BY q.id DESC",
    "DELETE FROM busca_pendente",
)


# How many queued rows the writer lets wait for a quiet moment or a search: at 1,024 updates a
# move, an update at random among 10,000 cost the writer 88 µs of CPU instead of 117 at 16.
PENDING_MAX = 2_048


def index_pending(connection: sqlite3.Connection, at_least: int = 1) -> None:
    """INDEX_PENDING, if `at_least` rows are queued. The queue's rowids start again at 1 once
    it is emptied, so the last one is its length, and reading it costs one lookup."""
    (queued,) = connection.execute("SELECT coalesce(max(seq), 0) FROM busca_pendente").fetchone()
    if queued >= at_least:
        for statement in INDEX_PENDING:
            connection.execute(statement)


PENDING = "SELECT EXISTS (SELECT 1 FROM busca_pendente)"


def index_if_long(connection: sqlite3.Connection) -> None:
    """The writer's last step before each commit: a long queue is moved in with it."""
    index_pending(connection, PENDING_MAX)


PROBE = 2_000  # below this many, a word or a price range is rare enough to find all and sort
_KEYS = {
    "id": "p.id",
    "nome": "p.nome_chave",
    "preco": "p.preco_centavos",
    "atualizado_em": "p.atualizado_em",
}
_INDEXES = {
    "id": "NOT INDEXED",
    "nome": "INDEXED BY produtos_nome",
    "preco": "INDEXED BY produtos_preco",
    "atualizado_em": "INDEXED BY produtos_atualizado",
}
_SELECT = "SELECT " + ", ".join(f"p.{c}" for c in COLUMNS.split(", ")) + ", p.nome_chave"


def match(words: list[str]) -> str:
    """An FTS5 query in which each of `words` is a string, never an operator: `AND`, `NEAR` or
    a stray quote are text."""
    return " AND ".join('"' + word.replace('"', '""') + '"' for word in words)


class _Plan:
    """One query's FROM and WHERE, and how to walk them in order. The price bounds are kept
    apart: walking by price from a cursor, they must not be where SQLite starts the walk."""

    def __init__(
        self,
        query: Query,
        source: str,
        where: list[str],
        params: list[Any],
        fts_drives: bool = False,
    ) -> None:
        self.query = query
        self.source = source
        self.where = where
        self.params = params
        self.fts_drives = fts_drives

    def _conditions(self, unindexed_price: bool = False) -> tuple[list[str], list[Any]]:
        column = "+p.preco_centavos" if unindexed_price else "p.preco_centavos"
        bounds = _price_bounds(self.query)
        where = [*self.where, *(f"{column} {op} ?" for op, _ in bounds)]
        return where, [*self.params, *(centavos for _, centavos in bounds)]

    def page(
        self, cursor: Cursor[Position], limit: int, counted: bool = False
    ) -> tuple[str, list[Any]]:
        """The statement for `limit` rows from the cursor on, in the walking direction; or,
        `counted`, for how many of them there are."""
        column, ascending, position = paging.walk(self.query.ordem, cursor)
        where, params = self._conditions(position is not None and column == "preco")
        direction = "ASC" if ascending else "DESC"
        sign = ">" if ascending else "<"
        if self.fts_drives:  # rowid is -id: walking ids down is walking rowids up
            if position is not None:
                where.append(f"f.rowid {'<' if ascending else '>'} ?")
                params.append(-position.id)
            order = f"f.rowid {'DESC' if ascending else 'ASC'}"
        elif column == "id":
            if position is not None:
                where.append(f"p.id {sign} ?")
                params.append(position.id)
            order = f"p.id {direction}"
        else:
            key = _KEYS[column]
            if position is not None:
                where.append(f"({key}, p.id) {sign} (?, ?)")
                params.extend(position)
            order = f"{key} {direction}, p.id {direction}"
        select = "SELECT 1" if counted else _SELECT
        sql = f"{select} FROM {self.source} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?"
        if counted:
            sql = f"SELECT count(*) FROM ({sql})"
        return sql, [*params, limit]

    def count(self, up_to: int) -> tuple[str, list[Any]]:
        where, params = self._conditions()
        sql = f"SELECT 1 FROM {self.source} WHERE {' AND '.join(where)}"
        return f"SELECT count(*) FROM ({sql} LIMIT ?)", [*params, up_to + 1]


def _price_bounds(query: Query) -> list[tuple[str, int]]:
    """The price range as (operator, cents)."""
    bounds = [(">=", query.preco_min), ("<=", query.preco_max)]
    return [(op, int(bound * 100)) for op, bound in bounds if bound is not None]


class SQLiteSearch:
    """The list: mixed into SQLiteStorage, whose readers it uses."""

    if TYPE_CHECKING:
        _reader: Reader
        _readers: Readers
        _writer: Writer
        _changes: Changes
        _pages: Kept[Hashable, Page[Produto, Position]]  # as read at:
        _pages_at: bytes | None

    async def find(
        self,
        query: Query,
        cursor: Cursor[Position],
        count: int | None = None,
        position: bool = False,
    ) -> Page[Produto, Position]:
        asks_index = _asks_index(query)

        def read(reader: Reader) -> tuple[Page[Produto, Position], bool]:
            """The page, and whether every write its snapshot holds was in the index."""
            plan = _plan(reader, query)
            steps = paging.finding(plan, cursor, count, position)
            page = paging.run(steps, lambda step: _answer(reader, plan, step))
            return page, not (asks_index and reader.read(PENDING)[0][0])

        asked = (query, cursor, count, position)
        if (kept := self._kept_page(asked)) is not None:
            return kept
        if asks_index:
            await self._index_caught_up()
            if (kept := self._kept_page(asked)) is not None:  # its commit moved the mark
                return kept
        mark = self._pages_at
        if _bounded(query, count):
            page, indexed = self._reader.snapshot(read)
        else:
            page, indexed = await self._readers.run(read)
        # Kept as of the mark taken before its snapshot began, so that it holds every write
        # committed by then: not once another request found a newer mark, nor with writes
        # the index did not have yet, nor without the count asked for (past its budget).
        counted = count is None or page.total is not None
        if mark is not None and mark == self._pages_at and indexed and counted:
            self._pages.keep(asked, page)
        return page

    def _kept_page(self, asked: Hashable) -> Page[Produto, Position] | None:
        """The page kept for `asked`, if nothing was committed since it was read; else none,
        and every page kept forgotten."""
        mark = self._changes.mark()
        if mark is not None and mark == self._pages_at:
            return self._pages.get(asked)
        self._pages.clear()
        self._pages_at = mark
        return None

    async def export(
        self, query: Query, chunk: int = paging.EXPORT_CHUNK
    ) -> AsyncGenerator[list[Produto], None]:
        if _asks_index(query):
            await self._index_caught_up()
        reader, thread = self._readers.own()
        loop = asyncio.get_running_loop()
        try:
            plan = await loop.run_in_executor(thread, _begin, reader, query)
            cursor: Cursor[Position] | None = Cursor(chunk)
            while cursor is not None:
                rows = await loop.run_in_executor(thread, _answer, reader, plan, Rows(cursor))
                items, cursor = paging.next_chunk(cursor, rows)
                if items:
                    yield items
        finally:
            thread.submit(reader.connection.close)  # after a chunk still being read, if any
            thread.shutdown(wait=False)

    async def _index_caught_up(self) -> None:
        """Before a search that asks the index, what the writes committed so far queued for it
        is moved in (by the writer: only it may write)."""
        if self._reader.read(PENDING)[0][0]:
            await self._writer.submit(index_pending)


def _asks_index(query: Query) -> bool:
    """Whether `_plan` may read the index: words of three characters or more."""
    return any(trigrams(term) for term in query.terms)


def _begin(reader: Reader, query: Query) -> _Plan:
    """An export's snapshot, opened on its reader, and its plan."""
    reader.read("BEGIN")
    return _plan(reader, query)


def _bounded(query: Query, count: int | None) -> bool:
    """Whether a list costs the same at any size of the catalog, and so is read on the event
    loop (storage/sqlite/readers.py): a walk along an order's index from a cursor, or at most 100
    ids or codes, counted no further than COUNT_CAP. Words and price ranges may read the whole
    catalog."""
    unfiltered = not query.terms and query.preco_min is None and query.preco_max is None
    return (unfiltered or bool(query.ids or query.codigos)) and (
        count is None or count <= paging.COUNT_CAP
    )


def _answer(reader: Reader, plan: _Plan, step: Step) -> Any:
    """One step of paging.finding, in the reader's snapshot."""
    if isinstance(step, Rows):
        sql, params = plan.page(step.cursor, step.cursor.limit + 1)
        key = keyer(plan.query)
        return [
            (kept_produto_of(row[:8]), key(row[0], row[8], row[3], row[6]))
            for row in reader.read(sql, tuple(params))
        ]
    if isinstance(step, Number):
        sql, params = step.statement
        return reader.read(sql, tuple(params))[0][0]
    try:
        counted, statement = step.counting
        return _remembered(reader, counted, statement, step.up_to)
    except QueryTimeout:
        return None  # the page is what was asked for: it goes without its count


def _remembered(reader: Reader, counted: Hashable, statement: paging.Statement, up_to: int) -> int:
    (version,) = reader.read("PRAGMA data_version")[0]
    if (known := reader.counts.known(version, counted, up_to)) is not None:
        return known
    sql, params = statement
    return reader.counts.remember(counted, up_to, reader.read(sql, tuple(params))[0][0])


def _plan(reader: Reader, query: Query) -> _Plan:
    where = ["p.removido_em IS NULL"]
    params: list[Any] = []
    for term in query.terms:
        where.append("instr(p.busca, ?) > 0")
        params.append(term)
    if query.codigos:
        where.append(f"p.codigo_chave IN ({', '.join('?' * len(query.codigos))})")
        params.extend(query.codigos)
    if query.ids:
        where.append(f"p.id IN ({', '.join('?' * len(query.ids))})")
        return _Plan(query, "produtos p", where, [*params, *query.ids])
    if query.codigos:
        return _Plan(query, "produtos p INDEXED BY produtos_codigo", where, params)
    column = query.ordem.lstrip("-")
    found_by = list(dict.fromkeys(t for term in query.terms for t in trigrams(term)))
    bounds = _price_bounds(query)
    if found_by:
        words = match(found_by)
        if column == "id":
            source = "produtos_busca f CROSS JOIN produtos p ON p.id = -f.rowid"
            where = ["produtos_busca MATCH ?", *where]
            return _Plan(query, source, where, [words, *params], fts_drives=True)
        if _rare(reader, "SELECT 1 FROM produtos_busca WHERE produtos_busca MATCH ?", [words]):
            source = (
                "(SELECT -rowid AS id FROM produtos_busca WHERE produtos_busca MATCH ?) c "
                "CROSS JOIN produtos p ON p.id = c.id"
            )
            return _Plan(query, source, where, [words, *params])
    elif bounds and column != "preco":
        in_range = " AND ".join(f"p.preco_centavos {op} ?" for op, _ in bounds)
        sql = f"SELECT 1 FROM produtos p INDEXED BY produtos_preco WHERE {LIVE} AND {in_range}"
        if _rare(reader, sql, [centavos for _, centavos in bounds]):
            return _Plan(query, "produtos p INDEXED BY produtos_preco", where, params)
    return _Plan(query, f"produtos p {_INDEXES[column]}", where, params)


def _rare(reader: Reader, sql: str, params: list[Any]) -> bool:
    """Remembered as counts are: the same probe at every page of a list costs a fifth of the
    page (a price range at a million products, bench/results/history.md)."""
    (version,) = reader.read("PRAGMA data_version")[0]
    probe = (sql, *params)
    if (known := reader.counts.known(version, probe, PROBE)) is None:
        counted = reader.read(f"SELECT count(*) FROM ({sql} LIMIT ?)", (*params, PROBE))
        known = reader.counts.remember(probe, PROBE, counted[0][0])
    return known < PROBE
