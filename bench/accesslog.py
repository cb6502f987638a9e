"""What the access log costs a request, in-process: the ASGI app called directly, no sockets.

    .venv/bin/python bench/accesslog.py [--clients 16] [--blocks 30] [--block 400]

On a seeded temporary catalog (SQLite, 1,000 products) it answers each case three ways, in
one process, block by block in turn so that a noisy neighbour hurts all three alike:
- without the access-log layer: Starlette's ServerErrorMiddleware in its place, as before
  issue 11 (the security headers, which the layer now adds for every answer, are then left
  out; the guard added them before),
- with it and CATALOGO_ACCESS_LOG=off (the request id alone),
- with it and the log on, its lines going to a file (stderr is pointed there, as a service's
  would be a file or journald's pipe).
`--clients` requests are under way at once, each client sending its next one in the next turn
of the event loop, as a loaded server's event loop finishes several requests per turn (and the
access log writes their lines together); `--clients 1` is the worst case, one line per write.
It prints the median CPU µs per request of each, and what the layer and the line add. These
are in-process figures: at server level (bench/run) each µs of ours costs about two
(bench/results/history.md), and so does the rest of the request.
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from starlette.middleware.errors import ServerErrorMiddleware

from catalogo.http.app import create_app
from catalogo.http.middleware.outermost import Outermost
from catalogo.runtime.settings import Settings

CATALOGO = str(Path(sys.executable).with_name("catalogo"))
CASES = {
    "edit page GET /produtos/{id}": "text/html",
    "JSON product GET /produtos/{id}": "application/json",
    "new form GET /produtos/novo": "text/html",
}
VARIANTS = ("without the layer", "log off", "log on")
Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Any, Any], Awaitable[None]]


def _scope(app: object, path: str, accept: str) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"accept", accept.encode())],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
        "app": app,  # what Starlette's own __call__ sets, above the middleware stack
    }


async def _receive() -> Scope:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(message: Scope) -> None:
    return None


async def _block(app: object, stack: ASGI, case: str, requests: int, clients: int) -> float:
    """CPU µs per request of `requests` answers to `case` by `stack`, `clients` at a time."""

    async def client(first: int) -> None:
        for n in range(first, requests, clients):
            path = "/produtos/novo" if "novo" in case else f"/produtos/{n % 1000 + 1}"
            await stack(_scope(app, path, CASES[case]), _receive, _send)
            await asyncio.sleep(0)  # the next request in the next turn of the event loop

    started = time.process_time()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return (time.process_time() - started) / requests * 1e6


async def _measure(url: str, args: argparse.Namespace) -> dict[tuple[str, str], list[float]]:
    app = create_app(Settings(database_url=url))
    times: dict[tuple[str, str], list[float]] = {}
    async with app.router.lifespan_context(app):
        await app(_scope(app, "/healthz", "text/html"), _receive, _send)  # builds the stack
        outer = app.middleware_stack
        assert isinstance(outer, Outermost)  # noqa: S101 - what this script measures
        inner, last_resort = outer.app, outer.last_resort
        stacks: dict[str, ASGI] = {
            "without the layer": ServerErrorMiddleware(inner, last_resort),
            "log off": Outermost(inner, False, last_resort, outer.headers),
            "log on": Outermost(inner, True, last_resort, outer.headers),
        }
        for case in CASES:
            for stack in stacks.values():  # warm up: templates, statement cache, branches
                await _block(app, stack, case, args.block, args.clients)
            for round in range(args.blocks):
                for name in VARIANTS if round % 2 == 0 else reversed(VARIANTS):
                    times.setdefault((case, name), []).append(
                        await _block(app, stacks[name], case, args.block, args.clients)
                    )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16, help="requests under way at once")
    parser.add_argument("--blocks", type=int, default=30, help="blocks per variant and case")
    parser.add_argument("--block", type=int, default=400, help="requests per block")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'c.db'}"
        env = {**os.environ, "CATALOGO_DATABASE_URL": url}
        subprocess.run([CATALOGO, "seed", "1000"], env=env, check=True, capture_output=True)
        log = Path(folder) / "stderr.log"
        saved = os.dup(2)
        os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND), 2)
        try:
            times = asyncio.run(_measure(url, args))
        finally:
            os.dup2(saved, 2)
        lines = log.read_bytes().count(b"\n")
    print(
        f"CPU µs per request, median of {args.blocks} blocks of {args.block} requests, "
        f"{args.clients} at a time; {lines:,} log lines written.\n"
    )
    print("| case | without the layer | log off | log on | layer | line | both |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case in CASES:
        none, off, on = (statistics.median(times[case, v]) for v in VARIANTS)
        print(
            f"| {case} | {none:.1f} | {off:.1f} | {on:.1f} | {off - none:+.1f} | {on - off:+.1f} "
            f"| {(on - none) / none:+.1%} |"
        )


if __name__ == "__main__":
    main()
