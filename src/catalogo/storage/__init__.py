"""Where products are kept: one small interface, one module per database, SQL only there.

`open_storage(settings)` opens the store that `CATALOGO_DATABASE_URL` names: a SQLite file
(`sqlite.py`) or a PostgreSQL database (`postgres.py`). Both answer alike, down to the byte:
the suite runs whole against each. A database that cannot answer now is `StorageUnavailable`.

Pages are keyset pages in list order (newest first): a `Cursor` says "after" or "before" a
product id, so page 10,000 costs what page 1 costs.

Writes that name the versions they expect (`versions`) fail with `VersionConflict` when the
product has moved on, checked in the same statement as the write, so two editors can never
overwrite each other unseen. An idempotency key remembers which product its first request
created: the key is claimed first (`claim_key`), then the product is inserted and the key
marked with its id in one transaction (`create_once`), so a retry never creates twice, even
across a crash. A claim whose request failed is released (`release_key`); one left behind (the
database was gone, or the process died) is taken over by a retry once its request can no longer
finish it: on PostgreSQL, as soon as the session that claimed it has ended; on SQLite, after
ABANDONED_AFTER_SECONDS. Storage keeps data only; the answers are idempotency.py's.

Accounts (accounts.py) keep users, sessions, tokens and sign-in attempts: every call that finds
who is asking reads the database, so that a revoked token or an ended session stops working at
once on every instance.
"""

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, NamedTuple, Protocol, TypeVar

from catalogo.accounts import Failures, Papel, Principal, Sessao, Token, Usuario
from catalogo.historia import Autoria, Evento
from catalogo.produtos import Produto
from catalogo.settings import Settings


class StorageUnavailable(Exception):
    """The database cannot answer now (locked too long, disk full, file gone): a 503."""


class NotFound(Exception):
    """No live product has that id: never made, removed, or purged."""


class NotRemoved(Exception):
    """A restore of a product that is not removed; `current` is what it is."""

    def __init__(self, current: Produto) -> None:
        super().__init__(f"produto {current.id} is not removed")
        self.current = current


class Removal(NamedTuple):
    """A removed product: when it was removed, by whom (None: anonymously), and what it was."""

    em: float
    quem: str | None
    token: str | None
    produto: Produto


class VersionConflict(Exception):
    """The product is no longer at the version the writer expected; `current` is what it is."""

    def __init__(self, current: Produto) -> None:
        super().__init__(f"produto {current.id} is at version {current.versao}")
        self.current = current


KEY_TTL_SECONDS = 24 * 3600  # how long a key is remembered
ABANDONED_AFTER_SECONDS = 60  # a claim this old that created nothing was left behind
TOKEN_USE_GRAIN_S = 60  # a token's last use is noted at most this often: a write each time


@dataclass(frozen=True)
class KeyClaim:
    """What claiming an idempotency key found: ours to use (since `claimed_at`), a product its
    first request `created`, a request still running, or another request under the key."""

    state: Literal["claimed", "created", "in_progress", "other_request"]
    claimed_at: float | None = None
    created: int | None = None


def existing_claim(fingerprint: str, found: str, created: int | None) -> KeyClaim:
    """What a key already claimed means for a request with `fingerprint`."""
    if found != fingerprint:
        return KeyClaim("other_request")
    return KeyClaim("in_progress") if created is None else KeyClaim("created", created=created)


class UserExists(Exception):
    """A user of that name exists already."""


class UnknownUser(Exception):
    """No user has that name."""


class KeyTaken(Exception):
    """The claim on an idempotency key was taken over (it looked abandoned): nothing stored."""


@dataclass(frozen=True)
class Cursor:
    """A page request: the first page, or the items just after or before one, named by its id
    (a product's in the list and the trash, an event's in a history)."""

    limit: int
    after: int | None = None
    before: int | None = None


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next: Cursor | None
    prev: Cursor | None


def page_of(
    cursor: Cursor,
    items: list[T],
    ids: tuple[int, int] | None,
    older: bool,
    newer: int,
    anywhere: bool,
) -> Page[T]:
    """A page and its links, from what lies around it: the `ids` of its first and last items,
    whether any item is `older` than its last, how many are `newer` than its first (counted up
    to one page and one more), and, for an empty page, whether there is any item at all (then
    the way back is page 1)."""
    if not items or ids is None:
        paged = cursor.after is not None or cursor.before is not None
        return Page([], None, Cursor(cursor.limit) if anywhere and paged else None)
    first, last = ids
    prev = None
    if newer > cursor.limit:
        prev = Cursor(cursor.limit, before=first)
    elif newer:
        prev = Cursor(cursor.limit)  # what is newer fits on the first page
    return Page(items, Cursor(cursor.limit, after=last) if older else None, prev)


def unobserved(value: int) -> None:
    """An instrument no one reads: the default."""


