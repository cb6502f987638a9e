"""The URIs of what happened to products: a product's history (`/produtos/{id}/historico`),
the trash (`/produtos/removidos`), bringing a removed product back (`/produtos/{id}/
restauracao`) and the change feed (`/produtos/eventos`). Storage keeps the events
(http/resources/historico.py); these translate them to HTTP. Who changed what is for staff
(`Need.STAFF`): once users exist, anonymous visitors see the catalog but not its history."""

import urllib.parse

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import historico
from catalogo.domain.busca import terms
from catalogo.domain.errors import BadRequest, NothingToRestore, ProductNotFound
from catalogo.domain.produtos import parse_id, representation
from catalogo.domain.text import as_datetime
from catalogo.http.access import Need
from catalogo.http.bodies import body_of, read_form, read_json
from catalogo.http.identity import visitor
from catalogo.http.listing import (
    RETURN_PARAMETER,
    Listing,
    Paging,
    returning_to_trash,
    searched,
    trash_search,
)
from catalogo.http.negotiation import HTML, JSON, VARY, body_is_json
from catalogo.http.pages.historico_pages import history_page, trash_page
from catalogo.http.pages.notices import to_the_list
from catalogo.http.resources import (
    Resource,
    autoria_of,
    conflict,
    etag,
    json_response,
    link_header,
    negotiate,
    page_cursors,
    page_links,
)
from catalogo.http.shared import shared_of
from catalogo.services import produtos
from catalogo.storage import NotRemoved
from catalogo.storage.paging import Cursor

BAD_VERSION_CURSOR = "O parâmetro «{}» deve ser o número de uma versão do produto."
BAD_FEED_AFTER = (
    "depois deve ser o número de um evento (0 para começar do primeiro), como no link next."
)
BAD_FEED_LIMIT = "limite deve ser um número de 1 a {}."
NOT_REMOVED = "O produto não está removido: não há o que restaurar."


TRASH_PATH = "/produtos/removidos"
TRASH_PARAMETER = "removidos"  # a restore form's way back to the trash page it came from
FORMER_TRASH_PARAMETER = "lixeira"  # its name before, still taken
FEED_PATH = "/produtos/eventos"
FEED_LIMIT = 100
FEED_LIMIT_MAX = 1000
_STAFF = {"GET": Need.STAFF, "HEAD": Need.STAFF}
_NO_STORE = {"Cache-Control": "no-cache", **VARY}


class HistoricoResource(Resource):
    """/produtos/{id}/historico: a product's events, newest first, paged by version. A removed
    product keeps its history (and is named so); a purged or never made one is 404."""

    needs = _STAFF

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = shared_of(request).storage
        produto = await storage.get(id)
        removal = None if produto is not None else await storage.removed(id)
        if produto is None and removal is None:
            raise ProductNotFound(id)
        versions = Paging.parse(request.query_params, BAD_VERSION_CURSOR)
        cursor = Cursor(shared_of(request).settings.page_size, versions.after, versions.before)
        page = await storage.history(id, cursor)
        links = page_links(f"/produtos/{id}/historico", page)
        headers = {**_NO_STORE, **link_header(links)}
        if media == JSON:
            eventos = [historico.representation(e) for e in page.items]
            body = {"eventos": eventos, "links": links, "cursores": page_cursors(page)}
            return json_response(body, headers=headers)
        return history_page(visitor(request), produto, removal, page, links, headers)


class RemovidosResource(Resource):
    """/produtos/removidos: the trash, the latest removal first, paged by product."""

    needs = _STAFF

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        paging = Paging.parse(request.query_params)
        q = trash_search(request.query_params)
        shared = shared_of(request)
        page = await shared.storage.trash(
            Cursor(shared.settings.page_size, paging.after, paging.before), terms(q)
        )
        links = page_links(searched(TRASH_PATH, q), page)
        headers = {**_NO_STORE, **link_header(links)}
        if media == JSON:
            removidos = [
                {
                    "produto": representation(r.produto),
                    "removido_em": as_datetime(r.removido_em),
                    "quem": r.quem,
                    "token": r.token,
                }
                for r in page.items
            ]
            body = {"removidos": removidos, "links": links, "cursores": page_cursors(page)}
            return json_response(body, headers=headers)
        days = shared.settings.trash_days
        return trash_page(request, page, links, paging, days, headers, q)


class RestauracaoResource(Resource):
    """/produtos/{id}/restauracao: a removed product comes back with its id and a new version.
    A browser returns to the list page it came from (`lista`), or to the page of removed
    products (`removidos`, or `lixeira`, its former name), with a notice; JSON gets the
    product."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        listing, trash = Listing(), None
        if await body_of(request):  # a body is optional; one that is sent must be well formed
            if body_is_json(request):
                await read_json(request)  # nothing in it is read
            else:
                fields = (RETURN_PARAMETER, TRASH_PARAMETER, FORMER_TRASH_PARAMETER)
                form = await read_form(request, fields)
                listing = Listing.returning_to(form)
                named = next((f for f in fields[1:] if f in form), None)
                if named is not None:  # rebuilt from its parsed cursors, never echoed
                    trash = returning_to_trash(form, named, TRASH_PATH)
        try:
            restored = await produtos.restore(
                shared_of(request).storage, id, autoria_of(request, media)
            )
        except NotRemoved as failure:
            if media == JSON:
                return conflict(request, NOT_REMOVED, failure.current)
            raise NothingToRestore(failure.current.nome) from None
        if media == HTML:
            return to_the_list(request, "restaurado", restored, listing, back=trash)
        return json_response(
            representation(restored), headers={**etag(request, restored, JSON), **VARY}
        )


class EventosResource(Resource):
    """/produtos/eventos: every product's events in id order, for programs that keep a copy
    of the catalog: follow `next` (also when a page is empty) and never miss a committed event
    (storage makes them visible in id order on both databases)."""

    needs = _STAFF

    async def get(self, request: Request) -> Response:
        negotiate(request, (JSON,))
        after = request.query_params.get("depois", "0")
        after_id = 0 if after == "0" else parse_id(after)
        if after_id is None:
            raise BadRequest(BAD_FEED_AFTER)
        limit = parse_id(request.query_params.get("limite", str(FEED_LIMIT)))
        if limit is None or limit > FEED_LIMIT_MAX:
            raise BadRequest(BAD_FEED_LIMIT.format(FEED_LIMIT_MAX))
        eventos = await shared_of(request).storage.events(after_id, limit)
        last = eventos[-1].id if eventos else after_id
        links = {"next": f"{FEED_PATH}?{urllib.parse.urlencode({'depois': last, 'limite': limit})}"}
        body = {
            "eventos": [historico.representation(e) for e in eventos],
            "links": links,
            "cursores": {"next": {"depois": last}},
        }
        return json_response(body, headers={**_NO_STORE, **link_header(links)})
