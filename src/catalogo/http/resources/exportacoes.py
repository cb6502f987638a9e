"""/produtos as a file (`formato=csv`, `formato=xlsx`, `Accept: text/csv` or the xlsx type):
the list's whole result, with its own query and reading rules, streamed as CSV, or built as an
xlsx file and then sent (services/ writes both). http/resources/produtos.py answers the list and
calls this."""

import asyncio
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from catalogo.domain.planilhas import MEDIA_TYPES, Format, filename
from catalogo.http.listing import Listing
from catalogo.http.negotiation import VARY
from catalogo.http.shared import shared_of
from catalogo.services.exportacoes import csv_export, xlsx_export

_BLOCK = 256 * 1024


async def export_response(request: Request, listing: Listing, kind: Format) -> Response:
    """The file. What fails before its first byte is raised (QueryTimeout, planilhas.TooManyRows)
    for the list's own answer; a failure later cuts the download short, which every client
    sees as an incomplete file."""
    headers = {
        "Content-Disposition": f'attachment; filename="{filename(kind, time.time())}"',
        "Cache-Control": "no-store",
        **VARY,
    }
    media = MEDIA_TYPES[kind]
    if request.method == "HEAD":
        return Response(headers=headers, media_type=media)
    storage = shared_of(request).storage
    if kind == "xlsx":
        path = await xlsx_export(storage, listing.query)
        headers["Content-Length"] = str(os.path.getsize(path))
        return StreamingResponse(_sent(path), headers=headers, media_type=media)
    pieces = csv_export(storage, listing.query, kind)
    try:
        first = await anext(pieces)
    except BaseException:
        await pieces.aclose()
        raise
    return StreamingResponse(_then(first, pieces), headers=headers, media_type=media)


async def _then(first: bytes, rest: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    try:
        yield first
        async for piece in rest:
            yield piece
    finally:
        await rest.aclose()


async def _sent(path: str) -> AsyncIterator[bytes]:
    """The file, read off the event loop, then removed (a FileResponse's background task could
    remove it before a server that sends files itself, as Granian does, has opened it)."""
    try:
        with open(path, "rb") as file:
            while block := await asyncio.to_thread(file.read, _BLOCK):
                yield block
    finally:
        os.unlink(path)
