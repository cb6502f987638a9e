"""Who is asking, and whether they may: the HTTP side of domain/contas.py.

Every resource says what each of its methods needs (`Need`); `Resource.dispatch` asks `admit`
before the handler runs. What a need asks of the client depends on the mode, CATALOGO_AUTH:

    need        off        writes     all       (unset: off while no user exists, then writes)
    PUBLIC      -          -          -         /entrar, /healthz, /readyz
    READ        -          -          leitor    GET and HEAD of the catalog, /docs
    WRITE       -          editor     editor    every other method of the catalog
    STAFF       -          leitor     leitor    who changed what: history, trash, feed
    SIGNED_IN   any user   any user   any user  /conta
    ADMIN       admin      admin      admin     /usuarios, /tokens

Credentials are a session cookie (browsers, after /entrar) or `Authorization: Bearer cat_…`
(programs). Each is looked up in the database on every request that carries it, so that a
revoked token or an ended session stops at once on every instance; a request that carries
neither costs no lookup. Refusals: no credentials, a browser is sent to /entrar (303, the page
to come back to in `proximo`) and a program gets 401 with `WWW-Authenticate`; a token that is
malformed, unknown, expired or revoked is 401 wherever it is sent; a user without the role, 403.
"""

import enum
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

from catalogo.domain import contas
from catalogo.domain.contas import Papel, RoleTooLow
from catalogo.domain.errors import Unauthenticated
from catalogo.http import identity, templating
from catalogo.http.bodies import form_pairs
from catalogo.http.identity import Mode, here, request_id
from catalogo.http.middleware.guard import IMPORT_PATH, SECURITY_HEADERS
from catalogo.http.negotiation import FORM_TYPES, header, media_type, prefers_json
from catalogo.http.problems import CHALLENGE
from catalogo.runtime.kept import Kept
from catalogo.runtime.settings import Settings
from catalogo.storage import Storage

SESSION_COOKIE = "sessao"
SECURE_SESSION_COOKIE = "__Host-sessao"  # the browser keeps it to this host, over HTTPS only
# A path of this site, as a URL writes it: printable ASCII (anything else percent-encoded, as
# `here` does), never a second slash or a backslash right after the first (another host).
_LOCAL_PATH = re.compile(r"/(?![/\\])[!-\[\]-~]*", re.ASCII)
_NEXT_LIMIT = 2048
KEPT_CREDENTIALS = 1_000  # Authorization and Cookie headers kept, each way (`_kept`)
KEPT_HEADER_BYTES = 512
_SESSION_COOKIE_NAMES = {False: SESSION_COOKIE.encode(), True: SECURE_SESSION_COOKIE.encode()}
# The session cookies in a Cookie header: found without parsing the other cookies (a fifth of
# a signed-in page's cost went to Starlette's cookie_parser).
_SESSION_COOKIES = re.compile(rb"(?:^|;)\s*((?:__Host-)?sessao)=([^;]*)")


class Need(enum.Enum):
    PUBLIC = "public"
    READ = "read"
    WRITE = "write"
    STAFF = "staff"
    SIGNED_IN = "signed_in"
    ADMIN = "admin"


def required(need: Need, mode: Mode) -> Papel | Literal["any"] | None:
    """The role a need asks for under a mode: None, nobody need sign in; "any", any user."""
    if need is Need.READ:
        return "leitor" if mode == "all" else None
    if need is Need.WRITE:
        return None if mode == "off" else "editor"
    if need is Need.STAFF:
        return None if mode == "off" else "leitor"
    if need is Need.SIGNED_IN:
        return "any"
    return "admin" if need is Need.ADMIN else None


@dataclass(frozen=True)
class _Credential:
    """A secret a request carries, as storage looks it up: its digest, or None when it is not
    of the form the service makes (contas.is_token, is_session_secret)."""

    digest: str | None


def _bearer(authorization: bytes) -> _Credential:
    scheme, _, token = authorization.decode("latin-1").strip().partition(" ")
    secret = token.strip() if scheme.lower() == "bearer" else ""
    return _Credential(contas.digest(secret) if contas.is_token(secret) else None)


def _session(cookie: bytes, wanted: bytes) -> _Credential | None:
    session = None
    for found, secret in _SESSION_COOKIES.findall(cookie):
        if found == wanted:  # the last one, as a parser's dict would keep
            session = secret.strip().decode("latin-1")
    if session is None:
        return None
    return _Credential(contas.digest(session) if contas.is_session_secret(session) else None)


def _kept(
    kept: Kept[bytes, _Credential | None],
    value: bytes,
    make: Callable[..., _Credential | None],
    *args: Any,
) -> _Credential | None:
    """`make(value, *args)`, kept by the header's value: a client sends the same Cookie or
    Authorization on every request, and finding the secret in it, checking its form and
    hashing it were a tenth of a signed-in edit page's cost. Whether the secret is still good
    is asked of storage on every request all the same. Bounded: KEPT_CREDENTIALS values of up
    to KEPT_HEADER_BYTES (a longer header is read each time)."""
    if value in kept:
        return kept[value]
    made = make(value, *args)
    if len(value) <= KEPT_HEADER_BYTES:
        kept.keep(value, made)
    return made


