"""Accounts, each step written once for the pages, the JSON API and the CLI: signing in (with
the throttle), sessions, users, passwords and tokens. The rules stay in domain/contas.py, the
SQL in storage, and HTTP or the terminal in the callers.
"""

import time
import unicodedata

from catalogo.domain import contas
from catalogo.domain.contas import (
    ContaInvalida,
    NewSession,
    NewToken,
    Papel,
    Token,
    UnknownSession,
    UnknownToken,
    UnknownUser,
    UserChange,
    Usuario,
)
from catalogo.domain.senhas import Busy, Passwords
from catalogo.storage import Storage


async def check_password(
    storage: Storage, passwords: Passwords, nome: str, senha: str, address: str, now: float
) -> Usuario | None:
    """The active user `nome` when `senha` is theirs, else None, for signing in and for any
    other page that asks for the password again. Each try is weighed against the throttle and
    counted as a failure in one atomic step (Throttled), before the password is
    checked, so that tries sent together cannot all pass the count; a right password then turns
    it into a success. A try turned away for a crowd (Busy) was never checked, and counts for
    nothing. A hash made with older parameters is made again."""
    attempt = await storage.reserve_sign_in(nome, address, now)
    found = await storage.user(nome)
    usuario, stored = found if found is not None and found[0].ativo else (None, None)
    senha = unicodedata.normalize("NFC", senha)
    try:
        ok = len(senha) <= contas.SENHA_MAXIMA and await passwords.verify(stored, senha)
    except Busy:
        await storage.forget_sign_in(attempt)
        raise
    if not ok or usuario is None or stored is None:
        return None
    await storage.sign_in_succeeded(attempt)
    if passwords.needs_rehash(stored):
        rehashed = await passwords.hash(senha)
        await storage.update_user(nome, UserChange(password_hash=rehashed, same_password=True))
    return usuario


async def open_session(
    storage: Storage,
    usuario: Usuario,
    lifetime_s: int,
    address: str,
    user_agent: str,
    now: float,
    replaced: str | None,
) -> str:
    """A new session for `usuario`, and its secret; the one the browser sent (`replaced`), if
    any, ends: a session id never outlives a sign-in (no fixation)."""
    if replaced is not None and contas.is_session_secret(replaced):
        await storage.end_session(contas.digest(replaced))
    secret = contas.new_session_secret()
    digest = contas.digest(secret)
    await storage.create_session(
        NewSession(usuario.id, digest, now, now + lifetime_s, address, user_agent)
    )
    return secret


async def create_user(
    storage: Storage, passwords: Passwords, nome: str, papel: str, senha: str
) -> Usuario:
    """Raises ContaInvalida (a name, role or password refused), UserExists, or Busy."""
    nome = contas.parse_nome(nome)
    chosen = contas.parse_papel(papel)
    hashed = await passwords.hash(contas.parse_senha(senha))
    return await storage.create_user(nome, chosen, hashed, time.time())


async def change_password(
    storage: Storage,
    passwords: Passwords,
    nome: str,
    senha: str,
    repeated: str | None = None,
    keep_session: int | None = None,
) -> Usuario:
    """A new password for `nome`, typed twice when `repeated` is given: every session of
    theirs ends but `keep_session`. Raises ContaInvalida, UnknownUser or Busy."""
    nova = contas.parse_senha(senha)
    if repeated is not None and unicodedata.normalize("NFC", repeated) != nova:
        raise ContaInvalida(contas.PASSWORDS_DIFFER)
    hashed = await passwords.hash(nova)
    return await storage.update_user(
        nome, UserChange(password_hash=hashed, keep_session=keep_session)
    )


async def issue_token(
    storage: Storage, usuario: str, nome: str, papel: str | None, dias: str | None
) -> tuple[Token, str]:
    """A new token for the user named `usuario`, labelled `nome`, of the role asked for (by
    default the most that user may give), lasting `dias` days (None: for ever); and its
    secret, the one time it exists outside its holder. Raises ContaInvalida or UnknownUser."""
    label = contas.parse_token_nome(nome)
    days = contas.parse_dias(dias)
    owner = contas.parse_nome(usuario)
    found = await storage.user(owner)
    if found is None:
        raise UnknownUser(owner)
    dono = found[0]
    role = contas.token_papel(dono, papel)
    secret = contas.new_token()
    now = time.time()
    expires = None if days is None else now + days * 86400
    digest = contas.digest(secret)
    token = await storage.create_token(NewToken(dono.id, label, role, digest, now, expires))
    return token, secret


async def close_session(storage: Storage, secret: str | None) -> None:
    """Signing out: the session of this secret (a browser's cookie) ends, if it is one."""
    if secret is not None and contas.is_session_secret(secret):
        await storage.end_session(contas.digest(secret))


async def end_sessions(storage: Storage, usuario_id: int, only: int | None = None) -> None:
    """Every session of the user ends, or only the one numbered `only` (UnknownSession if the
    user has none of that number)."""
    if not await storage.end_sessions(usuario_id, only=only) and only is not None:
        raise UnknownSession()


async def change_role(storage: Storage, nome: str, papel: Papel, ativo: bool) -> Usuario:
    """A user's role, and whether they are active: a deactivation ends their sessions and
    stops their tokens. Raises UnknownUser."""
    return await storage.update_user(nome, UserChange(papel=papel, ativo=ativo))


async def deactivate(storage: Storage, nome: str) -> Usuario:
    """A user no longer signs in: their sessions end, their tokens stop. Raises UnknownUser."""
    return await storage.update_user(nome, UserChange(ativo=False))


async def revoke_token(storage: Storage, id: int) -> Token:
    """The token stops at once, on every instance. Raises UnknownToken."""
    revoked = await storage.revoke_token(id, time.time())
    if revoked is None:
        raise UnknownToken(id)
    return revoked
