"""Who is asking, as far as a response needs to know it: noted once by access.Access, read by
the handlers, the pages' header, the error pages and the cache headers; and which request this
is (its id, given by http/middleware/outermost.py), for the same readers.

Apart from http/access.py so that http/problems.py can read it: access raises refusals.
"""

import functools
import urllib.parse
from collections.abc import Callable
from typing import Literal, NamedTuple

from starlette.requests import Request
from starlette.responses import Response

from catalogo.domain import contas
from catalogo.domain.contas import Papel, Principal

Mode = Literal["off", "writes", "all"]
_PRINCIPAL = "catalogo.principal"
_MODE = "catalogo.auth_mode"
_ENDED = "catalogo.session_ended"


class Visitor(NamedTuple):
    """What a page shows of who is looking: their name and role, or the way to sign in, and
    whether to offer the buttons that change the catalog. None in the templates: no one has
    signed in and no one needs to (the spec's anonymous pages, as they always were). A tuple:
    it is part of the key of every page kept (templating.Pages), hashed and compared in C."""

    nome: str | None
    papel: Papel | None
    pode_editar: bool
    admin: bool
    aqui: str  # this page, to come back to after signing in ("" once signed in: not needed)
    sessao_terminou: bool = False  # the browser's session ended: say so, beside "Entrar"


def note(request: Request, who: Principal | None, mode: Mode, ended: bool = False) -> None:
    """`ended`: the request named a session that has ended (expired, signed out elsewhere)."""
    request.scope[_PRINCIPAL] = who
    request.scope[_MODE] = mode
    if ended:
        request.scope[_ENDED] = True


def principal(request: Request) -> Principal | None:
    found: Principal | None = request.scope.get(_PRINCIPAL)
    return found


def visitor(request: Request) -> Visitor | None:
    """For the templates: see `Visitor`."""
    who = principal(request)
    mode: Mode = request.scope.get(_MODE, "off")
    if who is None and mode == "off":
        return None
    if who is None:
        ended = request.scope.get(_ENDED, False)
        return Visitor(None, None, False, False, here(request), ended)
    editor = mode == "off" or contas.allows(who.papel, "editor")
    return Visitor(who.nome, who.papel, editor, who.papel == "admin", "")


# Who a representation was made for, as its validators say it (conditional.etag).
AUDIENCE_PATTERN = r"|-a|-u[1-9][0-9]{0,18}[lea]"


def audience(request: Request) -> str:
    """Who this response is made for, as short as it can be said: "" on the spec's open
    catalog (no one signs in: every visitor sees one page), "-a" for anyone not signed in once
    accounts are on, "-u7e" for user 7 with the role editor (l, e, a) now. Each makes a page
    of its own: a header that says "Entrar" or a name, buttons or none."""
    who = principal(request)
    if who is not None:
        return f"-u{who.usuario_id}{who.papel[0]}"
    return "" if request.scope.get(_MODE, "off") == "off" else "-a"


def here(request: Request, with_query: bool = True) -> str:
    """This request's path and query, percent-encoded: a local path access.local_path accepts."""
    path = _quoted(request.scope["path"])
    query = request.scope["query_string"].decode("latin-1") if with_query else ""
    return f"{path}?{query}" if query else path


@functools.lru_cache(maxsize=256)  # every anonymous page names itself, once accounts are on
def _quoted(path: str) -> str:
    return urllib.parse.quote(path, safe="/:@!$&'()*+,;=~")


def personal(request: Request, response: Response) -> None:
    """A page that depends on who asks is never kept for someone else: `Cache-Control:
    private` once anyone is signed in, and `Vary: Cookie` wherever signing in changes it. A
    signed-in person's page is not kept at all (`no-store`): the back button after Sair would
    show it again from the browser's history, which asks no validator.
    Written on the raw headers: this runs on every signed-in request."""
    who = principal(request)
    if who is None and request.scope.get(_MODE, "off") == "off":
        return
    raw = response.raw_headers
    html = response.media_type == "text/html"
    if who is not None and html:
        _amend(raw, b"cache-control", _private_page, _PRIVATE_PAGE)
    elif who is not None:
        _amend(raw, b"cache-control", _private, b"private")
    if html:
        _amend(raw, b"vary", _varied_by_cookie, b"Cookie")


_PRIVATE_PAGE = b"private, no-store"


def _private_page(value: bytes) -> bytes:
    return value if _has(value, b"no-store") else _PRIVATE_PAGE


def _private(value: bytes) -> bytes:
    return value if _has(value, b"no-store") or _has(value, b"private") else b"private, " + value


def _varied_by_cookie(value: bytes) -> bytes:
    return value if _has(value.lower(), b"cookie") else value + b", Cookie"


def _has(value: bytes, part: bytes) -> bool:
    """`part in value`, which first tries `part` as an integer (a byte) and formats the
    TypeError it gets, on every signed-in answer."""
    return value.find(part) != -1


def _amend(
    raw: list[tuple[bytes, bytes]], name: bytes, change: Callable[[bytes], bytes], new: bytes
) -> None:
    """Changes the header `name` in place, or adds it with the value `new`."""
    for i, (found, value) in enumerate(raw):
        if found == name:
            raw[i] = (name, change(value))
            return
    raw.append((name, new))


REQUEST_ID_KEY = "catalogo.request_id"  # where http/middleware/outermost.py puts it, in the scope


def request_id(request: Request) -> str:
    """The id of the request being answered, given to it before anything else ran."""
    found: bytes = request.scope.get(REQUEST_ID_KEY, b"")
    return found.decode()
