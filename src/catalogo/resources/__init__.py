"""One HTTPEndpoint per URI, grouped by resource: `produtos.py` the product, `ops.py` the rest.

Handlers translate between HTTP and the product, nothing more. Methods a class does not define
get 405 with `Allow` from Starlette's `HTTPEndpoint`, HEAD follows GET, and OPTIONS answers
204 with the same `Allow`. Every URI speaks HTML to browsers and JSON to clients that ask for
it (`negotiate`), with `Vary: Accept`.

Before a handler runs, `dispatch` asks access.py whether the request may go on: each class says
in `needs` what its methods need (by default: reading the catalog for GET and HEAD, writing it
for the rest).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from starlette.endpoints import HTTPEndpoint
from starlette.requests import Request
from starlette.responses import Response

from catalogo import conditional, error_responses, errors, pages
from catalogo.access import Gate, Need
from catalogo.accesslog import request_id
from catalogo.accounts import Passwords

# By name: `historia` here would be the package's own resources/historia.py once imported.
from catalogo.historia import Autoria, authorship
from catalogo.identity import personal, principal
from catalogo.listing import Paging
from catalogo.negotiation import HTML, JSON, JSON_OPTIONS, preferred
from catalogo.produtos import Produto, representation
from catalogo.settings import Settings
from catalogo.storage import Storage
from catalogo.storage.paging import Page

VARY = errors.VARY
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


@dataclass(frozen=True)
class Shared:
    """What the handlers share, made when the app starts (app.py's lifespan)."""

    settings: Settings
    storage: Storage
    schema_head: str | None
    gate: Gate
    passwords: Passwords


def shared_of(request: Request) -> Shared:
    shared: Shared = request.app.state.shared
    return shared


class Resource(HTTPEndpoint):
    needs: ClassVar[
        dict[str, Need]
    ] = {}  # by method; those left out: Need.READ if safe, else WRITE

    async def dispatch(self) -> None:
        """Starlette's, with the access check between routing and the handler."""
        request = Request(self.scope, receive=self.receive, send=self.send)
        method = request.method
        if method not in self._allowed_methods:
            await self.method_not_allowed(request)  # raises the 405
        need = self.needs.get(method) or (
            Need.READ if method in ("GET", "HEAD", "OPTIONS") else Need.WRITE
        )
        refusal = await shared_of(request).gate.admit(request, need)
        if refusal is not None:
            await refusal(self.scope, self.receive, self.send)
            return
        response = await getattr(self, "get" if method == "HEAD" else method.lower())(request)
        personal(request, response)
        await response(self.scope, self.receive, self.send)

    async def options(self, request: Request) -> Response:
        return Response(status_code=204, headers={"Allow": ", ".join(self.allowed_methods())})

    @classmethod
    def allowed_methods(cls) -> list[str]:
        """The methods this URI answers, as Starlette's 405 lists them: HEAD goes with GET."""
        defined = {method for method in _METHODS if hasattr(cls, method.lower())}
        return [m for m in _METHODS if m in defined or (m == "HEAD" and "GET" in defined)]


def negotiate(request: Request, offered: Sequence[str] = (HTML, JSON)) -> str:
    """The representation to send, or 406 when the client's Accept rules out every one."""
    media = preferred(request, offered)
    if media is None:
        raise errors.not_acceptable(offered)
    return media


def conflict(request: Request, detail: str, current: Produto) -> Response:
    """409 for a program: what went wrong, and the product as it is now (`current`)."""
    return error_responses.problem(
        409,
        detail,
        VARY,
        instance=request.url.path,
        request_id=request_id(request),
        current=representation(current),
    )


def json_response(
    data: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(orjson.dumps(data, option=JSON_OPTIONS), status_code, headers, media_type=JSON)


def etag(request: Request, produto: Produto, media: str) -> dict[str, str]:
    return {"ETag": conditional.etag(request, produto, media, pages.load().fingerprint)}


def autoria_of(request: Request, media: str) -> Autoria:
    """Who makes this change, for its event: a browser's form is "web", JSON is "api"."""
    return authorship(principal(request), "web" if media == HTML else "api", request_id(request))


def page_links(path: str, page: Page[Any, int]) -> dict[str, str]:
    """A page's `prev` and `next`, as URIs of the same list at `path`."""
    return {
        rel: Paging(cursor.after, cursor.before).at(path)
        for rel, cursor in (("prev", page.prev), ("next", page.next))
        if cursor
    }


def link_header(links: dict[str, str]) -> dict[str, str]:
    if not links:
        return {}
    return {"Link": ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())}


def write_cookie(
    response: Response,
    name: str,
    value: str,
    *,
    https: bool,
    max_age: int,
    path: str = "/",
    same_site: str = "Lax",
) -> None:
    """An HttpOnly cookie, written out rather than through SimpleCookie, which costs more than
    the rest of a write's answer: `value` must be cookie-safe as it is (percent-encoded, or a
    token's alphabet). `https` is Gate.over_https, so a balancer's TLS counts. Max-Age 0
    deletes it."""
    secure = "; Secure" if https else ""
    cookie = f"{name}={value}; HttpOnly; Max-Age={max_age}; Path={path}; SameSite={same_site}"
    response.raw_headers.append((b"set-cookie", (cookie + secure).encode("latin-1")))
