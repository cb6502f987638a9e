"""The URIs of imports (services/importacoes.py, docs/importing.md): the import page and the file
sent to it (`/produtos/importacoes`), an empty template to fill (`…/modelo`), an import's report
(`…/{id}`), its confirmation (`…/{id}/confirmacao`) and its undo (`…/{id}/reversao`). Each
speaks HTML to browsers and JSON to programs; each needs an editor (`Need.WRITE`), so a
catalog without users imports anonymously, as it edits."""

import functools
import os
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import planilhas
from catalogo.domain.errors import (
    BadRequest,
    ChangedSince,
    ImportNotFound,
    ImportRefused,
)
from catalogo.domain.planilhas import CSV, MEDIA_TYPES, CsvRows, Workbook
from catalogo.http.access import Need
from catalogo.http.bodies import body_of, read_form, read_json, read_upload
from catalogo.http.middleware.outermost import unless_gone
from catalogo.http.negotiation import HTML, JSON, body_is_json
from catalogo.http.pages.importacao_pages import (
    NO_STORE,
    import_page,
    imports_page,
    path_of,
    representation,
)
from catalogo.http.pages.notices import after_import, after_undo
from catalogo.http.problems import problem_for, status_of
from catalogo.http.resources import (
    Resource,
    autoria_of,
    idempotency_key,
    json_response,
    link_header,
    negotiate,
    page_number,
)
from catalogo.http.shared import shared_of
from catalogo.services import importacoes
from catalogo.storage import Importacao, Storage

_EDITOR = {"GET": Need.WRITE, "POST": Need.WRITE}
_NO_FILE = "Escolha o arquivo da planilha (CSV ou Excel)."
_ENCODING = "codificacao"


class ImportacoesResource(Resource):
    """/produtos/importacoes: the form (GET), and a file sent to it (POST): its dry run, kept
    for an hour, and 303 to its report (JSON: 201 and the report)."""

    needs = _EDITOR

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        recent = await shared_of(request).storage.importacoes(importacoes.RECENT)
        if media == JSON:
            now = time.time()
            listed = [representation(i, now) for i in recent]
            return json_response({"importacoes": listed}, headers=NO_STORE)
        return imports_page(request, recent)

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        upload = await read_upload(request, "arquivo", (_ENCODING,))
        asked = upload.fields.get(_ENCODING, request.query_params.get(_ENCODING, "utf-8"))
        try:
            codificacao = _encoding(asked)
            if not upload.data:
                raise ImportRefused(_NO_FILE if upload.data is None else "O arquivo está vazio.")
            staged, _ = await unless_gone(
                request,
                importacoes.stage(
                    storage,
                    upload.data,
                    codificacao,
                    upload.nome or "(corpo da requisição)",
                    autoria_of(request, media),
                    time.time(),
                ),
            )
        except ImportRefused as refused:
            if media == JSON:
                raise
            recent = await storage.importacoes(importacoes.RECENT)
            return imports_page(request, recent, refused.message, asked, status_of(refused))
        location = {"Location": path_of(staged)}
        if media == HTML:
            return Response(status_code=303, headers=location)
        page = await importacoes.report_page(storage, staged, 1)
        body = representation(staged, time.time(), page)
        return json_response(body, 201, {**location, **NO_STORE})


def _encoding(asked: str) -> planilhas.Codificacao:
    if asked in ("utf-8", "utf8", "UTF-8"):
        return "utf-8"
    if asked.lower() in ("windows-1252", "cp1252"):
        return "windows-1252"
    raise ImportRefused(f"codificacao deve ser utf-8 ou windows-1252 (recebido «{asked:.40}»).")


