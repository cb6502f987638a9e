"""The writes' own work in PostgreSQL, each inside the transaction storage/postgres/store.py
opened for it (as storage/sqlite/transaction.py for SQLite): a product inserted, updated,
marked removed or brought back, its event recorded, a batch applied or reverted.
"""

import time
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

import asyncpg

from catalogo import storage
from catalogo.domain import historico
from catalogo.domain.busca import folded
from catalogo.domain.errors import ChangedSince, CodigoTaken, NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto, keeping_codigo, same_fields
from catalogo.storage.postgres.historico import WRITING_EVENT, produto_of
from catalogo.storage.postgres.pool import Connection
from catalogo.storage.sql import (
    CODIGO_HOLDER,
    EVENT_COLUMNS,
    LAST_EVENTS,
    event_row,
    evento_of,
    left_as_it_was,
    numbered,
)

LIVE = "removido_em IS NULL"
COLUMNS = "id, nome, descricao, preco, versao, criado_em, atualizado_em, codigo"


async def write_many(
    connection: Connection, writes: Sequence[storage.Write], autoria: Autoria
) -> list[Produto]:
    done = []
    for w in writes:
        seen = None if w.versao is None else {w.versao}
        if w.id is None:
            done.append(await insert(connection, w.produto, autoria))
        elif w.removed:
            current = await current_of(connection, w.id, seen)
            done.append(await mark_removed(connection, current, autoria))
        elif w.restored:
            done.append(await restore_as(connection, w.id, w.produto, seen, autoria))
        else:
            done.append((await update(connection, w.id, w.produto, seen, autoria)).produto)
    return done


