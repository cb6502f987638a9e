"""Products in PostgreSQL: asyncpg and raw SQL, one connection pool per worker process.

PostgreSQL does by itself what sqlite.py does by hand: writers run at once and share disk
flushes, and a statement is its own transaction. So most calls are one statement in
autocommit, one round trip; only creation under an idempotency key needs a transaction.
Prices are NUMERIC(12,2), which asyncpg reads and writes as exact `Decimal`s.

Every wait has a bound, so that no request hangs on a database that does not answer:
connecting, waiting for a pooled connection, a lock, a statement. Running past one, a lost
connection or a server that is shutting down or starting is `StorageUnavailable` (a 503 with
Retry-After); the pool opens new connections by itself once the server is back.

Sessions also end under a running server: an administrator's pg_terminate_backend, a failover,
an idle timeout. The server's farewell (FATAL 57P01) reaches an idle pooled connection, which
asyncpg's protocol cannot place: it waits in state 2 ("consume until sync") until it reads the
socket's end, and a request handed that connection meanwhile gets `InternalClientError: cannot
switch to state 12; another operation (2) is in progress` (asyncpg issue #1069), then
`InterfaceError: connection is closed`. asyncpg raises both before it writes a byte of the
statement (coreproto.pyx `_set_state`, protocol.pyx `_check_state`, connection.py
`_check_open`, connresource.py), and drops the connection. So:

- whatever an ended session raises is `StorageUnavailable`, never a 500;
- a read whose session ended runs again on another connection: while the server is up, clients
  see nothing;
- a write runs again only when it provably left nothing behind: asyncpg refused to send it (a
  Parse message may have gone ahead of the refused Bind, and runs nothing), or it failed inside
  a transaction before COMMIT was sent, which the server rolls back as the session ends. An
  autocommit statement that was sent, or a COMMIT, may have committed whatever the client saw:
  that is a 503, never a second run (a create without a key would be stored twice). Claiming
  and releasing an idempotency key are the exception: running them twice is running them once;
- an attempt fails this way at most once per pooled connection, and once more: they may all
  have ended together. A failure to connect ends it: the server is down or refusing.

A claim on an idempotency key names the session that made it (`holder`), so that a retry takes
over at once a claim whose session has ended (a stopped server, an ended session, a process
that died): its request can no longer finish it. The created_at guard of `create_once` keeps
even a wrong takeover harmless: the request that lost the claim stores nothing.
"""

import itertools
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any, Literal, TypeAlias, TypeVar

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from catalogo import storage
from catalogo.produtos import Produto
from catalogo.storage.postgres_accounts import PostgresAccounts

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
# The session a statement runs in, named as pg_stat_activity lets anyone check that it still
# lives: its server process and when that started (a process id alone comes back in time).
_SESSION = "pid || '@' || extract(epoch FROM backend_start)"
_THIS_SESSION = f"(SELECT {_SESSION} FROM pg_stat_activity WHERE pid = pg_backend_pid())"
_HOLDER_GONE = f"NOT EXISTS (SELECT FROM pg_stat_activity WHERE {_SESSION} = k.holder)"
Connection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"
T = TypeVar("T")
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
_ENDED = (
    asyncpg.ConnectionDoesNotExistError,  # the socket closed under a statement
    asyncpg.AdminShutdownError,  # pg_terminate_backend, a fast or smart shutdown
    asyncpg.CrashShutdownError,  # another server process crashed
    asyncpg.IdleSessionTimeoutError,  # idle_session_timeout
)


def _refused(error: Exception) -> bool:
    """asyncpg would not send the statement: its connection was closed, or had read the server's
    farewell while idle. The messages are asyncpg's own (0.30 to 0.32); another wording only
    makes a write a 503 that could have been run again."""
    message = str(error)
    if type(error) is asyncpg.InterfaceError:
        return message.endswith("connection is closed")
    return type(error) is asyncpg.InternalClientError and message.startswith(
        "cannot switch to state"
    )


def _ended(error: Exception) -> bool:
    """The session the error came from is over: another connection may do better."""
    return isinstance(error, _ENDED) or _refused(error)


def _always(error: Exception) -> bool:
    return True


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


