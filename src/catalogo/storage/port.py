"""The storage port: what the service asks of a database, in one Protocol per role, as each
backend is mixed from one class per role (storage/sqlite/store.py and storage/postgres/store.py for
products and keys,
*_search.py for the list, *_history.py for events and the trash, *_accounts.py for accounts).
Paging is paging.py's; choosing and opening a backend, __init__.py's.
"""

from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

from catalogo.domain.busca import Position, Query
from catalogo.domain.contas import (
    NewSession,
    NewToken,
    Papel,
    Principal,
    Sessao,
    Token,
    UserChange,
    Usuario,
)
from catalogo.domain.errors import CatalogoError, Conflict
from catalogo.domain.historico import Autoria, Evento
from catalogo.domain.produtos import Produto
from catalogo.storage import paging
from catalogo.storage.paging import Cursor, Page
from catalogo.storage.port_webhooks import WebhookStore


class NotRemoved(Conflict):
    """A restore of a product that is not removed; `current` is what it is."""

    def __init__(self, current: Produto) -> None:
        super().__init__("O produto não está removido: não há o que restaurar.")
        self.current = current


class Schema(NamedTuple):
    """Where a database's schema stands: its revision (None: never migrated) and the oldest
    code revision that serves it (None: migrated before floors were kept, 0018)."""

    revision: str | None
    floor: str | None


class Removal(NamedTuple):
    """A removed product: when it was removed, by whom (None: anonymously), and what it was;
    from where (`origem`) and in which batch (`lote`: an import's undo is "<id>:desfeita")."""

    removido_em: float
    quem: str | None
    token: str | None
    produto: Produto
    origem: str | None = None
    lote: str | None = None


class VersionConflict(Conflict):
    """The product is no longer at the version the writer expected; `current` is what it is."""

    def __init__(self, current: Produto) -> None:
        super().__init__("Outra pessoa salvou este produto depois da versão em que você se baseou.")
        self.current = current


class Write(NamedTuple):
    """One product a write of many makes (an import, a batch): a new one (`id` None), or `id`
    updated from the version it was seen at (`versao`), its code kept unless `produto` names
    it; or, `removed`, `id` removed (`produto` is then what it was seen as); or, `restored`,
    the removed `id` brought back with `produto`'s fields (an import's row naming its code)."""

    id: int | None
    versao: int | None
    produto: Produto
    removed: bool = False
    restored: bool = False


class Saved(NamedTuple):
    """An update: the product as it is now, and whether the write `changed` it. A write whose
    fields are the product's already changes nothing: no new version, no event."""

    produto: Produto
    changed: bool


class ProductStore(Protocol):
    """Products one by one: every write appends its event (domain/historico.py) in its own
    transaction, by `autoria`."""

    async def get(self, id: int) -> Produto | None: ...

    async def create(self, produto: Produto, autoria: Autoria) -> Produto: ...

    async def create_many(self, produtos: Iterable[Produto], autoria: Autoria) -> int: ...

    async def update(
        self, id: int, produto: Produto, versions: Collection[int] | None, autoria: Autoria
    ) -> Saved:
        """Raises NotFound (also for a removed product) or VersionConflict."""
        ...

    async def write_many(self, writes: Sequence[Write], autoria: Autoria) -> list[Produto]:
        """Every write or none, in one transaction, each with its event (`autoria` says its
        origem and lote). Raises VersionConflict (an update's product moved on from its
        `versao`), NotFound (removed meanwhile) or CodigoTaken: then nothing is written."""
        ...

    async def undo_batch(self, lote: str, autoria: Autoria) -> int:
        """Undoes the batch `lote` in one transaction, each product by its batch's last
        event: one it changed gets its values from before, one it created is removed, one it
        removed is restored; each undo with its event (`autoria`); how many it undid. Every
        product must still be as the batch left it (live or removed as it left it, with the
        same fields), else BatchMoved and nothing undone. NotFound: no such batch.
        CodigoTaken: a code it would give back is another product's now."""
        ...

    async def remove(self, id: int, versions: Collection[int] | None, autoria: Autoria) -> Produto:
        """Removes, keeping the row: the product as it was, at its new version."""
        ...

    async def restore(self, id: int, autoria: Autoria) -> Produto:
        """Raises NotFound (never made, or purged) or NotRemoved."""
        ...


class SearchStore(Protocol):
    """The list: search, filters, order and counts (domain/busca.py, docs/search.md)."""

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

    def export(
        self, query: Query, chunk: int = paging.EXPORT_CHUNK
    ) -> AsyncGenerator[list[Produto], None]:
        """Every product `query` finds, in its order, `chunk` at a time, all as of one moment:
        one read snapshot, held until the iterator ends or is closed. Each chunk's statement
        has the time budget (QueryTimeout)."""
        ...


class HistoryStore(Protocol):
    """Events, the trash and the change feed (domain/historico.py)."""

    async def removed(self, id: int) -> Removal | None:
        """When and by whom a removed product was removed; None if it is not removed."""
        ...

    async def trash(self, cursor: Cursor[int], terms: tuple[str, ...] = ()) -> Page[Removal, int]:
        """Removed products, the latest removal first; with `terms` (busca.terms), those whose
        name, description or code holds every one."""
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


KEY_TTL_SECONDS = 24 * 3600  # how long a key is remembered
ABANDONED_AFTER_SECONDS = 60  # a claim this old that created nothing was left behind


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


class KeyStore(Protocol):
    """Idempotency keys: claimed, then marked with what their request created."""

    async def claim_key(self, key: str, fingerprint: str) -> KeyClaim: ...

    async def create_once(
        self, produto: Produto, key: str, claimed_at: float, autoria: Autoria
    ) -> Produto: ...

    async def release_key(self, key: str, claimed_at: float) -> None: ...


