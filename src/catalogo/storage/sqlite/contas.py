"""Accounts in the SQLite file: the half of storage/sqlite/store.py's store that keeps users,
sessions, tokens and sign-in attempts, in the same way (reads inline, writes on the writer thread).

Who a session or a token names is asked on every request that carries one, so that an ended
session or a revoked token stops at once on every instance. The answer is kept with the file's
mark when it was read (storage/sqlite/changes.py), which every commit of any connection moves: while
it has not moved, nothing in the file has changed and the kept answer is the one the query would
give, until the session or token expires. Where the mark is unknown, `PRAGMA data_version` tells
the same at the price of a statement."""

import contextlib
import math
import sqlite3
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from catalogo import storage
from catalogo.domain import contas
from catalogo.domain.contas import (
    Failures,
    Papel,
    Principal,
    Sessao,
    Throttled,
    Token,
    UnknownUser,
    UserExists,
    Usuario,
)
from catalogo.domain.errors import StorageUnavailable
from catalogo.runtime.kept import Kept
from catalogo.storage.sql import TOKEN_COLUMNS, TOKENS_FROM, USER_COLUMNS
from catalogo.storage.sqlite.changes import Changes

T = TypeVar("T")
KEPT_PRINCIPALS = 1_000
# By (kind, secret hash): the file's version it was read at (`_version`), when it expires, the
# principal, and for a token when it was last noted as used.
Known = Kept[tuple[str, str], tuple[Hashable, float, Principal, float | None]]
_FAILURES = """
SELECT
    (SELECT count(*) FROM login_attempts WHERE nome = ?1 AND address = ?2
        AND NOT ok AND at > max(?3, coalesce((SELECT max(at) FROM login_attempts
            WHERE nome = ?1 AND address = ?2 AND ok), 0))),
    (SELECT count(*) FROM login_attempts WHERE address = ?2 AND NOT ok AND at > ?3),
    (SELECT count(*) FROM login_attempts WHERE nome = ?1 AND NOT ok AND at > ?3),
    EXISTS (SELECT 1 FROM login_attempts WHERE nome = ?1 AND address = ?2 AND ok),
    (SELECT min(at) FROM login_attempts WHERE nome = ?1 AND address = ?2
        AND NOT ok AND at > max(?3, coalesce((SELECT max(at) FROM login_attempts
            WHERE nome = ?1 AND address = ?2 AND ok), 0))),
    (SELECT min(at) FROM login_attempts WHERE address = ?2 AND NOT ok AND at > ?3),
    (SELECT min(at) FROM login_attempts WHERE nome = ?1 AND NOT ok AND at > ?3)
"""


def _usuario(row: Any) -> Usuario:
    return Usuario(row[0], row[1], row[2], bool(row[3]), row[4])


def _token(row: Any) -> Token:
    return Token(*row)