@dataclass(frozen=True)
class Instruments:
    """What storage reports to the operators' metrics (metrics.py), as it happens; by default
    no one listens. Each is called with one number."""

    commit_size: Callable[[int], None] = unobserved  # SQLite: the writes of each group commit
    connections_taken: Callable[[int], None] = unobserved  # PostgreSQL: +1 taken, -1 returned


class Storage(Protocol):
    async def page(self, cursor: Cursor) -> Page[Produto]: ...

    async def get(self, id: int) -> Produto | None: ...

    # Every write appends its event (historia.py) in its own transaction, by `autoria`.
    async def create(self, produto: Produto, autoria: Autoria) -> Produto: ...

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int: ...

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None, autoria: Autoria
    ) -> Produto:
        """Raises NotFound (also for a removed product) or VersionConflict."""
        ...

    async def delete(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        """Removes, keeping the row: the product as it was, at its new version."""
        ...

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        """Raises NotFound (never made, or purged) or NotRemoved."""
        ...

    async def removed(self, id: int) -> Removal | None:
        """When and by whom a removed product was removed; None if it is not removed."""
        ...

    async def trash(self, cursor: Cursor) -> Page[Removal]:
        """Removed products, the latest removal first."""
        ...

    async def purge(self, removed_before: float) -> int:
        """Deletes for good the products removed before then (their events stay); says how
        many."""
        ...

    async def history(self, id: int, cursor: Cursor) -> Page[Evento]:
        """A product's events, newest first."""
        ...

    async def versions(self, id: int, since: int, limit: int) -> list[Evento]:
        """The events that made version `since` of a product and those after it, oldest
        first: the base of a three-way merge, and what others changed since."""
        ...

    async def events(self, after: int, limit: int) -> list[Evento]:
        """Every product's events after event `after`, in id order: the change feed."""
        ...

    async def claim_key(self, key: str, fingerprint: str) -> KeyClaim: ...

    async def create_once(
        self, produto: Produto, key: str, claimed_at: float, autoria: Autoria
    ) -> Produto: ...

    async def release_key(self, key: str, claimed_at: float) -> None: ...

    async def schema_version(self) -> str | None: ...

    # Accounts: `now` is given by the caller, so that every check of one request sees one time.
    async def users_exist(self) -> bool: ...

    async def users(self) -> list[Usuario]: ...

    async def user(self, nome: str) -> tuple[Usuario, str] | None:
        """The user and their password hash."""
        ...

    async def create_user(self, nome: str, papel: Papel, password_hash: str, now: float) -> Usuario:
        """Raises UserExists."""
        ...

    async def update_user(
        self,
        nome: str,
        papel: Papel | None = None,
        ativo: bool | None = None,
        password_hash: str | None = None,
        keep_session: int | None = None,
        same_password: bool = False,
    ) -> Usuario:
        """Changes what is given. A new password (not `same_password` hashed anew) or a
        deactivation ends the user's sessions, all but `keep_session`. Raises UnknownUser."""
        ...

    async def record_sign_in(self, nome: str, address: str, ok: bool, now: float) -> None: ...

    async def sign_in_failures(self, nome: str, address: str, now: float) -> Failures: ...

    async def create_session(
        self,
        usuario_id: int,
        secret_hash: str,
        now: float,
        expires_at: float,
        address: str,
        user_agent: str,
    ) -> None: ...

    async def session_principal(self, secret_hash: str, now: float) -> Principal | None:
        """Whose live session this is, if its user is active."""
        ...

    async def sessions(self, usuario_id: int, now: float) -> list[Sessao]: ...

    async def end_sessions(
        self, usuario_id: int, only: int | None = None, keep: int | None = None
    ) -> int:
        """Ends one session of the user's (`only`), or all but `keep`; says how many ended."""
        ...

    async def end_session(self, secret_hash: str) -> None: ...

    async def create_token(
        self,
        usuario_id: int,
        nome: str,
        papel: Papel,
        secret_hash: str,
        now: float,
        expires_at: float | None,
    ) -> Token: ...

    async def token_principal(self, secret_hash: str, now: float) -> Principal | None:
        """Whose live token this is, if its user is active; notes its use (once a minute)."""
        ...

    async def tokens(self) -> list[Token]: ...

    async def revoke_token(self, id: int, now: float) -> Token | None:
        """None: no token has that id. A token revoked already stays as it was."""
        ...

    async def close(self) -> None: ...


async def open_storage(settings: Settings, instruments: Instruments = Instruments()) -> Storage:
    """The store the settings name. PostgreSQL's pool connects on first use, not here."""
    if settings.database == "postgresql":
        from catalogo.storage.postgres import PostgresStorage

        return await PostgresStorage.open(
            settings.database_url,
            settings.database_pool_size,
            settings.lock_timeout_ms,
            instruments.connections_taken,
        )
    from catalogo.storage.sqlite import SQLiteStorage

    return SQLiteStorage(settings.sqlite_path, settings.lock_timeout_ms, instruments.commit_size)
