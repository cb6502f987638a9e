"""The product's URIs: the list and creation, the new-product form, one product.

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
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from catalogo import conditional, errors, idempotency, pages
from catalogo.bodies import read_form, read_json
from catalogo.negotiation import HTML, JSON, body_is_json
from catalogo.produtos import (
    CAMPOS,
    ID_MAXIMO,
    Produto,
    ler_id,
    preco_no_campo,
    representacao,
    validar,
)
from catalogo.resources import VARY, Resource, json_response, negotiate, services
from catalogo.storage import Cursor, NotFound, VersionConflict

NOTICE_COOKIE = "aviso"
_NOTICES = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "removido": "Produto «{}» removido.",
}
_EMPTY = dict.fromkeys(CAMPOS, "")
_FORM_FIELDS = frozenset(f"produto.{field}" for field in (*CAMPOS, "versao"))


class ProdutosResource(Resource):
    """/produtos: the list (GET) and creation (POST)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        before, after = _cursor(request, "antes"), _cursor(request, "depois")
        if before is not None and after is not None:
            raise errors.bad_request(errors.BOTH_CURSORS)
        shared = services(request)
        limit = shared.settings.page_size
        page = await shared.storage.page(Cursor(limit, after=after, before=before))
        links = {rel: _url(c) for rel, c in (("prev", page.prev), ("next", page.next)) if c}
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
            primeira_pagina=before is None and after is None,
        )
        if NOTICE_COOKIE in request.cookies:
            response.delete_cookie(NOTICE_COOKIE, httponly=True, samesite="lax")
        return response

    async def post(self, request: Request) -> Response:
        media = negotiate(request)
        fields, _ = await _fields_and_version(request)
        produto, problems = validar(fields)
        if produto is None:
            if media == JSON:
                return errors.invalid_fields(request, problems)
            values = {**_EMPTY, **fields}
            return pages.load().render(
                "produtos/novo.html", 422, VARY, valores=values, erros=problems
            )

        def answer(created: Produto) -> Response:
            if media == HTML:
                return _to_the_list(request, "adicionado", created)
            headers = {"Location": f"/produtos/{created.id}", **_etag(created, JSON), **VARY}
            return json_response(representacao(created), 201, headers)

        storage = services(request).storage
        key = idempotency.key_of(request)
        if key is None:
            return answer(await storage.create(produto))
        return await idempotency.create_once(request, storage, key, media, produto, answer)


class NovoProdutoResource(Resource):
    """/produtos/novo: the empty form, which posts to /produtos."""

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return pages.load().render("produtos/novo.html", headers=VARY, valores=_EMPTY, erros={})


