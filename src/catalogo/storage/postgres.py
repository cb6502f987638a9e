"""Products in PostgreSQL: asyncpg and raw SQL, one connection pool per worker process.

PostgreSQL does by itself what sqlite.py does by hand: writers run at once and share disk
flushes, and a statement is its own transaction. So most calls are one statement in
autocommit, one round trip; only creation under an idempotency key needs a transaction.
Prices are NUMERIC(12,2), which asyncpg reads and writes as exact `Decimal`s.

Every wait has a bound, so that no request hangs on a database that does not answer:
connecting, waiting for a pooled connection, a lock, a statement. Running past one, a lost
connection or a server that is shutting down or starting is `StorageUnavailable` (a 503 with
Retry-After); the pool opens new connections by itself once the server is back.
"""

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable
from typing import Any, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from catalogo import storage
from catalogo.produtos import Produto

CONNECT_TIMEOUT_S = 5
ACQUIRE_TIMEOUT_S = 10  # a free connection of the pool, or a new one, within this
COMMAND_TIMEOUT_S = 12  # on our side, past statement_timeout: for a server that hangs
SERVER_SETTINGS = {"application_name": "catalogo", "statement_timeout": "10s"}
SEED_BATCH = 10_000
_COLUMNS = "id, nome, descricao, preco, versao"
# One statement, so one snapshot and one round trip: the page, and what lies around it. The
# LEFT JOIN keeps one row (of NULLs) when the page is empty, to carry `anywhere`.
_PAGE = f"""
WITH pagina AS (SELECT {_COLUMNS} FROM produtos {{where}})
SELECT p.id, p.nome, p.descricao, p.preco, p.versao,
    EXISTS (SELECT 1 FROM produtos WHERE id < (SELECT min(id) FROM pagina)),
    (SELECT count(*) FROM (
        SELECT 1 FROM produtos WHERE id > (SELECT max(id) FROM pagina) LIMIT $1 + 1
    ) AS newer),
    EXISTS (SELECT 1 FROM produtos)
FROM (VALUES (1)) AS one_row LEFT JOIN pagina AS p ON true
ORDER BY p.id DESC
"""
_FIRST_PAGE = _PAGE.format(where="ORDER BY id DESC LIMIT $1")
_PAGE_AFTER = _PAGE.format(where="WHERE id < $2 ORDER BY id DESC LIMIT $1")
_PAGE_BEFORE = _PAGE.format(where="WHERE id > $2 ORDER BY id ASC LIMIT $1")
Connection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"
_UNAVAILABLE = (
    OSError,  # refused, unreachable, reset
    TimeoutError,  # connecting, waiting for the pool, or a statement, past its bound
    asyncpg.PostgresConnectionError,  # a connection lost or refused by the protocol
    asyncpg.OperatorInterventionError,  # shutting down, starting up, statement_timeout
    asyncpg.InsufficientResourcesError,  # disk full, too many connections
    asyncpg.LockNotAvailableError,  # lock_timeout: another session holds the table
    asyncpg.ReadOnlySQLTransactionError,  # a standby, or a primary being demoted
    asyncpg.InvalidCatalogNameError,  # the database was removed (or renamed)
    asyncpg.InvalidAuthorizationSpecificationError,  # the password or the user was changed
)


def _produto(row: Any) -> Produto:
    return Produto.model_construct(
        id=row[0], nome=row[1], descricao=row[2], preco=row[3], versao=row[4]
    )


def _at_versions(versions: Collection[int] | None, param: int) -> tuple[str, tuple[Any, ...]]:
    """The SQL condition for an expected version, and its parameter; empty when any will do."""
    if versions is None:
        return "", ()
    return f" AND versao = ANY(${param}::bigint[])", (list(versions),)


async def _no_reset(connection: asyncpg.Connection) -> None:
    """Handlers keep no session state, so a released connection needs no RESET ALL (which
    costs a round trip per request); asyncpg still rolls back any open transaction."""


