"""Accounts in PostgreSQL: the half of storage/postgres/store.py's store that keeps users, sessions,
tokens and sign-in attempts, with the same bounds and the same rule for running a failed call again
(storage/postgres/store.py's docstring): reads always, writes only when asyncpg refused to send
them."""

import contextlib
import hashlib
from typing import Any, TypeVar

import asyncpg

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
from catalogo.storage.postgres.pool import Connection, PostgresPool
from catalogo.storage.sql import TOKEN_COLUMNS, TOKENS_FROM, USER_COLUMNS

T = TypeVar("T")
_FAILURES = """
WITH last_success AS (
    SELECT coalesce(max(at), 0) AS at FROM login_attempts
    WHERE nome = $1 AND address = $2 AND ok
)
SELECT
    count(*) FILTER (WHERE nome = $1 AND address = $2 AND at > (SELECT at FROM last_success)),
    count(*) FILTER (WHERE address = $2),
    count(*) FILTER (WHERE nome = $1),
    EXISTS (SELECT 1 FROM login_attempts WHERE nome = $1 AND address = $2 AND ok),
    min(at) FILTER (WHERE nome = $1 AND address = $2 AND at > (SELECT at FROM last_success)),
    min(at) FILTER (WHERE address = $2),
    min(at) FILTER (WHERE nome = $1)
FROM login_attempts WHERE NOT ok AND at > $3 AND (nome = $1 OR address = $2)
"""
# A sign-in's advisory locks, of its name and of its address: two statements, run in order, of
# numbers made here (`_lock_key`). The class ids are any constants of our own ("sign", "addr").
_SIGN_IN_LOCKS = (
    "SELECT pg_advisory_xact_lock(1936287598, {}); SELECT pg_advisory_xact_lock(1633969266, {})"
)


