"""Profile one request type in-process, without a server: where does our own time go?

    .venv/bin/python bench/profiling.py edit      # GET /produtos/{id}
    .venv/bin/python bench/profiling.py create    # POST /produtos (form)
    .venv/bin/python bench/profiling.py list      # GET /produtos
    .venv/bin/python bench/profiling.py form      # GET /produtos/novo
    .venv/bin/python bench/profiling.py json      # GET /produtos, Accept: application/json

Calls the ASGI app directly (no sockets) on a seeded temporary catalog and prints the
functions with the most time of their own, by cProfile.
"""

import asyncio
import cProfile
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from revision import CATALOGO, Settings, create_app

REQUESTS = 5000
FORM = b"produto.nome=Caneca&produto.descricao=&produto.preco=29%2C90"


def scope(
    method: str, path: str, query: bytes = b"", body: bool = False, accept: bytes = b"text/html"
) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"accept", accept)]
    if body:
        headers += [
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(FORM)).encode()),
        ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": None,
    }


async def drive(kind: str, app: Any) -> None:
    async def receive() -> dict[str, Any]:
        return {
            "type": "http.request",
            "body": FORM if kind == "create" else b"",
            "more_body": False,
        }

    async def send(message: dict[str, Any]) -> None:
        return None

    profiler = cProfile.Profile()
    for n in range(REQUESTS):
        if kind == "edit":
            request = scope("GET", f"/produtos/{n % 1000 + 1}")
        elif kind == "list":
            request = scope("GET", "/produtos")
        elif kind == "form":
            request = scope("GET", "/produtos/novo")
        elif kind == "json":
            request = scope("GET", "/produtos", accept=b"application/json")
        else:
            request = scope("POST", "/produtos", body=True)
        if n == REQUESTS // 10:
            profiler.enable()
        await app(request, receive, send)
    profiler.disable()
    pstats.Stats(profiler).sort_stats(sys.argv[2] if len(sys.argv) > 2 else "tottime").print_stats(
        25
    )


async def main(kind: str) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        url = f"sqlite:///{Path(workdir) / 'c.db'}"
        subprocess.run(
            [CATALOGO, "seed", "1000"],
            env={"CATALOGO_DATABASE_URL": url},
            check=True,
            capture_output=True,
        )
        app = create_app(Settings(database_url=url))
        async with app.router.lifespan_context(app):
            await drive(kind, app)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "edit"))
