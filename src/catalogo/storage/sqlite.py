"""Products in a SQLite file: reads by id inline on the event loop, the list's reads on
sqlite_readers.py's threads, writes on sqlite_writer.py's thread.

Reads in WAL mode never wait for a writer, and one by id takes microseconds, less than a thread
hop would cost (aiosqlite measured 0.6-0.8x of inline reads). Each write checks the
product's version, changes it and appends its event (history.py) as one write of the
writer's batch, all or nothing: one writer, so events get their ids in the order they commit.
"""

import asyncio
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, TypeVar

from catalogo import history, storage
from catalogo.history import Autoria, Evento
from catalogo.produtos import Produto, keeping_codigo, same_fields, stored
from catalogo.search import folded
from catalogo.storage.sql import (
    CODIGO_HOLDER,
    EVENT_COLUMNS,
    LAST_EVENTS,
    event_row,
    evento_of,
    left_as_it_was,
)
from catalogo.storage.sqlite_accounts import SQLiteAccounts
from catalogo.storage.sqlite_changes import Changes
from catalogo.storage.sqlite_history import (
    COLUMNS,
    LIVE,
    SQLiteHistory,
    kept_produto_of,
    produto_of,
)
from catalogo.storage.sqlite_imports import SQLiteImports
from catalogo.storage.sqlite_readers import Reader, Readers
from catalogo.storage.sqlite_search import SQLiteSearch, index_if_long, index_pending
from catalogo.storage.sqlite_writer import Writer

T = TypeVar("T")
_FIRST = 1  # a new product's version


def _insert(connection: sqlite3.Connection, produto: Produto, autoria: Autoria) -> Produto:
    now = time.time()
    keys = folded(produto)
    _check_codigo(connection, produto, keys.codigo_chave)
    # Not RETURNING: SQLite gathers a RETURNING's rows in a table it builds in memory for every
    # statement, about 25,000 of a create's 830,000 instructions (docs/performance.md).
    inserted = connection.execute(
        "INSERT INTO produtos (versao, codigo, nome, descricao, preco_centavos, criado_em, "
        "atualizado_em, nome_chave, busca, codigo_chave) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            _FIRST,
            produto.codigo,
            produto.nome,
            produto.descricao,
            _centavos(produto),
            now,
            now,
            *keys,
        ),
    )
    assert inserted.lastrowid is not None  # noqa: S101 - an INSERT that succeeded
    created = stored(
        inserted.lastrowid,
        _FIRST,
        now,
        now,
        produto.codigo,
        produto.nome,
        produto.descricao,
        produto.preco,
    )
    _record(connection, event_row("criado", created, None, created, autoria, now))
    return created


