"""The one middleware: what every request goes through before routing, in one pass.

1. Every response gets the security headers (`SECURITY_HEADERS`), one policy for every page,
   /docs included, and a HEAD answer loses its body.
   A path with a control character in it (`/produtos/5%0A`) is 404 before any route sees it.
Writes, and only writes, then go through three more steps:
2. A write a browser sends on behalf of another site is refused (403), as Go 1.25's
   CrossOriginProtection does it, with no tokens: `Sec-Fetch-Site` when the browser sends it,
   else `Origin` against `Host`. Requests with neither header (curl, scripts, servers) are not
   from a browser and pass.
3. The body is read once, within the limit (413), before anything parses it.
4. A form's `_method` overrides the method before routing, as in Rack's MethodOverride, and
   only for a POST of form data: `_method` in a query string or a JSON body, or on any other
   method, is ignored.
"""

import re
import urllib.parse

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalogo import errors
from catalogo.bodies import read_form
from catalogo.negotiation import FORM_TYPES, media_type

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# No path of ours holds a control character, and Starlette's route patterns end in `$`, which
# also matches before a final line feed: `/produtos/5%0A` would be a second address of product 5.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
OVERRIDABLE = frozenset({"PUT", "DELETE"})

_POLICY = {
    "default-src": "'none'",
    "style-src": "'self'",
    "img-src": "'self'",
    "script-src": "'self'",
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
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(scope, send)
        if _CONTROL.search(scope["path"]):
            await errors.error_response(Request(scope, receive), HTTPException(404))(
                scope, receive, send
            )
            return
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            if not _same_origin(request):
                raise errors.cross_site()
            body = await self._read(request)
            if scope["method"] == "POST" and media_type(request)[0] in FORM_TYPES:
                form = await read_form(Request(scope, _replay(body, receive)), ("_method",))
                if "_method" in form:
                    scope["method"] = _overridden(form["_method"])
        except HTTPException as error:
            await errors.error_response(request, error)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            raise errors.bad_request(errors.BAD_CONTENT_LENGTH)
        if declared is not None and int(declared) > self.max_bytes:
            raise errors.too_large(self.max_bytes)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_bytes:
                raise errors.too_large(self.max_bytes)
            chunks.append(chunk)
        return b"".join(chunks)


def _overridden(value: str) -> str:
    method = value.upper()
    if method not in OVERRIDABLE:
        raise errors.bad_request(errors.BAD_METHOD_OVERRIDE, value)
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
            message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
        elif head and message["type"] == "http.response.body":
            message["body"] = b""
        await send(message)

    return send_with_headers
