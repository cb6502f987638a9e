"""HTTP machinery: guards before routing, strict bodies, negotiation, problem details.

The statuses this module answers with, each with a message that says what to send instead:

    400  a body that is not UTF-8, a broken multipart body, malformed JSON or JSON that is
         not an object, a bad Content-Length, a `_method` other than PUT or DELETE, one
         field sent twice with two values
    403  a write from another site (the browser's Sec-Fetch-Site, else Origin vs Host)
    406  an Accept that rules out both HTML and JSON
    413  a body over the limit, refused before it is parsed
    415  a body that is neither form data nor JSON, or not in UTF-8

Errors reach JSON clients as RFC 9457 problem details (`problem()`), browsers as pages.
"""

import functools
import json
import math
import urllib.parse
from collections.abc import Callable, Collection, Sequence
from decimal import Decimal
from http import HTTPStatus
from io import BytesIO
from typing import Any

import orjson
import python_multipart
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HTML = "text/html"
JSON = "application/json"
PROBLEM = "application/problem+json"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})
OVERRIDABLE = frozenset({"PUT", "DELETE"})
MAX_FIELDS = 1000
_FORM_KEY = "catalogo.form"

ErrorPage = Callable[[Request, HTTPException], Response]

CSP = b"content-security-policy"
CSP_KEY = "catalogo.csp"
SECURITY_HEADERS = [
    (
        CSP,
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


async def read_form(request: Request, fields: Collection[str]) -> dict[str, str]:
    """The values the form gives for `fields`, decoded strictly.

    One of `fields` sent twice with two values is ambiguous, so 400; other fields are ignored.
    The body is parsed once per request and kept.
    """
    pairs: list[tuple[str, str]] | None = request.scope.get(_FORM_KEY)
    if pairs is None:
        pairs = await _parse_form(request)
        request.scope[_FORM_KEY] = pairs
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in fields and form.setdefault(name, value) != value:
            raise HTTPException(
                400, f"O campo «{name}» veio mais de uma vez, com valores diferentes."
            )
    return form


async def _parse_form(request: Request) -> list[tuple[str, str]]:
    media_type, options = _media_type(request)
    if media_type not in FORM_TYPES:
        raise _unsupported()
    _check_utf8(options)
    body = await request.body()
    try:
        if media_type == "multipart/form-data":
            return _multipart(request, body)
        return urllib.parse.parse_qsl(
            body.decode(), keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS
        )
    except UnicodeDecodeError:
        raise HTTPException(400, "O corpo da requisição não é UTF-8 válido.") from None
    except (ValueError, FormParserError) as erro:
        raise HTTPException(400, f"Formulário malformado: {erro}.") from None


def _unsupported() -> HTTPException:
    return HTTPException(
        415,
        "Envie os dados como JSON (application/json) ou formulário "
        "(application/x-www-form-urlencoded ou multipart/form-data).",
    )


def _check_utf8(options: dict[bytes, bytes]) -> None:
    if options.get(b"charset", b"utf-8").lower() not in (b"utf-8", b"utf8"):
        raise HTTPException(415, "Envie os dados em UTF-8.")


def body_is_json(request: Request) -> bool:
    content_type = request.headers.get("content-type")
    return content_type is not None and _media_type(request)[0] == JSON


async def read_json(request: Request) -> dict[str, Any]:
    """The request's JSON object. Numbers with a fraction stay exact (Decimal, never float)."""
    media_type, options = _media_type(request)
    if media_type != JSON:
        raise _unsupported()
    _check_utf8(options)
    try:
        value = json.loads(
            (await request.body()).decode(),
            parse_float=_exact_number,
            parse_constant=_refuse_constant,
            object_pairs_hook=_no_repeated_keys,
        )
    except UnicodeDecodeError:
        raise HTTPException(400, "O corpo da requisição não é UTF-8 válido.") from None
    except (ValueError, ArithmeticError, RecursionError) as erro:
        raise HTTPException(400, f"JSON malformado: {erro}.") from None
    if not isinstance(value, dict):
        raise HTTPException(400, 'O corpo deve ser um objeto JSON: {"nome": …}.')
    return value


def _exact_number(text: str) -> Decimal:
    """A JSON number with a fraction, exactly; exponents are refused, as in typed prices."""
    if "e" in text or "E" in text:
        raise ValueError(f"{text} usa expoente; escreva o número por extenso")
    return Decimal(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} não é JSON")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("uma chave aparece mais de uma vez")
    return value


def negotiate(request: Request, offered: Sequence[str] = (HTML, JSON)) -> str:
    """The offered type the client's Accept prefers (RFC 9110 §12.5.1), or 406.

    On a tie, and with no Accept at all, the first offered wins, HTML by default, unless the
    request's own body is JSON: a client that sends JSON gets JSON back.
    """
    if body_is_json(request) and JSON in offered:
        offered = (JSON, *(media for media in offered if media != JSON))
    chosen = _best(request.headers.get("accept"), offered)
    if chosen is None:
        raise HTTPException(406, f"Formatos disponíveis: {', '.join(offered)}.")
    return chosen


def prefers_json(request: Request) -> bool:
    """Whether an error should go out as problem details rather than as a page."""
    offered = (JSON, HTML) if body_is_json(request) else (HTML, JSON)
    return _best(request.headers.get("accept"), (*offered, PROBLEM)) in (JSON, PROBLEM)


def _best(accept: str | None, offered: Sequence[str]) -> str | None:
    if accept is None:
        return offered[0]
    if len(accept) <= 256:  # browsers send a few Accept values over and over
        return _best_cached(accept, tuple(offered))
    return _best_parsed(accept, offered)


@functools.lru_cache(maxsize=128)
def _best_cached(accept: str, offered: tuple[str, ...]) -> str | None:
    return _best_parsed(accept, offered)


def _best_parsed(accept: str, offered: Sequence[str]) -> str | None:
    ranges = _accept_ranges(accept)
    best, best_q = None, 0.0
    for media in offered:
        q = _quality(media, ranges)
        if q > best_q:
            best, best_q = media, q
    return best


def _accept_ranges(accept: str) -> list[tuple[str, str, float]]:
    ranges = []
    for item in accept.split(","):
        media, *params = item.split(";")
        kind, _, subtype = media.strip().lower().partition("/")
        q = 1.0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = math.nan
        if kind and subtype and 0 <= q <= 1:  # a malformed range is ignored, not guessed at
            ranges.append((kind, subtype, q))
    return ranges


def _quality(media: str, ranges: list[tuple[str, str, float]]) -> float:
    """The q of the most specific range that matches `media`; 0 when none does."""
    kind, _, subtype = media.partition("/")
    specificity, q = -1, 0.0
    for range_kind, range_subtype, range_q in ranges:
        if (range_kind, range_subtype) == (kind, subtype):
            rank = 2
        elif range_kind == kind and range_subtype == "*":
            rank = 1
        elif (range_kind, range_subtype) == ("*", "*"):
            rank = 0
        else:
            continue
        if rank > specificity:
            specificity, q = rank, range_q
    return q


def json_response(
    data: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(orjson.dumps(data), status_code, headers, media_type=JSON)


def problem(
    status: int, detail: str, headers: dict[str, str] | None = None, **members: Any
) -> Response:
    """RFC 9457 problem details; `about:blank` types, so `title` is the status phrase."""
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        **members,
    }
    return Response(orjson.dumps(body), status, headers, media_type=PROBLEM)


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


class Guard:
    """The one middleware: what every request goes through before routing, in one pass.

    1. Every response gets the security headers (`SECURITY_HEADERS`), and a HEAD answer
       loses its body. A handler that needs a wider Content-Security-Policy (the API docs
       page) puts it in the scope under `CSP_KEY`: two CSP headers would both apply.
    Writes, and only writes, then go through three more steps:
    2. A write a browser sends on behalf of another site is refused (403), as Go 1.25's
       CrossOriginProtection does it, with no tokens: `Sec-Fetch-Site` when the browser sends
       it, else `Origin` against `Host`. Requests with neither header (curl, scripts, servers)
       are not from a browser and pass.
    3. The body is read once, within the limit (413), before anything parses it.
    4. A form's `_method` overrides the method before routing, as in Rack's MethodOverride,
       and only for a POST of form data: `_method` in a query string or a JSON body, or on any
       other method, is ignored.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, error_page: ErrorPage) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.error_page = error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(scope, send)
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            if not _same_origin(request):
                raise HTTPException(403, "Envios a partir de outro site não são aceitos.")
            body = await self._read(request)
            if scope["method"] == "POST" and _media_type(request)[0] in FORM_TYPES:
                form = await read_form(Request(scope, _replay(body, receive)), ("_method",))
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


def _with_security_headers(scope: Scope, send: Send) -> Send:
    head = scope["method"] == "HEAD"

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", [])) + SECURITY_HEADERS
            if CSP_KEY in scope:  # SECURITY_HEADERS starts with the CSP
                headers[-len(SECURITY_HEADERS)] = (CSP, scope[CSP_KEY])
            message["headers"] = headers
        elif head and message["type"] == "http.response.body":
            message["body"] = b""
        await send(message)

    return send_with_headers
