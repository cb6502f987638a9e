"""Where products are kept: one small interface, one module per database, SQL only there.

`open_storage(settings)` opens the store that `CATALOGO_DATABASE_URL` names: a SQLite file
(`sqlite.py`) or a PostgreSQL database (`postgres.py`). Both answer alike, down to the byte:
the suite runs whole against each. A database that cannot answer now is `StorageUnavailable`.

Pages are keyset pages: a `Cursor` says "after" or "before" a position in the page's order, so
page 10,000 costs what page 1 costs. A list's `Query` (search.py) is answered the same on both
databases, each choosing per query how to find it fast (docs/search.md).

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
once on every instance. A sign-in is counted before its password is checked (`reserve_sign_in`),
so that tries sent together meet the throttle one after another.
"""

from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

from catalogo.accounts import Papel, Principal, Sessao, Token, Usuario
from catalogo.historia import Autoria, Evento
from catalogo.produtos import Produto
from catalogo.search import END, Ordem, Position, Query
from catalogo.settings import Settings


class StorageUnavailable(Exception):
    """The database cannot answer now (locked too long, disk full, file gone): a 503."""


class QueryTimeout(Exception):
    """A list query ran past CATALOGO_QUERY_TIMEOUT_MS and was stopped: the client is asked to
    narrow it (422), and the worker goes on."""

    def __init__(self, budget_ms: int) -> None:
        super().__init__(f"stopped after {budget_ms} ms")
        self.budget_ms = budget_ms


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


class Saved(NamedTuple):
    """An update: the product as it is now, and whether the write `changed` it. A write whose
    fields are the product's already changes nothing: no new version, no event."""

    produto: Produto
    changed: bool


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


P = TypeVar("P")  # where a page starts or ends: an id, a version, or a search.Position
T = TypeVar("T")


@dataclass(frozen=True)
class Cursor(Generic[P]):
    """A page request: the first page, or the items just after or before a position (a
    product's id in the trash, an event's version in a history, a search.Position in a list)."""

    limit: int
    after: P | None = None
    before: P | None = None


@dataclass(frozen=True)
class Page(Generic[T, P]):
    items: list[T]
    next: Cursor[P] | None
    prev: Cursor[P] | None
    total: int | None = None  # how many in all, counted up to what was asked + 1; None: not asked
    before: int | None = None  # how many come before this page, counted likewise


COUNT_CAP = 10_000  # a page says "mais de 10.000" rather than count a million
COUNT_EXACT = 2**62  # what a JSON client that asks for the total is counted up to


def page_of(
    cursor: Cursor[P],
    items: list[T],
    ids: tuple[P, P] | None,
    older: bool,
    newer: int,
    anywhere: bool,
) -> Page[T, P]:
    """A page and its links, from what lies around it: the positions (`ids`) of its first and
    last items, whether any item is `older` than its last, how many are `newer` than its first
    (counted up to one page and one more), and, for an empty page, whether there is any item
    at all (then the way back is page 1)."""
    if not items or ids is None:
        paged = cursor.after is not None or cursor.before is not None
        return Page([], None, Cursor(cursor.limit) if anywhere and paged else None)
    first, last = ids
    prev: Cursor[P] | None = None
    if newer > cursor.limit:
        prev = Cursor(cursor.limit, before=first)
    elif newer:
        prev = Cursor(cursor.limit)  # what is newer fits on the first page
    return Page(items, Cursor(cursor.limit, after=last) if older else None, prev)


class Walk(NamedTuple):
    """How a list page is read: along which column (id, nome, preco or atualizado_em), which
    way, and from which position (none: from the start)."""

    column: str
    ascending: bool
    position: Position | None


def walk(ordem: Ordem, cursor: Cursor[Position]) -> Walk:
    """A page before a position is read backwards from it, then turned round (`found`); the
    last page (before END) backwards from the end."""
    ascending = not ordem.startswith("-")
    if cursor.before is not None:
        ascending = not ascending
    position = cursor.after if cursor.after is not None else cursor.before
    return Walk(ordem.lstrip("-"), ascending, None if position == END else position)


def whole(cursor: Cursor[Position], rows: list[Any]) -> int | None:
    """How many there are when a first page's rows (a page and one more at most) hold them
    all: counted for free."""
    if cursor.after is None and cursor.before is None and len(rows) <= cursor.limit:
        return len(rows)
    return None


class Counts:
    """Counts as of one state of the database (`stamp`, which every change moves), so that the
    same thing is counted once while nothing changes, and never seen stale: a list query's
    total, or (SQLite) whether a word or a price range is rare enough for one plan."""

    _KEPT = 1_000

    def __init__(self) -> None:
        self._stamp: object = None
        self._known: dict[tuple[Hashable, int], int] = {}

    def known(self, stamp: object, counted: Hashable, up_to: int) -> int | None:
        """The count of `counted` made since the database was last changed, if one was."""
        if stamp != self._stamp or len(self._known) >= self._KEPT:
            self._stamp, self._known = stamp, {}
        return self._known.get((counted, up_to))

    def remember(self, counted: Hashable, up_to: int, total: int) -> int:
        self._known[counted, up_to] = total
        return total