class SQLiteAccounts:
    """Mixed into SQLiteStorage, whose `_read` and `_submit` these use."""

    if TYPE_CHECKING:

        def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]: ...

        async def _submit(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

        _known_principals: Known
        _changes: Changes

    def _version(self) -> Hashable:
        """Equal while nothing is committed; taken before the query, so that a change between
        them is seen by the next request."""
        mark = self._changes.mark()
        if mark is not None:
            return mark
        version: int = self._read("PRAGMA data_version")[0][0]
        return version

    def _known(self, key: tuple[str, str], version: Hashable, now: float) -> Principal | None:
        known = self._known_principals.get(key)
        if known is None or known[0] != version or known[1] <= now:
            return None
        used = known[3]
        if key[0] == "token" and (used is None or used < now - storage.TOKEN_USE_GRAIN_S):
            return None  # its use is due to be noted: the query's way
        return known[2]

    def _keep(
        self,
        key: tuple[str, str],
        version: Hashable,
        expires_at: float | None,
        principal: Principal,
        used: float | None = None,
    ) -> None:
        until = math.inf if expires_at is None else expires_at
        self._known_principals.keep(key, (version, until, principal, used))

    async def users_exist(self) -> bool:
        return bool(self._read("SELECT EXISTS(SELECT 1 FROM usuarios)")[0][0])

    async def users(self) -> list[Usuario]:
        return [
            _usuario(row)
            for row in self._read(f"SELECT {USER_COLUMNS} FROM usuarios ORDER BY nome")
        ]

    async def user(self, nome: str) -> tuple[Usuario, str] | None:
        rows = self._read(
            f"SELECT {USER_COLUMNS}, password_hash FROM usuarios WHERE nome = ?", (nome,)
        )
        return (_usuario(rows[0]), rows[0][5]) if rows else None

    async def create_user(self, nome: str, papel: Papel, password_hash: str, now: float) -> Usuario:
        def run(connection: sqlite3.Connection) -> Usuario:
            try:
                row = connection.execute(
                    "INSERT INTO usuarios (nome, papel, password_hash, created_at) "
                    f"VALUES (?, ?, ?, ?) RETURNING {USER_COLUMNS}",
                    (nome, papel, password_hash, now),
                ).fetchone()
            except sqlite3.IntegrityError:
                raise UserExists(nome) from None
            return _usuario(row)

        return await self._submit(run)

    async def update_user(self, nome: str, change: contas.UserChange) -> Usuario:
        def run(connection: sqlite3.Connection) -> Usuario:
            row = connection.execute(
                "UPDATE usuarios SET papel = coalesce(?, papel), ativo = coalesce(?, ativo), "
                "password_hash = coalesce(?, password_hash) "
                f"WHERE nome = ? RETURNING {USER_COLUMNS}",
                (change.papel, change.ativo, change.password_hash, nome),
            ).fetchone()
            if row is None:
                raise UnknownUser(nome)
            if change.ends_sessions:
                connection.execute(
                    "DELETE FROM sessions WHERE usuario_id = ? AND id IS NOT ?",
                    (row[0], change.keep_session),
                )
            return _usuario(row)

        return await self._submit(run)

    async def reserve_sign_in(self, nome: str, address: str, now: float) -> int:
        """On the writer's connection, inside BEGIN IMMEDIATE: every other try in this process
        is behind it in the writer's queue, and every other process waits for the file's lock."""

        def run(connection: sqlite3.Connection) -> int:
            row = connection.execute(
                _FAILURES, (nome, address, now - contas.FAILURE_WINDOW_S)
            ).fetchone()
            failures = Failures(row[0], row[1], row[2], bool(row[3]), row[4], row[5], row[6])
            wait = contas.throttled(failures, now)
            if wait is not None:
                raise Throttled(wait)
            connection.execute(
                "DELETE FROM login_attempts WHERE at < ? AND (NOT ok OR at < ?)",
                (now - 86400, now - contas.KNOWN_ADDRESS_DAYS * 86400),
            )
            return int(
                connection.execute(
                    "INSERT INTO login_attempts (nome, address, at, ok) VALUES (?, ?, ?, false) "
                    "RETURNING id",
                    (nome, address, now),
                ).fetchone()[0]
            )

        return await self._submit(run)

    async def sign_in_succeeded(self, attempt: int) -> None:
        await self._submit(
            lambda c: c.execute("UPDATE login_attempts SET ok = true WHERE id = ?", (attempt,))
        )

    async def forget_sign_in(self, attempt: int) -> None:
        await self._submit(
            lambda c: c.execute("DELETE FROM login_attempts WHERE id = ?", (attempt,))
        )

    async def create_session(self, session: contas.NewSession) -> None:
        def run(connection: sqlite3.Connection) -> None:
            connection.execute("DELETE FROM sessions WHERE expires_at < ?", (session.criado_em,))
            connection.execute(
                "INSERT INTO sessions (usuario_id, secret_hash, created_at, expires_at, address, "
                "user_agent) VALUES (?, ?, ?, ?, ?, ?)",
                session,
            )

        await self._submit(run)

    async def session_principal(self, secret_hash: str, now: float) -> Principal | None:
        version = self._version()
        known = self._known(("session", secret_hash), version, now)
        if known is not None:
            return known
        rows = self._read(
            "SELECT u.id, u.nome, u.papel, s.id, s.expires_at FROM sessions s JOIN usuarios u "
            "ON u.id = s.usuario_id WHERE s.secret_hash = ? AND s.expires_at > ? AND u.ativo",
            (secret_hash, now),
        )
        if not rows:
            return None
        usuario_id, nome, papel, session_id, expires_at = rows[0]
        principal = Principal(usuario_id, nome, papel, session_id=session_id)
        self._keep(("session", secret_hash), version, expires_at, principal)
        return principal

    async def sessions(self, usuario_id: int, now: float) -> list[Sessao]:
        rows = self._read(
            "SELECT id, created_at, expires_at, address, user_agent FROM sessions "
            "WHERE usuario_id = ? AND expires_at > ? ORDER BY created_at DESC",
            (usuario_id, now),
        )
        return [Sessao(*row) for row in rows]

    async def end_sessions(
        self, usuario_id: int, only: int | None = None, keep: int | None = None
    ) -> int:
        def run(connection: sqlite3.Connection) -> int:
            return connection.execute(
                "DELETE FROM sessions WHERE usuario_id = ? AND (? IS NULL OR id = ?) "
                "AND id IS NOT ?",
                (usuario_id, only, only, keep),
            ).rowcount

        return await self._submit(run)

    async def end_session(self, secret_hash: str) -> None:
        await self._submit(
            lambda c: c.execute("DELETE FROM sessions WHERE secret_hash = ?", (secret_hash,))
        )

    async def create_token(self, token: contas.NewToken) -> Token:
        def run(connection: sqlite3.Connection) -> Token:
            id = connection.execute(
                "INSERT INTO tokens (usuario_id, nome, papel, secret_hash, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                token,
            ).fetchone()[0]
            return _token(
                connection.execute(
                    f"SELECT {TOKEN_COLUMNS} {TOKENS_FROM} WHERE t.id = ?",
                    (id,),
                ).fetchone()
            )

        return await self._submit(run)

    async def token_principal(self, secret_hash: str, now: float) -> Principal | None:
        version = self._version()
        known = self._known(("token", secret_hash), version, now)
        if known is not None:
            return known
        rows = self._read(
            "SELECT u.id, u.nome, u.papel, t.papel, t.id, t.last_used_at, t.nome, t.expires_at "
            "FROM tokens t "
            "JOIN usuarios u ON u.id = t.usuario_id WHERE t.secret_hash = ? "
            "AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?) AND u.ativo",
            (secret_hash, now),
        )
        if not rows:
            return None
        usuario_id, nome, papel, token_papel, token_id, used, rotulo, expires_at = rows[0]
        papel = contas.lesser(papel, token_papel)
        principal = Principal(usuario_id, nome, papel, token_id=token_id, token=rotulo)
        if used is None or used < now - storage.TOKEN_USE_GRAIN_S:
            with contextlib.suppress(StorageUnavailable):  # it is a note, not the answer
                await self._submit(
                    lambda c: c.execute(
                        "UPDATE tokens SET last_used_at = ? WHERE id = ?", (now, token_id)
                    )
                )
            return principal  # the note moved the version: keeping it would be in vain
        self._keep(("token", secret_hash), version, expires_at, principal, used)
        return principal

    async def tokens(self) -> list[Token]:
        rows = self._read(f"SELECT {TOKEN_COLUMNS} {TOKENS_FROM} ORDER BY t.id DESC")
        return [_token(row) for row in rows]

    async def revoke_token(self, id: int, now: float) -> Token | None:
        def run(connection: sqlite3.Connection) -> Token | None:
            connection.execute(
                "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, id)
            )
            row = connection.execute(
                f"SELECT {TOKEN_COLUMNS} {TOKENS_FROM} WHERE t.id = ?",
                (id,),
            ).fetchone()
            return None if row is None else _token(row)

        return await self._submit(run)