class PostgresStorage:
    def __init__(self, pool: "asyncpg.Pool[asyncpg.Record]", taken: Callable[[int], None]) -> None:
        """`taken` is told of each connection taken from the pool (+1) and returned (-1)."""
        self._pool = pool
        self._taken = taken

    @classmethod
    async def open(
        cls, url: str, pool_size: int, lock_timeout_ms: int, taken: Callable[[int], None]
    ) -> "PostgresStorage":
        """`lock_timeout_ms` bounds a wait for another session's lock, as SQLite's busy_timeout."""
        pool = await asyncpg.create_pool(
            url,
            min_size=0,  # so that a worker starts, and /readyz answers, with the server down
            max_size=pool_size,
            reset=_no_reset,
            timeout=CONNECT_TIMEOUT_S,
            command_timeout=COMMAND_TIMEOUT_S,
            server_settings={**SERVER_SETTINGS, "lock_timeout": f"{int(lock_timeout_ms)}ms"},
        )
        return cls(pool, taken)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        try:
            async with self._pool.acquire(timeout=ACQUIRE_TIMEOUT_S) as connection:
                self._taken(1)
                try:
                    yield connection
                finally:
                    self._taken(-1)
        except _UNAVAILABLE as error:
            raise storage.StorageUnavailable(f"{type(error).__name__}: {error}") from error

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Connection]:
        async with self._connection() as connection, connection.transaction():
            yield connection

    async def _fetch(self, sql: str, *params: Any) -> list[Any]:
        async with self._connection() as connection:
            rows: list[Any] = await connection.fetch(sql, *params)
            return rows

    async def page(self, cursor: storage.Cursor) -> storage.Page:
        if cursor.before is not None:
            rows = await self._fetch(_PAGE_BEFORE, cursor.limit, cursor.before)
        elif cursor.after is not None:
            rows = await self._fetch(_PAGE_AFTER, cursor.limit, cursor.after)
        else:
            rows = await self._fetch(_FIRST_PAGE, cursor.limit)
        produtos = [_produto(row) for row in rows if row[0] is not None]
        older, newer, anywhere = rows[0][5], rows[0][6], rows[0][7]
        return storage.page_of(cursor, produtos, older, newer, anywhere)

    async def get(self, id: int) -> Produto | None:
        rows = await self._fetch(f"SELECT {_COLUMNS} FROM produtos WHERE id = $1", id)
        return _produto(rows[0]) if rows else None

    async def create(self, produto: Produto) -> Produto:
        async with self._connection() as connection:
            return await _insert(connection, produto)

    async def create_many(self, produtos: Iterable[Produto]) -> int:
        """Adds products by COPY, a batch at a time so that no statement runs into the
        statement timeout: for seeding demos and benchmarks, not for requests."""
        rows = ((p.nome, p.descricao, p.preco) for p in produtos)
        added = 0
        async with self._connection() as connection:
            while batch := list(itertools.islice(rows, SEED_BATCH)):
                status = await connection.copy_records_to_table(
                    "produtos", records=batch, columns=["nome", "descricao", "preco"]
                )
                added += int(status.split()[-1])  # "COPY 10000"
        return added

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None = None
    ) -> Produto:
        condition, extra = _at_versions(versions, 5)
        async with self._connection() as connection:
            versao = await connection.fetchval(
                "UPDATE produtos SET nome = $2, descricao = $3, preco = $4, versao = versao + 1 "
                f"WHERE id = $1{condition} RETURNING versao",
                id,
                produto.nome,
                produto.descricao,
                produto.preco,
                *extra,
            )
            if versao is None:
                raise await _why_not(connection, id)
        return produto.model_copy(update={"id": id, "versao": versao})

    async def delete(self, id: int, versions: Collection[int] | None = None) -> Produto:
        condition, extra = _at_versions(versions, 2)
        async with self._connection() as connection:
            row = await connection.fetchrow(
                f"DELETE FROM produtos WHERE id = $1{condition} RETURNING {_COLUMNS}", id, *extra
            )
            if row is None:
                raise await _why_not(connection, id)
        return _produto(row)

    async def claim_key(self, key: str, fingerprint: str) -> storage.KeyClaim:
        now = time.time()
        async with self._connection() as connection:
            await connection.execute(
                "DELETE FROM idempotency_keys WHERE created_at < $1", now - storage.KEY_TTL_SECONDS
            )
            # New, or taken over from a request that crashed: one statement, so two requests
            # with the same key can never both claim it.
            claimed = await connection.fetchval(
                "INSERT INTO idempotency_keys AS k (key, fingerprint, created_at) "
                "VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET "
                "fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at "
                "WHERE k.produto_id IS NULL AND k.created_at < $4 RETURNING true",
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

    async def create_once(self, produto: Produto, key: str, claimed_at: float) -> Produto:
        async with self._transaction() as connection:
            created = await _insert(connection, produto)
            kept = await connection.execute(
                "UPDATE idempotency_keys SET produto_id = $1 "
                "WHERE key = $2 AND created_at = $3 AND produto_id IS NULL",
                created.id,
                key,
                claimed_at,
            )
            if kept != "UPDATE 1":
                raise storage.KeyTaken(key)  # leaving the transaction rolls the new product back
        return created

    async def release_key(self, key: str) -> None:
        async with self._connection() as connection:
            await connection.execute(
                "DELETE FROM idempotency_keys WHERE key = $1 AND produto_id IS NULL", key
            )

    async def schema_version(self) -> str | None:
        try:
            rows = await self._fetch("SELECT version_num FROM alembic_version")
        except asyncpg.UndefinedTableError:
            return None  # never migrated
        return str(rows[0][0]) if rows else None

    async def close(self) -> None:
        await self._pool.close()


async def _insert(connection: Connection, produto: Produto) -> Produto:
    rows = await connection.fetch(
        "INSERT INTO produtos (nome, descricao, preco) VALUES ($1, $2, $3) RETURNING id, versao",
        produto.nome,
        produto.descricao,
        produto.preco,
    )
    return produto.model_copy(update={"id": rows[0][0], "versao": rows[0][1]})


async def _why_not(connection: Connection, id: int) -> Exception:
    """Why a write that named a product changed no row: it is gone, or it has moved on."""
    row = await connection.fetchrow(f"SELECT {_COLUMNS} FROM produtos WHERE id = $1", id)
    return storage.VersionConflict(_produto(row)) if row else storage.NotFound()
