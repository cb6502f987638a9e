"""The account pages (http/resources/contas.py's): one's own account, the users and the tokens,
each with the notice of the write before it."""

import time

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import contas
from catalogo.domain.contas import Principal
from catalogo.http import templating
from catalogo.http.identity import visitor
from catalogo.http.negotiation import VARY
from catalogo.http.pages import notices
from catalogo.http.shared import shared_of


async def account_page(
    request: Request, who: Principal, erro: str | None, status_code: int = 200
) -> Response:
    """/conta: the user's own sessions, and the form for a new password."""
    sessoes = await shared_of(request).storage.sessions(who.usuario_id, time.time())
    return _page(
        request,
        "contas/conta.html",
        status_code,
        bool(erro),
        sessoes=sessoes,
        atual=who.session_id,
        erro=erro,
    )


async def users_page(
    request: Request,
    erro: str | None,
    valores: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    return _page(
        request,
        "contas/usuarios.html",
        status_code,
        bool(erro),
        usuarios=await shared_of(request).storage.users(),
        papeis=contas.PAPEIS,
        valores={"nome": "", "papel": "editor", **(valores or {})},
        erro=erro,
    )


async def tokens_page(
    request: Request,
    erro: str | None = None,
    valores: dict[str, str] | None = None,
    status_code: int = 200,
    novo: int | None = None,
    segredo: str | None = None,
    campo: str | None = None,
) -> Response:
    """The tokens; `novo` the id of the one just made, whose `segredo` is shown; `campo` the
    field `erro` is about. A new token is for the admin signed in unless another is chosen."""
    storage = shared_of(request).storage
    tokens = await storage.tokens()
    who = visitor(request)
    me = who.nome if who is not None and who.nome else ""
    return _page(
        request,
        "contas/tokens.html",
        status_code,
        bool(erro or segredo),
        tokens=tokens,
        usuarios=await storage.users(),
        valores={"nome": "", "usuario": me, "papel": "editor", "expira": "", **(valores or {})},
        agora=time.time(),
        erro=erro,
        campo_com_erro=campo,
        novo=next((token for token in tokens if token.id == novo), None),
        segredo=segredo,
    )


def _page(
    request: Request, template: str, status_code: int, quiet: bool, **context: object
) -> Response:
    """An account page, with the notice of the write before it unless it shows an error or a
    secret (`quiet`)."""
    aviso = None if quiet else notices.account_notice(request)
    response = templating.load().render(
        template, status_code, _PRIVATE, quem=visitor(request), aviso=aviso, **context
    )
    return notices.shown(request, response, aviso)


_PRIVATE = {"Cache-Control": "no-store", **VARY}