class Access:
    """One per app: the mode now, and who a request's credentials name."""

    def __init__(self, settings: Settings, storage: Storage) -> None:
        self.settings = settings
        self.storage = storage
        self._users_exist = False  # once true, true for good: users are never deleted
        self._users_checked = 0.0
        self._users_recheck_s = settings.users_recheck_ms / 1000
        self._kept_tokens: Kept[bytes, _Credential | None] = Kept(KEPT_CREDENTIALS)
        self._kept_sessions = {
            https: Kept[bytes, _Credential | None](KEPT_CREDENTIALS) for https in (False, True)
        }

    async def mode(self) -> Mode:
        """CATALOGO_AUTH, or when unset: off while no user exists, writes once one does. The
        first user takes effect within CATALOGO_USERS_RECHECK_MS: asking the database on every
        request of a fresh install cost a fifth of its fastest answers (the new-product form)."""
        if self.settings.auth is not None:
            return self.settings.auth
        if not self._users_exist:
            now = time.monotonic()
            if now - self._users_checked >= self._users_recheck_s:
                self._users_checked = now
                self._users_exist = await self.storage.users_exist()
        return "writes" if self._users_exist else "off"

    async def admit(self, request: Request, need: Need) -> Response | None:
        """None when the request may go on (its principal noted for identity.principal), or
        the refusal to send instead."""
        if need is Need.PUBLIC:
            return None
        bearer, session = self._credentials(request)
        now = time.time()
        principal = None
        if bearer is not None:
            if bearer.digest is None or not (
                principal := await self.storage.token_principal(bearer.digest, now)
            ):
                return await _unauthenticated(request, invalid=True)
        elif session is not None and session.digest is not None:
            principal = await self.storage.session_principal(session.digest, now)
        mode = await self.mode()
        ended = session is not None and principal is None
        identity.note(request, principal, mode, ended)
        role = required(need, mode)
        if role is None:
            return None
        if principal is None:
            return await _unauthenticated(request, ended=ended)
        if role != "any" and not contas.allows(principal.papel, role):
            raise RoleTooLow(principal.papel, role)
        return None

    def _credentials(self, request: Request) -> tuple[_Credential | None, _Credential | None]:
        """The bearer token and the session secret the request carries, if any; an
        Authorization of any other kind counts as a bad token. A request that carries neither
        costs a look at its headers' names."""
        bearer = session = None
        for name, value in request.scope["headers"]:
            if name == b"authorization":
                bearer = _kept(self._kept_tokens, value, _bearer)
            # find, not `in`: `in` tries the part as a byte first, and formats a TypeError
            elif name == b"cookie" and value.find(b"sessao=") != -1:
                https = self.over_https(request)
                wanted = _SESSION_COOKIE_NAMES[https]
                session = _kept(self._kept_sessions[https], value, _session, wanted) or session
        return bearer, session

    def over_https(self, request: Request) -> bool:
        """Whether the client reached us over HTTPS: directly, or through a trusted balancer
        that says so in X-Forwarded-Proto."""
        if request.scope["scheme"] == "https":
            return True
        return (
            bool(self.settings.trusted_proxies)
            and self._from_balancer(request)
            and (header(request, b"x-forwarded-proto") or "").strip().lower() == "https"
        )

    def client_address(self, request: Request) -> str:
        """The client's address: the peer's, or when the peer is a trusted balancer, the last
        address it put in X-Forwarded-For."""
        peer = request.client.host if request.client else ""
        if not self._from_balancer(request):
            return peer
        forwarded = ",".join(request.headers.getlist("x-forwarded-for"))
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        return hops[-1][:64] if hops else peer

    def _from_balancer(self, request: Request) -> bool:
        """The peer is one of CATALOGO_TRUSTED_PROXIES, whose X-Forwarded-* we believe."""
        trusted = self.settings.trusted_proxies
        peer = request.scope.get("client")
        return bool(trusted) and peer is not None and peer[0] in trusted


def session_cookie(https: bool) -> str:
    return SECURE_SESSION_COOKIE if https else SESSION_COOKIE


def local_path(value: str | None, default: str = "/produtos") -> str:
    """Where to go after signing in: a path of this site, never another site (`//evil`,
    `/\\evil`, a scheme) whatever `proximo` says."""
    if value and len(value) <= _NEXT_LIMIT and _LOCAL_PATH.fullmatch(value):
        return value
    return default


