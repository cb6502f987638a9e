"""One endpoint class per URI; each translates between HTTP and the product, nothing more.

Methods a class does not define get 405 with `Allow` from Starlette's `HTTPEndpoint`, HEAD
follows GET, and OPTIONS answers 204 with the same `Allow`. Every URI speaks HTML to browsers
and JSON to clients that ask for it (`negotiate`), with `Vary: Accept`.

A browser's successful write answers 303 to the list with a one-time notice kept in a cookie,
so that reloading the list never repeats the write and no GET writes anything. JSON clients
get 201 + `Location`, 200 with the product, or 204.

Versions: the edit page and the JSON product carry an ETag made of the product's version; a
write with `If-Match` fails with 412 once the product has moved on, and a form or JSON body
that names the version it was based on (`produto.versao`, `versao`) fails with 409 and shows
what is saved now. `Idempotency-Key` on creation makes a retry return the first answer.
"""

import hashlib
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Collection
from typing import Any

import orjson
from starlette.endpoints import HTTPEndpoint
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from catalogo.http import (
    CSP_KEY,
    HTML,
    JSON,
    body_is_json,
    json_response,
    negotiate,
    problem,
    read_form,
    read_json,
)
from catalogo.pages import Pages
from catalogo.produtos import CAMPOS, ID_MAXIMO, Produto, preco_no_campo, representacao, validar
from catalogo.storage import (
    Cursor,
    KeyClaim,
    KeyTaken,
    NotFound,
    Storage,
    StoredResponse,
    VersionConflict,
)

AVISO = "aviso"
VARY = {"Vary": "Accept"}
_VAZIO = dict.fromkeys(CAMPOS, "")
_CAMPOS_DO_FORM = frozenset(f"produto.{c}" for c in (*CAMPOS, "versao"))
_AVISOS = {
    "adicionado": "Produto «{}» adicionado.",
    "atualizado": "Produto «{}» atualizado.",
    "removido": "Produto «{}» removido.",
}
_NOSSA_ETAG = re.compile(r'"(\d{1,18})-(?:json|h[0-9a-f]{10})"')


def _inteiro(texto: str) -> int | None:
    """A positive id or version written as ASCII digits, or None: never int() on 5,000 digits."""
    if len(texto) <= 19 and texto.isascii() and texto.isdigit() and 1 <= int(texto) <= ID_MAXIMO:
        return int(texto)
    return None


def _storage(request: Request) -> Storage:
    storage: Storage = request.app.state.storage
    return storage


def _pages(request: Request) -> Pages:
    pages: Pages = request.app.state.pages
    return pages


class Resource(HTTPEndpoint):
    async def options(self, request: Request) -> Response:
        return Response(status_code=204, headers={"Allow": ", ".join(self._allowed_methods)})


async def _corpo(request: Request) -> tuple[dict[str, Any], int | None]:
    """The product's fields and the version they were based on, from JSON or a form.

    A `produto.id` (or JSON `id`) in the body is ignored on purpose: the id is the path's.
    """
    if body_is_json(request):
        dados = await read_json(request)
        campos, versao = {c: dados[c] for c in CAMPOS if c in dados}, dados.get("versao")
    else:
        form = await read_form(request, _CAMPOS_DO_FORM)
        campos = {c: form[f"produto.{c}"] for c in CAMPOS if f"produto.{c}" in form}
        versao = form.get("produto.versao") or None
    return campos, _versao(versao)


async def _versao_do_corpo(request: Request) -> int | None:
    """The version a removal was based on, when its body (a form, or JSON) names one."""
    if "content-type" not in request.headers:
        return None
    if body_is_json(request):
        return _versao((await read_json(request)).get("versao"))
    return _versao((await read_form(request, _CAMPOS_DO_FORM)).get("produto.versao") or None)


def _versao(valor: Any) -> int | None:
    if valor is None:
        return None
    if isinstance(valor, int) and not isinstance(valor, bool) and 1 <= valor <= ID_MAXIMO:
        return valor
    if isinstance(valor, str) and (numero := _inteiro(valor)) is not None:
        return numero
    raise HTTPException(400, "A versão (versao) deve ser um número inteiro positivo.")


