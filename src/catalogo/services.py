"""What people do with the catalog, each written once for every door: the pages, the JSON API
and the CLI call these (the service layer of Cosmic Python). Each takes the store and what the
request or the command line said; the rules stay in the pure domain modules (produtos,
history, merge, accounts), the SQL in storage, and HTTP or the terminal in their callers.
"""

import asyncio
import dataclasses
import time
import unicodedata
from collections.abc import AsyncGenerator, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from catalogo import accounts, delivery, history, webhooks
from catalogo.accounts import (
    Busy,
    ContaInvalida,
    NewSession,
    NewToken,
    Passwords,
    Token,
    UserChange,
    Usuario,
)
from catalogo.exports import CsvRows, Format, Workbook
from catalogo.history import Autoria
from catalogo.keyring import Keyring, Unopenable
from catalogo.merge import Merge, merge
from catalogo.produtos import Produto, keeping_codigo
from catalogo.search import IDS_MAXIMUM, Query, codigo_key
from catalogo.storage import Storage, UnknownUser, VersionConflict
from catalogo.storage.paging import Cursor

MERGE_ATTEMPTS = 5  # merges in a row that another write overtook before the save gives up
AUTHORS_READ = 200  # the events read to name who changed the product since v


async def check_password(
    storage: Storage, passwords: Passwords, nome: str, senha: str, address: str, now: float
) -> Usuario | None:
    """The active user `nome` when `senha` is theirs, else None, for signing in and for any
    other page that asks for the password again. Each try is weighed against the throttle and
    counted as a failure in one atomic step (accounts.Throttled), before the password is
    checked, so that tries sent together cannot all pass the count; a right password then turns
    it into a success. A try turned away for a crowd (Busy) was never checked, and counts for
    nothing. A hash made with older parameters is made again."""
    attempt = await storage.reserve_sign_in(nome, address, now)
    found = await storage.user(nome)
    usuario, stored = found if found is not None and found[0].ativo else (None, None)
    senha = unicodedata.normalize("NFC", senha)
    try:
        ok = len(senha) <= accounts.SENHA_MAXIMA and await passwords.verify(stored, senha)
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
    if replaced is not None and accounts.is_session_secret(replaced):
        await storage.end_session(accounts.digest(replaced))
    secret = accounts.new_session_secret()
    digest = accounts.digest(secret)
    await storage.create_session(
        NewSession(usuario.id, digest, now, now + lifetime_s, address, user_agent)
    )
    return secret


async def create_user(
    storage: Storage, passwords: Passwords, nome: str, papel: str, senha: str
) -> Usuario:
    """Raises ContaInvalida (a name, role or password refused), UserExists, or Busy."""
    nome = accounts.parse_nome(nome)
    chosen = accounts.parse_papel(papel)
    hashed = await passwords.hash(accounts.parse_senha(senha))
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
    nova = accounts.parse_senha(senha)
    if repeated is not None and unicodedata.normalize("NFC", repeated) != nova:
        raise ContaInvalida("As senhas digitadas não são iguais.")
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
    label = accounts.parse_token_nome(nome)
    days = accounts.parse_dias(dias)
    owner = accounts.parse_nome(usuario)
    found = await storage.user(owner)
    if found is None:
        raise UnknownUser(owner)
    dono = found[0]
    role = accounts.token_papel(dono, papel)
    secret = accounts.new_token()
    now = time.time()
    expires = None if days is None else now + days * 86400
    digest = accounts.digest(secret)
    token = await storage.create_token(NewToken(dono.id, label, role, digest, now, expires))
    return token, secret


@dataclass(frozen=True)
class Merged:
    """Saved: the product, the fields taken from the others' changes, and who made them;
    `changed` is false when the merge left the product as the others saved it."""

    produto: Produto
    theirs: tuple[str, ...]
    autores: list[str]
    changed: bool = True


class MergeConflict(Exception):
    """Both sides changed a field differently: `merged` against `current`, for a choice."""

    def __init__(self, merged: Merge, current: Produto, autores: list[str]) -> None:
        super().__init__(f"produto {current.id}: {', '.join(merged.conflicts)}")
        self.merged = merged
        self.current = current
        self.autores = autores


class Since(NamedTuple):
    """What a person's page missed: the version it was opened at (None if it is not stored),
    and who changed the product after it."""

    base: history.Fields | None
    autores: list[str]


async def since(storage: Storage, id: int, based_on: int) -> Since:
    found = await storage.versions(id, based_on, AUTHORS_READ)
    base = found[0].depois if found and found[0].versao == based_on else None
    return Since(base, history.authors_of(e for e in found if e.versao > based_on))