class ProdutoResource(Resource):
    """/produtos/{id}: the product (GET; HTML is its edit page), update (PUT), removal (DELETE)."""

    async def get(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        produto = await services(request).storage.get(id)
        conditional.check(request, produto)
        if produto is None:
            raise _not_found(request, id)
        headers = {**_etag(produto, media), "Cache-Control": "no-cache", **VARY}
        if conditional.not_modified(request, headers["ETag"]):
            return Response(status_code=304, headers=headers)
        if media == JSON:
            return json_response(representacao(produto), headers=headers)
        return _edit_page(request, produto, _values(produto), {}, headers=headers)

    async def put(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = services(request).storage
        if conditional.has_preconditions(request):  # checked again by the write, in SQL
            conditional.check(request, await storage.get(id))
        fields, based_on = await _fields_and_version(request)
        produto, problems = validar(fields)
        if produto is None:
            if media == JSON:
                return errors.invalid_fields(request, problems)
            values = {**_EMPTY, **fields, "versao": based_on or ""}
            return _edit_page(request, await _existing(request), values, problems, 422)
        try:
            updated = await storage.update(
                id, produto, conditional.expected_versions(request, based_on)
            )
        except (NotFound, VersionConflict) as failure:
            return _failed_write(request, media, failure, fields)
        if media == HTML:
            return _to_the_list(request, "atualizado", updated)
        return json_response(representacao(updated), headers={**_etag(updated, JSON), **VARY})

    async def delete(self, request: Request) -> Response:
        media = negotiate(request)
        id = request.path_params["id"]
        storage = services(request).storage
        if conditional.has_preconditions(request):
            conditional.check(request, await storage.get(id))
        based_on = await _removal_version(request)
        try:
            removed = await storage.delete(id, conditional.expected_versions(request, based_on))
        except (NotFound, VersionConflict) as failure:
            return _failed_write(request, media, failure, None)
        if media == HTML:
            return _to_the_list(request, "removido", removed)
        return Response(status_code=204, headers=VARY)


def _failed_write(
    request: Request,
    media: str,
    failure: NotFound | VersionConflict,
    fields: dict[str, Any] | None,
) -> Response:
    """A write that found no product is 404 (412 under If-Match); one that found it moved on
    past If-Match is 412, and past the body's `versao` it is the 409 that shows what is saved
    now. `fields` is what the user typed, for an update; None for a removal."""
    if isinstance(failure, NotFound):
        raise _not_found(request, request.path_params["id"])
    current = failure.current
    accepted = conditional.accepted_versions(request)
    if accepted is not None and current.versao not in accepted:
        raise errors.precondition_failed()
    if media == JSON:
        return errors.problem(
            409,
            errors.EDIT_CONFLICT,
            VARY,
            instance=request.url.path,
            current=representacao(current),
        )
    if fields is None:
        return _edit_page(request, current, _values(current), {}, 409, remocao_recusada=True)
    typed = {**_EMPTY, **{c: str(v) for c, v in fields.items()}, "versao": current.versao}
    return _edit_page(request, current, typed, {}, 409, conflito=_values(current))


async def _fields_and_version(request: Request) -> tuple[dict[str, Any], int | None]:
    """The product's fields and the version they were based on, from JSON or a form.

    A `produto.id` (or JSON `id`) in the body is ignored on purpose: the id is the path's.
    """
    if body_is_json(request):
        data = await read_json(request)
        return {c: data[c] for c in CAMPOS if c in data}, _version(data.get("versao"))
    form = await read_form(request, _FORM_FIELDS)
    fields = {c: form[f"produto.{c}"] for c in CAMPOS if f"produto.{c}" in form}
    return fields, _version(form.get("produto.versao") or None)


async def _removal_version(request: Request) -> int | None:
    """The version a removal was based on, when its body (a form, or JSON) names one."""
    if "content-type" not in request.headers:
        return None
    if body_is_json(request):
        return _version((await read_json(request)).get("versao"))
    return _version((await read_form(request, _FORM_FIELDS)).get("produto.versao") or None)


def _version(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= ID_MAXIMO:
        return value
    if isinstance(value, str) and (number := ler_id(value)) is not None:
        return number
    raise errors.bad_request(errors.BAD_VERSION)


def _cursor(request: Request, parameter: str) -> int | None:
    value = request.query_params.get(parameter)
    if value is None:
        return None
    number = ler_id(value)
    if number is None:
        raise errors.bad_request(errors.BAD_CURSOR, parameter)
    return number


def _url(cursor: Cursor | None) -> str | None:
    if cursor is None:
        return None
    if cursor.after is not None:
        return f"/produtos?depois={cursor.after}"
    if cursor.before is not None:
        return f"/produtos?antes={cursor.before}"
    return "/produtos"


def _etag(produto: Produto, media: str) -> dict[str, str]:
    return {"ETag": conditional.etag(produto, media, pages.load().fingerprint)}


def _to_the_list(request: Request, kind: str, produto: Produto) -> Response:
    """The browser's answer to a write: see the list, with a notice of what was done."""
    response = Response(status_code=303, headers={"Location": "/produtos"})
    # Written out rather than through SimpleCookie, which costs more than the rest of the
    # answer; the value is percent-encoded, so it needs no quoting.
    value = urllib.parse.quote(f"{kind}:{produto.nome}", safe="")
    secure = "; Secure" if request.scope["scheme"] == "https" else ""
    cookie = f"{NOTICE_COOKIE}={value}; HttpOnly; Max-Age=60; Path=/; SameSite=Lax{secure}"
    response.raw_headers += [(b"set-cookie", cookie.encode("latin-1")), (b"vary", b"Accept")]
    return response


def _notice(request: Request) -> str | None:
    kind, _, nome = urllib.parse.unquote(request.cookies.get(NOTICE_COOKIE, "")).partition(":")
    return _NOTICES[kind].format(nome) if kind in _NOTICES and nome else None


async def _existing(request: Request) -> Produto:
    id = request.path_params["id"]
    produto = await services(request).storage.get(id)
    if produto is None:
        raise _not_found(request, id)
    return produto


def _not_found(request: Request, id: int) -> Exception:
    if "if-match" in request.headers:  # RFC 9110 §13.1.1: nothing current can match
        return errors.precondition_failed()
    return errors.product_not_found(id)


def _edit_page(
    request: Request,
    produto: Produto,
    values: dict[str, Any],
    problems: dict[str, str],
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    conflito: dict[str, str] | None = None,
    remocao_recusada: bool = False,
) -> Response:
    return pages.load().render(
        "produtos/editar.html",
        status_code,
        headers or {"Cache-Control": "no-cache", **VARY},
        produto=produto,
        valores=values,
        erros=problems,
        conflito=conflito,
        remocao_recusada=remocao_recusada,
    )


def _values(produto: Produto) -> dict[str, Any]:
    return {
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_no_campo(produto.preco),
        "versao": produto.versao,
    }
