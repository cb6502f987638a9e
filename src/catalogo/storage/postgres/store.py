"""Products in PostgreSQL: asyncpg and raw SQL, on storage/postgres/pool.py's pool.

PostgreSQL does by itself what storage/sqlite/store.py does by hand: writers run at once and share
disk flushes. Each write runs in one transaction with its event (domain/historico.py), the product's
row locked (`FOR UPDATE`) while its version is checked, and the event inserted last, under
WRITING_EVENT (storage/postgres/historico.py: the feed's order). Prices are NUMERIC(12,2), which
asyncpg reads and writes as exact `Decimal`s.

A claim on an idempotency key names the session that made it (`holder`), so that a retry takes
over at once a claim whose session has ended (a stopped server, an ended session, a process
that died): its request can no longer finish it. The created_at guard of `create_once` keeps
even a wrong takeover harmless: the request that lost the claim stores nothing.
"""

import itertools
import time
from collections.abc import AsyncIterator, Collection, Iterable, Sequence
from typing import Any

import asyncpg

from catalogo import storage
from catalogo.domain import historico
from catalogo.domain.busca import folded
from catalogo.domain.errors import ChangedSince, CodigoTaken, KeyTaken, NotFound
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto, keeping_codigo, same_fields
from catalogo.storage.postgres.busca import PostgresSearch
from catalogo.storage.postgres.contas import PostgresAccounts
from catalogo.storage.postgres.historico import WRITING_EVENT, PostgresHistory, produto_of
from catalogo.storage.postgres.importacoes import PostgresImports
from catalogo.storage.postgres.pool import Connection
from catalogo.storage.postgres.webhooks import PostgresWebhooks
from catalogo.storage.sql import (
    CODIGO_HOLDER,
    EVENT_COLUMNS,
    LAST_EVENTS,
    event_row,
    evento_of,
    left_as_it_was,
    numbered,
)

SEED_BATCH = 10_000
_COLUMNS = "id, nome, descricao, preco, versao, criado_em, atualizado_em, codigo"
_LIVE = "removido_em IS NULL"
# The session a statement runs in, named as pg_stat_activity lets anyone check that it still
# lives: its server process and when that started (a process id alone comes back in time).
_SESSION = "pid || '@' || extract(epoch FROM backend_start)"
_THIS_SESSION = f"(SELECT {_SESSION} FROM pg_stat_activity WHERE pid = pg_backend_pid())"
_HOLDER_GONE = f"NOT EXISTS (SELECT FROM pg_stat_activity WHERE {_SESSION} = k.holder)"


