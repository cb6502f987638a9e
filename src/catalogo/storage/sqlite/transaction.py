"""The writes' own work, in the writer's transaction (storage/sqlite/writer.py's thread): each
checks the product's version, changes it and appends its event (domain/historico.py), all or
nothing, one write of the writer's batch. Apart from storage/sqlite/store.py, which hands them to
the writer and reads.
"""

import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from decimal import Decimal
from typing import Any

from catalogo import storage
from catalogo.domain import historico
from catalogo.domain.busca import folded
from catalogo.domain.errors import ChangedSince, CodigoTaken, NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto, keeping_codigo, same_fields, stored
from catalogo.storage.sql import (
    CODIGO_HOLDER,
    EVENT_COLUMNS,
    LAST_EVENTS,
    event_row,
    evento_of,
    left_as_it_was,
)
from catalogo.storage.sqlite.historico import COLUMNS, LIVE, produto_of

FIRST = 1  # a new product's version


def insert(connection: sqlite3.Connection, produto: Produto, autoria: Autoria) -> Produto:
    now = time.time()
    keys = folded(produto)
    _check_codigo(connection, produto, keys.codigo_chave)
    # Not RETURNING: SQLite gathers a RETURNING's rows in a table it builds in memory for every
    # statement, about 25,000 of a create's 830,000 instructions (bench/results/history.md).
    inserted = connection.execute(
        "INSERT INTO produtos (versao, codigo, nome, descricao, preco_centavos, criado_em, "
        "atualizado_em, nome_chave, busca, codigo_chave) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            FIRST,
            produto.codigo,
            produto.nome,
            produto.descricao,
            centavos(produto),
            now,
            now,
            *keys,
        ),
    )
    assert inserted.lastrowid is not None  # noqa: S101 - an INSERT that succeeded
    created = stored(
        inserted.lastrowid,
        FIRST,
        now,
        now,
        produto.codigo,
        produto.nome,
        produto.descricao,
        produto.preco,
    )
    _record(connection, event_row("criado", created, None, created, autoria, now))
    return created


