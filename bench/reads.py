"""What one read costs the server's core, in-process: CPU microseconds per request of each of
bench/run's read cases.

    .venv/bin/python bench/reads.py /tmp/r.db                 # this code, on a file of its own
    PYTHONPATH=/path/to/other/src .venv/bin/python bench/reads.py /tmp/r-other.db
    (pin both to one core, alternate them a few times: taskset -c 0 …)

Seeds the file with `catalogo seed 10000` of the code under test if it does not exist, then
sends each case's GET through the ASGI app (no sockets) `--requests` times after 200 not
counted, and prints the process's CPU time per request. HTTP's ±4% round-to-round noise in
bench/run hides a difference of a few percent; this does not.
"""

import argparse
import asyncio
import dataclasses
import os
import subprocess
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from profiling import scope
from revision import CATALOGO, Settings, create_app

SEEDED = 10_000
CASES = {
    "edit page": ("/produtos/5000", b"", b"text/html"),
    "list, first page": ("/produtos", b"", b"text/html"),
    "list, deep page": ("/produtos", b"depois=101", b"text/html"),
    "new form": ("/produtos/novo", b"", b"text/html"),
    "JSON product": ("/produtos/5000", b"", b"application/json"),
    "JSON list": ("/produtos", b"", b"application/json"),
}


def quiet(url: str) -> Settings:
    """Settings for `url` with the access log off, on revisions from before it too (this
    script runs any revision's code: PYTHONPATH)."""
    settings = Settings(database_url=url)
    if any(f.name == "access_log" for f in dataclasses.fields(Settings)):
        settings = dataclasses.replace(settings, access_log=False)
    return settings


async def measure(database: Path, requests: int) -> None:
    app = create_app(quiet(f"sqlite:///{database}"))

    async def call(asked: dict[str, Any]) -> int:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        status: list[int] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(asked), receive, send)
        return status[0]

    async with app.router.lifespan_context(app):
        for name, (path, query, accept) in CASES.items():
            asked = scope("GET", path, query, accept=accept)
            for _ in range(200):
                if await call(asked) != 200:
                    raise SystemExit(f"{name}: not 200 on this file")
            started = time.process_time()
            for _ in range(requests):
                await call(asked)
            spent = (time.process_time() - started) / requests * 1e6
            print(f"{name}: {spent:.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database", type=Path, help="a SQLite file, seeded if it does not exist")
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    if not args.database.exists():
        env = {**os.environ, "CATALOGO_DATABASE_URL": f"sqlite:///{args.database.resolve()}"}
        subprocess.run([CATALOGO, "seed", str(SEEDED)], env=env, check=True)
    asyncio.run(measure(args.database.resolve(), args.requests))


if __name__ == "__main__":
    main()
