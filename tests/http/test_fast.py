"""What http/fast.py does in Starlette's or asyncio's place gives what they give."""

import asyncio

import markupsafe
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette import routing
from starlette.endpoints import HTTPEndpoint
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalogo.http.app import create_app
from catalogo.http.fast import Deadlines, Prepared, Router, escaped, raw, write_cookie
from catalogo.http.negotiation import HTML, JSON
from catalogo.http.resources import Resource
from catalogo.runtime.settings import Settings

ANSWERS = [
    (200, {"ETag": '"3-json"', "Cache-Control": "no-cache", "Vary": "Accept"}, b'{"id":3}', JSON),
    (200, {"ETag": '"3-h0123456789"', "Vary": "Accept"}, "<p>Café</p>".encode(), HTML),
    (201, {"Location": "/produtos/7", "ETag": '"1-json"'}, b'{"id":7}', JSON),
    (303, {"Location": "/produtos?ordem=nome&q=caf%C3%A9", "Vary": "Accept"}, b"", None),
]


@pytest.mark.parametrize(("status", "headers", "body", "media_type"), ANSWERS)
def test_a_prepared_answer_is_starlettes_byte_for_byte(
    status: int, headers: dict[str, str], body: bytes, media_type: str | None
) -> None:
    ours = Prepared(status, raw(headers), body, media_type)
    theirs = Response(body, status, headers, media_type)
    assert (ours.status_code, ours.body, ours.raw_headers) == (
        theirs.status_code,
        theirs.body,
        theirs.raw_headers,
    )


@pytest.mark.parametrize("https", [False, True])
@pytest.mark.parametrize(
    ("name", "value", "max_age", "path", "same_site"),
    [
        ("aviso", "atualizado%3A3%3ACaf%C3%A9", 60, "/", "Lax"),
        ("sessao", "s_0123456789abcdef", 0, "/", "Lax"),
        ("token_novo", "4.cat_abc-DEF_123", 60, "/tokens", "Strict"),
    ],
)
def test_a_cookie_is_written_as_starlette_writes_it(
    https: bool, name: str, value: str, max_age: int, path: str, same_site: str
) -> None:
    """The same header, but for SameSite's value, written as RFC 6265bis writes it (Lax,
    Strict) where Starlette lower-cases it: the attribute's value is read case-blind."""
    ours, theirs = Response(), Response()
    write_cookie(ours, name, value, https=https, max_age=max_age, path=path, same_site=same_site)
    theirs.set_cookie(
        name,
        value,
        max_age,
        path=path,
        secure=https,
        httponly=True,
        samesite="lax" if same_site == "Lax" else "strict",
    )
    [(_, written)] = [h for h in ours.raw_headers if h[0] == b"set-cookie"]
    [(_, expected)] = [h for h in theirs.raw_headers if h[0] == b"set-cookie"]
    assert written == expected.replace(
        b"SameSite=" + same_site.lower().encode(), b"SameSite=" + same_site.encode()
    )


def test_every_resource_answers_the_methods_starlettes_endpoint_would_allow() -> None:
    app = create_app(Settings(database_url="sqlite:///unused.db"))
    endpoints = [route.endpoint for route in app.routes if isinstance(route, Route)]
    resources = [e for e in endpoints if isinstance(e, type) and issubclass(e, Resource)]
    assert resources and len(resources) == len(endpoints)
    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    for resource in resources:
        starlettes: HTTPEndpoint = HTTPEndpoint.__new__(resource)
        HTTPEndpoint.__init__(starlettes, scope, _receive, _send)
        head = {"HEAD"} if "GET" in starlettes._allowed_methods else set()
        assert set(resource.allowed) == set(starlettes._allowed_methods) | head


