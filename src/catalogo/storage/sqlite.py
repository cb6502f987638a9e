"""Products in a SQLite file: reads inline on the event loop, writes on one writer thread.

Reads in WAL mode never wait for a writer and take microseconds, so a thread hop would cost
more than the read (aiosqlite measured 0.6-0.8x of inline reads). Writes go to a single thread
with its own connection: one writer per process is what SQLite allows anyway, and the event
loop never blocks on a lock. `synchronous=FULL` makes each acknowledged write survive a power
cut, not only a crash, at the price of a disk flush per commit; the writer pays it once for
every write that queued while the previous commit was flushing (group commit), each write in
its own savepoint so that one failing write does not undo the others. `busy_timeout` lets
several processes on one file take turns instead of failing.
"""

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable
from decimal import Decimal
from typing import Any, TypeVar

from catalogo import storage
from catalogo.produtos import Produto
from catalogo.storage.sqlite_accounts import SQLiteAccounts

T = TypeVar("T")
MAX_BATCH = 256
_COLUMNS = "id, nome, descricao, preco_centavos, versao"


def _connect(path: str, lock_timeout_ms: int) -> sqlite3.Connection:
    """WAL is what lets reads run beside the writer; it is set here, where it is relied on."""
    connection = sqlite3.connect(path, isolation_level=None, cached_statements=64)
    connection.execute(f"PRAGMA busy_timeout={int(lock_timeout_ms)}")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    return connection


def _produto(row: tuple[int, str, str, int, int]) -> Produto:
    id, nome, descricao, centavos, versao = row
    return Produto.model_construct(
        id=id, nome=nome, descricao=descricao, preco=Decimal(centavos).scaleb(-2), versao=versao
    )


def _insert(connection: sqlite3.Connection, produto: Produto) -> Produto:
    rows = connection.execute(
        "INSERT INTO produtos (nome, descricao, preco_centavos) VALUES (?, ?, ?) "
        "RETURNING id, versao",
        (produto.nome, produto.descricao, _centavos(produto)),
    ).fetchall()
    return produto.model_copy(update={"id": rows[0][0], "versao": rows[0][1]})


def _at_versions(versions: Collection[int] | None) -> str:
    """The SQL condition for an expected version; its values are bound, never written in."""
    if versions is None:
        return ""
    return f" AND versao IN ({', '.join('?' * len(versions))})" if versions else " AND 0"


def _why_not(connection: sqlite3.Connection, id: int) -> Exception:
    """Why a write that named a product changed no row: it is gone, or it has moved on."""
    rows = connection.execute(f"SELECT {_COLUMNS} FROM produtos WHERE id = ?", (id,)).fetchall()
    return storage.VersionConflict(_produto(rows[0])) if rows else storage.NotFound()


def _centavos(produto: Produto) -> int:
    return int(produto.preco * 100)


Job = tuple[Callable[[sqlite3.Connection], Any], asyncio.Future[Any]]


class _Writer(threading.Thread):
    """Owns the write connection; commits each batch of queued writes with one flush."""

    def __init__(self, path: str, lock_timeout_ms: int, committed: Callable[[int], None]) -> None:
        super().__init__(name="sqlite-writer", daemon=True)
        self._path = path
        self._lock_timeout_ms = lock_timeout_ms
        self._committed = committed
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> "asyncio.Future[T]":
        if not self.is_alive():
            raise storage.StorageUnavailable("the SQLite writer thread has stopped")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((work, future))
        return future

    def stop(self) -> None:
        self._jobs.put(None)
        self.join()

    def run(self) -> None:
        connection = _connect(self._path, self._lock_timeout_ms)
        try:
            while (batch := self._next_batch()) is not None:
                self._commit(connection, batch)
        finally:
            connection.close()

    def _next_batch(self) -> list[Job] | None:
        first = self._jobs.get()
        if first is None:
            return None
        batch = [first]
        while len(batch) < MAX_BATCH:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is None:
                self._jobs.put(None)  # finish this batch, then stop
                break
            batch.append(job)
        return batch

    def _commit(self, connection: sqlite3.Connection, batch: list[Job]) -> None:
        try:
            connection.execute("BEGIN IMMEDIATE")
            outcomes = [_in_savepoint(connection, work) for work, _ in batch]
            connection.execute("COMMIT")
            committed = len(batch)
        except Exception as error:  # locked past busy_timeout, disk full, a damaged file
            _rollback(connection)
            outcomes = [(False, storage.StorageUnavailable(str(error))) for _ in batch]
            committed = 0
        # One wake-up of each waiting event loop per batch, not one per write.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            by_loop.setdefault(future.get_loop(), []).append((future, ok, value))
        for loop, settled in by_loop.items():
            # RuntimeError: that event loop is gone, so nobody waits for these answers.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, settled)
        if committed:
            with contextlib.suppress(Exception):  # a metric that fails must not stop the writer
                self._committed(committed)


def _rollback(connection: sqlite3.Connection) -> None:
    # If even this fails, the next BEGIN fails the same way and answers 503 too.
    with contextlib.suppress(sqlite3.Error):
        if connection.in_transaction:
            connection.execute("ROLLBACK")


