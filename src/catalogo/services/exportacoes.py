"""Exports: the products a query finds, as a CSV file in pieces or an xlsx file on disk, for
the list's links and `catalogo exportar` alike."""

import asyncio
from collections.abc import AsyncGenerator

from catalogo.domain.busca import Query
from catalogo.domain.planilhas import CsvRows, Format, Workbook
from catalogo.domain.produtos import Produto
from catalogo.storage import Storage


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
