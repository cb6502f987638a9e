"""PostgreSQL sessions: one asyncpg pool per worker process, bounds on every wait, and what to
do when a session ends.

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
  a transaction before COMMIT was sent, which the server rolls back as the session ends
  (`_change`). An autocommit statement that was sent, or a COMMIT, may have committed whatever
  the client saw: that is a 503, never a second run (a create would be stored twice). Claiming
  and releasing an idempotency key are the exception: running them twice is running them once;
- an attempt fails this way at most once per pooled connection, and once more: they may all
  have ended together. A failure to connect ends it: the server is down or refusing.
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal, Self, TypeAlias, TypeVar

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from catalogo.domain.errors import StorageUnavailable

CONNECT_TIMEOUT_S = 5
ACQUIRE_TIMEOUT_S = 10  # a free connection of the pool, or a new one, within this
COMMAND_GRACE_S = 2  # on our side, past statement_timeout: for a server that hangs
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


def refused(error: Exception) -> bool:
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
    return isinstance(error, _ENDED) or refused(error)


def _always(error: Exception) -> bool:
    return True


async def _no_reset(connection: asyncpg.Connection) -> None:
    """Handlers keep no session state, so a released connection needs no RESET ALL (which
    costs a round trip per request); asyncpg still rolls back any open transaction."""


class PostgresPool:
    """The pool, and the one way every call of the store uses it (`_run`)."""

    def __init__(
        self,
        pool: "asyncpg.Pool[asyncpg.Record]",
        taken: Callable[[int], None],
        query_timeout_ms: int,
    ) -> None:
        """`taken` is told of each connection taken from the pool (+1) and returned (-1)."""
        self._pool = pool
        self._taken = taken
        self._query_timeout_ms = query_timeout_ms

    @classmethod
    async def open(
        cls,
        url: str,
        pool_size: int,
        lock_timeout_ms: int,
        taken: Callable[[int], None],
        query_timeout_ms: int = 5000,
    ) -> Self:
        """`lock_timeout_ms` bounds a wait for another session's lock, as SQLite's busy_timeout;
        `query_timeout_ms` every statement, as storage/sqlite/readers.py's progress handler."""
        pool = await asyncpg.create_pool(
            url,
            min_size=0,  # so that a worker starts, and /readyz answers, with the server down
            max_size=pool_size,
            reset=_no_reset,
            timeout=CONNECT_TIMEOUT_S,
            command_timeout=query_timeout_ms / 1000 + COMMAND_GRACE_S,
            server_settings={
                "application_name": "catalogo",
                "statement_timeout": f"{int(query_timeout_ms)}ms",
                "lock_timeout": f"{int(lock_timeout_ms)}ms",
            },
        )
        return cls(pool, taken, query_timeout_ms)

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
                raise StorageUnavailable(f"{type(error).__name__}: {error}") from error

    @asynccontextmanager
    async def _held(self) -> AsyncIterator[Connection]:
        """A pooled connection for as long as a read lasts (an export), never run again: what
        it gave is already on its way. A database gone meanwhile is StorageUnavailable."""
        try:
            async with self._pool.acquire(timeout=ACQUIRE_TIMEOUT_S) as connection:
                self._taken(1)
                try:
                    yield connection
                finally:
                    self._taken(-1)
        except Exception as error:
            if not (_ended(error) or isinstance(error, _UNAVAILABLE)):
                raise
            raise StorageUnavailable(f"{type(error).__name__}: {error}") from error

    async def _write(self, work: Callable[[Connection], Awaitable[T]]) -> T:
        """A write: run again only if asyncpg refused to send it."""
        return await self._run(work, refused)

    async def _fetch(self, sql: str, *params: Any) -> list[Any]:
        async def fetch(connection: Connection) -> list[Any]:
            return await connection.fetch(sql, *params)

        return await self._run(fetch)

    async def _snapshot(self, read: Callable[[Connection], Awaitable[T]]) -> T:
        """`read`'s statements all see one moment of the database."""

        async def run(connection: Connection) -> T:
            async with connection.transaction(isolation="repeatable_read", readonly=True):
                return await read(connection)

        return await self._run(run)

    async def _change(self, change: Callable[[Connection], Awaitable[T]]) -> T:
        """A write and its event in one transaction. Run again when it failed before COMMIT
        was sent (the server rolled it back) or was never sent; a COMMIT sent is a 503."""
        committing = False

        async def run(connection: Connection) -> T:
            nonlocal committing
            committing = False
            async with connection.transaction():
                result = await change(connection)
                committing = True  # leaving the block sends COMMIT
            return result

        return await self._run(run, lambda error: not committing or refused(error))
