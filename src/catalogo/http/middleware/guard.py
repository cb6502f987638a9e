"""The one middleware: what every request goes through before routing, in one pass.

1. Every response gets the security headers (`SECURITY_HEADERS`), one policy for every page,
   /docs included (the access log, outermost, adds them: a 500 gets them too).
   A path with a control character in it (`/produtos/5%0A`) is 404 before any route sees it.
2. `Host` must name this service (`CATALOGO_ALLOWED_HOSTS`), or 400: a page whose domain an
   attacker points at 127.0.0.1 (DNS rebinding) controls both `Host` and `Origin`, so only
   the name itself tells it from the service's own pages. One `Host`, and none only on
   HTTP/1.0 (RFC 9112 §3.2).
Writes, and only writes, then go through three more steps:
3. A write a browser sends on behalf of another site is refused (403), as Go 1.25's
   CrossOriginProtection does it, with no tokens: `Sec-Fetch-Site` when the browser sends it,
   else `Origin` against `Host`. Requests with neither header (curl, scripts, servers) are not
   from a browser and pass.
4. The body is read once, within the limit (413) and in time (408), before anything parses
   it (a body is whole once it has its `Content-Length`). Time, because a body that never ends
   holds its connection forever: each may take `CATALOGO_BODY_TIMEOUT_MS`, one more second
   for each `MIN_BODY_RATE` bytes that arrive
   (Apache's mod_reqtimeout rule), and never more than `MAX_BODY_TIMEOUTS` times that. A body
   cut short (the client hung up, or broken chunked framing) is 400, logged as no error.
   A file sent to the import (`IMPORT_PATH`) has its own limit, `CATALOGO_IMPORT_MAX_BYTES`,
   and up to `IMPORT_BODY_TIMEOUTS` times the body's time: that route only.
5. A form's `_method` overrides the method before routing, as in Rack's MethodOverride, and
   only for a POST of form data: `_method` in a query string or a JSON body, or on any other
   method, is ignored; and never on the import, whose form carries a file.
"""

import asyncio
import re
import urllib.parse

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalogo.domain.errors import (
    BadRequest,
    BodyTooLarge,
    CatalogoError,
    Forbidden,
    ImportTooLarge,
    TooSlow,
)
from catalogo.http import problems
from catalogo.http.bodies import keep_body, read_form
from catalogo.http.fast import Deadlines
from catalogo.http.negotiation import FORM_TYPES, header, media_type
from catalogo.runtime.settings import Settings

TWO_HOSTS = "A requisição traz mais de um cabeçalho Host; envie um só."
NO_HOST = "Falta o cabeçalho Host (ou veio vazio), obrigatório em HTTP/1.1."
BAD_HOST = "O cabeçalho Host não é um nome nem um endereço válido."
HOST_NOT_ALLOWED = (
    "Este serviço não atende pelo nome «{:.100}». Quem o administra pode incluí-lo em "
    "CATALOGO_ALLOWED_HOSTS."
)
BAD_CONTENT_LENGTH = "Content-Length inválido."
BODY_CUT_SHORT = (
    "O corpo da requisição terminou antes do anunciado, ou veio malformado (chunked). "
    "Nada foi gravado."
)
BAD_METHOD_OVERRIDE = "_method aceita apenas PUT ou DELETE (recebido «{:.50}»)."


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# No path of ours holds a control character, and Starlette's route patterns end in `$`, which
# also matches before a final line feed: `/produtos/5%0A` would be a second address of product 5.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
OVERRIDABLE = frozenset({"PUT", "DELETE"})
# A Host header's value, lowercased: a name or an address, and a port. No lazy quantifier:
# one cost a millisecond on an 8 KB Host, at every request an attacker sends.
_HOST = re.compile(rb"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?")
_MAX_HOST = 262  # a DNS name (253), a final dot, a port
_HOSTLESS = ("1.0", "1")  # HTTP/1.0 may omit Host (HAProxy's health checks do)
MIN_BODY_RATE = 1000  # bytes a second: what the slowest real upload sends, and more
MAX_BODY_TIMEOUTS = 6
IMPORT_PATH = "/produtos/importacoes"
IMPORT_BODY_TIMEOUTS = 30  # 20 MiB in 5 minutes by default: 70 KB/s
MAX_REMEMBERED_HOSTS = 256  # "localhost:1" to "localhost:65535" are all allowed: keep a few

_POLICY = {
    "default-src": "'none'",
    "style-src": "'self'",
    "img-src": "'self'",
    "script-src": "'self'",
    "connect-src": "'self'",  # /docs' Experimentar (static/docs.js)
    "form-action": "'self'",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
    "object-src": "'none'",
}


