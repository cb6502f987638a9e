"""The ceiling: a bare ASGI app answering a constant body of the edit page's size.

Served by the same server (Granian, one worker, the same core) as catalogo, it shows what the
stack costs without any of our code; our figures are reported as a ratio to it.
"""

import os
from collections.abc import Awaitable, Callable
from typing import Any

BODY = b"x" * int(os.environ.get("CEILING_BODY_BYTES", "2000"))
HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-length", str(len(BODY)).encode()),
]

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