def update(
    connection: sqlite3.Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> storage.Saved:
    antes = current(connection, id, versions)
    edit = keeping_codigo(produto, antes)
    if same_fields(antes, edit):
        return storage.Saved(antes, changed=False)
    now = time.time()
    depois = _rewritten(connection, antes, edit, now)
    _record(connection, event_row("alterado", depois, antes, depois, autoria, now))
    return storage.Saved(depois, changed=True)


def _rewritten(
    connection: sqlite3.Connection, antes: Produto, edit: Produto, now: float, back: str = ""
) -> Produto:
    """`edit` written over `antes` as its next version (`back`: "removido_em = NULL, ", to
    bring it back from the removed too); the product as it is now."""
    id = antes.id
    assert id is not None and antes.criado_em is not None  # noqa: S101 - read just now
    if edit.codigo != antes.codigo:
        _check_codigo(connection, edit, folded(edit).codigo_chave, id)
    columns, params = _changed_columns(antes, edit)
    connection.execute(
        f"UPDATE produtos SET {back}versao = versao + 1, atualizado_em = ?"
        f"{', ' if columns else ''}{columns} WHERE id = ?",
        (now, *params, id),
    )
    return stored(
        id, _next(antes), antes.criado_em, now, edit.codigo, edit.nome, edit.descricao, edit.preco
    )


def write_many(
    connection: sqlite3.Connection, writes: Sequence[storage.Write], autoria: Autoria
) -> list[Produto]:
    done = []
    for w in writes:
        if w.id is None:
            done.append(insert(connection, w.produto, autoria))
        elif w.removed:
            done.append(mark_removed(connection, current(connection, w.id, _seen(w)), autoria))
        elif w.restored:
            done.append(restore_as(connection, w.id, w.produto, _seen(w), autoria))
        else:
            done.append(update(connection, w.id, w.produto, _seen(w), autoria).produto)
    return done


def restore_as(
    connection: sqlite3.Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> Produto:
    """The removed `id` brought back with `produto`'s fields (an import's row naming its
    code): one version, one event `restaurado` with the fields before and after, so that an
    undo removes it again as it was."""
    rows = connection.execute(
        f"SELECT {COLUMNS} FROM produtos WHERE id = ? AND NOT {LIVE}", (id,)
    ).fetchall()
    if not rows:
        raise NotFound()  # restored, or purged, since the dry run
    antes = produto_of(rows[0])
    if versions is not None and antes.versao not in versions:
        raise storage.VersionConflict(antes)
    now = time.time()
    edit = keeping_codigo(produto, antes)
    depois = _rewritten(connection, antes, edit, now, back="removido_em = NULL, ")
    _record(connection, event_row("restaurado", depois, antes, depois, autoria, now))
    return depois


def undo_batch(connection: sqlite3.Connection, lote: str, autoria: Autoria) -> int:
    """Storage.undo_batch, a stretch of the batch at a time (sql.last_events): every product
    checked first, then every one undone, so that no batch is ever held whole."""
    moved: list[int] = []
    for events, current in _batch(connection, lote):
        moved += [e.produto_id for e in events if not _as_left(e, current)]
    if moved:
        raise ChangedSince(sorted(moved))
    undone = 0
    for events, current in _batch(connection, lote):
        for evento in events:
            _undo(connection, evento, current[evento.produto_id][0], autoria)
        undone += len(events)
    if not undone:
        raise NotFound()
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
    if evento.tipo == "restaurado" and evento.antes is not None:
        before = historico.produto_of(evento.antes)
        changed = update(connection, current.id or 0, before, {current.versao or 0}, autoria)
        return mark_removed(connection, changed.produto, autoria)
    if evento.tipo in ("criado", "restaurado"):
        return mark_removed(connection, current, autoria)
    if evento.tipo == "removido":
        return mark_removed(connection, current, autoria, restored=True)
    assert evento.antes is not None and current.id is not None  # noqa: S101 - an edit's event
    before = historico.produto_of(evento.antes)
    return update(connection, current.id, before, {current.versao or 0}, autoria).produto


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
            raise CodigoTaken(str(produto.codigo), holder, bool(removed))


def _record(connection: sqlite3.Connection, event: tuple[Any, ...]) -> None:
    """The change's event (sql.event_row), in the change's own transaction."""
    connection.execute(
        f"INSERT INTO eventos ({EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", event
    )


def mark_removed(
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


def current(connection: sqlite3.Connection, id: int, versions: Collection[int] | None) -> Produto:
    """The live product a write is about to change, at one of the `versions` it expects."""
    rows = connection.execute(
        f"SELECT {COLUMNS} FROM produtos WHERE id = ? AND {LIVE}", (id,)
    ).fetchall()
    if not rows:
        raise NotFound()
    current = produto_of(rows[0])
    if versions is not None and current.versao not in versions:
        raise storage.VersionConflict(current)
    return current


def _changed_columns(antes: Produto, produto: Produto) -> tuple[str, list[Any]]:
    """The SET list of an update, for only the columns the edit changes: SQLite maintains an
    index (or the search's trigger) only when a column of it is set, so an edit of the name
    leaves the price's index alone; none when no field differs (a restore as it was)."""
    columns: list[str] = []
    params: list[Any] = []
    nome, descricao = produto.nome != antes.nome, produto.descricao != antes.descricao
    codigo = produto.codigo != antes.codigo
    if nome or descricao or codigo:
        keys = folded(produto)
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
        params.append(centavos(produto))
    return ", ".join(columns), params


def centavos(produto: Produto) -> int:
    return int(produto.preco * 100)


def _next(produto: Produto) -> int:
    assert produto.versao is not None  # noqa: S101 - read from the database just now
    return produto.versao + 1


def fields(nome: str, descricao: str, centavos: int) -> str:
    return historico.fields_json(
        Produto.model_construct(nome=nome, descricao=descricao, preco=Decimal(centavos).scaleb(-2))
    )
