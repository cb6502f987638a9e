"""Imports in PostgreSQL: the half of storage/postgres/store.py's store that keeps a dry run between
its report and its confirmation, on the same pool (storage/sqlite/importacoes.py's statements).
Confirming and undoing change products, so each runs storage/postgres/store.py's own
`write_many` and `undo_batch` in the same transaction as the import's change of state."""

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import orjson

from catalogo import storage
from catalogo.domain.errors import NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto
from catalogo.storage import sql
from catalogo.storage.port import Importacao, LineKind, StagedLine
from catalogo.storage.postgres.historico import produto_of
from catalogo.storage.postgres.pool import Connection, PostgresPool
from catalogo.storage.postgres.transaction import COLUMNS
from catalogo.storage.sql import numbered

_STAGE = numbered(sql.STAGE)
_FORGET_EXPIRED = tuple(numbered(statement) for statement in sql.FORGET_EXPIRED)
_FORGET_LINES = numbered(sql.FORGET_LINES)
_CONFIRM = numbered(sql.CONFIRM)
_UNDO = numbered(sql.UNDO)
_IMPORT = numbered(sql.IMPORT)
_IMPORTS = numbered(sql.IMPORTS)
_IMPORT_FILE = numbered(sql.IMPORT_FILE)
_IMPORT_LINES = numbered(sql.IMPORT_LINES)
_BATCH_PAGE = numbered(sql.BATCH_PAGE)
_WRITE_LINES = numbered(sql.WRITE_LINES)
_REMOVED_CODES = (
    f"SELECT {COLUMNS}, codigo_chave FROM produtos WHERE removido_em IS NOT NULL "
    "AND codigo_chave = ANY($1::text[])"
)
_LINE_COLUMNS = ["importacao_id", "tipo", "posicao", "dados"]


class PostgresImports(PostgresPool):
    if TYPE_CHECKING:

        async def _written_many(
            self, connection: Connection, writes: Sequence[storage.Write], autoria: Autoria
        ) -> list[Produto]: ...

        async def _undone_batch(
            self, connection: Connection, lote: str, autoria: Autoria
        ) -> int: ...

    async def stage_import(
        self, importacao: Importacao, conteudo: bytes, lines: Sequence[StagedLine]
    ) -> None:
        async def stage(connection: Connection) -> None:
            for statement in _FORGET_EXPIRED:
                await connection.execute(statement, importacao.criada_em)
            if await connection.fetchval(_STAGE, *sql.staged_row(importacao, conteudo)) is None:
                raise storage.ImportClosed(await _closed(connection, importacao.id))
            await connection.execute(_FORGET_LINES, importacao.id)
            await connection.copy_records_to_table(
                "importacao_linhas",
                records=sql.line_rows(importacao.id, lines),
                columns=_LINE_COLUMNS,
            )

        await self._change(stage)

    async def importacao(self, id: str) -> Importacao | None:
        rows = await self._fetch(_IMPORT, id)
        return sql.importacao_of(rows[0]) if rows else None

    async def removed_codes(self, keys: Collection[str]) -> dict[str, Produto]:
        rows = await self._fetch(_REMOVED_CODES, list(keys))
        return {row[-1]: produto_of(row[:-1]) for row in rows}

    async def importacoes(self, limit: int) -> list[Importacao]:
        return [sql.importacao_of(row) for row in await self._fetch(_IMPORTS, limit)]

    async def import_file(self, id: str) -> bytes | None:
        rows = await self._fetch(_IMPORT_FILE, id)
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    async def import_lines(
        self, id: str, tipo: LineKind, offset: int, limit: int
    ) -> list[dict[str, Any]]:
        rows = await self._fetch(_IMPORT_LINES, id, tipo, limit, offset)
        return [orjson.loads(row[0]) for row in rows]

    async def confirm_import(
        self,
        id: str,
        write_of: Callable[[str], storage.Write],
        autoria: Autoria,
        chave: str | None,
        now: float,
    ) -> int:
        async def confirm(connection: Connection) -> int:
            if await connection.fetchval(_CONFIRM, now, autoria.quem, chave, id, now) is None:
                raise storage.ImportClosed(await _closed(connection, id))
            written, last = 0, -1
            while lines := await connection.fetch(_WRITE_LINES, id, last):
                last = lines[-1][0]
                writes = [write_of(line[1]) for line in lines]
                written += len(await self._written_many(connection, writes, autoria))
            await connection.execute(_FORGET_LINES, id)
            return written

        return await self._change(confirm)

    async def undo_import(self, id: str, autoria: Autoria, now: float) -> int:
        async def undo(connection: Connection) -> int:
            if await connection.fetchval(_UNDO, now, autoria.quem, id) is None:
                raise storage.ImportClosed(await _closed(connection, id))
            return await self._undone_batch(connection, id, autoria)

        return await self._change(undo)

    async def batch_events(self, lote: str, offset: int, limit: int) -> list[Evento]:
        rows = await self._fetch(_BATCH_PAGE, lote, limit, offset)
        return [sql.evento_of(row) for row in rows]


async def _closed(connection: Connection, id: str) -> Importacao:
    """The import as it is, to say why a step refused it; NotFound if there is none."""
    row = await connection.fetchrow(_IMPORT, id)
    if row is None:
        raise NotFound()
    return sql.importacao_of(row)