class PostgresStorage(
    PostgresSearch, PostgresHistory, PostgresAccounts, PostgresImports, PostgresWebhooks
):
    async def get(self, id: int) -> Produto | None:
        rows = await self._fetch(f"SELECT {_COLUMNS} FROM produtos WHERE id = $1 AND {_LIVE}", id)
        return produto_of(rows[0]) if rows else None

    async def create(self, produto: Produto, autoria: Autoria) -> Produto:
        return await self._change(lambda connection: _insert(connection, produto, autoria))

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int:
        """Adds products with their events, a batch at a time so that no statement runs into
        the statement timeout: for seeding demos and benchmarks, not for requests. Never run
        again: the batches before a failure are stored."""
        now = time.time()
        rows = ((p.nome, p.descricao, p.preco, *folded(p)[:2]) for p in produtos)

        async def add(connection: Connection) -> int:
            added = 0
            while batch := list(itertools.islice(rows, SEED_BATCH)):
                async with connection.transaction():
                    ids = await connection.fetch(
                        "INSERT INTO produtos (nome, descricao, preco, criado_em, atualizado_em, "
                        "nome_chave, busca) SELECT n, d, p, $6, $6, k, b FROM unnest($1::text[], "
                        "$2::text[], $3::numeric[], $4::text[], $5::text[]) WITH ORDINALITY "
                        "AS r(n, d, p, k, b, i) ORDER BY i RETURNING id",
                        *zip(*batch, strict=True),
                        now,
                    )
                    await connection.execute(WRITING_EVENT)
                    await connection.copy_records_to_table(
                        "eventos",
                        records=[
                            (row[0], "criado", 1, None, _fields(*fields[:3]), *autoria, now)
                            for row, fields in zip(ids, batch, strict=True)
                        ],
                        columns=EVENT_COLUMNS.split(", "),
                    )
                added += len(batch)
            return added

        return await self._run(add, lambda error: False)

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None, autoria: Autoria
    ) -> storage.Saved:
        return await self._change(lambda c: _update(c, id, produto, versions, autoria))

    async def apply(self, writes: Sequence[storage.Write], autoria: Autoria) -> list[Produto]:
        return await self._change(lambda connection: _apply(connection, writes, autoria))

    async def revert(self, lote: str, autoria: Autoria) -> int:
        return await self._change(lambda connection: _revert(connection, lote, autoria))

    async def _applied(
        self, connection: Connection, writes: Sequence[storage.Write], autoria: Autoria
    ) -> list[Produto]:
        """`apply` in a transaction of its caller's: confirming an import (postgres_imports)."""
        return await _apply(connection, writes, autoria)

    async def _reverted(self, connection: Connection, lote: str, autoria: Autoria) -> int:
        return await _revert(connection, lote, autoria)

    async def delete(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        async def delete(connection: Connection) -> Produto:
            return await _mark_removed(
                connection, await _current(connection, id, versions), autoria
            )

        return await self._change(delete)

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        async def restore(connection: Connection) -> Produto:
            row = await connection.fetchrow(
                f"SELECT {_COLUMNS}, removido_em FROM produtos WHERE id = $1 FOR UPDATE", id
            )
            if row is None:
                raise NotFound()
            current = produto_of(row)
            if row[8] is None:
                raise storage.NotRemoved(current)
            return await _mark_removed(connection, current, autoria, restored=True)

        return await self._change(restore)

    async def claim_key(self, key: str, fingerprint: str) -> storage.KeyClaim:
        now = time.time()

        async def claim(connection: Connection) -> storage.KeyClaim:
            await connection.execute(
                "DELETE FROM idempotency_keys WHERE created_at < $1", now - storage.KEY_TTL_SECONDS
            )
            # New, taken over from a request that can no longer finish it (its session has
            # ended, or it crashed a while ago), or this call's own, made by an attempt whose
            # answer never came: one statement, so two requests with the same key can never
            # both claim it.
            claimed = await connection.fetchval(
                "INSERT INTO idempotency_keys AS k (key, fingerprint, created_at, holder) "
                f"VALUES ($1, $2, $3, {_THIS_SESSION}) ON CONFLICT (key) DO UPDATE SET "
                "fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at, "
                "holder = EXCLUDED.holder WHERE k.produto_id IS NULL AND (k.created_at < $4 "
                f"OR (k.holder IS NOT NULL AND {_HOLDER_GONE}) "
                "OR (k.created_at = $3 AND k.fingerprint = $2)) RETURNING true",
                key,
                fingerprint,
                now,
                now - storage.ABANDONED_AFTER_SECONDS,
            )
            if claimed:
                return storage.KeyClaim("claimed", claimed_at=now)
            row = await connection.fetchrow(
                "SELECT fingerprint, produto_id FROM idempotency_keys WHERE key = $1", key
            )
            if row is None:  # released by its failed request just now: a retry may claim it
                return storage.KeyClaim("in_progress")
            return storage.existing_claim(fingerprint, row[0], row[1])

        # Running it again is running it once: expired keys are gone either way, and a claim
        # the failed attempt made is this call's own (`now`, `fingerprint`) to take again.
        return await self._run(claim)

    async def create_once(
        self, produto: Produto, key: str, claimed_at: float, autoria: Autoria
    ) -> Produto:
        async def create(connection: Connection) -> Produto:
            created = await _insert(connection, produto, autoria)
            kept = await connection.execute(
                "UPDATE idempotency_keys SET produto_id = $1 "
                "WHERE key = $2 AND created_at = $3 AND produto_id IS NULL",
                created.id,
                key,
                claimed_at,
            )
            if kept != "UPDATE 1":
                raise KeyTaken(key)  # leaving the transaction rolls the product back
            return created

        return await self._change(create)

    async def release_key(self, key: str, claimed_at: float) -> None:
        """Runs again whatever it met: removing the unfinished claim made at `claimed_at` twice
        is removing it once."""

        async def release(connection: Connection) -> None:
            await connection.execute(
                "DELETE FROM idempotency_keys "
                "WHERE key = $1 AND created_at = $2 AND produto_id IS NULL",
                key,
                claimed_at,
            )

        await self._run(release)

    async def schema_version(self) -> str | None:
        try:
            rows = await self._fetch("SELECT version_num FROM alembic_version")
        except asyncpg.UndefinedTableError:
            return None  # never migrated
        return str(rows[0][0]) if rows else None

    async def close(self) -> None:
        await self._pool.close()


async def _apply(
    connection: Connection, writes: Sequence[storage.Write], autoria: Autoria
) -> list[Produto]:
    done = []
    for w in writes:
        seen = None if w.versao is None else {w.versao}
        if w.id is None:
            done.append(await _insert(connection, w.produto, autoria))
        elif w.removed:
            current = await _current(connection, w.id, seen)
            done.append(await _mark_removed(connection, current, autoria))
        else:
            done.append((await _update(connection, w.id, w.produto, seen, autoria)).produto)
    return done


async def _revert(connection: Connection, lote: str, autoria: Autoria) -> int:
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
            f"SELECT {_COLUMNS}, removido_em IS NOT NULL FROM produtos "
            f"WHERE id = ANY($1::bigint[]) ORDER BY id{' FOR UPDATE' if lock else ''}",
            [e.produto_id for e in events],
        )
        yield events, {row[0]: (produto_of(row), row[-1]) for row in found}


