"""Products in a SQLite file: reads inline on the event loop, writes on one writer thread.

Reads in WAL mode never wait for a writer and take microseconds, so a thread hop would cost
more than the read (DESIGN.md §3). Writes go to a single thread with its own connection: one
writer per process is what SQLite allows anyway, and the event loop never blocks on a lock.
`synchronous=FULL` makes each acknowledged write survive a power cut, not only a crash;
`busy_timeout` lets several processes on one file take turns instead of failing.
"""

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

from catalogo.produtos import Produto
from catalogo.storage import Cursor, Page, StorageUnavailable

BUSY_TIMEOUT_MS = 5000
_COLUNAS = "id, nome, descricao, preco_centavos"


def _connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, cached_statements=64)
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA synchronous=FULL")
    return connection


def _produto(row: tuple[int, str, str, int]) -> Produto:
    id, nome, descricao, centavos = row
    return Produto.model_construct(
        id=id, nome=nome, descricao=descricao, preco=Decimal(centavos).scaleb(-2)
    )


def _centavos(produto: Produto) -> int:
    return int(produto.preco * 100)


class SQLiteStorage:
    def __init__(self, path: str) -> None:
        self._reader = _connect(path)
        self._writer: sqlite3.Connection | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writer")
        self._path = path

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self._reader.execute(sql, params).fetchall()
        except sqlite3.OperationalError as erro:
            raise StorageUnavailable(str(erro)) from erro

    async def _write(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        def run() -> list[Any]:
            if self._writer is None:  # opened on the writer thread, used only there
                self._writer = _connect(self._path)
            return self._writer.execute(sql, params).fetchall()

        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, run)
        except sqlite3.OperationalError as erro:
            raise StorageUnavailable(str(erro)) from erro

    async def page(self, cursor: Cursor) -> Page:
        self._read("BEGIN")
        try:
            return self._page(cursor)
        finally:
            self._read("COMMIT")

    def _page(self, cursor: Cursor) -> Page:
        base = f"SELECT {_COLUNAS} FROM produtos"
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
            first_page = cursor.after is not None or cursor.before is not None
            return Page([], None, Cursor(cursor.limit) if anywhere and first_page else None)

        first, last = rows[0][0], rows[-1][0]
        older = self._read("SELECT EXISTS(SELECT 1 FROM produtos WHERE id < ?)", (last,))[0][0]
        newer = self._read(
            "SELECT count(*) FROM (SELECT 1 FROM produtos WHERE id > ? LIMIT ?)",
            (first, cursor.limit + 1),
        )[0][0]
        prev = None
        if newer > cursor.limit:
            prev = Cursor(cursor.limit, before=first)
        elif newer:
            prev = Cursor(cursor.limit)  # what is newer fits on the first page
        return Page(
            [_produto(row) for row in rows],
            Cursor(cursor.limit, after=last) if older else None,
            prev,
        )

    async def get(self, id: int) -> Produto | None:
        rows = self._read(f"SELECT {_COLUNAS} FROM produtos WHERE id = ?", (id,))
        return _produto(rows[0]) if rows else None

    async def create(self, produto: Produto) -> Produto:
        rows = await self._write(
            "INSERT INTO produtos (nome, descricao, preco_centavos) VALUES (?, ?, ?) RETURNING id",
            (produto.nome, produto.descricao, _centavos(produto)),
        )
        return produto.model_copy(update={"id": rows[0][0]})

    async def update(self, id: int, produto: Produto) -> Produto | None:
        rows = await self._write(
            "UPDATE produtos SET nome = ?, descricao = ?, preco_centavos = ? WHERE id = ? "
            "RETURNING id",
            (produto.nome, produto.descricao, _centavos(produto), id),
        )
        return produto.model_copy(update={"id": id}) if rows else None

    async def delete(self, id: int) -> Produto | None:
        rows = await self._write(f"DELETE FROM produtos WHERE id = ? RETURNING {_COLUNAS}", (id,))
        return _produto(rows[0]) if rows else None

    async def close(self) -> None:
        def close_writer() -> None:
            if self._writer is not None:
                self._writer.close()

        await asyncio.get_running_loop().run_in_executor(self._thread, close_writer)
        self._thread.shutdown()
        self._reader.close()
