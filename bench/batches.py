"""A batch at scale: does one worker confirm and undo a 10,000-product batch in bounded memory,
and keep answering other requests while it does?

Starts `catalogo serve` (one worker) on a SQLite file seeded with `--products` products (or
`--database-url`), asks `POST /produtos/lote` to reprice every product of the list by 8%
(`busca` the whole list: the confirmation's JSON), confirms it with the selection it gave,
then undoes it. Meanwhile, every 20 ms, it times a fresh connection's GET /healthz and samples
the worker's resident memory; each step's seconds, probe latencies and peak memory are printed.

    .venv/bin/python bench/batches.py --database /tmp/b10000.db --products 10000 \\
        [--acao reajustar|remover] [--database-url postgresql://…]
"""

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
from pathlib import Path

from bench import CATALOGO, free_port, start, stop, wait_until_up
from exports import idle, resident_mb, summary
from imports import step


async def measure(port: int, main_pid: int, acao: str) -> None:
    before = await idle(port)
    print(f"batch: {acao} every product")
    print(f"  /healthz before: {summary(before)}")
    print(f"  worker RSS before {resident_mb(main_pid):.0f} MB")
    asked = {"acao": acao, "percentual": "8", "busca": ""}
    path, kind = "/produtos/lote", "application/json"
    body = json.dumps(asked).encode()
    status, shown = await step(port, main_pid, "confirmation", "POST", path, body, kind)
    if status != 200:
        return
    confirm = {**asked, "selecao": shown["selecao"], "lote": shown["lote"], "confirmar": True}
    body = json.dumps(confirm).encode()
    status, _ = await step(port, main_pid, "confirm", "POST", path, body, kind)
    if status == 200:
        await step(port, main_pid, "undo", "POST", f"{path}/{shown['lote']}/reversao")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", type=Path, help="a SQLite file")
    parser.add_argument("--database-url", help="instead of --database, e.g. PostgreSQL")
    parser.add_argument("--products", type=int, default=10_000)
    parser.add_argument("--acao", choices=("reajustar", "remover"), default="reajustar")
    args = parser.parse_args()
    url = args.database_url or f"sqlite:///{args.database.resolve()}"
    env = {**os.environ, "CATALOGO_DATABASE_URL": url}
    if args.database and not args.database.exists():
        subprocess.run([CATALOGO, "seed", str(args.products)], env=env, check=True)
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        process = start([CATALOGO, "serve", "--port", str(port)], env, Path(folder) / "log", False)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process)
            asyncio.run(measure(port, process.pid, args.acao))
        finally:
            stop(process)


if __name__ == "__main__":
    main()
