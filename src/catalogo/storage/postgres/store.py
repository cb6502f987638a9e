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
from collections.abc import Collection, Iterable, Sequence

import asyncpg

from catalogo import storage
from catalogo.domain.busca import folded
from catalogo.domain.errors import KeyTaken, NotFound
from catalogo.domain.historico import Autoria
from catalogo.domain.produtos import Produto
from catalogo.storage.postgres import transaction
from catalogo.storage.postgres.busca import PostgresSearch
from catalogo.storage.postgres.contas import PostgresAccounts
from catalogo.storage.postgres.historico import WRITING_EVENT, PostgresHistory, produto_of
from catalogo.storage.postgres.importacoes import PostgresImports
from catalogo.storage.postgres.pool import Connection
from catalogo.storage.postgres.transaction import COLUMNS, LIVE, fields
from catalogo.storage.postgres.webhooks import PostgresWebhooks
from catalogo.storage.sql import (
    EVENT_COLUMNS,
)

SEED_BATCH = 10_000
# The session a statement runs in, named as pg_stat_activity lets anyone check that it still
# lives: its server process and when that started (a process id alone comes back in time).
_SESSION = "pid || '@' || extract(epoch FROM backend_start)"
_THIS_SESSION = f"(SELECT {_SESSION} FROM pg_stat_activity WHERE pid = pg_backend_pid())"
_HOLDER_GONE = f"NOT EXISTS (SELECT FROM pg_stat_activity WHERE {_SESSION} = k.holder)"


class PostgresStorage(
    PostgresSearch, PostgresHistory, PostgresAccounts, PostgresImports, PostgresWebhooks
):
    async def get(self, id: int) -> Produto | None:
        rows = await self._fetch(f"SELECT {COLUMNS} FROM produtos WHERE id = $1 AND {LIVE}", id)
        return produto_of(rows[0]) if rows else None

    async def create(self, produto: Produto, autoria: Autoria) -> Produto:
        return await self._change(
            lambda connection: transaction.insert(connection, produto, autoria)
        )

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
                            (
                                row[0],
                                "criado",
                                1,
                                None,
                                fields(*values[:3]),
                                *autoria,
                                now,
                            )
                            for row, values in zip(ids, batch, strict=True)
                        ],
                        columns=EVENT_COLUMNS.split(", "),
                    )
                added += len(batch)
            return added

        return await self._run(add, lambda error: False)

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None, autoria: Autoria
    ) -> storage.Saved:
        return await self._change(lambda c: transaction.update(c, id, produto, versions, autoria))

    async def write_many(self, writes: Sequence[storage.Write], autoria: Autoria) -> list[Produto]:
        return await self._change(
            lambda connection: transaction.write_many(connection, writes, autoria)
        )

    async def undo_batch(self, lote: str, autoria: Autoria) -> int:
        return await self._change(
            lambda connection: transaction.undo_batch(connection, lote, autoria)
        )

    async def _written_many(
        self, connection: Connection, writes: Sequence[storage.Write], autoria: Autoria
    ) -> list[Produto]:
        """`write_many` in a transaction of its caller's: confirming an import."""
        return await transaction.write_many(connection, writes, autoria)

    async def _undone_batch(self, connection: Connection, lote: str, autoria: Autoria) -> int:
        return await transaction.undo_batch(connection, lote, autoria)

    async def remove(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        async def delete(connection: Connection) -> Produto:
            return await transaction.mark_removed(
                connection, await transaction.current_of(connection, id, versions), autoria
            )

        return await self._change(delete)

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        async def restore(connection: Connection) -> Produto:
            row = await connection.fetchrow(
                f"SELECT {COLUMNS}, removido_em FROM produtos WHERE id = $1 FOR UPDATE",
                id,
            )
            if row is None:
                raise NotFound()
            current = produto_of(row)
            if row[8] is None:
                raise storage.NotRemoved(current)
            return await transaction.mark_removed(connection, current, autoria, restored=True)

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
            created = await transaction.insert(connection, produto, autoria)
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

    async def schema(self) -> storage.Schema:
        """Not held to the lists' statement_timeout: at start-up this is a new session's first
        statement, its slowest (the server reads its catalogs), and a busy server must not
        stop a worker from starting. asyncpg's command_timeout still bounds it."""

        async def ask(connection: Connection) -> storage.Schema:
            async with connection.transaction(readonly=True):
                await connection.execute("SET LOCAL statement_timeout = 0")
                row = await connection.fetchrow(
                    "SELECT version_num, to_regclass('schema_floor') IS NOT NULL "
                    "FROM alembic_version"
                )
                if row is None:
                    return storage.Schema(None, None)
                floor = None
                if row[1]:
                    floor = await connection.fetchval("SELECT revision FROM schema_floor")
                return storage.Schema(str(row[0]), floor)

        try:
            return await self._run(ask)
        except asyncpg.UndefinedTableError:
            return storage.Schema(None, None)  # never migrated

    async def close(self) -> None:
        await self._pool.close()
