"""One endpoint class per URI; each translates between HTTP and the product, nothing more.

Methods a class does not define get 405 with `Allow` from Starlette's `HTTPEndpoint`, and HEAD
follows GET. A browser's successful write answers 303 to the list with a one-time notice kept
in a cookie, so that reloading the list never repeats the write and no GET writes anything.
"""

import urllib.parse
from typing import Any

from starlette.endpoints import HTTPEndpoint
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from catalogo.http import read_form
from catalogo.pages import Pages
from catalogo.produtos import CAMPOS, ID_MAXIMO, Produto, preco_no_campo, validar
from catalogo.storage import Cursor, Storage

AVISO = "aviso"
_VAZIO = dict.fromkeys(CAMPOS, "")
_AVISOS = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "removido": "Produto «{}» removido.",
}


def _storage(request: Request) -> Storage:
    storage: Storage = request.app.state.storage
    return storage


def _pages(request: Request) -> Pages:
    pages: Pages = request.app.state.pages
    return pages


async def _campos(request: Request) -> dict[str, str]:
    """The product's fields from the form; a `produto.id` in the body is ignored on purpose."""
    form = await read_form(request)
    return {c: form.get(f"produto.{c}", "") for c in CAMPOS}


def _depois_da_escrita(request: Request, tipo: str, produto: Produto) -> Response:
    response = RedirectResponse("/produtos", status_code=303)
    # Written out rather than through SimpleCookie, which costs more than the rest of the answer;
    # the value is percent-encoded, so it needs no quoting.
    valor = urllib.parse.quote(f"{tipo}:{produto.nome}", safe="")
    seguro = "; Secure" if request.scope["scheme"] == "https" else ""
    response.headers.append(
        "set-cookie", f"{AVISO}={valor}; HttpOnly; Max-Age=60; Path=/; SameSite=Lax{seguro}"
    )
    return response


def _aviso(request: Request) -> str | None:
    tipo, _, nome = urllib.parse.unquote(request.cookies.get(AVISO, "")).partition(":")
    return _AVISOS[tipo].format(nome) if tipo in _AVISOS and nome else None


def _cursor_param(request: Request, nome: str) -> int | None:
    valor = request.query_params.get(nome)
    if valor is None:
        return None
    if not valor.isascii() or not valor.isdigit() or not 1 <= int(valor) <= ID_MAXIMO:
        raise HTTPException(400, f"O parâmetro «{nome}» deve ser o número de um produto.")
    return int(valor)


def _url(cursor: Cursor | None) -> str | None:
    if cursor is None:
        return None
    if cursor.after is not None:
        return f"/produtos?depois={cursor.after}"
    if cursor.before is not None:
        return f"/produtos?antes={cursor.before}"
    return "/produtos"


class InicioResource(HTTPEndpoint):
    """/: the site has one resource, so its front door is the list."""

    async def get(self, request: Request) -> Response:
        return RedirectResponse("/produtos", status_code=302)


class ProdutosResource(HTTPEndpoint):
    """/produtos: the list (GET) and creation (POST)."""

    async def get(self, request: Request) -> Response:
        antes, depois = _cursor_param(request, "antes"), _cursor_param(request, "depois")
        if antes is not None and depois is not None:
            raise HTTPException(400, "Use «antes» ou «depois», não os dois.")
        limite = request.app.state.settings.page_size
        pagina = await _storage(request).page(Cursor(limite, after=depois, before=antes))
        links = {rel: _url(c) for rel, c in (("prev", pagina.prev), ("next", pagina.next)) if c}
        headers = {"Cache-Control": "no-cache"}
        if links:
            headers["Link"] = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())
        aviso = _aviso(request)
        if aviso:
            headers["Cache-Control"] = "no-store"
        response = _pages(request).render(
            "produtos/lista.html",
            headers=headers,
            pagina=pagina,
            links=links,
            aviso=aviso,
            primeira_pagina=antes is None and depois is None,
        )
        if AVISO in request.cookies:
            response.delete_cookie(AVISO, httponly=True, samesite="lax")
        return response

    async def post(self, request: Request) -> Response:
        valores = await _campos(request)
        produto, erros = validar(valores)
        if produto is None:
            return _pages(request).render("produtos/novo.html", 422, valores=valores, erros=erros)
        criado = await _storage(request).create(produto)
        return _depois_da_escrita(request, "adicionado", criado)


class NovoProdutoResource(HTTPEndpoint):
    """/produtos/novo: the empty form, which posts to /produtos."""

    async def get(self, request: Request) -> Response:
        return _pages(request).render("produtos/novo.html", valores=_VAZIO, erros={})


class ProdutoResource(HTTPEndpoint):
    """/produtos/{id}: the edit page (GET), update (PUT) and removal (DELETE)."""

    async def dispatch(self) -> None:
        if self.scope["path_params"]["id"] > ID_MAXIMO:
            raise HTTPException(404)  # 19 digits can pass the route and still not be an id
        await super().dispatch()

    async def get(self, request: Request) -> Response:
        produto = await _existente(request)
        return _editar(request, produto, _valores(produto), {})

    async def put(self, request: Request) -> Response:
        id = request.path_params["id"]
        valores = await _campos(request)
        produto, erros = validar(valores)
        if produto is None:
            return _editar(request, await _existente(request), valores, erros, 422)
        atualizado = await _storage(request).update(id, produto)
        if atualizado is None:
            raise _nao_encontrado(id)
        return _depois_da_escrita(request, "atualizado", atualizado)

    async def delete(self, request: Request) -> Response:
        id = request.path_params["id"]
        removido = await _storage(request).delete(id)
        if removido is None:
            raise _nao_encontrado(id)
        return _depois_da_escrita(request, "removido", removido)


async def _existente(request: Request) -> Produto:
    id = request.path_params["id"]
    produto = await _storage(request).get(id)
    if produto is None:
        raise _nao_encontrado(id)
    return produto


def _editar(
    request: Request,
    produto: Produto,
    valores: dict[str, Any],
    erros: dict[str, str],
    status_code: int = 200,
) -> Response:
    return _pages(request).render(
        "produtos/editar.html",
        status_code,
        {"Cache-Control": "no-cache"},
        produto=produto,
        valores=valores,
        erros=erros,
    )


def _valores(produto: Produto) -> dict[str, str]:
    return {
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_no_campo(produto.preco),
    }


def _nao_encontrado(id: int) -> HTTPException:
    return HTTPException(404, f"Não há produto com o número {id}. Ele pode ter sido removido.")
