"""The one-time notice after a browser's write ("Produto «Caneca» adicionado.", "Senha
alterada."): a flash, as Rails and Django call it, one mechanism for every page.

The write's 303 carries it in a cookie of a minute's life, HttpOnly and SameSite=Lax, never in
the URL (where a reload, a bookmark or a shared link would show it again, and a product's name
would sit in the history and the logs). The page it leads to shows it once, clears the cookie,
and is never stored while it shows one. What a notice says is its page's own (`kind` and
what it names, read back by the page that shows it).
"""

import urllib.parse

from starlette.requests import Request
from starlette.responses import Response

from catalogo.resources import shared_of, write_cookie

COOKIE = "aviso"
LIFETIME_S = 60


def redirect(request: Request, location: str, value: str, headers: dict[str, str]) -> Response:
    """303 to `location`, leaving `value` for the page there."""
    response = Response(status_code=303, headers={"Location": location, **headers})
    https = shared_of(request).access.over_https(request)
    write_cookie(
        response, COOKIE, urllib.parse.quote(value, safe=""), https=https, max_age=LIFETIME_S
    )
    return response


def left(request: Request) -> str:
    """The notice left for this page, as it was left ("" if none)."""
    return urllib.parse.unquote(request.cookies.get(COOKIE, ""))


def shown(request: Request, response: Response, notice: object) -> Response:
    """`response`, a page that showed `notice` (None: none): never stored if it did, and the
    cookie cleared either way, so a reload does not show it again."""
    if notice is not None:
        response.headers["Cache-Control"] = "no-store"
    if COOKIE in request.cookies:
        response.delete_cookie(COOKIE, httponly=True, samesite="lax")
    return response
