"""One HTTPEndpoint per URI, grouped by resource: `http/resources/produtos.py` the product,
`http/resources/ops.py` the rest.

Handlers translate between HTTP and the product, nothing more. The methods a class answers
(`Resource.allowed`, HEAD following GET) are worked out once, when the class is made: a method
it does not define gets 405 with that `Allow`, OPTIONS answers 204 with the same, and the API
description lists those operations (openapi/). Every URI speaks HTML to browsers and JSON to
clients that ask for it (`negotiate`), with `Vary: Accept`.

Before a handler runs, `dispatch` asks http/access.py whether the request may go on: each class says
in `needs` what its methods need (by default: reading the catalog for GET and OPTIONS, what GET
needs for HEAD, writing it for the rest); `Resource.need` is the result, which the API
description reads too.
"""

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NoReturn

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain.errors import BadRequest, NotAcceptable

# By name: `history` here would be the package's own http/resources/historico.py once imported.
from catalogo.domain.historico import Autoria, authorship
from catalogo.domain.produtos import JSON_OPTIONS, Produto, every_value, representation
from catalogo.http import conditional, problems, templating
from catalogo.http.access import Need
from catalogo.http.fast import Endpoint, Prepared
from catalogo.http.identity import personal, principal, request_id
from catalogo.http.listing import Paging
from catalogo.http.negotiation import HTML, JSON, VARY, preferred
from catalogo.http.shared import shared_of
from catalogo.runtime.kept import Kept
from catalogo.services import idempotency
from catalogo.storage.paging import Page

BAD_PAGE = "pagina deve ser um número de 1 em diante (recebido «{}»)."


# The methods a Resource may define, in the order `Allow` lists them (Starlette's order).
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class Resource(Endpoint):
    """One URI. `needs` is what a subclass writes; `allowed` and `need` are worked out from it
    and from the methods it defines, once per class (`__init_subclass__`), and are the one
    source for the 405's and OPTIONS' `Allow`, the access check and the API description."""

    needs: ClassVar[Mapping[str, Need]] = {}  # by method; see `need` for those left out
    allowed: ClassVar[tuple[str, ...]] = ("OPTIONS",)  # the methods answered, in _METHODS' order
    # Each allowed method's need: as `needs` says; else GET and OPTIONS read the catalog, HEAD
    # needs what GET needs, and the rest write it.
    need: ClassVar[Mapping[str, Need]] = {"OPTIONS": Need.READ}
    _allow: ClassVar[dict[str, str]] = {"Allow": "OPTIONS"}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        defined = {m for m in _METHODS if callable(getattr(cls, m.lower(), None))}
        if "GET" in defined:  # HEAD is answered by `get`
            defined.add("HEAD")
        cls.allowed = tuple(m for m in _METHODS if m in defined)
        need: dict[str, Need] = {}
        for method in cls.allowed:  # in _METHODS' order: GET's before HEAD's
            if method in cls.needs:
                need[method] = cls.needs[method]
            elif method == "HEAD":
                need[method] = need["GET"]
            else:
                need[method] = Need.READ if method in ("GET", "OPTIONS") else Need.WRITE
        cls.need = need
        cls._allow = {"Allow": ", ".join(cls.allowed)}

    async def dispatch(self) -> None:
        """Starlette's, with the access check between routing and the handler."""
        request = Request(self.scope, receive=self.receive, send=self.send)
        method = request.method
        need = self.need.get(method)
        if need is None:
            await self.method_not_allowed(request)  # raises the 405
        refusal = await shared_of(request).access.admit(request, need)
        if refusal is not None:
            await refusal(self.scope, self.receive, self.send)
            return
        response = await getattr(self, "get" if method == "HEAD" else method.lower())(request)
        personal(request, response)
        await response(self.scope, self.receive, self.send)

    async def method_not_allowed(self, request: Request) -> NoReturn:
        raise HTTPException(405, headers=self._allow)

    async def options(self, request: Request) -> Response:
        return Response(status_code=204, headers=self._allow)


def negotiate(request: Request, offered: Sequence[str] = (HTML, JSON)) -> str:
    """The representation to send, or 406 when the client's Accept rules out every one."""
    media = preferred(request, offered)
    if media is None:
        raise NotAcceptable(offered)
    return media


def page_number(request: Request) -> int:
    """`pagina`, a page of a report or a batch counted from 1 (400 for anything else)."""
    text = request.query_params.get("pagina", "1")
    if not (text.isascii() and text.isdigit() and 1 <= len(text) <= 6 and int(text) >= 1):
        raise BadRequest(BAD_PAGE.format(text[:20]))
    return int(text)


def conflict(request: Request, detail: str, current: Produto) -> Response:
    """409 for a program: what went wrong, and the product as it is now (`current`)."""
    return problems.problem_for(request, 409, detail, VARY, current=representation(current))


def json_response(
    data: Any, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(orjson.dumps(data, option=JSON_OPTIONS), status_code, headers, media_type=JSON)


def etag(request: Request, produto: Produto, media: str) -> dict[str, str]:
    return {"ETag": conditional.etag(request, produto, media, templating.load().fingerprint)}


# Products as JSON in lists, by every value they show (the key holds all the representation is
# made from, so it cannot be stale): a list page reads 50 products, most of them unchanged
# since the last time, and made the same 50 objects anew. Bounded: emptied when full. (A
# product read alone is not kept: read at random among 10,000 it missed half the time, and
# gained nothing.)
_REPRESENTED: Kept[tuple[Any, ...], orjson.Fragment] = Kept(5_000)


def represented(produto: Produto) -> orjson.Fragment:
    """`representation(produto)` as JSON, for orjson to paste into a body as it is."""
    key = every_value(produto)
    found = _REPRESENTED.get(key)
    if found is None:
        made = orjson.dumps(representation(produto), option=JSON_OPTIONS)
        found = _REPRESENTED.keep(key, orjson.Fragment(made))
    return found


def fresh(body: bytes, media_type: str, etag: str) -> Prepared:
    """A product as a GET sends it: every client asks again (no-cache), with its ETag."""
    return Prepared(200, [(b"etag", etag.encode()), *_FRESH], body, media_type)


_FRESH = ((b"cache-control", b"no-cache"), (b"vary", b"Accept"))


def autoria_of(request: Request, media: str) -> Autoria:
    """Who makes this change, for its event: a browser's form is "web", JSON is "api"."""
    return authorship(principal(request), "web" if media == HTML else "api", request_id(request))


def page_links(path: str, page: Page[Any, int]) -> dict[str, str]:
    """A page's `prev` and `next`, as URIs of the same list at `path`."""
    return {rel: paging.at(path) for rel, paging in _neighbours(page).items()}


def page_cursors(page: Page[Any, int]) -> dict[str, dict[str, int]]:
    """A page's `prev` and `next` as the values of their query (a JSON page's `cursores`)."""
    return {rel: paging.cursor for rel, paging in _neighbours(page).items()}


def _neighbours(page: Page[Any, int]) -> dict[str, Paging]:
    return {
        rel: Paging(cursor.after, cursor.before)
        for rel, cursor in (("prev", page.prev), ("next", page.next))
        if cursor
    }


def link_header(links: dict[str, str]) -> dict[str, str]:
    if not links:
        return {}
    return {"Link": ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())}


def idempotency_key(request: Request) -> str | None:
    """The request's Idempotency-Key, its sender's own (services/idempotency.py)."""
    return idempotency.key_of(request.headers.getlist(idempotency.HEADER), principal(request))
