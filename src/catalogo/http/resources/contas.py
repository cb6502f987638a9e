"""Staff accounts in the browser: signing in (/entrar) and out (/sair), one's own account
(/conta: password, sessions), and for admins the users (/usuarios) and API tokens (/tokens),
what the `catalogo usuarios` and `catalogo tokens` commands do.

Signing in checks the password off the event loop (domain/senhas.py), throttles failures per
name and address (contas.throttled), and answers one message for a wrong name and a wrong
password alike. Success makes a new session (a new secret, whatever cookie came in), kept in
the database and named by an HttpOnly, SameSite=Lax cookie that lives as long as the session:
CATALOGO_SESSAO_HORAS, never extended.
"""

import time

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import contas
from catalogo.domain.contas import (
    ContaInvalida,
    NotForOneself,
    Principal,
    SessionNeeded,
    UnknownUser,
    UserExists,
)
from catalogo.domain.errors import BadRequest, NotFound
from catalogo.http.access import Need, local_path, resume, session_cookie, sign_in_page, why_sign_in
from catalogo.http.bodies import read_form
from catalogo.http.fast import write_cookie
from catalogo.http.identity import principal
from catalogo.http.negotiation import HTML
from catalogo.http.pages import notices
from catalogo.http.pages.contas_pages import account_page, tokens_page, users_page
from catalogo.http.resources import Resource, negotiate
from catalogo.http.shared import Shared, shared_of
from catalogo.services.contas import (
    change_password,
    change_role,
    check_password,
    close_session,
    create_user,
    end_sessions,
    issue_token,
    open_session,
    revoke_token,
)

WRONG = "Nome ou senha incorretos."
MISSING = "Informe o nome de usuário e a senha."
_USER_AGENT_LIMIT = 200
_PUBLIC = {method: Need.PUBLIC for method in ("GET", "HEAD", "POST", "OPTIONS")}
# A sign-in or sign-out is never answered from a cache: the pages after it are someone else's.
_NOT_KEPT = {"Cache-Control": "no-store"}


class EntrarResource(Resource):
    """/entrar: the sign-in form (GET), and signing in (POST)."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        proximo = local_path(request.query_params.get("proximo"))
        why = why_sign_in(proximo, request.query_params.get("motivo"))
        return sign_in_page(proximo, aviso=why)

    async def post(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        form = await read_form(request, ("nome", "senha", "proximo", "pendente"))
        proximo = local_path(form.get("proximo"))
        pendente = form.get("pendente", "")
        nome = form.get("nome", "").strip().lower()[: contas.NOME_MAXIMO + 1]
        senha = form.get("senha", "")
        if not nome or not senha:
            return sign_in_page(proximo, nome, MISSING, pendente=pendente, status_code=422)
        shared = shared_of(request)
        now = time.time()
        address = shared.access.client_address(request)
        usuario = await _checked(shared, nome, senha, address, now)
        if usuario is None:
            return sign_in_page(proximo, nome, WRONG, pendente=pendente, status_code=422)
        https = shared.access.over_https(request)
        lifetime = shared.settings.session_hours * 3600
        secret = await open_session(
            shared.storage,
            usuario,
            lifetime,
            address,
            request.headers.get("user-agent", "")[:_USER_AGENT_LIMIT],
            now,
            request.cookies.get(session_cookie(https)),
        )
        if pendente:  # a write refused when the session had ended: sent now
            response = await resume(request, proximo, pendente, f"{session_cookie(https)}={secret}")
        else:
            response = Response(status_code=303, headers={"Location": proximo})
        response.headers.update(_NOT_KEPT)
        _set_cookie(response, https, secret, lifetime)
        return response


class SairResource(Resource):
    """/sair: ends this browser's session (POST), and goes to the sign-in page."""

    needs = _PUBLIC

    async def post(self, request: Request) -> Response:
        shared = shared_of(request)
        https = shared.access.over_https(request)
        await close_session(shared.storage, request.cookies.get(session_cookie(https)))
        response = Response(status_code=303, headers={"Location": "/entrar", **_NOT_KEPT})
        _set_cookie(response, https, "", 0)
        return response


async def _checked(
    shared: Shared, nome: str, senha: str, address: str, now: float
) -> contas.Usuario | None:
    """services.contas.check_password; its refusals (Throttled: 429, Busy: 503) are answered
    as they are."""
    return await check_password(shared.storage, shared.passwords, nome, senha, address, now)


JUST_MADE_COOKIE = "token_novo"


def _set_new_token(response: Response, https: bool, value: str, lifetime: int) -> None:
    """`value` is the token's id, a dot and its secret: characters a cookie takes as they are."""
    write_cookie(
        response,
        JUST_MADE_COOKIE,
        value,
        https=https,
        max_age=lifetime,
        path="/tokens",
        same_site="Strict",
    )


def _set_cookie(response: Response, https: bool, secret: str, lifetime: int) -> None:
    """The session's: `__Host-` (HTTPS) pins it to this host."""
    write_cookie(response, session_cookie(https), secret, https=https, max_age=lifetime)