def test_a_deleted_cookie_is_written_empty_where_starlette_writes_two_quotes() -> None:
    """A browser would keep `""` as the value: a deletion (Max-Age=0) is never read, but an
    empty value is the honest one."""
    response = Response()
    write_cookie(response, "sessao", "", https=False, max_age=0)
    assert (b"set-cookie", b"sessao=; HttpOnly; Max-Age=0; Path=/; SameSite=Lax") in (
        response.raw_headers
    )


async def _receive() -> Message:
    return {"type": "http.disconnect"}


async def _send(message: Message) -> None:
    return None


def test_a_read_past_its_deadline_is_cancelled_as_expired_and_another_cancel_is_not() -> None:
    async def test() -> None:
        deadlines = Deadlines(tick=0.001)
        loop = asyncio.get_running_loop()

        async def read(deadline: float) -> bool:
            task = asyncio.current_task()
            assert task is not None
            deadlines.watch(task, deadline)
            try:
                await asyncio.Event().wait()  # a body that never comes
            except asyncio.CancelledError:
                return deadlines.expired(task)
            finally:
                deadlines.forget(task)
            return False

        assert await asyncio.create_task(read(loop.time())) is True
        waiting = asyncio.create_task(read(loop.time() + 3600))
        await asyncio.sleep(0)
        waiting.cancel()  # someone else's cancellation: the read was not too slow
        assert await waiting is False

    asyncio.run(test())


PATHS = [
    "/",
    "/produtos",
    "/produtos/",
    "/produtos/12",
    "/produtos/0",
    "/produtos/99999999999999999999",
    "/produtos/novo",
    "/produtos/removidos",
    "/produtos/eventos",
    "/produtos/12/historico",
    "/produtos/12/restauracao",
    "/produtos/lote",
    "/produtos/lote/3f2a",
    "/produtos/importacoes/modelo",
    "/produtos/importacoes/3f2a/confirmacao",
    "/usuarios/maria",
    "/conta/sessoes/3",
    "/healthz",
    "/static/catalogo.css",
    "/nada",
    "/produtos%2F12",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_path_goes_where_starlettes_router_sends_it(path: str) -> None:
    """Every route of the app, its endpoint replaced by one that says where it was reached
    and with what parameters, in Starlette's router and in ours."""
    app = create_app(Settings(database_url="sqlite:///unused.db"))
    reached: list[tuple[str, dict[str, object]]] = []

    class Endpoint:  # an ASGI app, not a function (which Route would call with a Request)
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            reached.append((self.name, dict(scope.get("path_params", {}))))

    def endpoint(name: str) -> ASGIApp:
        return Endpoint(name)

    routes: list[BaseRoute] = [
        Route(r.path, endpoint(r.path)) if isinstance(r, Route) else Mount(r.path, endpoint(r.path))
        for r in app.routes
        if isinstance(r, Route | Mount)
    ]

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            reached.append(("404", {}))

    def route(router: routing.Router) -> tuple[str, dict[str, object]]:
        reached.clear()
        scope = {"type": "http", "method": "GET", "path": path, "root_path": "", "headers": []}
        asyncio.run(router(scope, _receive, send))
        return reached[0]

    assert route(Router(routes)) == route(routing.Router(routes))


@pytest.mark.parametrize(
    "text",
    [
        "&<>'\"",  # each character MarkupSafe escapes
        "&amp; &lt;b&gt; &#39; &#34;",  # escaped already: escaped again, as Jinja does
        "<script>alert('x')</script>",
        'a" onmouseover="x',
        "R$ 1.234,56 · «Caneca» ação ☕ 𝄞",  # nothing to escape, beyond Latin-1 and the BMP
        "\x00\t\n\r\u2028\ud800",  # controls, a line separator, a lone surrogate
        "",
    ],
)
def test_a_value_is_escaped_as_markupsafe_escapes_it(text: str) -> None:
    assert escaped(text) == str(markupsafe.escape(text))


@given(st.text(alphabet=st.characters(), max_size=200))
def test_any_text_is_escaped_as_markupsafe_escapes_it(text: str) -> None:
    assert escaped(text) == str(markupsafe.escape(text))
