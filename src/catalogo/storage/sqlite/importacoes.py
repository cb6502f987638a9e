"""Imports in the SQLite file: the half of storage/sqlite/store.py's store that keeps a dry run
between its report and its confirmation (reads inline, writes on the writer thread). Confirming and
undoing change products, so each runs storage/sqlite/store.py's own `write_many` and
`undo_batch` in the same write as the import's change of state: all of it, or none."""

import sqlite3
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from catalogo import storage
from catalogo.domain.errors import NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto
from catalogo.storage import sql
from catalogo.storage.port import Importacao, LineKind, StagedLine
from catalogo.storage.sqlite.historico import COLUMNS, produto_of

T = TypeVar("T")
_REMOVED_CODES = (
    f"SELECT {COLUMNS}, codigo_chave FROM produtos "
    "WHERE removido_em IS NOT NULL AND codigo_chave IN"
)


class SQLiteImports:
    """Mixed into SQLiteStorage, whose `_read`, `_submit`, `_written_many` and `_undone_batch` these
    use."""

    if TYPE_CHECKING:

        def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

        async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

        def _written_many(
            self, connection: sqlite3.Connection, writes: Sequence[storage.Write], autoria: Autoria
        ) -> list[Produto]: ...

        def _undone_batch(
            self, connection: sqlite3.Connection, lote: str, autoria: Autoria
        ) -> int: ...

    async def stage_import(
        self, importacao: Importacao, conteudo: bytes, lines: Sequence[StagedLine]
    ) -> None:
        def run(connection: sqlite3.Connection) -> None:
            for statement in sql.FORGET_EXPIRED:
                connection.execute(statement, (importacao.criada_em,))
            if not connection.execute(sql.STAGE, sql.staged_row(importacao, conteudo)).fetchall():
                raise storage.ImportClosed(_closed(connection, importacao.id))
            connection.execute(sql.FORGET_LINES, (importacao.id,))
            connection.executemany(sql.STAGED_LINES, sql.line_rows(importacao.id, lines))

        await self._submit(run)

    async def importacao(self, id: str) -> Importacao | None:
        rows = self._read(sql.IMPORT, (id,))
        return sql.importacao_of(rows[0]) if rows else None

    async def removed_codes(self, keys: Collection[str]) -> dict[str, Produto]:
        found: dict[str, Produto] = {}
        ordered = sorted(keys)
        for start in range(0, len(ordered), sql.KEYS_READ):
            batch = tuple(ordered[start : start + sql.KEYS_READ])
            marks = ", ".join("?" * len(batch))
            for row in self._read(f"{_REMOVED_CODES} ({marks})", batch):
                found[row[-1]] = produto_of(row[:-1])
        return found

    async def importacoes(self, limit: int) -> list[Importacao]:
        return [sql.importacao_of(row) for row in self._read(sql.IMPORTS, (limit,))]

    async def import_file(self, id: str) -> bytes | None:
        rows = self._read(sql.IMPORT_FILE, (id,))
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    async def import_lines(
        self, id: str, tipo: LineKind, offset: int, limit: int
    ) -> list[dict[str, Any]]:
        rows = self._read(sql.IMPORT_LINES, (id, tipo, limit, offset))
        return [orjson.loads(dados) for (dados,) in rows]

    async def confirm_import(
        self,
        id: str,
        write_of: Callable[[str], storage.Write],
        autoria: Autoria,
        chave: str | None,
        now: float,
    ) -> int:
        def run(connection: sqlite3.Connection) -> int:
            if not connection.execute(sql.CONFIRM, (now, autoria.quem, chave, id, now)).fetchall():
                raise storage.ImportClosed(_closed(connection, id))
            written, last = 0, -1
            while lines := connection.execute(sql.WRITE_LINES, (id, last)).fetchall():
                last = lines[-1][0]
                written += len(
                    self._written_many(connection, [write_of(d) for _, d in lines], autoria)
                )
            connection.execute(sql.FORGET_LINES, (id,))
            return written

        return await self._submit(run)  # one write: all or nothing

    async def undo_import(self, id: str, autoria: Autoria, now: float) -> int:
        def run(connection: sqlite3.Connection) -> int:
            if not connection.execute(sql.UNDO, (now, autoria.quem, id)).fetchall():
                raise storage.ImportClosed(_closed(connection, id))
            return self._undone_batch(connection, id, autoria)

        return await self._submit(run)

    async def batch_events(self, lote: str, offset: int, limit: int) -> list[Evento]:
        return [sql.evento_of(row) for row in self._read(sql.BATCH_PAGE, (lote, limit, offset))]


def _closed(connection: sqlite3.Connection, id: str) -> Importacao:
    """The import as it is, to say why a step refused it; NotFound if there is none."""
    rows = connection.execute(sql.IMPORT, (id,)).fetchall()
    if not rows:
        raise NotFound()
    return sql.importacao_of(rows[0])