def _as_left(evento: Evento, current: _Current) -> bool:
    found = current.get(evento.produto_id)
    return found is not None and left_as_it_was(evento, *found)


async def _insert(connection: Connection, produto: Produto, autoria: Autoria) -> Produto:
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


async def _update(
    connection: Connection,
    id: int,
    produto: Produto,
    versions: Collection[int] | None,
    autoria: Autoria,
) -> storage.Saved:
    antes = await _current(connection, id, versions)
    edit = keeping_codigo(produto, antes)
    if same_fields(antes, edit):
        return storage.Saved(antes, changed=False)
    now = time.time()
    keys = folded(edit)
    if edit.codigo != antes.codigo:
        await _check_codigo(connection, edit, keys.codigo_chave, id)
    (versao,) = await _unique_codigo(
        connection,
        edit,
        keys.codigo_chave,
        "UPDATE produtos SET nome = $2, descricao = $3, preco = $4, versao = versao + 1, "
        "atualizado_em = $5, nome_chave = $6, busca = $7, codigo_chave = $8, codigo = $9 "
        "WHERE id = $1 RETURNING versao",
        id,
        edit.nome,
        edit.descricao,
        edit.preco,
        now,
        *keys,
        edit.codigo,
        id=id,
    )
    depois = edit.model_copy(
        update={
            "id": id,
            "versao": versao,
            "criado_em": antes.criado_em,
            "atualizado_em": now,
        }
    )
    await _record(connection, event_row("alterado", depois, antes, depois, autoria, now))
    return storage.Saved(depois, changed=True)


async def _undo(
    connection: Connection, evento: Evento, current: Produto, autoria: Autoria
) -> Produto:
    """The change `evento` made, undone from `current`, which it left as it is."""
    if evento.tipo in ("criado", "restaurado"):
        return await _mark_removed(connection, current, autoria)
    if evento.tipo == "removido":
        return await _mark_removed(connection, current, autoria, restored=True)
    assert evento.antes is not None and current.id is not None  # noqa: S101 - an edit's event
    before = historico.produto_of(evento.antes)
    saved = await _update(connection, current.id, before, {current.versao or 0}, autoria)
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


async def _current(connection: Connection, id: int, versions: Collection[int] | None) -> Produto:
    """The live product a write is about to change, locked, at one of the `versions` it
    expects."""
    row = await connection.fetchrow(
        f"SELECT {_COLUMNS} FROM produtos WHERE id = $1 AND {_LIVE} FOR UPDATE", id
    )
    if row is None:
        raise NotFound()
    current = produto_of(row)
    if versions is not None and current.versao not in versions:
        raise storage.VersionConflict(current)
    return current


async def _mark_removed(
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


def _fields(nome: str, descricao: str, preco: Any) -> str:
    return historico.fields_json(
        Produto.model_construct(nome=nome, descricao=descricao, preco=preco)
    )