def _update(
    connection: sqlite3.Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> storage.Saved:
    antes = _current(connection, id, versions)
    edit = keeping_codigo(produto, antes)
    if same_fields(antes, edit):
        return storage.Saved(antes, changed=False)
    if edit.codigo != antes.codigo:
        _check_codigo(connection, edit, folded(edit).codigo_chave, id)
    now = time.time()
    columns, params = _changed_columns(antes, edit)
    connection.execute(
        f"UPDATE produtos SET versao = versao + 1, atualizado_em = ?, {columns} WHERE id = ?",
        (now, *params, id),
    )
    assert antes.criado_em is not None  # noqa: S101 - read from the database just now
    depois = stored(
        id, _next(antes), antes.criado_em, now, edit.codigo, edit.nome, edit.descricao, edit.preco
    )
    _record(connection, event_row("alterado", depois, antes, depois, autoria, now))
    return storage.Saved(depois, changed=True)


def _apply(
    connection: sqlite3.Connection, writes: Sequence[storage.Write], autoria: Autoria
) -> list[Produto]:
    done = []
    for w in writes:
        if w.id is None:
            done.append(_insert(connection, w.produto, autoria))
        elif w.removed:
            done.append(_mark_removed(connection, _current(connection, w.id, _seen(w)), autoria))
        else:
            done.append(_update(connection, w.id, w.produto, _seen(w), autoria).produto)
    return done


def _revert(connection: sqlite3.Connection, lote: str, autoria: Autoria) -> int:
    """Storage.revert, a stretch of the batch at a time (sql.last_events): every product
    checked first, then every one undone, so that no batch is ever held whole."""
    moved: list[int] = []
    for events, current in _batch(connection, lote):
        moved += [e.produto_id for e in events if not _as_left(e, current)]
    if moved:
        raise storage.BatchMoved(sorted(moved))
    undone = 0
    for events, current in _batch(connection, lote):
        for evento in events:
            _undo(connection, evento, current[evento.produto_id][0], autoria)
        undone += len(events)
    if not undone:
        raise storage.NotFound()
    return undone


_Current = dict[int, tuple[Produto, bool]]


def _batch(connection: sqlite3.Connection, lote: str) -> Iterator[tuple[list[Evento], _Current]]:
    """The batch's last event of each product, a stretch at a time, with each product as it
    is now (and whether it is removed)."""
    after = 0
    while rows := connection.execute(LAST_EVENTS, (lote, after)).fetchall():
        events = [evento_of(row) for row in rows]
        after = events[-1].id
        ids = [e.produto_id for e in events]
        found = connection.execute(
            f"SELECT {COLUMNS}, removido_em IS NOT NULL FROM produtos "
            f"WHERE id IN ({', '.join('?' * len(ids))})",
            ids,
        ).fetchall()
        yield events, {row[0]: (produto_of(row[:-1]), bool(row[-1])) for row in found}


def _as_left(evento: Evento, current: _Current) -> bool:
    found = current.get(evento.produto_id)
    return found is not None and left_as_it_was(evento, *found)


def _undo(
    connection: sqlite3.Connection, evento: Evento, current: Produto, autoria: Autoria
) -> Produto:
    """The change `evento` made, undone from `current`, which it left as it is."""
    if evento.tipo in ("criado", "restaurado"):
        return _mark_removed(connection, current, autoria)
    if evento.tipo == "removido":
        return _mark_removed(connection, current, autoria, restored=True)
    assert evento.antes is not None and current.id is not None  # noqa: S101 - an edit's event
    before = history.produto_of(evento.antes)
    return _update(connection, current.id, before, {current.versao or 0}, autoria).produto


def _seen(write: storage.Write) -> Collection[int] | None:
    return None if write.versao is None else {write.versao}


def _check_codigo(
    connection: sqlite3.Connection, produto: Produto, key: str | None, id: int | None = None
) -> None:
    """CodigoTaken if a product other than `id` holds the code: in the write's transaction,
    which no other writer, in this process or another, comes between."""
    if key is None:
        return
    for holder, removed in connection.execute(CODIGO_HOLDER, (key,)).fetchall():
        if holder != id:
            raise storage.CodigoTaken(str(produto.codigo), holder, bool(removed))


def _record(connection: sqlite3.Connection, event: tuple[Any, ...]) -> None:
    """The change's event (sql.event_row), in the change's own transaction."""
    connection.execute(
        f"INSERT INTO eventos ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", event
    )


def _mark_removed(
    connection: sqlite3.Connection, current: Produto, autoria: Autoria, restored: bool = False
) -> Produto:
    """A removal (or a restore) as a new version of the product, and its event."""
    now = time.time()
    connection.execute(
        "UPDATE produtos SET removido_em = ?, versao = versao + 1, atualizado_em = ? WHERE id = ?",
        (None if restored else now, now, current.id),
    )
    changed = current.model_copy(update={"versao": _next(current), "atualizado_em": now})
    if restored:
        _record(connection, event_row("restaurado", changed, None, changed, autoria, now))
    else:
        _record(connection, event_row("removido", changed, current, None, autoria, now))
    return changed


def _current(connection: sqlite3.Connection, id: int, versions: Collection[int] | None) -> Produto:
    """The live product a write is about to change, at one of the `versions` it expects."""
    rows = connection.execute(
        f"SELECT {COLUMNS} FROM produtos WHERE id = ? AND {LIVE}", (id,)
    ).fetchall()
    if not rows:
        raise storage.NotFound()
    current = produto_of(rows[0])
    if versions is not None and current.versao not in versions:
        raise storage.VersionConflict(current)
    return current


def _changed_columns(antes: Produto, produto: Produto) -> tuple[str, list[Any]]:
    """The SET list of an update, for only the columns the edit changes: SQLite maintains an
    index (or the search's trigger) only when a column of it is set, so an edit of the name
    leaves the price's index alone. At least one field differs (`same_fields`)."""
    columns: list[str] = []
    params: list[Any] = []
    nome, descricao = produto.nome != antes.nome, produto.descricao != antes.descricao
    codigo = produto.codigo != antes.codigo
    keys = folded(produto)
    if nome or descricao or codigo:
        columns.append("busca = ?")
        params.append(keys.busca)
    if nome:
        columns += ["nome = ?", "nome_chave = ?"]
        params += [produto.nome, keys.nome_chave]
    if codigo:
        columns += ["codigo = ?", "codigo_chave = ?"]
        params += [produto.codigo, keys.codigo_chave]
    if descricao:
        columns.append("descricao = ?")
        params.append(produto.descricao)
    if produto.preco != antes.preco:
        columns.append("preco_centavos = ?")
        params.append(_centavos(produto))
    return ", ".join(columns), params


def _centavos(produto: Produto) -> int:
    return int(produto.preco * 100)


def _next(produto: Produto) -> int:
    assert produto.versao is not None  # noqa: S101 - read from the database just now
    return produto.versao + 1


def _fields(nome: str, descricao: str, centavos: int) -> str:
    return history.fields_json(
        Produto.model_construct(nome=nome, descricao=descricao, preco=Decimal(centavos).scaleb(-2))
    )


# Products' rows by id while nothing is committed, the least recently read out first. Rows,
# not products: the product is made again from its row when the 5,000 kept by their row
# (sqlite_history.py) no longer hold it, which costs microseconds and no statement. Kept as
# products, 10,000 took a worker at a million products to 151.6 MB (docs/performance.md).
ROWS_KEPT = 10_000
_UNREAD: Any = object()


class SQLiteStorage(SQLiteSearch, SQLiteHistory, SQLiteAccounts, SQLiteImports):
    def __init__(
        self,
        path: str,
        lock_timeout_ms: int = 5000,
        committed: Callable[[int], None] = storage.unobserved,
        query_timeout_ms: int = 5000,
    ) -> None:
        """`committed` is told the number of writes in each group commit (metrics.py)."""
        self._reader = Reader(path, lock_timeout_ms, query_timeout_ms)
        self._reader.read("SELECT 1 FROM sqlite_master LIMIT 1")  # so that it maps the -shm
        self._changes = Changes(path)  # which stays as long as the reader is open: see there
        self._rows: OrderedDict[int, tuple[Any, ...] | None] = OrderedDict()  # as read at:
        self._rows_at: bytes | None = None
        self._readers = Readers(path, lock_timeout_ms, query_timeout_ms)
        self._writer = Writer(path, lock_timeout_ms, committed, index_if_long, index_pending)
        self._writer.start()
        self._known_principals = {}  # sqlite_accounts.py

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self._reader.read(sql, params)

    async def _write(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        return await self._writer.submit(lambda c: c.execute(sql, params).fetchall())

    async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._writer.submit(work)

    async def get(self, id: int) -> Produto | None:
        """Read again only once something was committed since it was last read: the hot path
        then asks SQLite nothing (sqlite_changes.py). The mark is taken before the read, so a
        commit between them is seen by the next request."""
        mark = self._changes.mark()
        if mark is not None and mark == self._rows_at:
            known = self._rows.get(id, _UNREAD)
            if known is not _UNREAD:
                self._rows.move_to_end(id)
                return None if known is None else kept_produto_of(known)
        else:
            self._rows.clear()
            self._rows_at = mark
        rows = self._read(f"SELECT {COLUMNS} FROM produtos WHERE id = ? AND {LIVE}", (id,))
        row = tuple(rows[0]) if rows else None
        if mark is not None:
            self._rows[id] = row
            if len(self._rows) > ROWS_KEPT:
                self._rows.popitem(last=False)
        return None if row is None else kept_produto_of(row)

    async def create(self, produto: Produto, autoria: Autoria) -> Produto:
        return await self._writer.submit(lambda c: _insert(c, produto, autoria))

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int:
        """Adds products, each with its event, in one transaction: for seeding demos and
        benchmarks, not for requests. The ids are consecutive: one writer, one transaction."""
        now = time.time()
        rows = [(p.nome, p.descricao, _centavos(p), now, now, *folded(p)[:2]) for p in produtos]

        def run(connection: sqlite3.Connection) -> int:
            (last,) = connection.execute("SELECT coalesce(max(id), 0) FROM produtos").fetchone()
            (seq,) = connection.execute(
                "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'produtos'"
            ).fetchone()
            first = max(last, seq) + 1  # AUTOINCREMENT's rule for the next id
            connection.executemany(
                "INSERT INTO produtos (nome, descricao, preco_centavos, criado_em, "
                "atualizado_em, nome_chave, busca) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            connection.executemany(
                f"INSERT INTO eventos ({EVENT_COLUMNS}) VALUES (?, 'criado', 1, NULL, ?, "
                "?, ?, ?, ?, ?, ?)",
                (
                    (first + i, _fields(nome, descricao, centavos), *autoria, now)
                    for i, (nome, descricao, centavos, *_) in enumerate(rows)
                ),
            )
            return len(rows)

        return await self._writer.submit(run)

    async def update(
        self,
        id: int,
        produto: Produto,
        versions: Collection[int] | None,
        autoria: Autoria,
    ) -> storage.Saved:
        return await self._writer.submit(lambda c: _update(c, id, produto, versions, autoria))

    async def apply(self, writes: Sequence[storage.Write], autoria: Autoria) -> list[Produto]:
        return await self._writer.submit(lambda c: _apply(c, writes, autoria))  # all or none

    async def revert(self, lote: str, autoria: Autoria) -> int:
        return await self._writer.submit(lambda c: _revert(c, lote, autoria))

    def _applied(
        self, connection: sqlite3.Connection, writes: Sequence[storage.Write], autoria: Autoria
    ) -> list[Produto]:
        """`apply` within its caller's write: confirming an import (sqlite_imports.py)."""
        return _apply(connection, writes, autoria)

    def _reverted(self, connection: sqlite3.Connection, lote: str, autoria: Autoria) -> int:
        return _revert(connection, lote, autoria)

    async def delete(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            return _mark_removed(connection, _current(connection, id, versions), autoria)

        return await self._writer.submit(run)

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            rows = connection.execute(
                f"SELECT {COLUMNS}, removido_em FROM produtos WHERE id = ?", (id,)
            ).fetchall()
            if not rows:
                raise storage.NotFound()
            current = produto_of(rows[0][:-1])
            if rows[0][-1] is None:
                raise storage.NotRemoved(current)
            return _mark_removed(connection, current, autoria, restored=True)

        return await self._writer.submit(run)

    async def claim_key(self, key: str, fingerprint: str) -> storage.KeyClaim:
        def run(connection: sqlite3.Connection) -> storage.KeyClaim:
            now = time.time()
            connection.execute(
                "DELETE FROM idempotency_keys WHERE created_at < ?",
                (now - storage.KEY_TTL_SECONDS,),
            )
            row = connection.execute(
                "SELECT fingerprint, created_at, produto_id FROM idempotency_keys WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None or (row[2] is None and row[1] < now - storage.ABANDONED_AFTER_SECONDS):
                connection.execute(
                    "INSERT OR REPLACE INTO idempotency_keys (key, fingerprint, created_at) "
                    "VALUES (?, ?, ?)",
                    (key, fingerprint, now),
                )
                return storage.KeyClaim("claimed", claimed_at=now)
            return storage.existing_claim(fingerprint, row[0], row[2])

        return await self._writer.submit(run)

    async def create_once(
        self, produto: Produto, key: str, claimed_at: float, autoria: Autoria
    ) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            created = _insert(connection, produto, autoria)
            kept = connection.execute(
                "UPDATE idempotency_keys SET produto_id = ? "
                "WHERE key = ? AND created_at = ? AND produto_id IS NULL",
                (created.id, key, claimed_at),
            )
            if kept.rowcount != 1:
                raise storage.KeyTaken(key)  # the writer undoes the new product
            return created

        return await self._writer.submit(run)

    async def release_key(self, key: str, claimed_at: float) -> None:
        await self._write(
            "DELETE FROM idempotency_keys WHERE key = ? AND created_at = ? AND produto_id IS NULL",
            (key, claimed_at),
        )

    async def schema_version(self) -> str | None:
        if not self._read("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'"):
            return None  # never migrated
        rows = self._read("SELECT version_num FROM alembic_version")
        return str(rows[0][0]) if rows else None

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._readers.close)
        await loop.run_in_executor(None, self._writer.stop)
        self._changes.close()
        self._reader.connection.close()