_SIGNED_IN = {method: Need.SIGNED_IN for method in ("GET", "HEAD", "POST", "PUT", "DELETE")}
_ADMIN = {method: Need.ADMIN for method in ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS")}


class ContaResource(Resource):
    """/conta: who you are, your password, your sessions."""

    needs = _SIGNED_IN

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return await account_page(request, _browser_user(request), None)


class SenhaResource(Resource):
    """/conta/senha: changes your own password (POST), which ends your other sessions. The
    current password is asked for, and its failures count as failed sign-ins."""

    needs = _SIGNED_IN

    async def post(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        who = _browser_user(request)
        form = await read_form(request, ("atual", "nova", "repetida"))
        shared = shared_of(request)
        address = shared.access.client_address(request)
        if not await _checked(shared, who.nome, form.get("atual", ""), address, time.time()):
            return await account_page(request, who, "A senha atual não confere.", 422)
        try:
            await change_password(
                shared.storage,
                shared.passwords,
                who.nome,
                form.get("nova", ""),
                form.get("repetida", ""),
                keep_session=who.session_id,
            )
        except ContaInvalida as refused:
            return await account_page(request, who, str(refused), 422)
        return notices.back_to_account_page(request, "/conta", "senha")


class SessoesResource(Resource):
    """/conta/sessoes: ends every session of yours, this one too (DELETE)."""

    needs = _SIGNED_IN

    async def delete(self, request: Request) -> Response:
        who = _browser_user(request)
        shared = shared_of(request)
        await end_sessions(shared.storage, who.usuario_id)
        response = Response(status_code=303, headers={"Location": "/entrar"})
        _set_cookie(response, shared.access.over_https(request), "", 0)
        return response


class SessaoResource(Resource):
    """/conta/sessoes/{id}: ends one of your sessions (DELETE), another browser's."""

    needs = _SIGNED_IN

    async def delete(self, request: Request) -> Response:
        who = _browser_user(request)
        id = request.path_params["id"]
        await end_sessions(shared_of(request).storage, who.usuario_id, only=id)
        return notices.back_to_account_page(request, "/conta", "sessao")


class UsuariosResource(Resource):
    """/usuarios: the users (GET) and a new one (POST); for admins."""

    needs = _ADMIN

    async def get(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        negotiate(request, (HTML,))
        return await users_page(request, None)

    async def post(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        negotiate(request, (HTML,))
        form = await read_form(request, ("nome", "papel", "senha"))
        shared = shared_of(request)
        try:
            made = await create_user(
                shared.storage,
                shared.passwords,
                form.get("nome", ""),
                form.get("papel", ""),
                form.get("senha", ""),
            )
        except ContaInvalida as refused:
            return await users_page(request, str(refused), form, 422)
        except UserExists as taken:
            return await users_page(request, taken.message, form, 422)
        said = f"criado:{made.nome}:{made.papel}"
        return notices.back_to_account_page(request, "/usuarios", said)


class UsuarioResource(Resource):
    """/usuarios/{nome}: changes a user's role or deactivates them (PUT), for admins; never
    one's own, so that the last admin cannot lock everyone out."""

    needs = _ADMIN

    async def put(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        who = _browser_user(request)
        try:
            nome = contas.parse_nome(request.path_params["nome"])
        except ContaInvalida:
            raise NotFound("Não há usuário com este nome.") from None
        if nome == who.nome:
            raise NotForOneself()
        form = await read_form(request, ("papel", "ativo"))
        try:
            papel = contas.parse_papel(form.get("papel", ""))
        except ContaInvalida as refused:
            raise BadRequest(str(refused)) from None
        if form.get("ativo") not in ("sim", "nao"):
            raise BadRequest("«ativo» deve ser sim ou nao.")
        changed = await change_role(shared_of(request).storage, nome, papel, form["ativo"] == "sim")
        said = f"alterado:{changed.nome}:{changed.papel}:{'sim' if changed.ativo else 'nao'}"
        return notices.back_to_account_page(request, "/usuarios", said)


class TokensResource(Resource):
    """/tokens: every token (GET) and a new one (POST); for admins.

    A new token's secret must be shown once, and a browser's write answered with 303 so that
    reloading never makes a second token: the secret rides the redirect in a cookie of a
    minute's life, HttpOnly, SameSite=Strict and only for /tokens, which the page it leads to
    shows and deletes."""

    needs = _ADMIN

    async def get(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        negotiate(request, (HTML,))
        id, _, secret = request.cookies.get(JUST_MADE_COOKIE, "").partition(".")
        if not contas.is_token(secret):
            return await tokens_page(request)
        shown = await tokens_page(request, novo=int(id) if id.isdigit() else None, segredo=secret)
        _set_new_token(shown, shared_of(request).access.over_https(request), "", 0)
        return shown

    async def post(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        negotiate(request, (HTML,))
        form = await read_form(request, ("nome", "usuario", "papel", "expira"))
        try:
            token, secret = await issue_token(
                shared_of(request).storage,
                form.get("usuario", ""),
                form.get("nome", ""),
                form.get("papel") or None,
                form.get("expira", "").strip(),
            )
        except ContaInvalida as refused:
            return await tokens_page(
                request, erro=str(refused), valores=form, status_code=422, campo=refused.campo
            )
        except UnknownUser:
            refusal = "Escolha um usuário da lista."
            return await tokens_page(
                request, erro=refusal, valores=form, status_code=422, campo="usuario"
            )
        response = Response(status_code=303, headers={"Location": "/tokens"})
        https = shared_of(request).access.over_https(request)
        _set_new_token(response, https, f"{token.id}.{secret}", 60)
        return response


class TokenResource(Resource):
    """/tokens/{id}: revokes a token (DELETE), at once on every instance; for admins."""

    needs = _ADMIN

    async def delete(self, request: Request) -> Response:
        _browser_user(request)  # tokens, admin ones too, never manage accounts
        id = request.path_params["id"]
        await revoke_token(shared_of(request).storage, id)
        return notices.back_to_account_page(request, "/tokens", "revogado")


def _browser_user(request: Request) -> Principal:
    """The user of a browser session: account pages are not for tokens, which act for
    programs (a leaked token must not change its user's password)."""
    who = principal(request)
    if who is None or who.session_id is None:
        raise SessionNeeded()
    return who