def _erros_por_campo(erros: dict[str, str]) -> dict[str, str]:
    return {f"produto.{campo}": mensagem for campo, mensagem in erros.items()}


def _invalido(request: Request, erros: dict[str, str]) -> Response:
    return problem(
        422,
        "Corrija os campos indicados.",
        VARY,
        instance=request.url.path,
        errors=_erros_por_campo(erros),
    )


def _aviso_cookie(request: Request, tipo: str, produto: Produto) -> str:
    # Written out rather than through SimpleCookie, which costs more than the rest of the answer;
    # the value is percent-encoded, so it needs no quoting.
    valor = urllib.parse.quote(f"{tipo}:{produto.nome}", safe="")
    seguro = "; Secure" if request.scope["scheme"] == "https" else ""
    return f"{AVISO}={valor}; HttpOnly; Max-Age=60; Path=/; SameSite=Lax{seguro}"


def _para_a_lista(request: Request, tipo: str, produto: Produto) -> StoredResponse:
    """The browser's answer to a write: see the list, with a notice of what was done."""
    headers = [("location", "/produtos"), ("set-cookie", _aviso_cookie(request, tipo, produto))]
    return StoredResponse(303, [*headers, ("vary", "Accept")], b"")


def _enviar(resposta: StoredResponse) -> Response:
    response = Response(resposta.body, resposta.status)
    response.raw_headers += [
        (k.encode("latin-1"), v.encode("latin-1")) for k, v in resposta.headers
    ]
    return response


def _aviso(request: Request) -> str | None:
    tipo, _, nome = urllib.parse.unquote(request.cookies.get(AVISO, "")).partition(":")
    return _AVISOS[tipo].format(nome) if tipo in _AVISOS and nome else None


def _etag(produto: Produto, formato: str, pages: Pages) -> str:
    """Strong, and distinct per representation: the page's also changes with the templates."""
    return f'"{produto.versao}-{pages.fingerprint if formato == HTML else "json"}"'


def _nao_mudou(request: Request, etag: str) -> bool:
    """If-None-Match, compared weakly as RFC 9110 §13.1.2 says."""
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag in tags


def _versoes(header: str, fraca: bool) -> set[int]:
    """The product versions that a list of our ETags names; other tags name none."""
    tags = (tag.strip() for tag in header.split(","))
    return {
        int(match.group(1))
        for tag in tags
        if (match := _NOSSA_ETAG.fullmatch(tag.removeprefix("W/") if fraca else tag))
    }


def _versoes_aceitas(request: Request) -> Collection[int] | None:
    """The versions If-Match accepts; None when any will do. Weak tags never match."""
    header = request.headers.get("if-match")
    if header is None or header.strip() == "*":
        return None
    return _versoes(header, fraca=False)


def _esperadas(aceitas: Collection[int] | None, base: int | None) -> Collection[int] | None:
    """The versions a write may find: If-Match's, the body's `versao`, or both at once."""
    if base is None:
        return aceitas
    return {base} if aceitas is None else {base} & set(aceitas)


def _checar_precondicoes(request: Request, atual: Produto | None) -> None:
    """RFC 9110 §13.2.2: a failed If-Match, or on a write a matching If-None-Match, is 412,
    before anything else about the request is looked at. (A GET's If-None-Match is a 304.)"""
    if_match = request.headers.get("if-match")
    if if_match is not None:
        aceitas = _versoes_aceitas(request)
        if atual is None or (aceitas is not None and atual.versao not in aceitas):
            raise _precondicao()
    if_none_match = request.headers.get("if-none-match")
    escrita = request.method not in ("GET", "HEAD")
    if escrita and if_none_match is not None and atual is not None:
        casa = if_none_match.strip() == "*" or atual.versao in _versoes(if_none_match, fraca=True)
        if casa:
            raise _precondicao()