def first_shown(cursor: Cursor[Position], rows: list[tuple[Produto, Position]]) -> Position | None:
    """The position of a page's first product as shown: rows read before a cursor come
    backwards."""
    shown = rows[: cursor.limit]
    if not shown:
        return None
    return shown[-1][1] if cursor.before is not None else shown[0][1]


Statement = tuple[str, list[Any]]


class Counting(NamedTuple):
    """A count a list page still needs: what it counts (its key in Counts) and the statement."""

    counted: Hashable
    statement: Statement


class CountingPlan(Protocol):
    """What a backend's plan of a list query says, for its counts."""

    query: Query

    def count(self, up_to: int) -> Statement: ...

    def page(self, cursor: Cursor[Position], limit: int, counted: bool = False) -> Statement: ...


def countings(
    plan: CountingPlan,
    cursor: Cursor[Position],
    rows: list[tuple[Produto, Position]],
    up_to: int,
    position: bool,
) -> tuple[int | Counting, int | Counting | None]:
    """A page's total and, for its `position`, how many come before it ("51-100 de 119"),
    each up to `up_to` + 1: known for free (a first page that holds them all, nothing before a
    first page), to be counted (Counting), or not asked or not known (None: before an empty
    page past the end)."""
    total = whole(cursor, rows)
    first = first_shown(cursor, rows)
    before: int | Counting | None = None
    if position and first is not None:
        back = Cursor(cursor.limit, before=first)
        before = Counting(("before", plan.query, first), plan.page(back, up_to + 1, True))
    elif position and cursor.after is None and cursor.before is None:
        before = 0
    return (Counting(plan.query, plan.count(up_to)) if total is None else total), before


def found(
    cursor: Cursor[Position],
    rows: list[tuple[Produto, Position]],
    total: int | None,
    newer: int | None = None,
    before: int | None = None,
) -> Page[Produto, Position]:
    """A list's page from up to one page and one more `rows` in the direction walked (for a
    `before` cursor, backwards, and more than a page: fewer, and the caller asks again for the
    first page). What lies before a page reached by `after` is read again only when it is
    cheap (`newer`, counted up to a page and one more: the whole catalog in an order); for a
    search that would cost as much as the page, and its way back may lead to the first page."""
    limit = cursor.limit
    more = len(rows) > limit
    rows = rows[:limit]
    if cursor.before is not None:
        rows.reverse()
    items = [produto for produto, _ in rows]
    paged = cursor.after is not None or cursor.before is not None
    if not items:
        return Page([], None, Cursor(limit) if paged else None, total, before)
    first, last = rows[0][1], rows[-1][1]
    if cursor.before is not None:
        later = None if cursor.before == END else Cursor(limit, after=last)
        return Page(items, later, Cursor(limit, before=first), total, before)
    prev = Cursor(limit, before=first) if paged else None
    if newer is not None and newer <= limit:
        prev = Cursor(limit) if newer else None  # what comes before fits on the first page
    return Page(items, Cursor(limit, after=last) if more else None, prev, total, before)


def unobserved(value: int) -> None:
    """An instrument no one reads: the default."""


@dataclass(frozen=True)
class Instruments:
    """What storage reports to the operators' metrics (metrics.py), as it happens; by default
    no one listens. Each is called with one number."""

    commit_size: Callable[[int], None] = unobserved  # SQLite: the writes of each group commit
    connections_taken: Callable[[int], None] = unobserved  # PostgreSQL: +1 taken, -1 returned


class Storage(Protocol):
    async def find(
        self,
        query: Query,
        cursor: Cursor[Position],
        count: int | None = None,
        position: bool = False,
    ) -> Page[Produto, Position]:
        """A page of the products `query` finds, in its order; with `count`, their number
        (up to `count` + 1) in `total`, and with `position` too, how many come before the
        page in `before` (counted likewise)."""
        ...

    async def get(self, id: int) -> Produto | None: ...

    # Every write appends its event (historia.py) in its own transaction, by `autoria`.
    async def create(self, produto: Produto, autoria: Autoria) -> Produto: ...

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int: ...

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None, autoria: Autoria
    ) -> Saved:
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

    async def trash(self, cursor: Cursor[int]) -> Page[Removal, int]:
        """Removed products, the latest removal first."""
        ...

    async def purge(self, removed_before: float) -> int:
        """Deletes for good the products removed before then (their events stay); says how
        many."""
        ...

    async def history(self, id: int, cursor: Cursor[int]) -> Page[Evento, int]:
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

    async def reserve_sign_in(self, nome: str, address: str, now: float) -> int:
        """Weighs a sign-in against the failures `accounts.throttled` counts and, if it may be
        tried, records it as failed, in one step that no other try of the name or the address
        comes between, on any connection or instance: its id. Raises accounts.Throttled."""
        ...

    async def sign_in_succeeded(self, attempt: int) -> None:
        """The password was right: the try counts as a success."""
        ...

    async def forget_sign_in(self, attempt: int) -> None:
        """The password was never checked: the try counts for nothing."""
        ...

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
            settings.query_timeout_ms,
        )
    from catalogo.storage.sqlite import SQLiteStorage

    return SQLiteStorage(
        settings.sqlite_path,
        settings.lock_timeout_ms,
        instruments.commit_size,
        settings.query_timeout_ms,
    )
