"""What one write costs the server's core, in-process: CPU microseconds per create or update.

    .venv/bin/python bench/writes.py update               # this code
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/writes.py update   # another revision
    (pin both to one core, alternate them a few times: taskset -c 0 …)

Writes 64 at a time through the ASGI app (no sockets), each update naming its product anew, on a
seeded SQLite file with `synchronous=FULL` as served; counts the process's CPU time, the event
loop's and the writer thread's together, as one pinned server core spends it. HTTP's ±4%
round-to-round noise in bench/run hides a difference of a few percent; this does not.
"""

import asyncio
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reads import quiet
from revision import CATALOGO, create_app

WRITES = 4000
SEEDED = 2000


def scope(path: str, body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": None,
    }


async def main(kind: str) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'c.db'}"
        subprocess.run(
            [CATALOGO, "seed", str(SEEDED)],
            env={**os.environ, "CATALOGO_DATABASE_URL": url},
            check=True,
            capture_output=True,
        )
        app = create_app(quiet(url))

        async def send(message: Any) -> None:
            return None

        async def one(n: int) -> None:
            if kind == "update":
                body = f"_method=PUT&produto.nome=Caneca+{n}&produto.preco=29%2C90".encode()
                path = f"/produtos/{n % SEEDED + 1}"
            else:
                body, path = f"produto.nome=Caneca+{n}&produto.preco=29%2C90".encode(), "/produtos"

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            await app(scope(path, body), receive, send)

        async with app.router.lifespan_context(app):
            for n in range(200):  # warm up
                await one(n)
            started = time.process_time()
            for batch in range(WRITES // 64):
                await asyncio.gather(*(one(batch * 64 + i) for i in range(64)))
            spent = time.process_time() - started
        print(f"{kind}: {1e6 * spent / (WRITES // 64 * 64):.1f} µs of CPU a write")


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "update"))