async def _checar_antes_de_escrever(request: Request, id: int) -> None:
    """A write's preconditions, read only when it has some; the write checks again, in SQL."""
    if "if-match" in request.headers or "if-none-match" in request.headers:
        _checar_precondicoes(request, await _storage(request).get(id))


def _cursor_param(request: Request, nome: str) -> int | None:
    valor = request.query_params.get(nome)
    if valor is None:
        return None
    numero = _inteiro(valor)
    if numero is None:
        raise HTTPException(400, f"O parâmetro «{nome}» deve ser o número de um produto.")
    return numero


def _url(cursor: Cursor | None) -> str | None:
    if cursor is None:
        return None
    if cursor.after is not None:
        return f"/produtos?depois={cursor.after}"
    if cursor.before is not None:
        return f"/produtos?antes={cursor.before}"
    return "/produtos"


def _chave(request: Request) -> str | None:
    """The Idempotency-Key: a structured-field string, or the bare token clients often send."""
    valores = request.headers.getlist("idempotency-key")
    if not valores:
        return None
    if len(valores) > 1:
        raise HTTPException(400, "Envie uma só Idempotency-Key.")
    chave = valores[0].strip()
    if len(chave) >= 2 and chave[0] == chave[-1] == '"':
        chave = chave[1:-1]
    if not 1 <= len(chave) <= 255 or not all("!" <= c <= "~" and c not in '"\\' for c in chave):
        raise HTTPException(
            400, "Idempotency-Key deve ter de 1 a 255 caracteres ASCII visíveis, sem espaços."
        )
    return chave


class OpenAPIResource(Resource):
    """/openapi.json: the API description, made once at start-up (openapi.py)."""

    async def get(self, request: Request) -> Response:
        documento: bytes = request.app.state.openapi
        return Response(documento, media_type=JSON, headers={"Cache-Control": "no-cache"})


class DocsResource(Resource):
    """/docs: the API description as a page (Swagger UI, shipped in a package, no CDN)."""

    async def get(self, request: Request) -> Response:
        # Swagger UI fetches the description and tries requests (connect-src), and draws its
        # icons from data: URLs; the rest of the site's policy stands.
        request.scope[CSP_KEY] = (
            b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
            b"object-src 'none'"
        )
        return _pages(request).render("docs.html")


class HealthResource(Resource):
    """/healthz: the process is up and answering; it asks nothing of the database."""

    async def get(self, request: Request) -> Response:
        return json_response({"status": "ok"}, headers={"Cache-Control": "no-store"})


class ReadyResource(Resource):
    """/readyz: ready for traffic: the database answers and its schema is the code's."""

    async def get(self, request: Request) -> Response:
        esperada: str | None = request.app.state.schema_head
        versao = await _storage(request).schema_version()  # unreachable: StorageUnavailable, 503
        if versao != esperada:
            achada = f"está na versão {versao}" if versao else "está vazio"
            raise HTTPException(
                503,
                f"O esquema do banco {achada}, e o código espera a versão {esperada}: "
                "rode catalogo migrate.",
                {"Retry-After": "5"},
            )
        corpo = {"status": "ready", "schema": versao}
        return json_response(corpo, headers={"Cache-Control": "no-store"})


class InicioResource(Resource):
    """/: the site has one resource, so its front door is the list."""

    async def get(self, request: Request) -> Response:
        return Response(status_code=302, headers={"Location": "/produtos"})