async def save_merged(
    storage: Storage,
    typed: Produto,
    based_on: int,
    current: Produto,
    autoria: Autoria,
) -> Merged:
    """An edit opened at version `based_on`, merged (merge.py) with the product as saved now
    and saved; merged again from `based_on` if another write lands first. Raises
    MergeConflict (also when the product kept moving through every attempt) or NotFound
    (removed meanwhile). JSON clients never come here: they keep strict versions (409/412)."""
    for _ in range(MERGE_ATTEMPTS):
        assert current.id is not None and current.versao is not None  # noqa: S101 - stored
        base, autores = await since(storage, current.id, based_on)
        seen = current if base is None else history.produto_of(base)
        merged = merge(base, keeping_codigo(typed, seen), current)
        if merged.conflicts:
            raise MergeConflict(merged, current, autores)
        try:
            saved = await storage.update(current.id, merged.produto, {current.versao}, autoria)
        except VersionConflict as overtaken:
            current = overtaken.current
            continue
        return Merged(saved.produto, merged.theirs, autores, saved.changed)
    # Overtaken every time: the person decides, every field that differs laid out.
    raise MergeConflict(merge(None, typed, current), current, [])


async def csv_export(storage: Storage, query: Query, kind: Format) -> AsyncGenerator[bytes, None]:
    """`query`'s products as a CSV file (exports.py), in pieces. The first holds the header and
    the first chunk, so that what fails before it (QueryTimeout) fails before a byte is sent."""
    rows = CsvRows(kind)
    chunks = storage.export(query)
    try:
        first: list[Produto] = await anext(chunks, [])
        yield rows.header() + rows.rows(first)
        async for chunk in chunks:
            yield rows.rows(chunk)
    finally:
        await chunks.aclose()


async def xlsx_export(storage: Storage, query: Query) -> str:
    """The path of an xlsx file of `query`'s products, written off the event loop (XlsxWriter
    is pure Python); the caller removes it. Raises TooManyRows or QueryTimeout."""
    book = await asyncio.to_thread(Workbook)
    chunks = storage.export(query)
    try:
        async for chunk in chunks:
            await asyncio.to_thread(book.add, chunk)
        return await asyncio.to_thread(book.close)
    except BaseException:
        await asyncio.to_thread(book.discard)
        raise
    finally:
        await chunks.aclose()


async def live(
    storage: Storage, by: Literal["ids", "codigos"], keys: set[Any]
) -> dict[Any, Produto]:
    """The live products of these ids or codes, keyed by id or by codigo_key: the list's own
    lookup, a page of 100 at a time (an import's rows, a batch's products)."""
    found: dict[Any, Produto] = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), IDS_MAXIMUM):
        batch = tuple(ordered[start : start + IDS_MAXIMUM])
        query = Query(ids=batch) if by == "ids" else Query(codigos=batch)
        page = await storage.find(query, Cursor(IDS_MAXIMUM))
        for produto in page.items:
            found[produto.id if by == "ids" else codigo_key(str(produto.codigo))] = produto
    return found


async def subscribe(
    storage: Storage,
    url: str,
    eventos: Iterable[str],
    quem: str | None,
    allowed: Collection[webhooks.Network],
    keyring: Keyring,
) -> webhooks.Webhook:
    """A new webhook subscription, once its URL names an address deliveries may reach now
    (each delivery checks it again: DNS may change), with its secret as it is (the database
    keeps it as `keyring` seals it)."""
    checked = webhooks.parse_url(url)
    kinds = webhooks.parse_eventos(eventos)
    try:
        await delivery.checked_addresses(checked, allowed)
    except delivery.Refused as refused:
        raise webhooks.SubscriptionRefused(f"Não posso entregar aqui: {refused}.", "url") from None
    secret = webhooks.new_secret()
    made = await storage.create_webhook(checked, kinds, keyring.seal(secret), quem, time.time())
    return dataclasses.replace(made, segredo=secret)


async def reseal_secrets(storage: Storage, keyring: Keyring) -> tuple[int, list[int]]:
    """Every webhook's secret sealed under the keyring's first key (one kept as it is, or
    under an older key): how many were sealed anew, and the subscriptions whose secret no key
    opens (left as they are)."""
    sealed, unopenable = 0, []
    for webhook in await storage.webhooks():
        try:
            resealed = keyring.resealed(webhook.segredo)
        except Unopenable:
            unopenable.append(webhook.id)
            continue
        if resealed is not None and await storage.reseal_webhook(
            webhook.id, webhook.segredo, resealed
        ):
            sealed += 1
    return sealed, unopenable
