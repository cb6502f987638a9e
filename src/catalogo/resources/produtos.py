"""The product's URIs: the list and creation, the new-product form, one product, and the page
that asks before a removal.

A browser's successful write answers 303 to the list with a one-time notice kept in a cookie,
so that reloading the list never repeats the write and no GET writes anything. JSON clients
get 201 + `Location`, 200 with the product, or 204.

Versions (conditional.py): the edit page and the JSON product carry an ETag of the product's
version; a write with `If-Match` fails with 412 once the product has moved on, and a form or
JSON body that names the version it was based on (`produto.versao`, `versao`) fails with 409
and shows what is saved now. `Idempotency-Key` on creation makes a retry return the first
answer (idempotency.py).
"""

import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo import conditional, errors, historia, idempotency, pages
from catalogo.access import Need
from catalogo.accesslog import request_id
from catalogo.bodies import read_form, read_json
from catalogo.historia import Autoria
from catalogo.identity import Visitante, principal, visitor
from catalogo.listing import RETURN_PARAMETER, Listing
from catalogo.negotiation import HTML, JSON, body_is_json
from catalogo.produtos import (
    CAMPOS,
    ID_MAXIMO,
    Produto,
    base_de,
    campos_mudados,
    formatar_preco,
    ler_base,
    ler_id,
    preco_no_campo,
    representacao,
    validar,
)
from catalogo.resources import (
    VARY,
    Resource,
    conflict,
    json_response,
    negotiate,
    services,
)
from catalogo.storage import Cursor, NotFound, VersionConflict

NOTICE_COOKIE = "aviso"
_NOTICES = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "removido": "Produto «{}» removido.",
    "restaurado": "Produto «{}» restaurado.",
}
_EMPTY = dict.fromkeys(CAMPOS, "")
# Pages that exist only to change the catalog: a person who may not is sent to sign in first,
# rather than after typing.
_FOR_WRITERS = {"GET": Need.WRITE, "HEAD": Need.WRITE}
_FORM_FIELDS = frozenset(
    [*(f"produto.{field}" for field in (*CAMPOS, "versao", "base")), RETURN_PARAMETER]
)


@dataclass(frozen=True)
class _Submitted:
    """What a write's body says: the fields, and for a form from our pages, the version and
    base it was opened with and the list page to return to."""

    fields: dict[str, Any]
    based_on: int | None = None
    base: str | None = None
    listing: Listing = field(default_factory=Listing)


