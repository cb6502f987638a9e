"""The outermost middleware: every request's id, its access-log line, and what metrics see.

The id is the `X-Request-ID` the balancer sent, when it is one plain token (letters, digits,
`_.:-`, at most 128): HAProxy's (deploy/haproxy.cfg), a UUID. Anything else, or two of them,
is replaced by an id made here, so what a client writes there never reaches a log line or a
header as it wrote it. The id goes back in the answer's `X-Request-ID`, and http/problems.py puts it
on every error page, problem and error log line (`request_id()`).

One line per request on stderr (runtime/logs.py), written once the answer is sent
(CATALOGO_ACCESS_LOG=off leaves it out; the id stays):

    {"time": "2026-11-23T23:14:05.123Z", "level": "info", "logger": "catalogo.access",
     "message": "request", "request_id": "8f0c…", "method": "GET", "route": "/produtos/{id}",
     "path": "/produtos/7", "status": 200, "duration_ms": 1.234, "bytes": 5120}

`route` is the template of the route that answered, null for a request answered before
routing (the guard's 400, 403, 408, 413) or matching no route (404); `path` is the path as sent,
percent-decoded, cut at 1,024 characters; `method` is the method as sent, before a form's
`_method`. A request whose client hung up before its answer, while a long piece of work was
done for it (`unless_gone`: an import's dry run), is logged with status 499, as nginx and
HAProxy log it, and that work is stopped: nobody is waiting for it.

It also answers every exception that reaches it before an answer began: those `handlers`
know (an HTTPException's 404 or 405, a database that is unavailable) by their handler, as
Starlette's ExceptionMiddleware does, and any other with `last_resort` (http/problems.py's 500
page), then raised on for the server, as Starlette's ServerErrorMiddleware does. http/app.py puts it
in the place of both, so a 500 is logged, and carries its id, like any other answer, and a request
goes through two layers fewer: each cost about as much as the access-log line
(docs/operations.md).
"""

import asyncio
import itertools
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from catalogo.domain.errors import CatalogoError
from catalogo.http.identity import REQUEST_ID_KEY
from catalogo.runtime import logs

T = TypeVar("T")
HEADER = b"x-request-id"
_VALID = re.compile(rb"[A-Za-z0-9_.:-]{1,128}")
PATH_LIMIT = 1024

# What the metrics see of each answer: method, route template (None: unrouted), status,
# seconds taken, and the response's headers.
Observer = Callable[[str, str | None, int, float, Sequence[tuple[bytes, bytes]]], None]
LastResort = Callable[[Request, Exception], Awaitable[Response]]
Handlers = Mapping[type[Exception], LastResort]


class ClientGone(CatalogoError):
    """The client closed its connection before the answer: no answer is sent (499)."""


async def unless_gone(request: Request, work: Awaitable[T]) -> T:
    """What `work` gives, unless the client disconnects first: then `work` is cancelled and
    ClientGone raised. Only once the body is read, when the next message a server sends is
    the disconnect: servers send it as soon as the connection closes (Granian, Uvicorn)."""
    doing = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request.receive))
    try:
        await asyncio.wait((doing, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not doing.done():  # the client went first (or the server is stopping)
            doing.cancel()
            await asyncio.gather(doing, return_exceptions=True)
    if doing.cancelled():
        raise ClientGone()
    error = doing.exception()
    if error is None:
        return doing.result()
    try:
        raise error
    finally:  # else its traceback holds this frame, which holds the task, which holds it:
        del doing, error  # a cycle that kept a refused upload until the collector's next pass


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _id_from(headers: Sequence[tuple[bytes, bytes]]) -> bytes | None:
    """The balancer's id, if it sent one that may be used as it is."""
    sent = None
    for name, value in headers:
        if name == HEADER:
            if sent is not None:  # two ids: neither is the request's
                return None
            sent = value
    return sent if sent is not None and _VALID.fullmatch(sent) else None


class Outermost:
    def __init__(
        self,
        app: ASGIApp,
        enabled: bool,
        last_resort: LastResort,
        headers: Sequence[tuple[bytes, bytes]],
        observe: Observer | None = None,
        handlers: Handlers | None = None,
    ) -> None:
        """`headers` go on every answer, the last resort's 500 included."""
        self.app = app
        self.enabled = enabled
        self.last_resort = last_resort
        self.handlers = dict(handlers or {})
        self.headers = tuple(headers)
        self.observe = observe
        # Ids made here: this process's random prefix and a count. Starlette builds this
        # middleware on the first request, so in the worker process: each has its own prefix.
        self._prefix = os.urandom(8).hex().encode() + b"-"
        self._made = itertools.count(1)
        self._answered: list[_Answered] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        method = scope["method"]
        rid = _id_from(scope["headers"]) or b"%s%x" % (self._prefix, next(self._made))
        scope[REQUEST_ID_KEY] = rid  # bytes, ASCII: decoded only where it is shown
        status = 500  # what the server answers if the app ends without an answer
        headers: list[tuple[bytes, bytes]] = []
        size = 0
        head = method == "HEAD"

        async def send_with_id(message: Message) -> None:
            nonlocal status, headers, size
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", ()), *self.headers, (HEADER, rid)]
                message["headers"] = headers
            elif message["type"] == "http.response.body":
                if head:
                    message["body"] = b""
                else:
                    size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except ClientGone:
            status = 499
        except Exception as error:
            if headers:  # an answer began: too late for another
                raise
            handler = self._handler(error)
            answer = await (handler or self.last_resort)(Request(scope), error)
            await answer(scope, receive, send_with_id)
            if handler is None:  # a bug: after its 500 page, the error goes on up
                raise
        finally:
            seconds = time.perf_counter() - started
            route = scope.get("route")
            template = None if route is None else route.path_format
            if self.enabled:
                if not self._answered:
                    asyncio.get_running_loop().call_soon(self._write)
                self._answered.append((time.time(), scope, method, template, status, seconds, size))
            if self.observe is not None:
                self.observe(method, template, status, seconds, headers)

    def _handler(self, error: Exception) -> LastResort | None:
        """The handler of the most specific class of `error` that has one, as Starlette
        chooses."""
        for cls in type(error).__mro__:
            if cls in self.handlers:
                return self.handlers[cls]
        return None

    def _write(self) -> None:
        """The lines of every request answered in one turn of the event loop, in one write
        (or as few as keep lines whole): a system call per request would cost more than its
        line."""
        answered, self._answered = self._answered, []
        logs.write([_line(*one) for one in answered])


# When, the request's scope, method as sent, route template, status, seconds, body bytes.
_Answered = tuple[float, Scope, str, str | None, int, float, int]


def _line(
    moment: float,
    scope: Scope,
    method: str,
    route: str | None,
    status: int,
    seconds: float,
    size: int,
) -> bytes:
    fields = {
        "time": logs.timestamp(moment),
        "level": "info",
        "logger": "catalogo.access",
        "message": "request",
        "request_id": scope[REQUEST_ID_KEY].decode(),
        "method": method,
        "route": route,
        "path": scope["path"][:PATH_LIMIT],
        "status": status,
        "duration_ms": int(seconds * 1_000_000) / 1000,  # to the µs; round() costs more
        "bytes": size,
    }
    try:
        return logs.line(fields)
    except orjson.JSONEncodeError:  # a path that is not text (a lone surrogate): show its bytes
        fields["path"] = fields["path"].encode("utf-8", "backslashreplace").decode()
        return logs.line(fields)
