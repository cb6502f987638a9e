"""What people do with the catalog, each written once for every door: the pages, the JSON API
and the CLI call these (the service layer of Cosmic Python). Each takes the store and what the
request or the command line said; the rules stay in the pure domain modules (domain/produtos.py,
domain/historico.py, domain/merge.py), the SQL in storage, and HTTP or the terminal in their
callers.
"""

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from catalogo.domain import historico
from catalogo.domain.busca import IDS_MAXIMUM, Query, codigo_key
from catalogo.domain.errors import Conflict
from catalogo.domain.historico import Autoria
from catalogo.domain.merge import Merge, merge
from catalogo.domain.planilhas import CsvRows, Format, Workbook
from catalogo.domain.produtos import Produto, keeping_codigo
from catalogo.storage import Storage, VersionConflict
from catalogo.storage.paging import Cursor

MERGE_ATTEMPTS = 5  # merges in a row that another write overtook before the save gives up
AUTHORS_READ = 200  # the events read to name who changed the product since v


@dataclass(frozen=True)
class Merged:
    """Saved: the product, the fields taken from the others' changes, and who made them;
    `changed` is false when the merge left the product as the others saved it."""

    produto: Produto
    theirs: tuple[str, ...]
    autores: list[str]
    changed: bool = True


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
) -> Merged:
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
        return Merged(saved.produto, merged.theirs, autores, saved.changed)
    # Overtaken every time: the person decides, every field that differs laid out.
    raise MergeConflict(merge(None, typed, current), current, [])


async def csv_export(storage: Storage, query: Query, kind: Format) -> AsyncGenerator[bytes, None]:
    """`query`'s products as a CSV file (domain/planilhas.py), in pieces. The first holds the header
    and the first chunk, so that what fails before it (QueryTimeout) fails before a byte is sent."""
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