TOKEN_USE_GRAIN_S = 60  # a token's last use is noted at most this often: a write each time


class AccountStore(Protocol):
    """Users, sign-in attempts, sessions and tokens (domain/contas.py). `now` is given by the
    caller, so that every check of one request sees one time."""

    async def users_exist(self) -> bool: ...

    async def users(self) -> list[Usuario]: ...

    async def user(self, nome: str) -> tuple[Usuario, str] | None:
        """The user and their password hash."""
        ...

    async def create_user(self, nome: str, papel: Papel, password_hash: str, now: float) -> Usuario:
        """Raises UserExists."""
        ...

    async def update_user(self, nome: str, change: UserChange) -> Usuario:
        """Raises UnknownUser."""
        ...

    async def reserve_sign_in(self, nome: str, address: str, now: float) -> int:
        """Weighs a sign-in against the failures `contas.throttled` counts and, if it may be
        tried, records it as failed, in one step that no other try of the name or the address
        comes between, on any connection or instance: its id. Raises contas.Throttled."""
        ...

    async def sign_in_succeeded(self, attempt: int) -> None:
        """The password was right: the try counts as a success."""
        ...

    async def forget_sign_in(self, attempt: int) -> None:
        """The password was never checked: the try counts for nothing."""
        ...

    async def create_session(self, session: NewSession) -> None: ...

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

    async def create_token(self, token: NewToken) -> Token: ...

    async def token_principal(self, secret_hash: str, now: float) -> Principal | None:
        """Whose live token this is, if its user is active; notes its use (once a minute)."""
        ...

    async def tokens(self) -> list[Token]: ...

    async def revoke_token(self, id: int, now: float) -> Token | None:
        """None: no token has that id. A token revoked already stays as it was."""
        ...


Estado = Literal["preparada", "aplicada", "desfeita"]
LineKind = Literal["novo", "alterado", "erro"]


@dataclass(frozen=True)
class Importacao:
    """An import as the database keeps it: who staged it and when, until when it may be
    confirmed, what became of it, and its report's counts (`resumo`, JSON)."""

    id: str  # also the `lote` of the events it writes
    arquivo: str
    codificacao: str
    quem: str | None
    token: str | None
    criada_em: float
    expira_em: float
    estado: Estado
    resumo: dict[str, Any]
    chave: str | None = None  # the Idempotency-Key its confirmation came with
    aplicada_em: float | None = None
    aplicada_por: str | None = None
    desfeita_em: float | None = None
    desfeita_por: str | None = None


class StagedLine(NamedTuple):
    """A line of an import's report: its kind and what it holds (JSON text)."""

    tipo: LineKind
    dados: str


class ImportClosed(CatalogoError):
    """The import is not in the state the step needs (confirming one already confirmed, or
    expired; undoing one not applied): `importacao` is what it is now."""

    def __init__(self, importacao: Importacao) -> None:
        super().__init__(f"importacao {importacao.id} is {importacao.estado}")
        self.importacao = importacao


class ImportStore(Protocol):
    """Imports staged between the dry run and the confirmation, on any instance."""

    async def stage_import(
        self, importacao: Importacao, conteudo: bytes, lines: Sequence[StagedLine]
    ) -> None:
        """Keeps a dry run (its file and its report's lines), in place of an earlier one of
        the same id while that is still `preparada` (else ImportClosed); forgets the files
        and lines of imports that expired before `importacao.criada_em`."""
        ...

    async def importacao(self, id: str) -> Importacao | None: ...

    async def removed_codes(self, keys: Collection[str]) -> dict[str, Produto]:
        """Of these codes (by codigo_key), those a removed product keeps: the product, by key."""
        ...

    async def importacoes(self, limit: int) -> list[Importacao]:
        """The latest staged, newest first."""
        ...

    async def import_file(self, id: str) -> bytes | None:
        """The file of an import still `preparada`."""
        ...

    async def import_lines(
        self, id: str, tipo: LineKind, offset: int, limit: int
    ) -> list[dict[str, Any]]:
        """A stretch of one kind of the report's lines, in the file's order."""
        ...

    async def confirm_import(
        self,
        id: str,
        write_of: Callable[[str], Write],
        autoria: Autoria,
        chave: str | None,
        now: float,
    ) -> int:
        """Applies the import's `novo` and `alterado` lines in the file's order, each made a
        Write by `write_of`, as `write_many` does (`autoria.lote` is `id`), and marks it
        `aplicada`, in one transaction, dropping its file and lines: how many it wrote. The
        lines are read a few at a time, so no import is ever held whole. Raises ImportClosed
        (not `preparada`, or expired at `now`), or what `write_many` raises; then nothing is
        written."""
        ...

    async def undo_import(self, id: str, autoria: Autoria, now: float) -> int:
        """Undoes the import's batch (`undo_batch`) and marks it `desfeita`, in one transaction.
        Raises ImportClosed (not `aplicada`), or what `undo_batch` raises."""
        ...

    async def batch_events(self, lote: str, offset: int, limit: int) -> list[Evento]:
        """A stretch of a batch's events, in the order they were written."""
        ...


class Storage(
    ProductStore,
    SearchStore,
    HistoryStore,
    KeyStore,
    AccountStore,
    ImportStore,
    WebhookStore,
    Protocol,
):
    """A whole database: every role, and its schema and its end."""

    async def schema(self) -> "Schema": ...

    async def close(self) -> None: ...