def _lock_key(text: str) -> int:
    """A signed 32-bit number for `text`, the same in every process (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)


def _usuario(row: Any) -> Usuario:
    return Usuario(row[0], row[1], row[2], row[3], row[4])


def _token(row: Any) -> Token:
    return Token(*row)


class PostgresAccounts(PostgresPool):
    """The accounts half of PostgresStorage."""

    async def users_exist(self) -> bool:
        return bool((await self._fetch("SELECT EXISTS(SELECT 1 FROM usuarios)"))[0][0])

    async def users(self) -> list[Usuario]:
        return [
            _usuario(r)
            for r in await self._fetch(f"SELECT {USER_COLUMNS} FROM usuarios ORDER BY nome")
        ]

    async def user(self, nome: str) -> tuple[Usuario, str] | None:
        rows = await self._fetch(
            f"SELECT {USER_COLUMNS}, password_hash FROM usuarios WHERE nome = $1", nome
        )
        return (_usuario(rows[0]), rows[0][5]) if rows else None

    async def create_user(self, nome: str, papel: Papel, password_hash: str, now: float) -> Usuario:
        async def create(connection: "Connection") -> Any:
            return await connection.fetchrow(
                "INSERT INTO usuarios (nome, papel, password_hash, created_at) "
                f"VALUES ($1, $2, $3, $4) RETURNING {USER_COLUMNS}",
                nome,
                papel,
                password_hash,
                now,
            )

        try:
            return _usuario(await self._write(create))
        except asyncpg.UniqueViolationError:
            raise UserExists(nome) from None

    async def update_user(self, nome: str, change: contas.UserChange) -> Usuario:
        async def update(connection: "Connection") -> Any:
            async with connection.transaction():
                row = await connection.fetchrow(
                    "UPDATE usuarios SET papel = coalesce($1, papel), "
                    "ativo = coalesce($2, ativo), password_hash = coalesce($3, password_hash) "
                    f"WHERE nome = $4 RETURNING {USER_COLUMNS}",
                    change.papel,
                    change.ativo,
                    change.password_hash,
                    nome,
                )
                if row is not None and change.ends_sessions:
                    await connection.execute(
                        "DELETE FROM sessions WHERE usuario_id = $1 "
                        "AND id IS DISTINCT FROM $2::bigint",
                        row[0],
                        change.keep_session,
                    )
                return row

        row = await self._write(update)
        if row is None:
            raise UnknownUser(nome)
        return _usuario(row)

    async def reserve_sign_in(self, nome: str, address: str, now: float) -> int:
        """In a transaction that first takes the name's lock, then the address's (always in
        that order, so that no two tries wait for each other in a ring): any other try of
        either, from any connection or instance, waits until this one has committed, and its
        count, in a statement of its own, then sees this one."""
        since = now - contas.FAILURE_WINDOW_S

        async def reserve(connection: "Connection") -> int:
            await connection.execute(_SIGN_IN_LOCKS.format(_lock_key(nome), _lock_key(address)))
            row = (await connection.fetch(_FAILURES, nome, address, since))[0]
            failures = Failures(row[0], row[1], row[2], row[3], row[4], row[5], row[6])
            wait = contas.throttled(failures, now)
            if wait is not None:
                raise Throttled(wait)
            attempt: int = await connection.fetchval(
                "WITH old AS (DELETE FROM login_attempts WHERE at < $4 "
                "AND (NOT ok OR at < $5)) "
                "INSERT INTO login_attempts (nome, address, at, ok) VALUES ($1, $2, $3, false) "
                "RETURNING id",
                nome,
                address,
                now,
                now - 86400,
                now - contas.KNOWN_ADDRESS_DAYS * 86400,
            )
            return attempt

        return await self._change(reserve)

    async def sign_in_succeeded(self, attempt: int) -> None:
        async def succeed(connection: "Connection") -> None:
            await connection.execute("UPDATE login_attempts SET ok = true WHERE id = $1", attempt)

        await self._run(succeed)  # marking twice marks once

    async def forget_sign_in(self, attempt: int) -> None:
        async def forget(connection: "Connection") -> None:
            await connection.execute("DELETE FROM login_attempts WHERE id = $1", attempt)

        await self._run(forget)  # deleting twice deletes once

    async def create_session(self, session: contas.NewSession) -> None:
        async def create(connection: "Connection") -> None:
            await connection.execute(
                "WITH old AS (DELETE FROM sessions WHERE expires_at < $3) "
                "INSERT INTO sessions (usuario_id, secret_hash, created_at, expires_at, address, "
                "user_agent) VALUES ($1, $2, $3, $4, $5, $6)",
                *session,
            )

        await self._write(create)

    async def session_principal(self, secret_hash: str, now: float) -> Principal | None:
        rows = await self._fetch(
            "SELECT u.id, u.nome, u.papel, s.id FROM sessions s JOIN usuarios u "
            "ON u.id = s.usuario_id WHERE s.secret_hash = $1 AND s.expires_at > $2 AND u.ativo",
            secret_hash,
            now,
        )
        return (
            Principal(rows[0][0], rows[0][1], rows[0][2], session_id=rows[0][3]) if rows else None
        )

    async def sessions(self, usuario_id: int, now: float) -> list[Sessao]:
        rows = await self._fetch(
            "SELECT id, created_at, expires_at, address, user_agent FROM sessions "
            "WHERE usuario_id = $1 AND expires_at > $2 ORDER BY created_at DESC",
            usuario_id,
            now,
        )
        return [Sessao(*row) for row in rows]

    async def end_sessions(
        self, usuario_id: int, only: int | None = None, keep: int | None = None
    ) -> int:
        async def end(connection: "Connection") -> str:
            return await connection.execute(
                "DELETE FROM sessions WHERE usuario_id = $1 AND ($2::bigint IS NULL OR id = $2) "
                "AND id IS DISTINCT FROM $3::bigint",
                usuario_id,
                only,
                keep,
            )

        return int((await self._run(end)).split()[-1])  # deleting twice deletes once

    async def end_session(self, secret_hash: str) -> None:
        async def end(connection: "Connection") -> None:
            await connection.execute("DELETE FROM sessions WHERE secret_hash = $1", secret_hash)

        await self._run(end)

    async def create_token(self, token: contas.NewToken) -> Token:
        async def create(connection: "Connection") -> Any:
            return await connection.fetchrow(
                "WITH t AS (INSERT INTO tokens (usuario_id, nome, papel, secret_hash, created_at, "
                "expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *) "
                f"SELECT {TOKEN_COLUMNS} FROM t JOIN usuarios u ON u.id = t.usuario_id",
                *token,
            )

        return _token(await self._write(create))

    async def token_principal(self, secret_hash: str, now: float) -> Principal | None:
        rows = await self._fetch(
            f"SELECT u.id, u.nome, u.papel, t.papel, t.id, t.last_used_at, t.nome {TOKENS_FROM} "
            "WHERE t.secret_hash = $1 AND t.revoked_at IS NULL "
            "AND (t.expires_at IS NULL OR t.expires_at > $2) AND u.ativo",
            secret_hash,
            now,
        )
        if not rows:
            return None
        usuario_id, nome, papel, token_papel, token_id, used, rotulo = rows[0]
        if used is None or used < now - storage.TOKEN_USE_GRAIN_S:

            async def touch(connection: "Connection") -> None:
                await connection.execute(
                    "UPDATE tokens SET last_used_at = $1 WHERE id = $2", now, token_id
                )

            with contextlib.suppress(StorageUnavailable):  # a note, not the answer
                await self._run(touch)
        papel = contas.lesser(papel, token_papel)
        return Principal(usuario_id, nome, papel, token_id=token_id, token=rotulo)

    async def tokens(self) -> list[Token]:
        return [
            _token(r)
            for r in await self._fetch(f"SELECT {TOKEN_COLUMNS} {TOKENS_FROM} ORDER BY t.id DESC")
        ]

    async def revoke_token(self, id: int, now: float) -> Token | None:
        async def revoke(connection: "Connection") -> Any:
            await connection.execute(
                "UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", now, id
            )
            return await connection.fetchrow(
                f"SELECT {TOKEN_COLUMNS} {TOKENS_FROM} WHERE t.id = $1", id
            )

        row = await self._run(revoke)  # revoking twice revokes once
        return None if row is None else _token(row)
