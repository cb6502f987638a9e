"""Products in a SQLite file: reads by id inline on the event loop, the list's reads on
storage/sqlite/readers.py's threads, writes on storage/sqlite/writer.py's thread, each as
storage/sqlite/transaction.py does it in the writer's transaction.

Reads in WAL mode never wait for a writer, and one by id takes microseconds, less than a thread
hop would cost (aiosqlite measured 0.6-0.8x of inline reads). One writer, so events get their
ids in the order they commit.
"""

import asyncio
import contextlib
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from catalogo import storage
from catalogo.domain.busca import folded
from catalogo.domain.errors import KeyTaken, NotFound
from catalogo.domain.historico import Autoria
from catalogo.domain.produtos import Produto
from catalogo.runtime.kept import Kept
from catalogo.storage.sql import EVENT_COLUMNS
from catalogo.storage.sqlite import transaction
from catalogo.storage.sqlite.busca import PAGES_KEPT, SQLiteSearch, index_if_long, index_pending
from catalogo.storage.sqlite.changes import Changes
from catalogo.storage.sqlite.contas import KEPT_PRINCIPALS, SQLiteAccounts
from catalogo.storage.sqlite.historico import (
    COLUMNS,
    LIVE,
    SQLiteHistory,
    kept_produto_of,
    produto_of,
)
from catalogo.storage.sqlite.importacoes import SQLiteImports
from catalogo.storage.sqlite.readers import Reader, Readers
from catalogo.storage.sqlite.webhooks import SQLiteWebhooks
from catalogo.storage.sqlite.writer import Writer

T = TypeVar("T")


# Products' rows by id while nothing is committed, the least recently read out first. Rows,
# not products: the product is made again from its row when the 5,000 kept by their row
# (storage/sqlite/historico.py) no longer hold it, which costs microseconds and no statement. Kept
# as products, 10,000 took a worker at a million products to 151.6 MB (bench/results/history.md).
ROWS_KEPT = 10_000
_UNREAD: Any = object()


_MIGRATED = "SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'"
_SCHEMA_VERSION = "SELECT version_num FROM alembic_version"
_FLOORED = "SELECT 1 FROM sqlite_master WHERE name = 'schema_floor'"
_FLOOR = "SELECT revision FROM schema_floor"


def schema_version_of(path: str) -> str | None:
    """The revision the file at `path` is at (None: not there, or never migrated), read
    before a store is opened on it, so that a worker on a current file never loads Alembic."""
    try:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as connection:
            if not connection.execute(_MIGRATED).fetchall():
                return None
            rows = connection.execute(_SCHEMA_VERSION).fetchall()
    except sqlite3.OperationalError:  # not there (or locked by a migration: it waits for it)
        return None
    return str(rows[0][0]) if rows else None


class SQLiteStorage(SQLiteSearch, SQLiteHistory, SQLiteAccounts, SQLiteImports, SQLiteWebhooks):
    def __init__(
        self,
        path: str,
        lock_timeout_ms: int = 5000,
        committed: Callable[[int], None] = storage.unobserved,
        query_timeout_ms: int = 5000,
    ) -> None:
        """`committed` is told the number of writes in each group commit (runtime/metrics.py)."""
        self._reader = Reader(path, lock_timeout_ms, query_timeout_ms)
        self._reader.read("SELECT 1 FROM sqlite_master LIMIT 1")  # so that it maps the -shm
        self._changes = Changes(path)  # which stays as long as the reader is open: see there
        self._rows: OrderedDict[int, tuple[Any, ...] | None] = OrderedDict()  # as read at:
        self._rows_at: bytes | None = None
        self._pages: Kept[Any, Any] = Kept(PAGES_KEPT)  # storage/sqlite/busca.py
        self._pages_at: bytes | None = None
        self._readers = Readers(path, lock_timeout_ms, query_timeout_ms)
        self._writer = Writer(path, lock_timeout_ms, committed, index_if_long, index_pending)
        self._writer.start()
        self._known_principals = Kept(KEPT_PRINCIPALS)  # storage/sqlite/contas.py

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self._reader.read(sql, params)

    async def _write(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        return await self._writer.submit(lambda c: c.execute(sql, params).fetchall())

    async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._writer.submit(work)

    async def get(self, id: int) -> Produto | None:
        """Read again only once something was committed since it was last read: the hot path
        then asks SQLite nothing (storage/sqlite/changes.py). The mark is taken before the read, so
        a commit between them is seen by the next request."""
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
        return await self._writer.submit(lambda c: transaction.insert(c, produto, autoria))

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int:
        """Adds products, each with its event, in one transaction: for seeding demos and
        benchmarks, not for requests. The ids are consecutive: one writer, one transaction."""
        now = time.time()
        rows = [
            (p.nome, p.descricao, transaction.centavos(p), now, now, *folded(p)[:2])
            for p in produtos
        ]

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
                    (first + i, transaction.fields(nome, descricao, centavos), *autoria, now)
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
        return await self._writer.submit(
            lambda c: transaction.update(c, id, produto, versions, autoria)
        )

    async def write_many(self, writes: Sequence[storage.Write], autoria: Autoria) -> list[Produto]:
        return await self._writer.submit(
            lambda c: transaction.write_many(c, writes, autoria)
        )  # all or none

    async def undo_batch(self, lote: str, autoria: Autoria) -> int:
        return await self._writer.submit(lambda c: transaction.undo_batch(c, lote, autoria))

    def _written_many(
        self, connection: sqlite3.Connection, writes: Sequence[storage.Write], autoria: Autoria
    ) -> list[Produto]:
        """`write_many` within its caller's write: confirming an import
        (storage/sqlite/importacoes.py)."""
        return transaction.write_many(connection, writes, autoria)

    def _undone_batch(self, connection: sqlite3.Connection, lote: str, autoria: Autoria) -> int:
        return transaction.undo_batch(connection, lote, autoria)

    async def remove(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            return transaction.mark_removed(
                connection, transaction.current(connection, id, versions), autoria
            )

        return await self._writer.submit(run)

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            rows = connection.execute(
                f"SELECT {COLUMNS}, removido_em FROM produtos WHERE id = ?", (id,)
            ).fetchall()
            if not rows:
                raise NotFound()
            current = produto_of(rows[0][:-1])
            if rows[0][-1] is None:
                raise storage.NotRemoved(current)
            return transaction.mark_removed(connection, current, autoria, restored=True)

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
            created = transaction.insert(connection, produto, autoria)
            kept = connection.execute(
                "UPDATE idempotency_keys SET produto_id = ? "
                "WHERE key = ? AND created_at = ? AND produto_id IS NULL",
                (created.id, key, claimed_at),
            )
            if kept.rowcount != 1:
                raise KeyTaken(key)  # the writer undoes the new product
            return created

        return await self._writer.submit(run)

    async def release_key(self, key: str, claimed_at: float) -> None:
        await self._write(
            "DELETE FROM idempotency_keys WHERE key = ? AND created_at = ? AND produto_id IS NULL",
            (key, claimed_at),
        )

    async def schema(self) -> storage.Schema:
        if not self._read(_MIGRATED):
            return storage.Schema(None, None)
        rows = self._read(_SCHEMA_VERSION)
        floor = self._read(_FLOOR) if self._read(_FLOORED) else []
        return storage.Schema(
            str(rows[0][0]) if rows else None, str(floor[0][0]) if floor else None
        )

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._readers.close)
        await loop.run_in_executor(None, self._writer.stop)
        self._changes.close()
        self._reader.connection.close()
