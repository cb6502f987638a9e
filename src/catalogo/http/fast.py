"""Where catalogo does a part of Starlette's or asyncio's work itself: each only because
bench/instructions.py measured it at 3% or more of a whole request of a benchmark case
(docs/performance.md, "Where we do the framework's work"), each held to the framework's own
output by tests/http/test_fast.py. The instructions a request takes without each:

- `Router`: routes with no parameters found by their path, not by trying each route's pattern
  in turn (+4.1% on a create, +2.6% on the edit page).
- `Endpoint`: HTTPEndpoint without working out the allowed methods on every request (+9.5% on
  the edit page).
- `Prepared`, `raw`: a Response whose headers are written as they go out (+9.3% on the edit
  page).
- `write_cookie`: Set-Cookie written out, not through http.cookies.SimpleCookie (+10.9% on a
  create).
- `Deadlines`: one timer for every body being read, not an asyncio.timeout per read (+4.3% on a
  create).
- `escaped`: MarkupSafe's escaping as a plain str, for the edit page's skeleton, not a Markup
  made of each value (+7.9% on an edit page made anew, as most are at 1,000,000 products).

The one other such copy is below HTTP, where storage makes products: domain/produtos.py's
`stored()`, pydantic's model_construct in a quarter of its time (+6.1% on an update).
"""

import asyncio
from typing import Any

from starlette import routing
from starlette.endpoints import HTTPEndpoint
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Receive, Scope, Send

from catalogo.http.negotiation import HTML, JSON

_CONTENT_TYPES = {HTML: b"text/html; charset=utf-8", JSON: JSON.encode()}


class Endpoint(HTTPEndpoint):
    """HTTPEndpoint, its allowed methods worked out once per class (http/resources' Resource
    does, as `allowed`) rather than on every request."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Starlette's, without working out the allowed methods again on every request."""
        self.scope, self.receive, self.send = scope, receive, send


class Prepared(Response):
    """An answer on the hot paths (a product's GET, a create's 201 or 303): the body already
    bytes, `headers` written as they go out (lower-case names, bytes), to which the length and
    the type are added. Starlette's Response lower-cases, encodes and checks each header on
    every answer, which cost more than anything else on the edit page's way once the page was
    kept."""

    def __init__(
        self,
        status_code: int,
        headers: list[tuple[bytes, bytes]],
        body: bytes = b"",
        media_type: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.body = body
        self.background = None
        self.media_type = media_type
        headers.append((b"content-length", b"%d" % len(body)))
        if media_type is not None:
            headers.append((b"content-type", _CONTENT_TYPES[media_type]))
        self.raw_headers = headers


def raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """Headers as Prepared takes them."""
    return [
        (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()
    ]


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
    token's alphabet). `https` is Access.over_https, so a balancer's TLS counts. Max-Age 0
    deletes it."""
    secure = "; Secure" if https else ""
    cookie = f"{name}={value}; HttpOnly; Max-Age={max_age}; Path={path}; SameSite={same_site}"
    response.raw_headers.append((b"set-cookie", (cookie + secure).encode("latin-1")))


class Deadlines:
    """When each body being read must have arrived, checked every `tick` by one timer of the
    event loop for all of them: an `asyncio.timeout` around each read cost 10 µs, a fifth of
    the guard's time on a create; this costs a dict entry. A read past its deadline is
    cancelled, and `expired` tells that cancellation from any other."""

    def __init__(self, tick: float) -> None:
        self.tick = tick
        self._until: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.AbstractEventLoop | None = None  # the loop whose timer is set

    def watch(self, task: asyncio.Task[Any], deadline: float) -> None:
        self._until[task] = deadline
        loop = task.get_loop()
        if self._timer is not loop:
            self._timer = loop
            loop.call_later(self.tick, self._check, loop)

    def forget(self, task: asyncio.Task[Any]) -> None:
        self._until.pop(task, None)

    def expired(self, task: asyncio.Task[Any]) -> bool:
        if task not in self._expired:
            return False
        self._expired.discard(task)
        task.uncancel()
        return True

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        for task, deadline in list(self._until.items()):
            if deadline <= now and task.get_loop() is loop and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        if self._until and self._timer is loop:
            loop.call_later(self.tick, self._check, loop)
        elif self._timer is loop:
            self._timer = None


class Router(routing.Router):
    """Starlette's router, with the routes that have no parameters looked up by their path:
    Starlette tries each route's pattern in turn, and /healthz, the 27th, paid more for its
    way there than for its answer. A path goes to the route it went to before: one that an
    earlier route's pattern also matches is left to the patterns, in their order."""

    def __init__(self, routes: list[BaseRoute], **options: Any) -> None:
        super().__init__(routes, **options)
        self._exact: dict[str, Route] = {}
        self._patterns: list[BaseRoute] = []
        for route in routes:
            if (
                isinstance(route, Route)
                and not route.param_convertors
                and not route.methods
                and not any(
                    not isinstance(earlier, Route | Mount) or earlier.path_regex.match(route.path)
                    for earlier in self._patterns
                )
            ):
                self._exact.setdefault(route.path, route)
            else:
                self._patterns.append(route)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What Starlette's does for a route that matches in full; anything else (a Mount, no
        route at all, a lifespan) is Starlette's own to do."""
        if scope["type"] != "http" or scope.get("root_path"):
            await super().app(scope, receive, send)
            return
        path = scope["path"]
        route = self._exact.get(path)
        params: dict[str, Any] = {}
        if route is None:
            for pattern in self._patterns:
                if not isinstance(pattern, Route) or pattern.methods:
                    break  # Starlette's own matching from here
                found = pattern.path_regex.match(path)
                if found:
                    route = pattern
                    convertors = pattern.param_convertors
                    params = {k: convertors[k].convert(v) for k, v in found.groupdict().items()}
                    break
        if route is None:
            await super().app(scope, receive, send)
            return
        scope.setdefault("router", self)
        scope["route"] = route
        scope["endpoint"] = route.endpoint
        scope["path_params"] = {**scope.get("path_params", {}), **params}
        await route.app(scope, receive, send)


def escaped(text: str) -> str:
    """What Jinja's autoescape prints of the plain text `text`: MarkupSafe's escaping, character
    for character (its pure-Python version is these five replacements), as a str rather than a
    Markup of each value."""
    return (
        text.replace("&", "&amp;")
        .replace(">", "&gt;")
        .replace("<", "&lt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )
