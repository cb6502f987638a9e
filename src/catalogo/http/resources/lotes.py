"""The URIs of batches (services/lotes.py, docs/batches.md): `/produtos/lote` takes what the list's
form (or a program) asks and answers with the confirmation, or, confirmed, applies it;
`/produtos/lote/{id}` is a batch and the products it changed; `…/reversao` undoes it. Each
needs an editor (`Need.WRITE`), as every change does."""

import asyncio
import urllib.parse
from typing import Any

from starlette.datastructures import ImmutableMultiDict
from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import historico
from catalogo.domain.errors import ChangedSince, Conflict, ListingError, NotFound, QueryTimeout
from catalogo.domain.lotes import (
    BatchNotFound,
    BatchRefused,
    LoteInvalido,
    parse_pedido,
)
from catalogo.domain.produtos import parse_id
from catalogo.http import templating
from catalogo.http.access import Need
from catalogo.http.bodies import body_of, form_pairs, read_form, read_json
from catalogo.http.identity import principal, visitor
from catalogo.http.listing import RETURN_PARAMETER, Listing
from catalogo.http.negotiation import HTML, JSON, body_is_json
from catalogo.http.pages.historico_pages import event_lines
from catalogo.http.pages.list_pages import BulkForm, Found, list_page, typed
from catalogo.http.pages.notices import after_batch, after_batch_undone
from catalogo.http.problems import problem_for
from catalogo.http.resources import (
    Resource,
    autoria_of,
    idempotency_key,
    json_response,
    negotiate,
    page_number,
)
from catalogo.http.shared import shared_of
from catalogo.services import lotes
from catalogo.storage.paging import COUNT_CAP, Cursor

BATCHES_PATH = "/produtos/lote"
PAGE = 100  # a batch's products on one page of it
_NO_STORE = {"Cache-Control": "no-store", "Vary": "Accept, Cookie"}
_EDITOR = {"GET": Need.WRITE}
_FIELDS = ("acao", "percentual", "preco", "busca", "selecao", "confirmar", RETURN_PARAMETER)


