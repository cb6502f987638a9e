"""HTTP machinery that runs before routing: body limit, strict forms, method override, guards.

The statuses this module answers with, each with a message that says what to send instead:

    400  a body that is not UTF-8, a broken multipart body, a bad Content-Length,
         a `_method` other than PUT or DELETE, one field sent twice with two values
    403  a write from another site (the browser's Sec-Fetch-Site, else Origin vs Host)
    413  a body over the limit, refused before it is parsed
    415  a body that is not form data, or form data in a charset other than UTF-8
"""

import urllib.parse
from collections.abc import Callable
from io import BytesIO
from typing import Any

import python_multipart
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})
OVERRIDABLE = frozenset({"PUT", "DELETE"})
MAX_FIELDS = 1000
_FORM_KEY = "catalogo.form"

ErrorPage = Callable[[Request, HTTPException], Response]

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def _media_type(request: Request) -> tuple[str, dict[bytes, bytes]]:
    media_type, options = parse_options_header(request.headers.get("content-type", ""))
    return media_type.decode("latin-1").lower(), options


async def read_form(request: Request) -> dict[str, str]:
    """The request's form fields, decoded strictly; parsed once per request and kept."""
    cached: dict[str, str] | None = request.scope.get(_FORM_KEY)
    if cached is not None:
        return cached
    media_type, options = _media_type(request)
    if media_type not in FORM_TYPES:
        raise HTTPException(
            415,
            "Envie os dados como formulário: application/x-www-form-urlencoded "
            "ou multipart/form-data.",
        )
    charset = options.get(b"charset", b"utf-8").lower()
    if charset not in (b"utf-8", b"utf8"):
        raise HTTPException(415, "Envie o formulário em UTF-8.")
    body = await request.body()
    try:
        if media_type == "multipart/form-data":
            pairs = _multipart(request, body)
        else:
            pairs = urllib.parse.parse_qsl(
                body.decode(), keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS
            )
    except UnicodeDecodeError:
        raise HTTPException(400, "O corpo da requisição não é UTF-8 válido.") from None
    except (ValueError, FormParserError) as erro:
        raise HTTPException(400, f"Formulário malformado: {erro}.") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if form.setdefault(name, value) != value:
            raise HTTPException(
                400, f"O campo «{name}» veio mais de uma vez, com valores diferentes."
            )
    request.scope[_FORM_KEY] = form
    return form


def _multipart(request: Request, body: bytes) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    files: list[str] = []

    def on_field(field: Any) -> None:
        pairs.append((field.field_name.decode(), (field.value or b"").decode()))

    def on_file(file: Any) -> None:
        files.append((file.field_name or b"").decode(errors="replace"))

    headers = {"Content-Type": request.headers["content-type"].encode("latin-1")}
    python_multipart.parse_form(headers, BytesIO(body), on_field, on_file)
    if len(pairs) > MAX_FIELDS:
        raise ValueError(f"mais de {MAX_FIELDS} campos")
    if files:
        raise HTTPException(400, f"Este formulário não aceita arquivos (campo «{files[0]}»).")
    return pairs


class WriteGuard:
    """Everything a write goes through before routing, in one pass; reads pass straight by.

    1. A write a browser sends on behalf of another site is refused (403), as Go 1.25's
       CrossOriginProtection does it, with no tokens: `Sec-Fetch-Site` when the browser sends
       it, else `Origin` against `Host`. Requests with neither header (curl, scripts, servers)
       are not from a browser and pass.
    2. The body is read once, within the limit (413), before anything parses it.
    3. A form's `_method` overrides the method before routing, as in Rack's MethodOverride,
       and only for a POST of form data: `_method` in a query string or a JSON body, or on any
       other method, is ignored.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, error_page: ErrorPage) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.error_page = error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            if not _same_origin(request):
                raise HTTPException(403, "Envios a partir de outro site não são aceitos.")
            body = await self._read(request)
            if scope["method"] == "POST" and _media_type(request)[0] in FORM_TYPES:
                form = await read_form(Request(scope, _replay(body, receive)))
                if "_method" in form:
                    scope["method"] = _overridden(form["_method"])
        except HTTPException as erro:
            await self.error_page(request, erro)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            raise HTTPException(400, "Content-Length inválido.")
        if declared is not None and int(declared) > self.max_bytes:
            raise self._too_large()
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_bytes:
                raise self._too_large()
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self) -> HTTPException:
        return HTTPException(
            413, f"O corpo da requisição passa do limite de {self.max_bytes} bytes."
        )


def _overridden(value: str) -> str:
    method = value.upper()
    if method not in OVERRIDABLE:
        raise HTTPException(400, f"_method aceita apenas PUT ou DELETE (recebido «{value[:50]}»).")
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
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    try:
        return urllib.parse.urlsplit(origin).netloc == request.headers.get("host")
    except ValueError:  # an Origin that is not a URL is no proof of the same site
        return False


class SecurityHeaders:
    """Adds the security headers to every response and keeps HEAD answers bodiless."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
            elif head and message["type"] == "http.response.body":
                message["body"] = b""
            await send(message)

        await self.app(scope, receive, send_with_headers)