async def _unauthenticated(
    request: Request, invalid: bool = False, ended: bool = False
) -> Response:
    """A program gets 401. A browser is sent to sign in and back; a form it posted is not
    lost: the sign-in page keeps it (in the page, never in a URL) and sends it once signed in
    (`resume`)."""
    if invalid or prefers_json(request):
        raise Unauthenticated(invalid)
    uploading = request.method == "POST" and request.url.path == IMPORT_PATH
    if request.method in ("GET", "HEAD") or uploading:
        # An import's file cannot be kept in a page: the browser comes back to choose it again.
        query = {"proximo": here(request), **({"motivo": "sessao"} if ended else {})}
        location = f"/entrar?{urllib.parse.urlencode(query)}"
        return Response(status_code=303, headers={"Location": location})
    if media_type(request)[0] not in FORM_TYPES:
        raise Unauthenticated(invalid)
    sent = [(name, value) for name, value in await form_pairs(request) if name != "_method"]
    if request.method != "POST":
        sent.append(("_method", request.method))
    verb = "remover" if request.method == "DELETE" else "salvar"
    return sign_in_page(
        here(request, with_query=False),
        aviso=f"Sua sessão terminou; entre de novo para {verb}. O que você enviou está guardado "
        f"nesta página e será enviado assim que você entrar.",
        pendente=urllib.parse.urlencode(sent),
        status_code=401,
        headers={"WWW-Authenticate": CHALLENGE},
    )


# What a write sent again once signed in (`resume`) takes from the request that signed in.
_RESUMED_HEADERS = frozenset(
    (b"host", b"origin", b"sec-fetch-site", b"user-agent", b"accept", b"accept-language")
) | {b"x-forwarded-for", b"x-forwarded-proto"}
# What the app adds to every answer (http/middleware/outermost.py): the answer resumed gets them
# from this one.
_ADDED_LATER = frozenset([*(name for name, _ in SECURITY_HEADERS), b"x-request-id"])


async def resume(request: Request, path: str, pendente: str, cookie: str) -> Response:
    """Sends the write the sign-in page kept (`pendente`, a form's fields) to `path`, as the
    browser first did, now with the new session: through the whole app (the guard, access,
    the handler, a merge if the product moved on), so it is answered as if sent again. Its
    request id is this request's. `cookie` names the new session (`name=secret`). A write
    kept inside a write kept (a sign-in form sent as the pending write) is not sent again: a
    request resumes at most one other."""
    if request.scope.get(_RESUMED):
        return Response(status_code=303, headers={"Location": path})
    body = pendente.encode()
    path, _, query = path.partition("?")
    headers = [
        (name, value) for name, value in request.scope["headers"] if name in _RESUMED_HEADERS
    ]
    headers += [
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", str(len(body)).encode()),
        (b"cookie", cookie.encode("latin-1")),
        (b"x-request-id", request_id(request).encode()),
    ]
    scope = {
        **{k: v for k, v in request.scope.items() if k in _RESUMED_SCOPE},
        "method": "POST",
        "path": urllib.parse.unquote(path),
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": headers,
        _RESUMED: True,
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    answer: dict[str, Any] = {"body": b""}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = [
                (name, value) for name, value in message["headers"] if name not in _ADDED_LATER
            ]
        else:
            answer["body"] += message.get("body", b"")

    await request.app(scope, receive, send)
    response = Response(answer["body"], answer["status"])
    response.raw_headers = [
        (name, value) for name, value in answer["headers"] if name != b"content-length"
    ] + [(b"content-length", str(len(answer["body"])).encode())]
    return response


_RESUMED = "catalogo.resumed"
_RESUMED_SCOPE = frozenset(
    ["type", "asgi", "http_version", "scheme", "server", "client", "root_path", "app", "state"]
)


# Why the sign-in page is shown, by the page it leads back to.
_WHY = (
    (re.compile(r"/produtos/novo(?:\?.*)?"), "Entre para adicionar produtos."),
    (re.compile(r"/produtos/[0-9]+/historico(?:\?.*)?"), "Entre para ver o histórico do produto."),
    (re.compile(r"/produtos/removidos(?:\?.*)?"), "Entre para ver os produtos removidos."),
    (re.compile(r"/produtos/importacoes(?:[/?].*)?"), "Entre para importar produtos."),
    (re.compile(r"/(?:usuarios|tokens)(?:[/?].*)?"), "Entre como admin para ver esta página."),
    (re.compile(r"/conta(?:[/?].*)?"), "Entre para ver a sua conta."),
    (re.compile(r"/.*"), "Entre para ver o catálogo."),
)


def why_sign_in(proximo: str, motivo: str | None) -> str | None:
    """What the sign-in page says of why it is shown: nothing when asked for directly."""
    if motivo == "sessao":
        return "Sua sessão terminou; entre de novo para continuar."
    if proximo == "/produtos":
        return None
    return next(text for pattern, text in _WHY if pattern.fullmatch(proximo))


def sign_in_page(
    proximo: str,
    nome: str = "",
    erro: str | None = None,
    aviso: str | None = None,
    pendente: str = "",
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """/entrar's form: `proximo` is where to go once signed in, and `pendente` a form write
    refused for want of a session, to send there then."""
    return templating.load().render(
        "contas/entrar.html",
        status_code,
        {"Cache-Control": "no-store", **(headers or {})},
        proximo=proximo,
        nome=nome,
        erro=erro,
        aviso=aviso,
        pendente=pendente,
    )