class ProdutosResource(Resource):
    """/produtos: the list (GET) and creation (POST)."""

    async def get(self, request: Request) -> Response:
        formato = negotiate(request)
        antes, depois = _cursor_param(request, "antes"), _cursor_param(request, "depois")
        if antes is not None and depois is not None:
            raise HTTPException(400, "Use «antes» ou «depois», não os dois.")
        limite = request.app.state.settings.page_size
        pagina = await _storage(request).page(Cursor(limite, after=depois, before=antes))
        links = {rel: _url(c) for rel, c in (("prev", pagina.prev), ("next", pagina.next)) if c}
        headers = {"Cache-Control": "no-cache", **VARY}
        if links:
            headers["Link"] = ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())
        if formato == JSON:
            itens = [representacao(p) for p in pagina.produtos]
            return json_response({"produtos": itens, "links": links}, headers=headers)
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
        formato = negotiate(request)
        campos, _ = await _corpo(request)
        produto, erros = validar(campos)
        if produto is None:
            if formato == JSON:
                return _invalido(request, erros)
            valores = {**_VAZIO, **campos}
            return _pages(request).render(
                "produtos/novo.html", 422, VARY, valores=valores, erros=erros
            )
        pages = _pages(request)

        def resposta(criado: Produto) -> StoredResponse:
            if formato == HTML:
                return _para_a_lista(request, "adicionado", criado)
            headers = [
                ("content-type", JSON),
                ("location", f"/produtos/{criado.id}"),
                ("etag", _etag(criado, JSON, pages)),
                ("vary", "Accept"),
            ]
            return StoredResponse(201, headers, orjson.dumps(representacao(criado)))

        chave = _chave(request)
        if chave is None:
            return _enviar(resposta(await _storage(request).create(produto)))
        return await _uma_vez(request, chave, formato, produto, resposta)


async def _uma_vez(
    request: Request,
    chave: str,
    formato: str,
    produto: Produto,
    resposta: Callable[[Produto], StoredResponse],
) -> Response:
    """Creation under an Idempotency-Key: the first answer, kept and sent again on retries."""
    storage = _storage(request)
    impressao = hashlib.sha256(
        orjson.dumps([formato, produto.nome, produto.descricao, str(produto.preco)])
    ).hexdigest()
    reivindicada: KeyClaim = await storage.claim_key(chave, impressao)
    if reivindicada.state == "answered" and reivindicada.response is not None:
        replay = _enviar(reivindicada.response)
        replay.headers["Idempotent-Replayed"] = "true"
        return replay
    if reivindicada.state == "other_request":
        return problem(
            422,
            "Esta Idempotency-Key já foi usada com outra requisição (outro corpo ou formato).",
            VARY,
            instance=request.url.path,
        )
    if reivindicada.state != "claimed" or reivindicada.claimed_at is None:
        raise _em_andamento()
    try:
        guardada = await storage.create_once(produto, (chave, reivindicada.claimed_at), resposta)
    except KeyTaken:
        raise _em_andamento() from None
    except Exception:
        await storage.release_key(chave)  # a retry may try again at once, not in a minute
        raise
    return _enviar(guardada)


def _em_andamento() -> HTTPException:
    return HTTPException(
        409, "Uma requisição com esta Idempotency-Key ainda está em andamento.", VARY
    )


class NovoProdutoResource(Resource):
    """/produtos/novo: the empty form, which posts to /produtos."""

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return _pages(request).render("produtos/novo.html", headers=VARY, valores=_VAZIO, erros={})