async def restore_as(
    connection: Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> Produto:
    """As storage/sqlite/transaction.py's: one version, one event with both sides."""
    row = await connection.fetchrow(
        f"SELECT {COLUMNS} FROM produtos WHERE id = $1 AND NOT {LIVE} FOR UPDATE", id
    )
    if row is None:
        raise NotFound()  # restored, or purged, since the dry run
    antes = produto_of(row)
    if versions is not None and antes.versao not in versions:
        raise storage.VersionConflict(antes)
    now = time.time()
    depois = await _rewritten(connection, antes, keeping_codigo(produto, antes), now, back=True)
    await _record(connection, event_row("restaurado", depois, antes, depois, autoria, now))
    return depois


async def undo_batch(connection: Connection, lote: str, autoria: Autoria) -> int:
    """As storage/sqlite/store.py's: every product checked (and locked) first, then every one
    undone, a stretch of the batch at a time."""
    moved: list[int] = []
    async for events, current in _batch(connection, lote, lock=True):
        moved += [e.produto_id for e in events if not _as_left(e, current)]
    if moved:
        raise ChangedSince(sorted(moved))
    undone = 0
    async for events, current in _batch(connection, lote):
        for evento in events:
            await _undo(connection, evento, current[evento.produto_id][0], autoria)
        undone += len(events)
    if not undone:
        raise NotFound()
    return undone


_Current = dict[int, tuple[Produto, bool]]
_LAST_EVENTS = numbered(LAST_EVENTS)


async def _batch(
    connection: Connection, lote: str, lock: bool = False
) -> AsyncIterator[tuple[list[Evento], _Current]]:
    after = 0
    while rows := await connection.fetch(_LAST_EVENTS, lote, after):
        events = [evento_of(row) for row in rows]
        after = events[-1].id
        found = await connection.fetch(
            f"SELECT {COLUMNS}, removido_em IS NOT NULL FROM produtos "
            f"WHERE id = ANY($1::bigint[]) ORDER BY id{' FOR UPDATE' if lock else ''}",
            [e.produto_id for e in events],
        )
        yield events, {row[0]: (produto_of(row), row[-1]) for row in found}


def _as_left(evento: Evento, current: _Current) -> bool:
    found = current.get(evento.produto_id)
    return found is not None and left_as_it_was(evento, *found)


async def insert(connection: Connection, produto: Produto, autoria: Autoria) -> Produto:
    now = time.time()
    keys = folded(produto)
    await _check_codigo(connection, produto, keys.codigo_chave)
    id, versao = await _unique_codigo(
        connection,
        produto,
        keys.codigo_chave,
        "INSERT INTO produtos (nome, descricao, preco, criado_em, atualizado_em, nome_chave, "
        "busca, codigo_chave, codigo) VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8) "
        "RETURNING id, versao",
        produto.nome,
        produto.descricao,
        produto.preco,
        now,
        *keys,
        produto.codigo,
    )
    created = produto.model_copy(
        update={"id": id, "versao": versao, "criado_em": now, "atualizado_em": now}
    )
    await _record(connection, event_row("criado", created, None, created, autoria, now))
    return created


async def update(
    connection: Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> storage.Saved:
    antes = await current_of(connection, id, versions)
    edit = keeping_codigo(produto, antes)
    if same_fields(antes, edit):
        return storage.Saved(antes, changed=False)
    now = time.time()
    depois = await _rewritten(connection, antes, edit, now)
    await _record(connection, event_row("alterado", depois, antes, depois, autoria, now))
    return storage.Saved(depois, changed=True)


async def _rewritten(
    connection: Connection, antes: Produto, edit: Produto, now: float, back: bool = False
) -> Produto:
    """`edit` written over `antes` as its next version (`back`: brought back from the
    removed, too); the product as it is now."""
    id = antes.id
    keys = folded(edit)
    if edit.codigo != antes.codigo:
        await _check_codigo(connection, edit, keys.codigo_chave, id)
    (versao,) = await _unique_codigo(
        connection,
        edit,
        keys.codigo_chave,
        f"UPDATE produtos SET {'removido_em = NULL, ' if back else ''}nome = $2, descricao = $3, "
        "preco = $4, versao = versao + 1, atualizado_em = $5, nome_chave = $6, busca = $7, "
        "codigo_chave = $8, codigo = $9 WHERE id = $1 RETURNING versao",
        id,
        edit.nome,
        edit.descricao,
        edit.preco,
        now,
        *keys,
        edit.codigo,
        id=id,
    )
    return edit.model_copy(
        update={"id": id, "versao": versao, "criado_em": antes.criado_em, "atualizado_em": now}
    )


async def _undo(
    connection: Connection, evento: Evento, current: Produto, autoria: Autoria
) -> Produto:
    """The change `evento` made, undone from `current`, which it left as it is."""
    if evento.tipo == "restaurado" and evento.antes is not None:
        before = historico.produto_of(evento.antes)
        changed = await update(connection, current.id or 0, before, {current.versao or 0}, autoria)
        return await mark_removed(connection, changed.produto, autoria)
    if evento.tipo in ("criado", "restaurado"):
        return await mark_removed(connection, current, autoria)
    if evento.tipo == "removido":
        return await mark_removed(connection, current, autoria, restored=True)
    assert evento.antes is not None and current.id is not None  # noqa: S101 - an edit's event
    before = historico.produto_of(evento.antes)
    saved = await update(connection, current.id, before, {current.versao or 0}, autoria)
    return saved.produto


async def _check_codigo(
    connection: Connection, produto: Produto, key: str | None, id: int | None = None
) -> None:
    """CodigoTaken if a product other than `id` holds the code, as committed now."""
    if key is None:
        return
    for holder, removed in await connection.fetch(numbered(CODIGO_HOLDER), key):
        if holder != id:
            raise CodigoTaken(str(produto.codigo), holder, removed)


async def _unique_codigo(
    connection: Connection,
    produto: Produto,
    key: str | None,
    sql: str,
    *args: Any,
    id: int | None = None,
) -> Any:
    """The row `sql` writes and returns, in a savepoint when it sets a code: a writer that
    took the code after `_check_codigo` looked makes the unique index refuse it, and that is
    CodigoTaken too, the transaction still usable."""
    if key is None:
        return await connection.fetchrow(sql, *args)
    try:
        async with connection.transaction():
            return await connection.fetchrow(sql, *args)
    except asyncpg.UniqueViolationError as refused:
        if refused.constraint_name != "produtos_codigo":
            raise
        await _check_codigo(connection, produto, key, id)
        raise


async def current_of(connection: Connection, id: int, versions: Collection[int] | None) -> Produto:
    """The live product a write is about to change, locked, at one of the `versions` it
    expects."""
    row = await connection.fetchrow(
        f"SELECT {COLUMNS} FROM produtos WHERE id = $1 AND {LIVE} FOR UPDATE", id
    )
    if row is None:
        raise NotFound()
    current = produto_of(row)
    if versions is not None and current.versao not in versions:
        raise storage.VersionConflict(current)
    return current


async def mark_removed(
    connection: Connection, current: Produto, autoria: Autoria, restored: bool = False
) -> Produto:
    """A removal (or a restore) as a new version of the product, and its event."""
    now = time.time()
    versao = await connection.fetchval(
        "UPDATE produtos SET removido_em = $2, versao = versao + 1, atualizado_em = $3 "
        "WHERE id = $1 RETURNING versao",
        current.id,
        None if restored else now,
        now,
    )
    changed = current.model_copy(update={"versao": versao, "atualizado_em": now})
    if restored:
        await _record(connection, event_row("restaurado", changed, None, changed, autoria, now))
    else:
        await _record(connection, event_row("removido", changed, current, None, autoria, now))
    return changed


async def _record(connection: Connection, event: tuple[Any, ...]) -> None:
    """The change's event (sql.event_row), in the change's own transaction, last:
    see WRITING_EVENT."""
    await connection.execute(WRITING_EVENT)
    await connection.execute(
        f"INSERT INTO eventos ({EVENT_COLUMNS}) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        *event,
    )


def fields(nome: str, descricao: str, preco: Any) -> str:
    return historico.fields_json(
        Produto.model_construct(nome=nome, descricao=descricao, preco=preco)
    )