class ProdutosResource(Resource):
    """/produtos: the list (GET) and creation (POST)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        listing = Listing.parse(request.query_params)
        shared = services(request)
        limit = shared.settings.page_size
        page = await shared.storage.page(Cursor(limit, listing.after, listing.before))
        links = {
            rel: Listing(cursor.after, cursor.before).url
            for rel, cursor in (("prev", page.prev), ("next", page.next))
            if cursor
        }
        headers = {"Cache-Control": "no-cache", **VARY}
        if links:
            headers["Link"] = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())
        if media == JSON:
            produtos = [representacao(p) for p in page.produtos]
            return json_response({"produtos": produtos, "links": links}, headers=headers)
        notice = _notice(request)
        if notice:
            headers["Cache-Control"] = "no-store"
        response = pages.load().render(
            "produtos/lista.html",
            headers=headers,
            pagina=page,
            links=links,
            aviso=notice,
            primeira_pagina=not listing.query,
            lista=listing.query,
            retorno=listing.carried(""),
            quem=visitor(request),
        )
        if NOTICE_COOKIE in request.cookies:
            response.delete_cookie(NOTICE_COOKIE, httponly=True, samesite="lax")
        return response

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        submitted = await _submitted(request)
        produto, problems = validar(submitted.fields)
        if produto is None:
            if media == JSON:
                return errors.invalid_fields(request, problems)
            values = {**_EMPTY, **submitted.fields}
            return _new_page(visitor(request), submitted.listing, values, problems, 422)

        def answer(created: Produto) -> Response:
            if media == HTML:
                # The first page of the list, where the new product shows up.
                return to_the_list(request, "adicionado", created, Listing())
            headers = {"Location": f"/produtos/{created.id}", **etag(created, JSON), **VARY}
            return json_response(representacao(created), 201, headers)

        storage = services(request).storage
        key = idempotency.key_of(request, principal(request))
        autoria = _autoria(request, media)
        if key is None:
            return answer(await storage.create(produto, autoria))
        return await idempotency.create_once(storage, key, media, produto, autoria, answer)


class NovoProdutoResource(Resource):
    """/produtos/novo: the empty form, which posts to /produtos: only for those who may."""

    needs = _FOR_WRITERS

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return _new_page(visitor(request), Listing.returning_to(request.query_params), _EMPTY, {})


class ProdutoResource(Resource):
    """/produtos/{id}: the product (GET; HTML is its edit page), update (PUT), removal (DELETE)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        produto = await services(request).storage.get(id)
        conditional.check(request, produto)
        if produto is None:
            raise await _not_found(request, id)
        headers = {**etag(produto, media), "Cache-Control": "no-cache", **VARY}
        if conditional.not_modified(request, headers["ETag"]):
            return Response(status_code=304, headers=headers)
        if media == JSON:
            return json_response(representacao(produto), headers=headers)
        listing = Listing.returning_to(request.query_params)
        return _edit_page(visitor(request), produto, _values(produto), {}, listing, headers=headers)

    async def put(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = services(request).storage
        if conditional.has_preconditions(request):  # checked again by the write, in SQL
            conditional.check(request, await storage.get(id))
        submitted = await _submitted(request)
        produto, problems = validar(submitted.fields)
        if produto is None:
            if media == JSON:
                return errors.invalid_fields(request, problems)
            values = {
                **_EMPTY,
                **submitted.fields,
                "versao": submitted.based_on or "",
                "base": submitted.base or "",
            }
            existing = await _existing(request)
            return _edit_page(visitor(request), existing, values, problems, submitted.listing, 422)
        try:
            updated = await storage.update(
                id,
                produto,
                conditional.expected_versions(request, submitted.based_on),
                _autoria(request, media),
            )
        except (NotFound, VersionConflict) as failure:
            return await _failed_write(request, media, failure, submitted, produto)
        if media == HTML:
            return to_the_list(request, "atualizado", updated, submitted.listing)
        return json_response(representacao(updated), headers={**etag(updated, JSON), **VARY})

    async def delete(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = services(request).storage
        if conditional.has_preconditions(request):
            conditional.check(request, await storage.get(id))
        submitted = await _removal(request)
        expected = conditional.expected_versions(request, submitted.based_on)
        try:
            removed = await storage.delete(id, expected, _autoria(request, media))
        except (NotFound, VersionConflict) as failure:
            return await _failed_write(request, media, failure, submitted, None)
        if media == HTML:
            return to_the_list(request, "removido", removed, submitted.listing)
        return Response(status_code=204, headers=VARY)


class RemocaoResource(Resource):
    """/produtos/{id}/remocao: asks before a removal, for browsers without JavaScript. The page
    only shows a form; the removal itself is that form's POST with `_method=DELETE`. It shows
    the product as saved now, says so when it moved on past the `versao` of the page the person
    came from, and removes the version it shows."""

    needs = _FOR_WRITERS

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        seen = _version(request.query_params.get("versao"))
        produto = await _existing(request)
        listing = Listing.returning_to(request.query_params)
        return pages.load().render(
            "produtos/remover.html",
            headers={"Cache-Control": "no-cache", **VARY},
            produto=produto,
            preco=formatar_preco(produto.preco),
            mudou=seen is not None and seen != produto.versao,
            lista=listing.query,
            volta=listing.url,
            quem=visitor(request),
        )


async def _failed_write(
    request: Request,
    media: str,
    failure: NotFound | VersionConflict,
    submitted: _Submitted,
    typed: Produto | None,
) -> Response:
    """A write that found no product is 404 (412 under If-Match); one that found it moved on
    past If-Match is 412, and past the body's `versao` it is the 409 that shows what is saved
    now. `typed` is the product the person sent, for an update; None for a removal."""
    if isinstance(failure, NotFound):
        raise await _not_found(request, request.path_params["id"])
    current = failure.current
    accepted = conditional.accepted_versions(request)
    if accepted is not None and current.versao not in accepted:
        raise errors.precondition_failed()
    if media == JSON:
        return conflict(request, errors.EDIT_CONFLICT, current)
    who = visitor(request)
    if typed is None:
        values = _values(current)
        return _edit_page(who, current, values, {}, submitted.listing, 409, remocao_recusada=True)
    return _conflict_page(who, current, typed, submitted)


def _conflict_page(
    who: Visitante | None, current: Produto, typed: Produto, submitted: _Submitted
) -> Response:
    """The edit form again after someone else saved: a field this person left alone takes the
    saved value, so Salvar never puts back what the other person replaced; the fields both
    changed, to different values, are shown side by side. Without a base (a form not from our
    page) every field counts as changed by both."""
    base = submitted.base
    mine = campos_mudados(base, typed) if base else frozenset(CAMPOS)
    theirs = campos_mudados(base, current) if base else frozenset(CAMPOS)
    saved = _values(current)
    values = {
        **{c: str(submitted.fields.get(c, "")) if c in mine else saved[c] for c in CAMPOS},
        "versao": current.versao,
        "base": saved["base"],
    }
    both = [c for c in CAMPOS if c in mine & theirs and getattr(typed, c) != getattr(current, c)]
    rows = [(c, _shown(current, c), _shown(typed, c)) for c in both]
    kept = [c for c in CAMPOS if c in theirs - mine]
    return _edit_page(
        who, current, values, {}, submitted.listing, 409, conflito=rows, mantidos=kept
    )


def _shown(produto: Produto, field: str) -> str:
    value = getattr(produto, field)
    return formatar_preco(value) if field == "preco" else str(value)


async def _submitted(request: Request) -> _Submitted:
    """The product's fields and what else the body says, from JSON or a form.

    A `produto.id` (or JSON `id`) in the body is ignored on purpose: the id is the path's.
    """
    if body_is_json(request):
        data = await read_json(request)
        return _Submitted({c: data[c] for c in CAMPOS if c in data}, _version(data.get("versao")))
    form = await read_form(request, _FORM_FIELDS)
    return _Submitted(
        {c: form[f"produto.{c}"] for c in CAMPOS if f"produto.{c}" in form},
        _version(form.get("produto.versao") or None),
        _base(form.get("produto.base") or None),
        Listing.returning_to(form),
    )


async def _removal(request: Request) -> _Submitted:
    """What a removal's body says, when it has one (a form, or JSON). Many clients send a
    Content-Type on every request: an empty body is no body, whatever it claims to be."""
    if "content-type" not in request.headers or not await request.body():
        return _Submitted({})
    return await _submitted(request)


def _base(value: str | None) -> str | None:
    if value is None:
        return None
    base = ler_base(value)
    if base is None:
        raise errors.bad_request(errors.BAD_BASE)
    return base


def _version(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= ID_MAXIMO:
        return value
    if isinstance(value, str) and (number := ler_id(value)) is not None:
        return number
    raise errors.bad_request(errors.BAD_VERSION)


def etag(produto: Produto, media: str) -> dict[str, str]:
    return {"ETag": conditional.etag(produto, media, pages.load().fingerprint)}


def to_the_list(request: Request, kind: str, produto: Produto, listing: Listing) -> Response:
    """The browser's answer to a write: the list page it came from, with a notice of what was
    done."""
    response = Response(status_code=303, headers={"Location": listing.url})
    # Written out rather than through SimpleCookie, which costs more than the rest of the
    # answer; the value is percent-encoded, so it needs no quoting.
    value = urllib.parse.quote(f"{kind}:{produto.id}:{produto.nome}", safe="")
    secure = "; Secure" if request.scope["scheme"] == "https" else ""
    cookie = f"{NOTICE_COOKIE}={value}; HttpOnly; Max-Age=60; Path=/; SameSite=Lax{secure}"
    response.raw_headers += [(b"set-cookie", cookie.encode("latin-1")), (b"vary", b"Accept")]
    return response


@dataclass(frozen=True)
class Aviso:
    """The notice after a write, and the product a removal's "Desfazer" brings back."""

    texto: str
    desfazer: int | None


def _notice(request: Request) -> Aviso | None:
    value = urllib.parse.unquote(request.cookies.get(NOTICE_COOKIE, ""))
    kind, _, rest = value.partition(":")
    number, _, nome = rest.partition(":")
    id = ler_id(number)
    if kind not in _NOTICES or not nome or id is None:
        return None
    return Aviso(_NOTICES[kind].format(nome), id if kind == "removido" else None)


async def _existing(request: Request) -> Produto:
    id = request.path_params["id"]
    produto = await services(request).storage.get(id)
    if produto is None:
        raise await _not_found(request, id)
    return produto


async def _not_found(request: Request, id: int) -> Exception:
    if "if-match" in request.headers:  # RFC 9110 §13.1.1: nothing current can match
        return errors.precondition_failed()
    removal = await services(request).storage.removed(id)
    if removal is not None:
        return errors.product_removed(id, removal)
    return errors.product_not_found(id)


def _autoria(request: Request, media: str) -> Autoria:
    """Who makes this change, for its event: a browser's form is "web", JSON is "api"."""
    return historia.autoria(
        principal(request), "web" if media == HTML else "api", request_id(request)
    )


def _edit_page(
    who: Visitante | None,
    produto: Produto,
    values: dict[str, Any],
    problems: dict[str, str],
    listing: Listing,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    conflito: list[tuple[str, str, str]] | None = None,
    mantidos: list[str] | None = None,
    remocao_recusada: bool = False,
) -> Response:
    return pages.load().render(
        "produtos/editar.html",
        status_code,
        headers or {"Cache-Control": "no-cache", **VARY},
        produto=produto,
        valores=values,
        erros=problems,
        lista=listing.query,
        volta=listing.url,
        edicao=listing.carried(f"/produtos/{produto.id}"),
        conflito=conflito,
        mantidos=mantidos,
        remocao_recusada=remocao_recusada,
        quem=who,
    )


def _new_page(
    who: Visitante | None,
    listing: Listing,
    values: dict[str, Any],
    problems: dict[str, str],
    status_code: int = 200,
) -> Response:
    return pages.load().render(
        "produtos/novo.html",
        status_code,
        VARY,
        valores=values,
        erros=problems,
        lista=listing.query,
        volta=listing.url,
        quem=who,
    )


def _values(produto: Produto) -> dict[str, Any]:
    return {
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_no_campo(produto.preco),
        "versao": produto.versao,
        "base": base_de(produto),
    }