def _in_savepoint(
    connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], Any]
) -> tuple[bool, Any]:
    connection.execute("SAVEPOINT write")
    try:
        value = work(connection)
    except Exception as error:
        if isinstance(error, sqlite3.DatabaseError) and not isinstance(
            error, sqlite3.IntegrityError
        ):
            raise  # the database itself failed: the whole batch is in doubt
        connection.execute("ROLLBACK TO write")
        connection.execute("RELEASE write")
        return False, error
    connection.execute("RELEASE write")
    return True, value


def _settle(settled: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in settled:
        if future.done():  # the request went away while its write was committed
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class SQLiteStorage(SQLiteAccounts):
    def __init__(
        self,
        path: str,
        lock_timeout_ms: int = 5000,
        committed: Callable[[int], None] = storage.unobserved,
    ) -> None:
        """`committed` is told the number of writes in each group commit (metrics.py)."""
        self._reader = _connect(path, lock_timeout_ms)
        self._writer = _Writer(path, lock_timeout_ms, committed)
        self._writer.start()

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self._reader.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as error:  # locked, unreadable or damaged: not a bug of ours
            raise storage.StorageUnavailable(str(error)) from error

    async def _write(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        return await self._writer.submit(lambda c: c.execute(sql, params).fetchall())

    async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await self._writer.submit(work)

    async def page(self, cursor: storage.Cursor) -> storage.Page:
        self._read("BEGIN")
        try:
            return self._page(cursor)
        finally:
            self._read("COMMIT")

    def _page(self, cursor: storage.Cursor) -> storage.Page:
        base = f"SELECT {_COLUMNS} FROM produtos"
        if cursor.before is not None:
            rows = self._read(
                f"{base} WHERE id > ? ORDER BY id ASC LIMIT ?", (cursor.before, cursor.limit)
            )[::-1]
        elif cursor.after is not None:
            rows = self._read(
                f"{base} WHERE id < ? ORDER BY id DESC LIMIT ?", (cursor.after, cursor.limit)
            )
        else:
            rows = self._read(f"{base} ORDER BY id DESC LIMIT ?", (cursor.limit,))
        if not rows:
            anywhere = self._read("SELECT EXISTS(SELECT 1 FROM produtos)")[0][0]
            return storage.page_of(cursor, [], False, 0, anywhere)
        first, last = rows[0][0], rows[-1][0]
        older = self._read("SELECT EXISTS(SELECT 1 FROM produtos WHERE id < ?)", (last,))[0][0]
        newer = self._read(
            "SELECT count(*) FROM (SELECT 1 FROM produtos WHERE id > ? LIMIT ?)",
            (first, cursor.limit + 1),
        )[0][0]
        return storage.page_of(cursor, [_produto(row) for row in rows], older, newer, True)

    async def get(self, id: int) -> Produto | None:
        rows = self._read(f"SELECT {_COLUMNS} FROM produtos WHERE id = ?", (id,))
        return _produto(rows[0]) if rows else None

    async def create(self, produto: Produto) -> Produto:
        return await self._writer.submit(lambda c: _insert(c, produto))

    async def create_many(self, produtos: Iterable[Produto]) -> int:
        """Adds products in one transaction: for seeding demos and benchmarks, not for requests."""
        rows = [(p.nome, p.descricao, _centavos(p)) for p in produtos]
        sql = "INSERT INTO produtos (nome, descricao, preco_centavos) VALUES (?, ?, ?)"
        return await self._writer.submit(lambda c: c.executemany(sql, rows).rowcount)

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None = None
    ) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            rows = connection.execute(
                "UPDATE produtos SET nome = ?, descricao = ?, preco_centavos = ?, "
                f"versao = versao + 1 WHERE id = ?{_at_versions(versions)} RETURNING versao",
                (produto.nome, produto.descricao, _centavos(produto), id, *(versions or ())),
            ).fetchall()
            if not rows:
                raise _why_not(connection, id)
            return produto.model_copy(update={"id": id, "versao": rows[0][0]})

        return await self._writer.submit(run)

    async def delete(self, id: int, versions: Collection[int] | None = None) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            rows = connection.execute(
                f"DELETE FROM produtos WHERE id = ?{_at_versions(versions)} RETURNING {_COLUMNS}",
                (id, *(versions or ())),
            ).fetchall()
            if not rows:
                raise _why_not(connection, id)
            return _produto(rows[0])

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

    async def create_once(self, produto: Produto, key: str, claimed_at: float) -> Produto:
        def run(connection: sqlite3.Connection) -> Produto:
            created = _insert(connection, produto)
            kept = connection.execute(
                "UPDATE idempotency_keys SET produto_id = ? "
                "WHERE key = ? AND created_at = ? AND produto_id IS NULL",
                (created.id, key, claimed_at),
            )
            if kept.rowcount != 1:
                raise storage.KeyTaken(key)  # its savepoint rolls the new product back
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
        await asyncio.get_running_loop().run_in_executor(None, self._writer.stop)
        self._reader.close()
