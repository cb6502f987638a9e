"""Staff accounts in the browser: signing in (/entrar) and out (/sair).

Signing in checks the password off the event loop (accounts.Passwords), throttles failures per
name and address (accounts.throttled), and answers one message for a wrong name and a wrong
password alike. Success makes a new session (a new secret, whatever cookie came in), kept in
the database and named by an HttpOnly, SameSite=Lax cookie that lives as long as the session:
CATALOGO_SESSAO_HORAS, never extended.
"""

import time
import unicodedata

from starlette.requests import Request
from starlette.responses import Response

from catalogo import accounts, errors, pages
from catalogo.access import Need, client_address, local_path, session_cookie
from catalogo.accounts import Busy
from catalogo.bodies import read_form
from catalogo.negotiation import HTML
from catalogo.resources import Resource, negotiate, services

WRONG = "Nome ou senha incorretos."
MISSING = "Informe o nome de usuário e a senha."
_USER_AGENT_LIMIT = 200
_PUBLIC = {method: Need.PUBLIC for method in ("GET", "HEAD", "POST", "OPTIONS")}


class EntrarResource(Resource):
    """/entrar: the sign-in form (GET), and signing in (POST)."""

    needs = _PUBLIC

    async def get(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        return _page(local_path(request.query_params.get("proximo")), "", None)

    async def post(self, request: Request) -> Response:
        negotiate(request, (HTML,))
        form = await read_form(request, ("nome", "senha", "proximo"))
        proximo = local_path(form.get("proximo"))
        nome = form.get("nome", "").strip().lower()[: accounts.NOME_MAXIMO + 1]
        senha = unicodedata.normalize("NFC", form.get("senha", ""))
        if not nome or not senha:
            return _page(proximo, nome, MISSING, 422)
        shared = services(request)
        storage = shared.storage
        now = time.time()
        address = client_address(request, shared.settings.trusted_proxies)
        wait = accounts.throttled(await storage.sign_in_failures(nome, address, now), now)
        if wait is not None:
            raise errors.too_many_sign_ins(wait)
        found = await storage.user(nome)
        usuario, stored = found if found is not None and found[0].ativo else (None, None)
        try:
            ok = len(senha) <= accounts.SENHA_MAXIMA and await shared.passwords.verify(
                stored, senha
            )
        except Busy:
            raise errors.sign_ins_busy() from None
        await storage.record_sign_in(nome, address, ok, now)
        if not ok or usuario is None or stored is None:
            return _page(proximo, nome, WRONG, 422)
        if shared.passwords.needs_rehash(stored):
            rehashed = await shared.passwords.hash(senha)
            await storage.update_user(usuario.nome, password_hash=rehashed, same_password=True)
        https = shared.gate.over_https(request)
        old = request.cookies.get(session_cookie(https))
        if old is not None and accounts.is_session_secret(old):
            await storage.end_session(accounts.digest(old))
        secret = accounts.new_session_secret()
        lifetime = shared.settings.session_hours * 3600
        user_agent = request.headers.get("user-agent", "")[:_USER_AGENT_LIMIT]
        await storage.create_session(
            usuario.id, accounts.digest(secret), now, now + lifetime, address, user_agent
        )
        response = Response(status_code=303, headers={"Location": proximo})
        _set_cookie(response, https, secret, lifetime)
        return response


class SairResource(Resource):
    """/sair: ends this browser's session (POST), and goes to the sign-in page."""

    needs = _PUBLIC

    async def post(self, request: Request) -> Response:
        shared = services(request)
        https = shared.gate.over_https(request)
        secret = request.cookies.get(session_cookie(https))
        if secret is not None and accounts.is_session_secret(secret):
            await shared.storage.end_session(accounts.digest(secret))
        response = Response(status_code=303, headers={"Location": "/entrar"})
        _set_cookie(response, https, "", 0)
        return response


def _set_cookie(response: Response, https: bool, secret: str, lifetime: int) -> None:
    """Written out as produtos.py writes its notice; `__Host-` (HTTPS) pins it to this host."""
    secure = "; Secure" if https else ""
    cookie = (
        f"{session_cookie(https)}={secret}; HttpOnly; Max-Age={lifetime}; Path=/; "
        f"SameSite=Lax{secure}"
    )
    response.raw_headers.append((b"set-cookie", cookie.encode("latin-1")))


def _page(proximo: str, nome: str, erro: str | None, status_code: int = 200) -> Response:
    return pages.load().render(
        "contas/entrar.html",
        status_code,
        {"Cache-Control": "no-store"},
        proximo=proximo,
        nome=nome,
        erro=erro,
    )