class ModeloResource(Resource):
    """/produtos/importacoes/modelo: an empty sheet with the columns an import reads, as the
    export writes them (`formato` csv, the default, or xlsx)."""

    needs = _EDITOR

    async def get(self, request: Request) -> Response:
        formato = request.query_params.get("formato", "csv")
        disposition = 'attachment; filename="catalogo-modelo.{}"'
        if formato == "csv":
            body = CsvRows("csv").header()
            headers = {"Content-Disposition": disposition.format("csv"), **NO_STORE}
            return Response(body, headers=headers, media_type=f"{CSV}; charset=utf-8")
        if formato != "xlsx":
            raise BadRequest(f"formato deve ser csv ou xlsx (recebido «{formato:.50}»).")
        headers = {"Content-Disposition": disposition.format("xlsx"), **NO_STORE}
        return Response(_empty_workbook(), headers=headers, media_type=MEDIA_TYPES["xlsx"])


@functools.cache
def _empty_workbook() -> bytes:
    """The export's xlsx with no product, made once per process."""
    path = Workbook().close()
    try:
        with open(path, "rb") as made:
            return made.read()
    finally:
        os.unlink(path)


class ImportacaoResource(Resource):
    """/produtos/importacoes/{id}: an import, a page of its report at a time (`pagina`)."""

    needs = _EDITOR

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        importacao = await _found(storage, request)
        page = await importacoes.report_page(storage, importacao, page_number(request))
        if media == JSON:
            body = representation(importacao, time.time(), page)
            return json_response(body, headers={**NO_STORE, **_pages(body)})
        return await import_page(request, storage, importacao, page)


def _pages(body: dict[str, Any]) -> dict[str, str]:
    return link_header({k: v for k, v in body["links"].items() if k in ("prev", "next")})


async def _found(storage: Storage, request: Request) -> Importacao:
    importacao = await storage.importacao(request.path_params["id"])
    if importacao is None:
        raise ImportNotFound()
    return importacao


class ConfirmacaoResource(Resource):
    """/produtos/importacoes/{id}/confirmacao: the dry run applied, all of it or nothing, once
    (a second confirmation, or a retry with the same Idempotency-Key, answers as the first).
    A product that moved on since the dry run: 409 and the report made again."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        await _nothing_read(request)
        key = idempotency_key(request)
        importacao = await _found(storage, request)
        autoria = autoria_of(request, media)
        try:
            applied, now = await importacoes.confirm(
                storage, importacao.id, autoria, key, time.time()
            )
        except importacoes.ImportMoved as moved:
            page = await importacoes.report_page(storage, moved.importacao, 1)
            if media == JSON:
                body = representation(moved.importacao, time.time(), page)
                return problem_for(request, 409, moved.message, NO_STORE, importacao=body)
            return await import_page(request, storage, moved.importacao, page, moved.message, 409)
        if media == HTML:
            resumo = applied.resumo
            return after_import(
                request, applied.id, resumo["novos"], resumo["alterados"], resumo["restaurados"]
            )
        replayed = not now and key is not None and applied.chave == key
        headers = {**NO_STORE, **({"Idempotent-Replayed": "true"} if replayed else {})}
        return json_response(representation(applied, time.time()), headers=headers)


async def _nothing_read(request: Request) -> None:
    """A body is optional; one that is sent must be well formed (nothing in it is read)."""
    if await body_of(request):
        if body_is_json(request):
            await read_json(request)
        else:
            await read_form(request, ())


class ReversaoResource(Resource):
    """/produtos/importacoes/{id}/reversao: an applied import undone, all of it or nothing,
    if none of its products changed since; otherwise 409 names them."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        await _nothing_read(request)
        importacao = await _found(storage, request)
        autoria = autoria_of(request, media)
        try:
            undone, count = await importacoes.undo(storage, importacao.id, autoria, time.time())
        except ChangedSince as moved:
            said = moved.message
            if media == JSON:
                return problem_for(request, 409, said, NO_STORE, produtos=moved.ids)
            page = await importacoes.report_page(storage, importacao, 1)
            return await import_page(request, storage, importacao, page, said, 409, moved.ids)
        if media == HTML:
            return after_undo(request, path_of(undone), count)
        return json_response(representation(undone, time.time()), headers=NO_STORE)