class PostgresStorage(PostgresAccounts):
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

    async def _run(
        self,
        work: Callable[[Connection], Awaitable[T]],
        again: Callable[[Exception], bool] = _always,
    ) -> T:
        """`work` on a pooled connection, or on another if that one's session has ended and
        `again` says the failed attempt left nothing behind (reads: always; see the module's
        docstring for writes). A session that ended as it opened ran nothing: always again."""
        tries = self._pool.get_max_size() + 1
        while True:
            tries -= 1
            step: Literal["acquire", "work", "release"] = "acquire"
            try:
                async with self._pool.acquire(timeout=ACQUIRE_TIMEOUT_S) as connection:
                    step = "work"
                    self._taken(1)
                    try:
                        result = await work(connection)
                    finally:
                        self._taken(-1)
                    step = "release"
                return result
            except Exception as error:
                if not (_ended(error) or isinstance(error, _UNAVAILABLE)):
                    raise
                if (
                    tries
                    and _ended(error)
                    and (step == "acquire" or (step == "work" and again(error)))
                ):
                    continue
                raise storage.StorageUnavailable(f"{type(error).__name__}: {error}") from error

    async def _write(self, work: Callable[[Connection], Awaitable[T]]) -> T:
        """A write: run again only if asyncpg refused to send it."""
        return await self._run(work, _refused)

    async def _fetch(self, sql: str, *params: Any) -> list[Any]:
        async def fetch(connection: Connection) -> list[Any]:
            return await connection.fetch(sql, *params)

        return await self._run(fetch)

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
        async def create(connection: Connection) -> Produto:
            return await _insert(connection, produto)

        return await self._run(create, _refused)

    async def create_many(self, produtos: Iterable[Produto]) -> int:
        """Adds products by COPY, a batch at a time so that no statement runs into the
        statement timeout: for seeding demos and benchmarks, not for requests. Never run again:
        the batches before a failure are stored."""
        rows = ((p.nome, p.descricao, p.preco) for p in produtos)

        async def copy(connection: Connection) -> int:
            added = 0
            while batch := list(itertools.islice(rows, SEED_BATCH)):
                status = await connection.copy_records_to_table(
                    "produtos", records=batch, columns=["nome", "descricao", "preco"]
                )
                added += int(status.split()[-1])  # "COPY 10000"
            return added

        return await self._run(copy, lambda error: False)

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None = None
    ) -> Produto:
        condition, extra = _at_versions(versions, 5)

        async def update(connection: Connection) -> Any:
            versao = await connection.fetchval(
                "UPDATE produtos SET nome = $2, descricao = $3, preco = $4, versao = versao + 1 "
                f"WHERE id = $1{condition} RETURNING versao",
                id,
                produto.nome,
                produto.descricao,
                produto.preco,
                *extra,
            )
            if versao is None:  # it changed nothing: a failure below leaves nothing behind
                raise await _why_not(connection, id)
            return versao

        versao = await self._run(update, _refused)
        return produto.model_copy(update={"id": id, "versao": versao})

    async def delete(self, id: int, versions: Collection[int] | None = None) -> Produto:
        condition, extra = _at_versions(versions, 2)

        async def delete(connection: Connection) -> Any:
            row = await connection.fetchrow(
                f"DELETE FROM produtos WHERE id = $1{condition} RETURNING {_COLUMNS}", id, *extra
            )
            if row is None:  # it changed nothing: a failure below leaves nothing behind
                raise await _why_not(connection, id)
            return row

        return _produto(await self._run(delete, _refused))

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

    async def create_once(self, produto: Produto, key: str, claimed_at: float) -> Produto:
        committing = False

        async def create(connection: Connection) -> Produto:
            nonlocal committing
            committing = False
            async with connection.transaction():
                created = await _insert(connection, produto)
                kept = await connection.execute(
                    "UPDATE idempotency_keys SET produto_id = $1 "
                    "WHERE key = $2 AND created_at = $3 AND produto_id IS NULL",
                    created.id,
                    key,
                    claimed_at,
                )
                if kept != "UPDATE 1":
                    raise storage.KeyTaken(key)  # leaving the block rolls the product back
                committing = True  # leaving the block sends COMMIT
            return created

        return await self._run(create, lambda error: not committing or _refused(error))

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