class ProdutoResource(Resource):
    """/produtos/{id}: the product (GET; HTML is its edit page), update (PUT), removal (DELETE)."""

    async def get(self, request: Request) -> Response:
        formato = negotiate(request)
        id = request.path_params["id"]
        produto = await _storage(request).get(id)
        _checar_precondicoes(request, produto)
        if produto is None:
            raise _sem_produto(request, id)
        etag = _etag(produto, formato, _pages(request))
        headers = {"ETag": etag, "Cache-Control": "no-cache", **VARY}
        if _nao_mudou(request, etag):
            return Response(status_code=304, headers=headers)
        if formato == JSON:
            return json_response(representacao(produto), headers=headers)
        return _editar(request, produto, _valores(produto), {}, headers=headers)

    async def put(self, request: Request) -> Response:
        formato = negotiate(request)
        id = request.path_params["id"]
        await _checar_antes_de_escrever(request, id)
        campos, base = await _corpo(request)
        produto, erros = validar(campos)
        if produto is None:
            if formato == JSON:
                return _invalido(request, erros)
            valores = {**_VAZIO, **campos, "versao": base or ""}
            return _editar(request, await _existente(request), valores, erros, 422)
        esperadas = _esperadas(_versoes_aceitas(request), base)
        atualizado = await _versionada(
            request, formato, _storage(request).update(id, produto, esperadas), campos
        )
        if isinstance(atualizado, Response):
            return atualizado
        if formato == HTML:
            return _enviar(_para_a_lista(request, "atualizado", atualizado))
        etag = _etag(atualizado, JSON, _pages(request))
        return json_response(representacao(atualizado), headers={"ETag": etag, **VARY})

    async def delete(self, request: Request) -> Response:
        formato = negotiate(request)
        id = request.path_params["id"]
        await _checar_antes_de_escrever(request, id)
        base = await _versao_do_corpo(request)
        esperadas = _esperadas(_versoes_aceitas(request), base)
        removido = await _versionada(
            request, formato, _storage(request).delete(id, esperadas), None
        )
        if isinstance(removido, Response):
            return removido
        if formato == HTML:
            return _enviar(_para_a_lista(request, "removido", removido))
        return Response(status_code=204, headers=VARY)


async def _versionada(
    request: Request, formato: str, escrita: Awaitable[Produto], campos: dict[str, Any] | None
) -> Produto | Response:
    """Runs a write that names the versions it expects, and answers for it when it fails: a
    product that is gone is 404 (412 under If-Match), one that has moved on past If-Match is
    412, and past the body's `versao` it is the 409 that shows what is saved now."""
    try:
        return await escrita
    except NotFound:
        raise _sem_produto(request, request.path_params["id"]) from None
    except VersionConflict as conflito:
        aceitas = _versoes_aceitas(request)
        if aceitas is not None and conflito.current.versao not in aceitas:
            raise _precondicao() from None
        return _conflito(request, formato, conflito.current, campos)


async def _existente(request: Request) -> Produto:
    id = request.path_params["id"]
    produto = await _storage(request).get(id)
    if produto is None:
        raise _sem_produto(request, id)
    return produto


def _sem_produto(request: Request, id: int) -> HTTPException:
    if "if-match" in request.headers:  # RFC 9110 §13.1.1: nothing current can match
        return _precondicao()
    return HTTPException(404, f"Não há produto com o número {id}. Ele pode ter sido removido.")


def _precondicao() -> HTTPException:
    return HTTPException(
        412,
        "O produto mudou desde a versão indicada em If-Match. Busque-o de novo e refaça a "
        "alteração sobre a versão atual.",
    )


def _conflito(
    request: Request, formato: str, atual: Produto, campos: dict[str, Any] | None
) -> Response:
    """409: someone saved first. Nothing is written; the answer shows what is saved now.

    `campos` is what the user typed, for an update; None for a removal.
    """
    detalhe = "Outra pessoa salvou este produto depois da versão em que você se baseou."
    if formato == JSON:
        return problem(409, detalhe, VARY, instance=request.url.path, current=representacao(atual))
    if campos is None:
        return _editar(request, atual, _valores(atual), {}, 409, remocao_recusada=True)
    valores = {**_VAZIO, **{c: str(v) for c, v in campos.items()}, "versao": atual.versao}
    return _editar(request, atual, valores, {}, 409, conflito=_valores(atual))


def _editar(
    request: Request,
    produto: Produto,
    valores: dict[str, Any],
    erros: dict[str, str],
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    conflito: dict[str, str] | None = None,
    remocao_recusada: bool = False,
) -> Response:
    return _pages(request).render(
        "produtos/editar.html",
        status_code,
        headers or {"Cache-Control": "no-cache", **VARY},
        produto=produto,
        valores=valores,
        erros=erros,
        conflito=conflito,
        remocao_recusada=remocao_recusada,
    )


def _valores(produto: Produto) -> dict[str, Any]:
    return {
        "nome": produto.nome,
        "descricao": produto.descricao,
        "preco": preco_no_campo(produto.preco),
        "versao": produto.versao,
    }
