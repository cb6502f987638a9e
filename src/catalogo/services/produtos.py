"""What people do with the catalog, each written once for every door: the pages, the JSON API
and the CLI call these (the service layer of Cosmic Python). Each takes the store and what the
request or the command line said; the rules stay in the pure domain modules (domain/produtos.py,
domain/historico.py, domain/merge.py), the SQL in storage, and HTTP or the terminal in their
callers.
"""

from collections.abc import Collection
from typing import Any, Literal, NamedTuple

from catalogo.domain import historico
from catalogo.domain.busca import IDS_MAXIMUM, Query, codigo_key
from catalogo.domain.errors import (
    CatalogoError,
    Conflict,
    NotFound,
    PreconditionFailed,
    ProductNotFound,
    ProductRemoved,
)
from catalogo.domain.historico import Autoria
from catalogo.domain.merge import Merge, merge
from catalogo.domain.produtos import Produto, keeping_codigo
from catalogo.domain.text import format_moment
from catalogo.services.idempotency import Created, create_once
from catalogo.storage import Storage, VersionConflict
from catalogo.storage.paging import Cursor

MERGE_ATTEMPTS = 5  # merges in a row that another write overtook before the save gives up
AUTHORS_READ = 200  # the events read to name who changed the product since v


class Expected(NamedTuple):
    """The versions a write may find, as the request says: If-Match was sent (`if_match`), the
    versions its tags name (`accepted`; None when any will do), and the version the body was
    based on (`based_on`, a form's or JSON's `versao`). A tuple, as `Updated`: a frozen
    dataclass's setattr per field showed in an update's instructions."""

    if_match: bool = False
    accepted: Collection[int] | None = None
    based_on: int | None = None

    @property
    def versions(self) -> Collection[int] | None:
        """What storage checks in the write's own statement: If-Match's, `based_on`, or both."""
        if self.based_on is None:
            return self.accepted
        return {self.based_on} if self.accepted is None else {self.based_on} & set(self.accepted)

    def admits(self, versao: int | None) -> bool:
        return self.accepted is None or versao in self.accepted


class Updated(NamedTuple):
    """Saved: the product; whether the write `changed` it (fields it already had make no new
    version); and for a merged edit, the fields taken from the others' changes (`theirs`) and
    who made them."""

    produto: Produto
    changed: bool = True
    theirs: tuple[str, ...] = ()
    autores: tuple[str, ...] = ()


class MergeConflict(Conflict):
    """Both sides changed a field differently: `merged` against `current`, for a choice."""

    def __init__(self, merged: Merge, current: Produto, autores: list[str]) -> None:
        super().__init__(f"produto {current.id}: {', '.join(merged.conflicts)}")
        self.merged = merged
        self.current = current
        self.autores = autores


class Since(NamedTuple):
    """What a person's page missed: the version it was opened at (None if it is not stored),
    and who changed the product after it."""

    base: historico.Fields | None
    autores: list[str]


async def create(
    storage: Storage, produto: Produto, autoria: Autoria, key: str | None = None, media: str = ""
) -> Created:
    """A new product; with an Idempotency-Key (`key`, for a request made as `media`), once per
    key, a retry answered with the product as the first request made it (services/idempotency.py).
    Raises CodigoTaken."""
    if key is None:
        return Created(await storage.create(produto, autoria))
    return await create_once(storage, key, media, produto, autoria)


async def update(
    storage: Storage,
    id: int,
    produto: Produto,
    expected: Expected,
    autoria: Autoria,
    merging: bool = False,
) -> Updated:
    """Product `id` saved as `produto`, if it is at a version `expected` allows. One that has
    moved on past If-Match is PreconditionFailed; past `based_on`, a VersionConflict, unless
    `merging` (a person's form) and If-Match allows what is saved now: then the edit is merged
    with it (save_merged). Raises ProductNotFound, ProductRemoved, MergeConflict, CodigoTaken."""
    try:
        saved = await storage.update(id, produto, expected.versions, autoria)
    except NotFound:
        raise await missing(storage, id, expected) from None
    except VersionConflict as failure:
        if not expected.admits(failure.current.versao):
            raise PreconditionFailed() from None
        if not merging or expected.based_on is None:
            raise
        try:
            return await save_merged(storage, produto, expected.based_on, failure.current, autoria)
        except NotFound:
            raise await missing(storage, id, expected) from None
    return Updated(saved.produto, saved.changed)


async def remove(storage: Storage, id: int, expected: Expected, autoria: Autoria) -> Produto:
    """Product `id` removed (to the trash), if it is at a version `expected` allows: otherwise
    PreconditionFailed (past If-Match) or VersionConflict (past `based_on`). Raises
    ProductNotFound or ProductRemoved."""
    try:
        return await storage.remove(id, expected.versions, autoria)
    except NotFound:
        raise await missing(storage, id, expected) from None
    except VersionConflict as failure:
        if not expected.admits(failure.current.versao):
            raise PreconditionFailed() from None
        raise


async def restore(storage: Storage, id: int, autoria: Autoria) -> Produto:
    """A removed product back, with its id and a new version. Raises ProductNotFound, or
    NotRemoved with the product as it is."""
    try:
        return await storage.restore(id, autoria)
    except NotFound:
        raise ProductNotFound(id) from None


async def missing(storage: Storage, id: int, expected: Expected | None = None) -> CatalogoError:
    """Why product `id` is not there: removed (when, by whom) or never made. Under If-Match
    nothing can match (RFC 9110 §13.1.1)."""
    if expected is not None and expected.if_match:
        return PreconditionFailed()
    removal = await storage.removed(id)
    if removal is not None:
        return ProductRemoved(id, format_moment(removal.removido_em), removal.quem)
    return ProductNotFound(id)


async def since(storage: Storage, id: int, based_on: int) -> Since:
    found = await storage.versions(id, based_on, AUTHORS_READ)
    base = found[0].depois if found and found[0].versao == based_on else None
    return Since(base, historico.authors_of(e for e in found if e.versao > based_on))


async def save_merged(
    storage: Storage,
    typed: Produto,
    based_on: int,
    current: Produto,
    autoria: Autoria,
) -> Updated:
    """An edit opened at version `based_on`, merged (domain/merge.py) with the product as saved now
    and saved; merged again from `based_on` if another write lands first. Raises
    MergeConflict (also when the product kept moving through every attempt) or NotFound
    (removed meanwhile). JSON clients never come here: they keep strict versions (409/412)."""
    for _ in range(MERGE_ATTEMPTS):
        assert current.id is not None and current.versao is not None  # noqa: S101 - stored
        base, autores = await since(storage, current.id, based_on)
        seen = current if base is None else historico.produto_of(base)
        merged = merge(base, keeping_codigo(typed, seen), current)
        if merged.conflicts:
            raise MergeConflict(merged, current, autores)
        try:
            saved = await storage.update(current.id, merged.produto, {current.versao}, autoria)
        except VersionConflict as overtaken:
            current = overtaken.current
            continue
        return Updated(saved.produto, saved.changed, merged.theirs, tuple(autores))
    # Overtaken every time: the person decides, every field that differs laid out.
    raise MergeConflict(merge(None, typed, current), current, [])


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