class LoteResource(Resource):
    """/produtos/lote: the confirmation of what was asked (nothing written), or, with
    `confirmar`, the batch applied: 303 back to the list it came from with the undo (JSON:
    200 and what was done). A product that moved on since the confirmation: 409 and a fresh
    one."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        shared = shared_of(request)
        storage = shared.storage
        asked = await _asked(request)
        listing = Listing.returning_to(asked)
        most = shared.settings.batch_max
        key = idempotency_key(request)
        who = principal(request)
        asker = key or (who.scope if who is not None else "")
        try:
            pedido = parse_pedido(
                asked.get("acao", ""), asked.get("percentual"), asked.get("preco")
            )
            batch = lotes.Asked(
                pedido,
                asked["ids"],
                asked.get("versoes", {}),
                asked.get("busca"),
                asked.get("selecao") or None,
            )
            if asked.get("confirmar") and (batch.selecao or media == JSON):
                done = await lotes.confirm_asked(
                    storage, batch, asker, key is not None, autoria_of(request, media), most
                )
                if media == HTML:
                    return after_batch(request, listing, done.lote, pedido, done.total)
                body = {"lote": done.lote, "total": done.total, "links": _links(done.lote)}
                replayed = {"Idempotent-Replayed": "true"} if not done.now and key else {}
                return json_response(body, headers={**_NO_STORE, **replayed})
            planned = await lotes.preview(storage, batch, asker, most)
        except LoteInvalido as invalid:
            if media == HTML:  # the list it came from again, as it was sent, with what was wrong
                return await _list_again(request, listing, asked, invalid)
            raise BatchRefused(str(invalid)) from None
        except lotes.BatchMoved as moved:
            fresh = await lotes.replan(storage, batch, asker, most, moved)
            if media == JSON:
                return problem_for(
                    request,
                    409,
                    moved.message,
                    _NO_STORE,
                    produtos=moved.ids,
                    lote=lotes.representation(fresh),
                )
            return await _confirmation(request, fresh, asked, listing, moved.message, 409)
        if media == JSON:
            return json_response(lotes.representation(planned), headers=_NO_STORE)
        return await _confirmation(request, planned, asked, listing)


async def _list_again(
    request: Request, listing: Listing, asked: dict[str, Any], invalid: LoteInvalido
) -> Response:
    """The list page the form was on, its choices and what was typed kept, the message beside
    the field it is about (422); the search form alone if that list cannot be read now."""
    bulk = BulkForm(
        asked.get("acao", ""),
        asked.get("percentual", ""),
        asked.get("preco", ""),
        frozenset(asked["ids"]),
        invalid.campo,
        invalid.beside,
    )
    shared = shared_of(request)
    cursor = Cursor(shared.settings.page_size, listing.after, listing.before)
    try:
        page = await shared.storage.find(listing.query, cursor, COUNT_CAP, position=True)
    except QueryTimeout as stopped:
        sent = typed(ImmutableMultiDict(urllib.parse.parse_qsl(listing.search)))
        return list_page(request, None, sent, ListingError(str(stopped)), None, 422)
    around = (("prev", page.prev), ("next", page.next))
    links = {rel: listing.at(c).url for rel, c in around if c}
    return list_page(request, Found(listing, page, links), bulk=bulk)


async def _asked(request: Request) -> dict[str, Any]:
    """What the form or the JSON body asks, the same way: `ids` a list of ids, `versoes` the
    versions a program sent with them (by id), the rest text."""
    if body_is_json(request):
        body = await read_json(request)
        asked: dict[str, Any] = {
            k: str(body[k]) for k in _FIELDS if body.get(k) not in (None, False)
        }
        ids, versoes = _ids_of_json(body.get("ids"))
        asked["ids"], asked["versoes"] = ids, versoes
        if "confirmar" in asked and body.get("confirmar") is not True:
            raise BatchRefused("confirmar deve ser true.")
        return asked
    form = await read_form(request, _FIELDS)
    asked = dict(form)
    ids = []
    for name, value in await form_pairs(request):
        if name == "id":
            id = parse_id(value)
            if id is None:
                raise BatchRefused(f"«{value:.20}» não é o número de um produto.")
            ids.append(id)
    asked["ids"] = ids
    return asked


def _ids_of_json(value: Any) -> tuple[list[int], dict[int, int]]:
    if value is None:
        return [], {}
    if not isinstance(value, list):
        raise BatchRefused('ids deve ser uma lista: [12, 15] ou [{"id": 12, "versao": 3}].')
    ids: list[int] = []
    versoes: dict[int, int] = {}
    for item in value:
        id, versao = (
            (item.get("id"), item.get("versao")) if isinstance(item, dict) else (item, None)
        )
        if type(id) is not int or parse_id(str(id)) is None:
            raise BatchRefused(f"ids: {item!s:.40} não é o número de um produto.")
        if versao is not None:
            if type(versao) is not int or parse_id(str(versao)) is None:
                raise BatchRefused(f"ids: a versão de {id} deve ser um número.")
            versoes[id] = versao
        ids.append(id)
    return ids, versoes


def _links(lote: str) -> dict[str, str]:
    return {"self": f"{BATCHES_PATH}/{lote}", "reversao": f"{BATCHES_PATH}/{lote}/reversao"}


async def _confirmation(
    request: Request,
    planned: lotes.Plan,
    asked: dict[str, Any],
    listing: Listing,
    erro: str | None = None,
    status_code: int = 200,
) -> Response:
    """The page that says what the batch would do, product by product, and confirms it. A
    page of up to 10,000 rows is rendered off the event loop."""
    made = templating.load()
    page = await asyncio.to_thread(
        made.templates["produtos/lote_confirmacao.html"].render,
        {
            "quem": visitor(request),
            "plano": planned,
            "pedido": planned.pedido,
            "busca": asked.get("busca"),
            "lista": listing.encoded,
            "volta": listing.url,
            "erro": erro,
            "percentual": asked.get("percentual", ""),
            "preco": asked.get("preco", ""),
        },
    )
    return Response(page, status_code, _NO_STORE, media_type="text/html")


class LoteItemResource(Resource):
    """/produtos/lote/{id}: a batch's products, each as its history says the change."""

    needs = _EDITOR

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        lote = request.path_params["id"]
        pagina = page_number(request)
        if not await lotes.applied(storage, lote):
            raise BatchNotFound()
        events = await storage.batch_events(lote, (pagina - 1) * PAGE, PAGE + 1)
        more = len(events) > PAGE
        events = events[:PAGE]
        told = await lotes.told(storage, lote, events, shared_of(request).settings.batch_max)
        if media == JSON:
            body = {
                "lote": lote,
                "desfeito": told.undone is not None,
                "eventos": [historico.representation(e) for e in events],
                "links": {
                    **_links(lote),
                    **({"next": f"{BATCHES_PATH}/{lote}?pagina={pagina + 1}"} if more else {}),
                },
            }
            return json_response(body, headers=_NO_STORE)
        return templating.load().render(
            "produtos/lote.html",
            headers=_NO_STORE,
            quem=visitor(request),
            lote=lote,
            resumo=told.said,
            desfeito=told.undone,
            linhas=event_lines(events),
            primeiro=events[0] if events else None,
            pagina=pagina,
            mais=more,
        )


class LoteReversaoResource(Resource):
    """/produtos/lote/{id}/reversao: the batch undone, all of it or nothing, if none of its
    products changed since; 409 names those that did."""

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        storage = shared_of(request).storage
        lote = request.path_params["id"]
        listing = Listing()
        if await body_of(request):
            if body_is_json(request):
                await read_json(request)
            else:
                listing = Listing.returning_to(await read_form(request, (RETURN_PARAMETER,)))
        try:
            count = await lotes.undo(storage, lote, autoria_of(request, media))
        except ChangedSince as moved:
            said = ChangedSince(moved.ids, "do lote").message
            if media == JSON:
                return problem_for(request, 409, said, _NO_STORE, produtos=moved.ids)
            raise Conflict(said) from None
        except NotFound:
            raise BatchNotFound() from None
        if media == HTML:
            return after_batch_undone(request, listing, count)
        return json_response({"lote": lote, "desfeitos": count}, headers=_NO_STORE)