SECURITY_HEADERS = [
    (b"content-security-policy", "; ".join(f"{k} {v}" for k, v in _POLICY.items()).encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class Guard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.max_bytes = settings.max_body_bytes
        self.import_max_bytes = settings.import_max_bytes
        self.body_timeout = settings.body_timeout_ms / 1000
        self._deadlines = Deadlines(tick=min(1.0, self.body_timeout / 4))
        self.hosts = frozenset(h for h in settings.allowed_hosts if not h.startswith("."))
        self.domains = tuple(h for h in settings.allowed_hosts if h.startswith("."))
        self._accepted: set[bytes] = set()  # Host values seen and allowed: the usual few

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _CONTROL.search(scope["path"]):
            refusal: problems.Refusal | None = HTTPException(404)
        else:
            refusal = self._host_refusal(scope)
        if refusal is not None:
            await problems.respond(Request(scope, receive), refusal)(scope, receive, send)
            return
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            if not _same_origin(request):
                raise Forbidden("Envios a partir de outro site não são aceitos.")
            upload = scope["path"] == IMPORT_PATH and scope["method"] == "POST"
            body = await self._read(request, upload)
            keep_body(scope, body)
            if not upload and scope["method"] == "POST" and media_type(request)[0] in FORM_TYPES:
                form = await read_form(Request(scope, _replay(body, receive)), ("_method",))
                if "_method" in form:
                    scope["method"] = _overridden(form["_method"])
        except (HTTPException, CatalogoError) as error:
            await problems.respond(request, error)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _host_refusal(self, scope: Scope) -> problems.Refusal | None:
        host = None
        for name, value in scope["headers"]:
            if name == b"host":
                if host is not None:
                    return BadRequest(TWO_HOSTS)
                host = value
        if host in self._accepted:
            return None
        if not host:  # Granian passes a missing Host as an empty one, and HTTP/1.0 as "1"
            return None if scope["http_version"] in _HOSTLESS else BadRequest(NO_HOST)
        match = _HOST.fullmatch(host.lower()) if len(host) <= _MAX_HOST else None
        if match is None:
            return BadRequest(BAD_HOST)
        name = match[1].decode().removesuffix(".")
        if not (
            name in self.hosts
            or "*" in self.hosts
            or any(name.endswith(domain) or name == domain[1:] for domain in self.domains)
        ):
            return BadRequest(HOST_NOT_ALLOWED.format(name))
        if len(self._accepted) < MAX_REMEMBERED_HOSTS:
            self._accepted.add(host)
        return None

    async def _read(self, request: Request, upload: bool) -> bytes:
        declared = header(request, b"content-length")
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            raise BadRequest(BAD_CONTENT_LENGTH)
        max_bytes = self.import_max_bytes if upload else self.max_bytes
        too_large = ImportTooLarge if upload else BodyTooLarge
        if declared is not None and int(declared) > max_bytes:
            raise too_large(max_bytes)
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # noqa: S101 - an ASGI app always runs in a task
        start = loop.time()
        last = start + (IMPORT_BODY_TIMEOUTS if upload else MAX_BODY_TIMEOUTS) * self.body_timeout
        chunks: list[bytes] = []
        size = 0
        # Granian marks every chunk "more body" and says the body ended in a message of its
        # own, one more trip through its threads: a body that has all its declared length is
        # whole (HTTP frames it so), and waiting for that message cost a write 3-7% of its
        # answers (bench/results/history.md).
        expected = None if declared is None else int(declared)
        try:
            while True:
                deadline = min(start + self.body_timeout + size / MIN_BODY_RATE, last)
                if loop.time() > deadline:  # it trickled past the deadline between two checks
                    raise TooSlow()
                self._deadlines.watch(task, deadline)
                try:
                    message = await request.receive()
                except asyncio.CancelledError:
                    if self._deadlines.expired(task):
                        raise TooSlow() from None
                    raise
                if message["type"] == "http.disconnect":
                    raise BadRequest(BODY_CUT_SHORT)
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > max_bytes:
                    raise too_large(max_bytes)
                chunks.append(chunk)
                if not message.get("more_body", False) or size == expected:
                    return b"".join(chunks)
        finally:
            self._deadlines.forget(task)


def _overridden(value: str) -> str:
    method = value.upper()
    if method not in OVERRIDABLE:
        raise BadRequest(BAD_METHOD_OVERRIDE.format(value))
    return method


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # after the body: wait for the disconnect, as servers do
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _same_origin(request: Request) -> bool:
    site = header(request, b"sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = header(request, b"origin")
    if origin is None:
        return True
    try:
        return urllib.parse.urlsplit(origin).netloc == header(request, b"host")
    except ValueError:  # an Origin that is not a URL is no proof of the same site
        return False
